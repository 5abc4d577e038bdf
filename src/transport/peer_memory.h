// PeerMemory: ranks that can read (and write) each other's buffers in place. Thread ranks of one
// process (LocalGroup: plain pointers) and process ranks of one host (ShmGroup: aclrtMalloc
// buffers mapped through their memfds) both implement it, so a slice-parallel algorithm is
// written once (algo/peer_fold.h) for both.
// Per operation: Exchange (publish my buffers and fingerprint, wait for every rank, compare the
// fingerprints), then PeerSend/PeerRecv of any rank, Check between long steps, Barrier at the end.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"

namespace hostccl::net {

// Where a buffer lives, as published by its owner (plain data, copied into the segment).
struct BufDesc {
  uint64_t addr = 0;          // address in the owner's process
  uint64_t serial = 0;        // owner's allocation serial; 0 = not shareable (not aclrtMalloc memory)
  uint64_t base = 0;          // owner's allocation base address
  uint64_t length = 0;        // bytes mapped at base
  uint64_t file_offset = 0;   // offset of base inside the memfd
  int32_t memfd = -1;         // owner's descriptor number
  int32_t reserved = 0;
};

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  // Publishes this rank's buffers (`send`/`recv` for ranks of this process, `sd`/`rd` for others)
  // and fingerprint, and returns when every rank did; with `check`, a differing fingerprint fails
  // with kPara and FormatMismatch()'s text (the lowest differing rank against rank 0), identically
  // on every rank.
  // `payload` (optional, at most PayloadLimit() bytes) is readable by every rank after the
  // exchange through PeerPayload(r), until this rank's next Barrier (read it before any).
  virtual Status Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc& sd,
                          const BufDesc& rd, Deadline deadline, bool check, const void* payload = nullptr,
                          size_t payload_bytes = 0) = 0;
  virtual const void* PeerPayload(int r) = 0;
  virtual size_t PayloadLimit() const = 0;
  // Peer r's published buffers as pointers in this process, valid until the operation's last
  // Barrier; nullptr (and *why) when the buffer cannot be shared.
  virtual const void* PeerSend(int r, std::string* why) = 0;
  virtual void* PeerRecv(int r, std::string* why) = 0;
  // Every rank arrives; bounded by `deadline`, failed by Abort or a dead peer.
  virtual Status Barrier(int rank, Deadline deadline, uint64_t seq) = 0;
  // Fails operation `seq` (and later ones) on every rank.
  virtual void Abort(Code code, const std::string& reason, uint64_t seq) = 0;
  // Between the steps of a long computation: an abort's or a dead peer's status, else ok.
  virtual Status Check(uint64_t seq) = 0;
  // Words every rank of the group can update atomically (zero at creation), for sharing the
  // pieces of one operation's work dynamically (algo::ClaimPiece): word w counts the claims of
  // worker w's range of pieces; a worker that finished its range takes pieces of the others', so
  // a rank that runs while a peer waits for a core does the peer's share. i < kMaxWorkers.
  static constexpr int kMaxWorkers = 64;
  virtual std::atomic<uint64_t>* WorkWord(int i) = 0;
  // How many ranks share such claimed work: ranks 0 .. Workers()-1 claim pieces, the others
  // (1 <= Workers() <= min(size, kMaxWorkers)) go straight to the operation's closing Barrier.
  // Processes that outnumber the cores take turns on them, and each turn switches address
  // spaces: a rank that moves data through peers' mappings then finds its translations (TLB; on
  // a shadow-paging hypervisor, its shadow page tables) evicted by the ranks before it. On the
  // benchmark machine 4 processes reading their own 1 GiB mappings on one core read 1.5 GB/s in
  // all, one alone 22 GB/s (docs/performance.md).
  virtual int Workers() const = 0;
};

}  // namespace hostccl::net
