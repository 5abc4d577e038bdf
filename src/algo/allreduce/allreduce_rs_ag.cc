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
// Preconditions: a transport (any n; n = 1 copies).
// Example: 2 ranks, 8 MiB fp32, 1 MiB chunks: rank 0 owns the first 4 MiB; it sends its second
//   half to rank 1 in 4 chunks while receiving rank 1's first half; folds chunk c as soon as it
//   arrived and sends the result to rank 1, which receives it into recvBuf directly.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/primitives.h"
#include "kernels/reduce.h"

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
  std::vector<uint64_t> lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) PartRange(a.count, n, r, align, &lo[static_cast<size_t>(r)], &hi[static_cast<size_t>(r)]);
  const uint64_t chunk = std::max<uint64_t>(align, ChunkElems(ctx, a) / align * align);
  auto nchunks = [&](int r) { return (hi[static_cast<size_t>(r)] - lo[static_cast<size_t>(r)] + chunk - 1) / chunk; };
  auto coff = [&](int r, uint64_t c) { return lo[static_cast<size_t>(r)] + c * chunk; };
  auto clen = [&](int r, uint64_t c) { return std::min(chunk, hi[static_cast<size_t>(r)] - coff(r, c)); };
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  const uint64_t mine = nchunks(me);

  // Reduce-scatter sends: all of them at once, from the sendBuf, to each owner in chunk order.
  std::vector<net::RequestId> sends;
  for (int k = 1; k < n; ++k) {
    const int j = (me + k) % n;
    for (uint64_t c = 0; c < nchunks(j); ++c) {
      net::RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend(j, send + coff(j, c) * es, clen(j, c) * es, ctx.fp, &id));
      sends.push_back(id);
    }
  }
  // Reduce-scatter receives of my slice: K slots, each (n-1) chunks.
  constexpr uint64_t kSlots = 3;
  const uint64_t slot_elems = chunk * static_cast<uint64_t>(n - 1);
  char* slots = mine > 0 ? static_cast<char*>(ctx.scratch->Get(kSlots * slot_elems * es)) : nullptr;
  if (mine > 0 && slots == nullptr) return Status(Code::kMemory, "cannot allocate rs_ag staging");
  auto peer_buf = [&](uint64_t c, int r) {  // chunk c of rank r's contribution (r != me)
    const uint64_t idx = static_cast<uint64_t>(r < me ? r : r - 1);
    return slots + ((c % kSlots) * slot_elems + idx * chunk) * es;
  };
  std::vector<net::RequestId> rs(mine * static_cast<uint64_t>(n));
  auto post_rs = [&](uint64_t c) -> Status {
    for (int r = 0; r < n; ++r)
      if (r != me)
        HOSTCCL_RETURN_IF_ERROR(t->Irecv(r, peer_buf(c, r), clen(me, c) * es, ctx.fp, &rs[c * static_cast<uint64_t>(n) + static_cast<uint64_t>(r)]));
    return Status::Ok();
  };
  // Allgather receives, posted once every reduce-scatter receive is (FIFO per pair).
  std::vector<net::RequestId> ag;
  bool ag_posted = false;
  auto post_ag = [&]() -> Status {
    ag_posted = true;
    for (int k = 1; k < n; ++k) {
      const int j = (me + n - k) % n;
      for (uint64_t c = 0; c < nchunks(j); ++c) {
        net::RequestId id;
        HOSTCCL_RETURN_IF_ERROR(t->Irecv(j, recv + coff(j, c) * es, clen(j, c) * es, ctx.fp, &id));
        ag.push_back(id);
      }
    }
    return Status::Ok();
  };
  uint64_t posted = std::min<uint64_t>(kSlots, mine);
  for (uint64_t c = 0; c < posted; ++c) HOSTCCL_RETURN_IF_ERROR(post_rs(c));
  if (posted == mine) HOSTCCL_RETURN_IF_ERROR(post_ag());

  thread_local std::vector<const void*> srcs;
  srcs.resize(static_cast<size_t>(n));
  std::vector<net::RequestId> out;  // allgather sends of my folded chunks
  for (uint64_t c = 0; c < mine; ++c) {
    for (int r = 0; r < n; ++r) {
      if (r == me) {
        srcs[static_cast<size_t>(r)] = send + coff(me, c) * es;
        continue;
      }
      HOSTCCL_RETURN_IF_ERROR(t->Wait(rs[c * static_cast<uint64_t>(n) + static_cast<uint64_t>(r)], ctx.deadline));
      srcs[static_cast<size_t>(r)] = peer_buf(c, r);
    }
    char* dst = recv + coff(me, c) * es;
    kern::FoldN(a.dtype, a.op, dst, srcs.data(), n, clen(me, c));
    for (int k = 1; k < n; ++k) {
      net::RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend((me + k) % n, dst, clen(me, c) * es, ctx.fp, &id));
      out.push_back(id);
    }
    // Chunk c's slot is free: post the receives of chunk c + K into it.
    if (posted < mine) {
      HOSTCCL_RETURN_IF_ERROR(post_rs(posted));
      if (++posted == mine) HOSTCCL_RETURN_IF_ERROR(post_ag());
    }
  }
  if (!ag_posted) HOSTCCL_RETURN_IF_ERROR(post_ag());
  HOSTCCL_RETURN_IF_ERROR(t->WaitAll(sends.data(), sends.size(), ctx.deadline));
  HOSTCCL_RETURN_IF_ERROR(t->WaitAll(out.data(), out.size(), ctx.deadline));
  return t->WaitAll(ag.data(), ag.size(), ctx.deadline);
}

}  // namespace hostccl::algo
