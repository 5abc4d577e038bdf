// AllReduce for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": every rank arrives with its whole input inline in its arrival slot (<= 4 KiB,
//   ShmGroup::kInlineBytes; the slot's first cache line also holds the ticket and fingerprint),
//   and after the one arrival every rank folds all n slots in rank order into its own recvBuf.
//   Slots of an arrival stay readable until the owner's next arrival, so nothing else is needed:
//   one arrival per operation. In place is safe (the inputs are read from the slots).
// "flat": every rank sends its input to every other rank (one message step), receives the n-1
//   others into scratch and folds all n in rank order into its recvBuf (FlatFold,
//   algo/primitives.h, shared with ReduceScatter's "flat"). Bytes per rank: sends and
//   receives (n-1) x S; latency one hop. Every pair exchanges a message, so a rank whose
//   fingerprint differs is seen by every other rank. In place is safe (peers' inputs land in
//   scratch; the own input is read at the index being written).
// Preconditions: "shm_inline": ctx.shm and S <= 4 KiB (its registry max_bytes: the selector
//   gives a larger call to the default rules, even when forced; called anyway it fails with kInternal). "flat": a transport; scratch of (n-1) x S.
// Example: 2 ranks, 8 B fp32 SUM: rank 0 arrives with {x0}, rank 1 with {x1}; both compute x0 + x1.
#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"

namespace hostccl::algo {

Status AllReduceShmInline(Context& ctx, const OpArgs& a) {
  return ShmInlineFold(ctx, a, a.bytes(), 0, "shm_inline allreduce");
}

Status AllReduceFlat(Context& ctx, const OpArgs& a) {
  // Every peer gets the whole sendBuf.
  auto whole = [](const OpArgs& x, int) { return BlockRef{x.send, x.bytes()}; };
  return FlatFold(ctx, a, a.send, a.bytes(), whole, "flat allreduce");
}

}  // namespace hostccl::algo
