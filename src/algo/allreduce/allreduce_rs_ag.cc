// AllReduce, "rs_ag": bandwidth-optimal over TCP, pipelined: reduce-scatter by owner, then allgather.
//
// What: rank i owns the 64-byte-aligned slice S_i = PartRange(count, n, i), cut into chunks
//   (ctx.chunk_bytes). Reduce-scatter: every rank sends chunk c of S_j to owner j (straight from its
//   sendBuf); owner j receives chunk c from all n-1 peers into staging slots and folds all n inputs
//   of it in rank order (its own from its sendBuf) into its recvBuf — the canonical fold, never a
//   ring-order one. Allgather: as soon as chunk c of S_j is folded, j sends it to every rank, which
//   receives it straight into its recvBuf. Both phases overlap chunk by chunk.
// Bytes per rank: sends 2 (n-1) S/n, receives 2 (n-1) S/n (the bandwidth-optimal volume); folds
//   n x S/n. Staging: K = 3 slots of (n-1) chunks.
// In place is safe: an allgather chunk of S_j reaches a rank only after owner j received that
//   rank's whole contribution to chunk c of S_j (causality), i.e. after its sendBuf range was sent.
// Matching: per pair, messages match in posting order; every rank posts, per peer, all
//   reduce-scatter receives before any allgather receive, and sends reduce-scatter chunks before
//   allgather chunks, in chunk order.
// The reduce-scatter half is algo/owner_fold.h's OwnerFold (shared with ReduceScatter "owner").
// Preconditions: a transport (any n; n = 1 copies).
// Example: 2 ranks, 8 MiB fp32, 1 MiB chunks: rank 0 owns the first 4 MiB; it sends its second
//   half to rank 1 in 4 chunks while receiving rank 1's first half; folds chunk c as soon as it
//   arrived and sends the result to rank 1, which receives it into recvBuf directly.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/owner_fold.h"
#include "algo/primitives.h"

namespace hostccl::algo {

Status AllReduceRsAg(Context& ctx, const OpArgs& a) {
  const int n = ctx.size, me = ctx.rank;
  const uint64_t es = DataTypeSize(a.dtype);
  if (n == 1) {
    if (a.recv != a.send) std::memcpy(a.recv, a.send, a.count * es);
    return Status::Ok();
  }
  net::Transport* t = ctx.transport;
  const uint64_t align = std::max<uint64_t>(1, 64 / es);
  OwnerSlices s;
  s.lo.resize(static_cast<size_t>(n));
  s.hi.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) PartRange(a.count, n, r, align, &s.lo[static_cast<size_t>(r)], &s.hi[static_cast<size_t>(r)]);
  s.chunk = std::max<uint64_t>(align, ChunkElems(ctx, a) / align * align);
  char* recv = static_cast<char*>(a.recv);

  // Allgather receives, posted once every reduce-scatter receive is (FIFO per pair).
  std::vector<net::RequestId> ag;
  OwnerFoldHooks hooks;
  hooks.all_posted = [&]() -> Status {
    for (int k = 1; k < n; ++k) {
      const int j = (me + n - k) % n;
      for (uint64_t c = 0; c < s.chunks(j); ++c) {
        net::RequestId id;
        HOSTCCL_RETURN_IF_ERROR(t->Irecv(j, recv + s.off(j, c) * es, s.len(j, c) * es, ctx.fp, &id));
        ag.push_back(id);
      }
    }
    return Status::Ok();
  };
  // Allgather sends: each folded chunk of my slice to every other rank.
  std::vector<net::RequestId> out;
  hooks.folded = [&](uint64_t c, char* folded) -> Status {
    for (int k = 1; k < n; ++k) {
      net::RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend((me + k) % n, folded, s.len(me, c) * es, ctx.fp, &id));
      out.push_back(id);
    }
    return Status::Ok();
  };
  HOSTCCL_RETURN_IF_ERROR(OwnerFold(ctx, a, s, recv + s.lo[static_cast<size_t>(me)] * es, hooks));
  HOSTCCL_RETURN_IF_ERROR(t->WaitAll(out.data(), out.size(), ctx.deadline));
  return t->WaitAll(ag.data(), ag.size(), ctx.deadline);
}

}  // namespace hostccl::algo
