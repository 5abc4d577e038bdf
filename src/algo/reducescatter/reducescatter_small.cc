// ReduceScatter for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": every rank arrives with its whole sendBuf (n x B <= 4 KiB) inline in its arrival
//   slot and folds block r of all n slots in rank order into its recvBuf (ShmInlineFold,
//   algo/peer_fold.h): one arrival per operation. In place is safe (inputs are read from the
//   slots). A larger input (the default rule looks at B only) re-plans to "shm", logged once.
// "flat": every rank sends block j of its sendBuf to rank j (one message step), receives the n-1
//   peers' block r into scratch and folds all n in rank order (its own from its sendBuf) into its
//   recvBuf after every message completed (FlatFold, algo/primitives.h, shared with AllReduce's).
//   Bytes per rank: sends and receives (n-1) x B; latency one hop. Every pair exchanges a message,
//   so a rank whose fingerprint differs is seen by every other rank. In place: both forms are safe (the sends are complete before the fold writes, and
//   recvBuf == sendBuf + r x B is only read at the index being written).
// Preconditions: "shm_inline": ctx.shm. "flat": a transport; scratch of (n-1) x B.
// ReduceScatterV: the same with block j at sendDispls[j] of sendCounts[j] elements.
// Example: 2 ranks, recvCount 1 fp32 SUM: rank 0 gets s0[0] + s1[0], rank 1 gets s0[1] + s1[1].
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "algo/reducescatter/reducescatter_algorithms.h"
#include "common/log.h"

namespace hostccl::algo {

Status ReduceScatterShmInline(Context& ctx, const OpArgs& a) {
  const uint64_t in = InputExtent(a, ctx.size) * DataTypeSize(a.dtype);
  if (in > net::ShmGroup::kInlineBytes && ctx.shm != nullptr) {
    // Every rank sees the same size (a rank that differs is found by shm's arrival).
    if (ctx.shm->FirstUse("reducescatter shm_inline -> shm"))
      HLOG_INFO(kAlgo, "%s #%llu: %llu input bytes exceed the inline %zu; re-plan shm_inline -> shm",
                CollKindName(a.kind), static_cast<unsigned long long>(ctx.fp.seq), static_cast<unsigned long long>(in),
                net::ShmGroup::kInlineBytes);
    return ReduceScatterShm(ctx, a);
  }
  return ShmInlineFold(ctx, a, in, BlockAt(a, ctx.rank), "shm_inline reducescatter");
}

Status ReduceScatterFlat(Context& ctx, const OpArgs& a) {
  // Peer j gets block j of the sendBuf; this rank folds its own block r with the peers'.
  auto block_of = [](const OpArgs& x, int j) {
    const uint64_t es = DataTypeSize(x.dtype);
    return BlockRef{static_cast<const char*>(x.send) + BlockAt(x, j) * es, BlockLen(x, j) * es};
  };
  return FlatFold(ctx, a, block_of(a, ctx.rank).data, a.bytes(), block_of, "flat reducescatter");
}

}  // namespace hostccl::algo
