// The primitive vocabulary algorithms are written in. Hides request bookkeeping and deadlines.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "algo/context.h"

namespace hostccl::algo {

// A batch of outstanding point-to-point requests of one rank, completed together.
class Requests {
 public:
  explicit Requests(Context& ctx) : ctx_(ctx) {}
  Status Send(int peer, const void* buf, size_t len);
  Status Recv(int peer, void* buf, size_t len);
  // Waits for every request posted so far (progressing all of them).
  Status WaitAll();
  size_t posted() const { return ids_.size(); }

 private:
  Context& ctx_;
  std::vector<net::RequestId> ids_;
  size_t done_prefix_ = 0;
};

// The canonical rank-order fold of k inputs, dst[i] = ((srcs[0][i] ⊕ srcs[1][i]) ⊕ ...) ⊕
// srcs[k-1][i] (kern::FoldN; dst may alias a source exactly). With ctx.accumulate_fp32 and an
// fp16/bf16 sum or product (WidensFp32), the fold runs in an fp32 accumulator and rounds once
// (kern::FoldAcc32): every algorithm folds complete inputs through here.
void FoldInputs(const Context& ctx, DataType t, RedOp op, void* dst, const void* const* srcs, int k, size_t n);
// True when this operation accumulates in fp32 (ctx.accumulate_fp32 and an fp16/bf16 sum or
// product): chains then carry their running partials as fp32 (4 bytes per element on the wire).
bool WidensFp32(const Context& ctx, DataType t, RedOp op);

// The "flat" fold of AllReduce and ReduceScatter(V) over the transport, one message step: every
// rank sends each peer j the block block(a, j) of its sendBuf (empty blocks travel as empty
// messages, so every pair still compares fingerprints), receives one `bytes` block from every peer
// into scratch and, once every message completed, folds the n blocks (its own, `own`, in its
// place) in rank order into a.recv (a.count elements). One rank: `own` copied to a.recv. `what`
// names the algorithm in the scratch allocation's error.
struct BlockRef {
  const void* data;
  uint64_t bytes;
};
Status FlatFold(Context& ctx, const OpArgs& a, const void* own, uint64_t bytes, BlockRef (*block)(const OpArgs&, int),
                const char* what);

// Blocking helpers for simple steps.
Status SendTo(Context& ctx, int peer, const void* buf, size_t len);
Status RecvFrom(Context& ctx, int peer, void* buf, size_t len);

// Ends a rooted operation over the transport: the root tells every other rank that it completed
// (one byte each), so a rank whose part was only sending cannot report success for an operation
// the root rejected (a mismatch found at the root reaches it as an abort instead). Costs the
// non-roots one one-way latency; the root's result is not delayed.
Status FinishRooted(Context& ctx, int root);
// A non-root's half of FinishRooted alone (the root sent this rank a 1-byte notice).
Status AwaitRootDone(Context& ctx, int root);

// Ends an operation in which a rank may finish while its messages are still on their way (only
// sending, or receiving its part before its peers receive theirs): every rank sends an empty
// message to every other and waits for one from each, so no rank returns (and may exit, closing
// its sockets under unread data) before every peer finished receiving from it. One latency.
Status FinishAll(Context& ctx);

// Node plans (several hosts; this rank's host is ranks [lo, ...) in ctx.node_shm): publishes this
// rank's buffers in the host group, arrives carrying `payload` (up to the slot's inline bytes) with
// `progress` run while it sleeps (stall probes from other hosts answered), and compares the host's
// fingerprints; a mismatch names communicator ranks. *ticket: the arrival's, for ArrivedPayload.
Status HostArrive(Context& ctx, net::ShmGroup* g, int lo, const OpArgs& a, Deadline deadline,
                  const std::function<Status()>* progress, uint64_t* ticket, const void* payload = nullptr,
                  size_t payload_bytes = 0);
// The operation's deadline, or `grace_ns` later unless `own`: a rank whose wait depends on another
// rank's (a leader's, the root's) gives that rank's abort, which names the rank really late, time
// to arrive before blaming the one it waits for.
Deadline GraceDeadline(const Context& ctx, bool own, uint64_t grace_ns);

// Byte range [begin, end) of part `i` when `count` elements are split into `parts` near-equal
// parts whose boundaries are multiples of `align` elements.
void PartRange(uint64_t count, int parts, int i, uint64_t align, uint64_t* begin, uint64_t* end);

}  // namespace hostccl::algo
