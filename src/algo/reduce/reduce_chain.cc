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
//   Uses K = 4 staging slots of one chunk per rank (at most K-1 receives posted ahead).
// Example: n = 3, root = 0, 2 chunks: rank0 sends c0, c1 to rank1 and posts receives for the
//   results of c0, c1 from rank2; rank1 folds c0 with x1 and sends to rank2; rank2 folds with x2
//   and sends the result chunk to rank 0, which lands directly in recvBuf.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"
#include "kernels/reduce.h"

namespace hostccl::algo {
namespace {
constexpr uint64_t kSlots = 4;
}

Status ReduceChain(Context& ctx, const ReduceArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size, me = ctx.rank, last = n - 1;
  if (n == 1) {
    if (a.recv != a.send) std::memcpy(a.recv, a.send, a.count * es);
    return Status::Ok();
  }
  const uint64_t chunk = ChunkElems(ctx, a);
  const uint64_t nchunks = (a.count + chunk - 1) / chunk;
  auto off = [&](uint64_t c) { return c * chunk; };
  auto len = [&](uint64_t c) { return std::min(chunk, a.count - c * chunk); };
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  net::Transport* t = ctx.transport;

  std::vector<net::RequestId> finals;  // the root's receives of final chunks from rank n-1
  if (me == a.root && a.root != last) {
    finals.resize(nchunks);
    for (uint64_t c = 0; c < nchunks; ++c)
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(last, recv + off(c) * es, len(c) * es, ctx.fp, &finals[c]));
  }

  if (me == 0) {
    std::vector<net::RequestId> sends(nchunks);
    for (uint64_t c = 0; c < nchunks; ++c)
      HOSTCCL_RETURN_IF_ERROR(t->Isend(1, send + off(c) * es, len(c) * es, ctx.fp, &sends[c]));
    HOSTCCL_RETURN_IF_ERROR(t->WaitAll(sends.data(), sends.size(), ctx.deadline));
  } else {
    char* slots = static_cast<char*>(ctx.scratch->Get(kSlots * chunk * es));
    if (slots == nullptr) return Status(Code::kMemory, "cannot allocate chain staging");
    auto slot = [&](uint64_t c) { return slots + (c % kSlots) * chunk * es; };
    const int next = me == last ? a.root : me + 1;
    const bool final_here = me == last && a.root == last;
    std::vector<net::RequestId> recvs(nchunks), sends(nchunks);
    std::vector<bool> sent(nchunks, false);
    for (uint64_t c = 0; c < std::min<uint64_t>(kSlots - 1, nchunks); ++c)
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(me - 1, slot(c), len(c) * es, ctx.fp, &recvs[c]));
    for (uint64_t c = 0; c < nchunks; ++c) {
      uint64_t ahead = c + kSlots - 1;  // reuses the slot of chunk c-1
      if (ahead < nchunks) {
        if (c >= 1 && sent[c - 1]) {
          HOSTCCL_RETURN_IF_ERROR(t->Wait(sends[c - 1], ctx.deadline));
          sent[c - 1] = false;  // a request is waited once
        }
        HOSTCCL_RETURN_IF_ERROR(t->Irecv(me - 1, slot(ahead), len(ahead) * es, ctx.fp, &recvs[ahead]));
      }
      HOSTCCL_RETURN_IF_ERROR(t->Wait(recvs[c], ctx.deadline));
      const void* srcs[2] = {slot(c), send + off(c) * es};
      if (final_here) {
        kern::FoldN(a.dtype, a.op, recv + off(c) * es, srcs, 2, len(c));
      } else {
        kern::FoldN(a.dtype, a.op, slot(c), srcs, 2, len(c));
        HOSTCCL_RETURN_IF_ERROR(t->Isend(next, slot(c), len(c) * es, ctx.fp, &sends[c]));
        sent[c] = true;
      }
    }
    for (uint64_t c = 0; c < nchunks; ++c)
      if (sent[c]) HOSTCCL_RETURN_IF_ERROR(t->Wait(sends[c], ctx.deadline));
  }
  if (!finals.empty()) HOSTCCL_RETURN_IF_ERROR(t->WaitAll(finals.data(), finals.size(), ctx.deadline));
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
