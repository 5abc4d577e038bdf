// AllReduce, "direct" (threads of one process) and "shm" (processes of one host): slice-parallel,
// single pass over PeerMemory (algo/peer_fold.h).
//
// What: after Exchange (buffers and fingerprints published, compared), rank i owns the 64-byte
//   aligned slice S_i = PartRange(count, n, i). It folds S_i of all n sendBufs in rank order, piece
//   by piece (kAllReducePieceBytes), into its own recvBuf, and copies each piece, still in cache,
//   into every other rank's recvBuf at S_i. One final barrier.
// In place (sendBuf == recvBuf on any rank) is safe without an extra barrier: S_i of every input is
//   read only by its owner i, and i overwrites recvBuf_j[S_i] only after it folded that piece.
// Preconditions: "direct": ctx.local. "shm": ctx.shm and every sendBuf and recvBuf shareable
//   (aclrtMalloc memory); otherwise every rank (they all read the same descriptors) re-plans to
//   "rs_ag" over TCP and logs it once.
// Bytes per rank: reads n x S/n, writes n x S/n (S = count x element size); no messages.
// Example: 4 ranks, count 1000 fp32: slices 256/256/256/232 elements; rank 2 folds elements
//   [512, 768) of x0..x3 into its recvBuf and copies them into recvBufs 0, 1 and 3.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "common/log.h"
#include "kernels/copy.h"

namespace hostccl::algo {
namespace {

Status Slices(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size;
  uint64_t begin = 0, end = 0;
  PartRange(a.count, n, ctx.rank, std::max<uint64_t>(1, 64 / es), &begin, &end);
  Status st;
  if (begin < end) {
    thread_local std::vector<char*> dsts;
    dsts.assign(static_cast<size_t>(n), nullptr);
    std::string why;
    for (int r = 0; r < n && st.ok(); ++r) {
      dsts[static_cast<size_t>(r)] = static_cast<char*>(r == ctx.rank ? a.recv : g->PeerRecv(r, &why));
      if (dsts[static_cast<size_t>(r)] == nullptr) st = Status(Code::kRemote, why);
    }
    char* mine = static_cast<char*>(a.recv);
    const uint64_t piece = std::max<uint64_t>(1, kAllReducePieceBytes / es);
    for (uint64_t lo = begin; lo < end && st.ok(); lo += piece) {
      const uint64_t hi = std::min(end, lo + piece);
      st = FoldPeers(ctx, g, a, lo, hi, mine);
      for (int r = 0; r < n && st.ok(); ++r)
        if (r != ctx.rank) kern::CopyStreaming(dsts[static_cast<size_t>(r)] + lo * es, mine + lo * es, (hi - lo) * es);
    }
  }
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
}

}  // namespace

Status AllReduceDirect(Context& ctx, const OpArgs& a) {
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "direct allreduce needs every rank in this process"));
  return Slices(ctx, g, a);
}

Status AllReduceShm(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "shm allreduce needs a shared segment"));
  const int unshared = g->FirstUnmappable(/*recv_too=*/true);
  if (unshared < 0) return Slices(ctx, g, a);
  // Re-plan (identical on every rank: all read the same descriptors): "rs_ag" over TCP.
  return ReplanOverTransport(ctx, g, a, unshared, "buffers", "allreduce shm -> rs_ag", &AllReduceRsAg);
}

}  // namespace hostccl::algo
