// Reduce, "gather": raw inputs to the root, folded there in rank order.
//
// What: every non-root rank sends its sendBuf to the root; the root receives all of them into
//   scratch and computes recvBuf = ((x0 ⊕ x1) ⊕ ...) ⊕ x(n-1) with one FoldN pass.
// Preconditions: a transport to the root; any count (large counts go in chunks bounded by the
//   staging size: chunk = staging / (n-1), identical on every rank).
// Steps and bytes: one message step (+ the root's 1-byte completion notice to each rank, see
//   FinishRooted); each non-root sends S; the root receives (n-1) x S and folds
//   n inputs. Latency-optimal for small S (one hop), bandwidth-poor for large S (the root's link
//   carries (n-1) x S), hence the selector's size threshold.
// Example: 4 ranks, root 2, count 8 fp32: ranks 0, 1, 3 send 32 B each; root receives into
//   scratch blocks [0]=x0, [1]=x1, [2]=x3 and folds srcs {x0, x1, sendBuf(x2), x3}.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

Status ReduceGather(Context& ctx, const ReduceArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size;
  if (n == 1) {
    if (a.recv != a.send) std::memcpy(a.recv, a.send, a.count * es);
    return Status::Ok();
  }
  uint64_t chunk = std::max<uint64_t>(1, ctx.staging_bytes / static_cast<uint64_t>(n - 1) / es);
  chunk = std::min<uint64_t>(chunk, a.count);
  if (ctx.rank != a.root) {
    Requests rq(ctx);
    for (uint64_t off = 0; off < a.count; off += chunk) {
      uint64_t len = std::min(chunk, a.count - off);
      HOSTCCL_RETURN_IF_ERROR(rq.Send(a.root, static_cast<const char*>(a.send) + off * es, len * es));
    }
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    return FinishRooted(ctx, a.root);
  }
  char* scratch = static_cast<char*>(ctx.scratch->Get(chunk * es * static_cast<uint64_t>(n - 1)));
  if (scratch == nullptr) return Status(Code::kMemory, "cannot allocate gather scratch");
  thread_local ExitMarked<std::vector<const void*>> srcs;
  srcs.resize(static_cast<size_t>(n));
  for (uint64_t off = 0; off < a.count; off += chunk) {
    uint64_t len = std::min(chunk, a.count - off);
    Requests rq(ctx);
    int block = 0;
    for (int r = 0; r < n; ++r) {
      if (r == a.root) {
        srcs[static_cast<size_t>(r)] = static_cast<const char*>(a.send) + off * es;
        continue;
      }
      char* buf = scratch + static_cast<uint64_t>(block++) * chunk * es;
      srcs[static_cast<size_t>(r)] = buf;
      HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, buf, len * es));
    }
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    FoldInputs(ctx, a.dtype, a.op, static_cast<char*>(a.recv) + off * es, srcs.data(), n, len);
  }
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
