// Reduce, "chain": a pipelined chain in rank order.
//
// What: rank 0 sends x0 to rank 1; rank i (0 < i < n-1) receives the partial p(i-1) =
//   (..(x0 ⊕ x1)..) ⊕ x(i-1), computes p(i) = p(i-1) ⊕ xi and sends it to rank i+1; rank n-1
//   computes the full fold and writes it into recvBuf (if it is the root) or sends it to the root.
//   The data moves in chunks, so all links work at once: a pipeline.
// Preconditions: a transport; any count; any root; in place on any rank (a rank reads its own
//   chunk before the final result of that chunk can exist, so aliasing is safe).
// Steps and bytes: each rank sends S and receives S (the root also receives S from rank n-1);
//   each rank except 0 performs one ⊕ pass over S. Time ~ S/bw + (n-1) x chunk latency.
//   Ends with the root's 1-byte completion notice to every rank (FinishRooted).
//   Written on the chunk pipeline (algo/pipeline.h): rank 0 Send, ranks 1..n-2 RecvReduceSend,
//   rank n-1 RecvReduceCopy (root) or RecvReduceSend to the root; K = 4 staging slots per rank.
//   fp32 accumulation (HOSTCCL_ACCUMULATE=fp32, fp16/bf16 sum/prod): the partials p(i) travel as
//   fp32 (2S on each link but the last one), rank n-1 rounds once: the bits of one fp32 fold.
// Example: n = 3, root = 0, 2 chunks: rank0 sends c0, c1 to rank1 and posts receives for the
//   results of c0, c1 from rank2; rank1 folds c0 with x1 and sends to rank2; rank2 folds with x2
//   and sends the result chunk to rank 0, which lands directly in recvBuf.
#include <cstring>

#include "algo/pipeline.h"
#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"

namespace hostccl::algo {

Status ReduceChain(Context& ctx, const ReduceArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size, me = ctx.rank, last = n - 1;
  if (n == 1) {
    if (a.recv != a.send) std::memcpy(a.recv, a.send, a.count * es);
    return Status::Ok();
  }
  ChunkPipeline pipe(ctx, a.dtype, a.op, a.count, ChunkElems(ctx, a));
  // The root (when not the last rank) receives the final chunks from rank n-1 straight into recvBuf.
  if (me == a.root && a.root != last) HOSTCCL_RETURN_IF_ERROR(pipe.PostRecvAll(last, a.recv));
  if (me == 0) {
    HOSTCCL_RETURN_IF_ERROR(pipe.SendFirst(1, a.send));
  } else if (me < last) {
    HOSTCCL_RETURN_IF_ERROR(pipe.RecvReduceSend(me - 1, me + 1, a.send));
  } else if (a.root == last) {
    HOSTCCL_RETURN_IF_ERROR(pipe.RecvReduceCopy(me - 1, a.send, a.recv));
  } else {
    HOSTCCL_RETURN_IF_ERROR(pipe.RecvReduceSend(me - 1, a.root, a.send, /*to_root=*/true));
  }
  HOSTCCL_RETURN_IF_ERROR(pipe.WaitPosted());
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
