// LocalGroup: the ranks of one communicator that are threads of this process, sharing an
// address space. It offers what the direct (slice-parallel) algorithms need and nothing else:
//  - Publish(): each rank posts its buffers and fingerprint for the current operation;
//  - Barrier(): all ranks arrive (adaptive wait, see sync/group_barrier.h);
//  - Slot(r): another rank's published buffers, valid between the two barriers of an operation.
// Ownership: shared by the Communicator objects of its members (shared_ptr); created by the first
// member to join (keyed by the communicator's unique key), removed when the last member leaves.
// Thread-safety: each member calls Publish/Barrier from its own thread; Abort() from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"
#include "transport/peer_memory.h"
#include "transport/sync/group_barrier.h"

namespace hostccl::net {

struct LocalSlot {
  const void* send = nullptr;
  void* recv = nullptr;
  Fingerprint fp;
  const void* payload = nullptr;  // Exchange's payload: the owner's memory, read in place
};

// A posted point-to-point send between thread ranks (LocalGroup::P2PPost): the sender's buffer,
// read in place by the receiver, which then completes it (rendezvous).
struct P2PSendPost {
  const void* buf = nullptr;
  size_t bytes = 0;
  Fingerprint fp;    // the message fingerprint (common/fingerprint.h, point-to-point)
  int state = 0;     // 0 posted, 1 being copied, 2 done
  Status result;     // the receiver's verdict (a mismatch fails both ranks alike)
};

class LocalGroup : public PeerMemory {
 public:
  LocalGroup(std::string key, int size);
  ~LocalGroup() override;
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  // Joins (or creates) the group `key` of `size` members in this process.
  static std::shared_ptr<LocalGroup> Join(const std::string& key, int size);

  int size() const { return size_; }
  // The fingerprint is also kept in atomic words, which the other members compare: after a
  // mistake in program order (members in operations with different numbers of barriers) a member
  // may publish its next operation while another still compares this one's.
  void Publish(int rank, const LocalSlot& slot);
  Fingerprint SlotFp(int rank) const;

  // Waits until all members called Barrier the same number of times, or the deadline (kTimeout
  // naming the ranks that have not arrived), or Abort (its code and reason).
  Status Barrier(int rank, Deadline deadline);

  // Fails current and future barriers of every member with `code` and `reason`.
  void Abort(Code code, const std::string& reason);
  // Member `rank` destroyed its communicator: barriers fail as with Abort, but point-to-point
  // waits fail only where `rank` is the peer (other pairs may still finish their transfers).
  void Depart(int rank, Code code, const std::string& reason);

  // PeerMemory: pointers are the published ones (same address space).
  Status Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc& sd,
                  const BufDesc& rd, Deadline deadline, bool check, const void* payload = nullptr,
                  size_t payload_bytes = 0) override;
  const void* PeerPayload(int r) override { return slots_[static_cast<size_t>(r)].payload; }
  size_t PayloadLimit() const override { return SIZE_MAX; }
  const void* PeerSend(int r, std::string*) override { return slots_[static_cast<size_t>(r)].send; }
  void* PeerRecv(int r, std::string*) override { return slots_[static_cast<size_t>(r)].recv; }
  Status Barrier(int rank, Deadline deadline, uint64_t) override { return Barrier(rank, deadline); }
  void Abort(Code code, const std::string& reason, uint64_t) override { Abort(code, reason); }
  Status Check(uint64_t seq) override;
  std::atomic<uint64_t>* WorkWord(int i) override { return &work_[static_cast<size_t>(i)].word; }
  // Threads share one address space: all work (up to kMaxWorkers).
  int Workers() const override { return std::min(size_, kMaxWorkers); }

  // Point-to-point mailboxes, one FIFO per ordered pair (from, to): P2PPost queues a send (the
  // post lives until P2PWaitSent returns); P2PRecv waits (bounded) for the next post from `from`,
  // compares fingerprints (a mismatch completes the post with the same error), copies the
  // sender's buffer straight into `dst` and completes the post; P2PWaitSent waits until the
  // receiver completed the post (on timeout or abort an untouched post is withdrawn).
  void P2PPost(int from, int to, P2PSendPost* post);
  Status P2PRecv(int from, int to, const Fingerprint& fp, void* dst, size_t bytes, Deadline deadline);
  // On a timeout, *peer_sends tells whether `to` is itself in a send to `from` that nobody
  // received (decided under the lock, so of two ranks both sending to each other each sees it).
  Status P2PWaitSent(int from, int to, P2PSendPost* post, Deadline deadline, bool* peer_sends);

 private:
  std::string key_;
  int size_;
  std::vector<LocalSlot> slots_;
  static constexpr size_t kFpWords = sizeof(Fingerprint) / sizeof(uint64_t);
  std::unique_ptr<std::atomic<uint64_t>[]> fp_words_;  // [rank * kFpWords + i]: SlotFp
  BarrierWords words_{};
  struct alignas(64) WorkLine {
    std::atomic<uint64_t> word{0};
  };
  WorkLine work_[kMaxWorkers];  // WorkWord
  std::unique_ptr<ArrivalWord[]> arrivals_;
  std::mutex abort_mu_;
  Code abort_code_ = Code::kRemote;
  std::string abort_reason_;
  std::mutex p2p_mu_;
  std::condition_variable p2p_cv_;
  std::vector<std::deque<P2PSendPost*>> p2p_box_;  // [from * size + to]
  std::vector<int> p2p_send_timed_out_;            // [from]: the peer of its last timed-out send, or -1
  std::vector<char> p2p_gone_;                     // [rank]: destroyed its communicator
  bool p2p_failed_ = false;                        // an Abort (not a departure): every wait fails
  Code p2p_code_ = Code::kRemote;
  std::string p2p_reason_;
  bool P2PBroken(int peer) const { return p2p_failed_ || p2p_gone_[static_cast<size_t>(peer)]; }
  struct RecvWait {
    int from = -1;  // the rank a P2PRecv of this rank waits for (-1: none)
    Fingerprint fp;
  };
  std::vector<RecvWait> p2p_recv_wait_;  // [to], under p2p_mu_
  Status BlockedPeer(int rank);          // Barrier's check
  std::string LateTransfers(int rank);   // Barrier's timeout: what its late members wait in
  Status P2PBrokenStatus(int peer) const;
};

}  // namespace hostccl::net
