// ReduceScatter for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": every rank arrives with its whole sendBuf (n x B <= 4 KiB) inline in its arrival
//   slot and folds block r of all n slots in rank order into its recvBuf (ShmInlineFold,
//   algo/peer_fold.h): one arrival per operation. In place is safe (inputs are read from the
//   slots). A larger input (the default rule looks at B only) re-plans to "shm", logged once.
// "flat": every rank sends block j of its sendBuf to rank j (one message step), receives the n-1
//   peers' block r into scratch and folds all n in rank order (its own from its sendBuf) into its
//   recvBuf after every message completed. Bytes per rank: sends and receives (n-1) x B; latency
//   one hop. Every pair exchanges a message, so a rank whose fingerprint differs is seen by every
//   other rank. In place: both forms are safe (the sends are complete before the fold writes, and
//   recvBuf == sendBuf + r x B is only read at the index being written).
// Preconditions: "shm_inline": ctx.shm. "flat": a transport; scratch of (n-1) x B.
// ReduceScatterV: the same with block j at sendDispls[j] of sendCounts[j] elements.
// Example: 2 ranks, recvCount 1 fp32 SUM: rank 0 gets s0[0] + s1[0], rank 1 gets s0[1] + s1[1].
#include <cstring>
#include <vector>

#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "algo/reducescatter/reducescatter_algorithms.h"
#include "common/log.h"
#include "kernels/reduce.h"

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
  const int n = ctx.size;
  const uint64_t es = DataTypeSize(a.dtype), bytes = a.bytes();
  const char* send = static_cast<const char*>(a.send);
  const char* own = send + BlockAt(a, ctx.rank) * es;
  if (n == 1) {
    if (a.recv != own && bytes > 0) std::memcpy(a.recv, own, bytes);
    return Status::Ok();
  }
  char* scratch = bytes > 0 ? static_cast<char*>(ctx.scratch->Get(bytes * static_cast<uint64_t>(n - 1))) : nullptr;
  if (bytes > 0 && scratch == nullptr) return Status(Code::kMemory, "cannot allocate flat reducescatter scratch");
  thread_local std::vector<const void*> srcs;
  srcs.resize(static_cast<size_t>(n));
  Requests rq(ctx);
  int block = 0;
  for (int r = 0; r < n; ++r) {
    if (r == ctx.rank) {
      srcs[static_cast<size_t>(r)] = own;
      continue;
    }
    char* buf = scratch + static_cast<uint64_t>(block++) * bytes;
    srcs[static_cast<size_t>(r)] = buf;
    HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, buf, bytes));
  }
  // Empty blocks travel as empty messages: every pair still exchanges its fingerprint.
  for (int k = 1; k < n; ++k) {
    const int j = (ctx.rank + k) % n;
    HOSTCCL_RETURN_IF_ERROR(rq.Send(j, send + BlockAt(a, j) * es, BlockLen(a, j) * es));
  }
  HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
  if (a.count > 0) FoldInputs(ctx, a.dtype, a.op, a.recv, srcs.data(), n, a.count);
  return Status::Ok();
}

}  // namespace hostccl::algo
