// What an algorithm gets to run one collective on one rank: its peers (a Transport and/or a
// LocalGroup), the operation's arguments, its fingerprint and deadline, and reusable scratch.
// Algorithms run as plain sequential code on the thread executing the stream's task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/dtype.h"
#include "common/fingerprint.h"
#include "common/ops.h"
#include "common/status.h"
#include "transport/local/local_group.h"
#include "transport/shm/shm_group.h"
#include "transport/transport.h"

namespace hostccl::kern {
class StoreLearner;  // kernels/copy.h
}  // namespace hostccl::kern

namespace hostccl::algo {

// Scratch memory owned by the communicator, allocated once and reused (pre-faulted), so steady
// state has no allocation and no page faults. Grow() only happens when a larger size is needed.
class Scratch {
 public:
  Scratch() = default;
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // Returns at least `bytes` of 64-byte-aligned memory (contents unspecified); nullptr on failure.
  void* Get(size_t bytes);
  size_t capacity() const { return capacity_; }

 private:
  void* mem_ = nullptr;
  size_t capacity_ = 0;
};

// One point-to-point transfer of HcclSend, HcclRecv or HcclBatchSendRecv (OpArgs::items). The
// pair number is the transfer's place in the order of its ordered pair (sender, receiver), 1, 2,
// ..., given by core at the call (issue order); sender and receiver give the same transfer the
// same number.
struct P2PItem {
  bool send = false;
  int peer = 0;
  void* buf = nullptr;  // send: only read
  uint64_t count = 0;
  DataType dtype = DataType::kFp32;
  uint64_t pair_seq = 0;  // 0 for a transfer to this rank itself (a local copy)
  uint64_t bytes() const { return count * DataTypeSize(dtype); }
};

// One argument record for every operator (the row in common/ops.h says which fields apply).
// Built by the API entry point, checked there, completed by core (descriptors) and passed to the
// algorithm unchanged. Buffers are in elements of `dtype` (see the row's size rules).
struct OpArgs {
  CollKind kind = CollKind::kNone;
  const void* send = nullptr;  // Broadcast: the one buffer (send == recv)
  void* recv = nullptr;        // Reduce: only meaningful on the root
  uint64_t count = 0;          // count / sendCount / recvCount as the operator names it
  DataType dtype = DataType::kFp32;
  RedOp op = RedOp::kSum;      // reductions only
  int root = 0;                // root (rooted operators) or peer (Send/Recv)
  DataType recv_dtype = DataType::kFp32;  // AlltoAll family: recvType (same element size as dtype)
  // The V arrays (host uint64_t[n], in elements), for the operators that have them. The caller's
  // arrays are valid only during the call: Communicator::Enqueue copies them into a queued task,
  // so in an algorithm they point at this rank's own copies, valid for the whole operation; an
  // inline attempt (it runs within the call; one that gives up resumes on the task's copies) of
  // AllGatherV or ReduceScatterV reads the caller's arrays, of the AlltoAll family a copy:
  //   AllGatherV      recv_counts, recv_displs (identical on every rank; count = sendCount)
  //   ReduceScatterV  send_counts, send_displs (identical on every rank; count = recvCount)
  //   AlltoAllV       all four (this rank's own; count = 0)
  //   AlltoAllVC      matrix (n x n, row-major, identical on every rank) and, derived from it, all
  //                   four as AlltoAllV would have them (packed in rank order; count = 0)
  // Unused ones are nullptr.
  const uint64_t* send_counts = nullptr;
  const uint64_t* send_displs = nullptr;
  const uint64_t* recv_counts = nullptr;
  const uint64_t* recv_displs = nullptr;
  const uint64_t* matrix = nullptr;
  uint64_t recv_count = 0;                // AlltoAll
  // Point-to-point operators: the transfers, numbered by core. HcclSend/HcclRecv: the one
  // transfer in `one` (no list, so a single call allocates nothing); BatchSendRecv: the list in
  // `items`, self items paired k-th send with k-th receive. Algorithms read Transfers().
  P2PItem one;
  std::shared_ptr<const std::vector<P2PItem>> items;
  std::span<const P2PItem> Transfers() const {
    return items ? std::span<const P2PItem>(*items) : std::span<const P2PItem>(&one, 1);
  }
  net::BufDesc send_desc;  // where send/recv live, for peers on this host (filled by core)
  net::BufDesc recv_desc;
  // The size the selection rules go by (filled by core once per call, Communicator::Enqueue): the
  // message bytes, or for the V operators the mean block of their arrays.
  uint64_t selection_bytes = 0;
  uint64_t bytes() const { return count * DataTypeSize(dtype); }
};
using ReduceArgs = OpArgs;  // the Reduce algorithms' name for it

// Ranks grouped by host, when hosts hold contiguous rank ranges: host k has ranks
// [first[k], first[k+1]). Empty when the communicator is on one host or ranks interleave.
struct NodeLayout {
  std::vector<int> first;
  int mine = -1;  // this rank's host index
  int nodes() const { return first.empty() ? 0 : static_cast<int>(first.size()) - 1; }
};

struct Context {
  int rank = 0;
  int size = 1;
  net::Transport* transport = nullptr;  // null when the communicator has no TCP mesh
  net::LocalGroup* local = nullptr;     // non-null when every rank is a thread of this process
  net::ShmGroup* shm = nullptr;         // non-null when every rank is on this host (processes)
  net::ShmGroup* node_shm = nullptr;    // this host's ranks, when the communicator spans hosts
  const NodeLayout* nodes = nullptr;
  Fingerprint fp;
  bool check_fp = true;  // compare fingerprints across ranks (HOSTCCL_CHECK_ARGS)
  Deadline deadline = Deadline::Infinite();
  Scratch* scratch = nullptr;
  // The communicator's learned store kind for the AlltoAll family's claimed copy (null: the
  // footprint rule, kern::StreamStores).
  kern::StoreLearner* alltoall_stores = nullptr;
  size_t chunk_bytes = 1 << 20;   // pipeline chunk for chunked algorithms
  size_t staging_bytes = 64 << 20; // bound on scratch use per operation (HCCL_BUFFSIZE)
  // HOSTCCL_ACCUMULATE=fp32: fp16/bf16 sums and products accumulate in fp32 and round once
  // (FoldInputs in primitives.h; chains carry fp32 partials). Equal on every rank.
  bool accumulate_fp32 = false;
  // Set by an algorithm that returned before its peers confirmed the operation (a non-root of
  // the small Reduce: its input is copied out, ShmGroup::Post): the communicator settles it at
  // the stream's next synchronize (Communicator::Settle), which reports the operation's errors.
  // Also set by an eager mailbox send (sendrecv_mailbox.cc), answered later.
  net::ShmGroup* ran_ahead = nullptr;
  // Whether this call may complete ahead of its peers (set by the communicator from
  // HOSTCCL_RUN_AHEAD: by default when its stream already holds this rank's next task, or when it
  // was issued with no synchronize since the stream's previous task: rt::TaskHasSuccessor()).
  // Algorithms with a pipelined path take it only when this is set, else they arrive with their
  // peers as a plain call (no settle at the synchronize).
  bool may_run_ahead = false;
};

// Settles what ran ahead on `g` (Communicator::Settle, and Destroy): waits until the peers are
// done with every arrival this rank posted ahead (ShmGroup::Settle) and have answered every eager
// send (P2PMailboxSettle), and reports the first error among them (a mismatch naming both ranks,
// a dead peer, or kTimeout naming the late peer). Ok at once when nothing ran ahead.
Status SettleRanAhead(net::ShmGroup* g, Deadline deadline);

}  // namespace hostccl::algo
