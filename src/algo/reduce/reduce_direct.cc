// Reduce, "direct": slice-parallel fold over a shared address space.
//
// What: every rank folds a disjoint slice of the element range, reading all ranks' sendBufs
//   directly in rank order and writing the result straight into the root's recvBuf.
// Preconditions: every rank is a thread of this process (ctx.local != null); any count, any root;
//   in place allowed on any rank (FoldN tolerates dst aliasing a source at the same index).
// Steps per rank (the same fold as "shm", on the PeerMemory interface: algo/peer_fold.h):
//   Exchange (publish {sendBuf, recvBuf, fingerprint}; barrier; compare fingerprints: a
//   mismatch fails every rank with the same message, naming the lowest differing rank);
//   fold own slice; barrier (the root's result is complete and no rank's sendBuf is read any more).
//   Bytes moved per rank: reads n x S/n, writes S/n; no copies, no messages.
// Example: count 10 fp32 (40 B), 3 ranks, slices aligned to 16 elements (64 B): rank 0 folds
//   [0, 10), ranks 1 and 2 get empty slices. count 100: [0,48), [48,96), [96,100).
#include "algo/peer_fold.h"
#include "algo/reduce/reduce_algorithms.h"

namespace hostccl::algo {

Status ReduceDirect(Context& ctx, const ReduceArgs& a) {
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "direct reduce needs every rank in this process"));
  return ReduceSlices(ctx, g, a);
}

}  // namespace hostccl::algo
