// HcclAllGatherV: "direct", "shm", "shm_pull", "shm_inline", "flat", "ring" ("node":
// allgatherv_node.cc) — the AllGather plans over blocks of their own sizes and places.
//
// What: rank i's block is recvCounts[i] elements, written at recvDispls[i] of every rank's recvBuf
//   (B_i = recvCounts[i] x element size bytes at D_i = recvDispls[i] x element size). The arrays are
//   identical on every rank (their hash is in the fingerprint; core's argument check has already
//   rejected overlapping target ranges and sendCount != recvCounts[rank]); bytes of recvBuf outside
//   the n target ranges (gaps, the tail) are never written; zero-count blocks are skipped.
//   "direct"/"shm"/"shm_pull": after Exchange (fingerprints compared before any byte moves, so
//     arrays that disagree fail every rank before a copy could overrun), the pieces of every block
//     are claimed by the ranks and written into every recvBuf (PushBlocks, as AllGather), or with
//     "shm_pull" each rank copies every peer's block out of its sendBuf (PullBlocks); "shm"
//     re-plans to "shm_pull" when a recvBuf cannot be mapped, and both re-plan to "ring" when a
//     rank with a non-empty block has a sendBuf peers cannot map (logged once).
//   "shm_inline": one arrival carrying each rank's block (every block <= 4 KiB; otherwise it
//     re-plans to "shm", logged once: every rank sees the same arrays).
//   "flat": every rank sends its block to every other (an empty message for an empty block, so every
//     pair compares fingerprints) and receives theirs at their displacements.
//   "ring": RingGather over the n blocks (every block at least one, possibly empty, message per hop).
// Bytes per rank: receives sum(B) - B_r, sends (n-1) B_r (flat) or sum(B) - B_{r+1} (ring).
// Not in place: sendBuf == recvBuf, or any overlap, is rejected by the argument check.
// Preconditions: as the AllGather plans of the same names (allgather_slices.cc, allgather_small.cc,
//   allgather_ring.cc).
// Example: 3 ranks, recvCounts {2, 0, 3}, recvDispls {4, 0, 0} (fp32): every rank gets rank 2's 12
//   bytes at recv+0 and rank 0's 8 bytes at recv+16; bytes 12..15 and 24.. keep their contents.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "common/log.h"
#include "common/thread_state.h"

namespace hostccl::algo {
void VBlocks(const Context& ctx, const OpArgs& a, std::vector<uint64_t>* off, std::vector<uint64_t>* len) {
  const uint64_t es = DataTypeSize(a.dtype);
  const size_t n = static_cast<size_t>(ctx.size);
  off->resize(n);
  len->resize(n);
  for (size_t r = 0; r < n; ++r) {
    (*off)[r] = a.recv_displs[r] * es;
    (*len)[r] = a.recv_counts[r] * es;
  }
}

Status AllGatherVDirect(Context& ctx, const OpArgs& a) {
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "direct allgatherv needs every rank in this process"));
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  VBlocks(ctx, a, &off, &len);
  return PushBlocks(ctx, g, a.send, static_cast<char*>(a.recv), off.data(), len.data());
}

namespace {

Status Shm(Context& ctx, const OpArgs& a, bool push) {
  net::ShmGroup* g = ctx.shm;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "shm allgatherv needs a shared segment"));
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  VBlocks(ctx, a, &off, &len);
  int unshared = -1;
  for (int r = 0; r < ctx.size && unshared < 0; ++r)
    if (len[static_cast<size_t>(r)] > 0 && !g->Shareable(g->SendDesc(r))) unshared = r;
  if (unshared >= 0)
    return ReplanOverTransport(ctx, g, a, unshared, "sendBuf", "allgatherv shm -> ring", &AllGatherVRing);
  char* recv = static_cast<char*>(a.recv);
  if (push && g->FirstUnmappable(/*recv_too=*/true) >= 0) {
    if (g->FirstUse("allgatherv shm -> shm_pull"))
      HLOG_INFO(kAlgo, "HcclAllGatherV #%llu: rank %d's recvBuf: not aclrtMalloc memory; re-plan shm -> shm_pull",
                static_cast<unsigned long long>(ctx.fp.seq), g->FirstUnmappable(true));
    push = false;
  }
  return push ? PushBlocks(ctx, g, a.send, recv, off.data(), len.data())
              : PullBlocks(ctx, g, a.send, recv, off.data(), len.data());
}

}  // namespace

Status AllGatherVShm(Context& ctx, const OpArgs& a) { return Shm(ctx, a, true); }
Status AllGatherVShmPull(Context& ctx, const OpArgs& a) { return Shm(ctx, a, false); }

Status AllGatherVShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline allgatherv needs a shared segment");
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  VBlocks(ctx, a, &off, &len);
  if (*std::max_element(len.begin(), len.end()) > net::ShmGroup::kInlineBytes) {
    if (g->FirstUse("allgatherv shm_inline -> shm"))
      HLOG_INFO(kAlgo, "HcclAllGatherV #%llu: a block exceeds the %zu-byte arrival slot; re-plan shm_inline -> shm",
                static_cast<unsigned long long>(ctx.fp.seq), net::ShmGroup::kInlineBytes);
    return AllGatherVShm(ctx, a);
  }
  uint64_t t = 0;
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, a.send, a.bytes(), ctx.deadline, ctx.fp.seq, &t));
  if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
  char* recv = static_cast<char*>(a.recv);
  for (int r = 0; r < ctx.size; ++r) {
    const size_t k = static_cast<size_t>(r);
    if (len[k] > 0) std::memcpy(recv + off[k], g->ArrivedPayload(r, t), len[k]);
  }
  return Status::Ok();
}

Status AllGatherVFlat(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  VBlocks(ctx, a, &off, &len);
  char* recv = static_cast<char*>(a.recv);
  const size_t me = static_cast<size_t>(ctx.rank);
  if (len[me] > 0) std::memcpy(recv + off[me], a.send, len[me]);
  if (n == 1) return Status::Ok();
  Requests rq(ctx);
  for (int k = 1; k < n; ++k) {
    const size_t r = static_cast<size_t>((ctx.rank + n - k) % n);
    HOSTCCL_RETURN_IF_ERROR(rq.Recv(static_cast<int>(r), len[r] > 0 ? recv + off[r] : nullptr, len[r]));
  }
  for (int k = 1; k < n; ++k) HOSTCCL_RETURN_IF_ERROR(rq.Send((ctx.rank + k) % n, recv + off[me], len[me]));
  return rq.WaitAll();
}

Status AllGatherVRing(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  thread_local ExitMarked<std::vector<int>> members;
  VBlocks(ctx, a, &off, &len);
  char* recv = static_cast<char*>(a.recv);
  const size_t me = static_cast<size_t>(ctx.rank);
  if (len[me] > 0) std::memcpy(recv + off[me], a.send, len[me]);
  if (n == 1) return Status::Ok();
  members.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) members[static_cast<size_t>(r)] = r;
  return RingGather(ctx, members.data(), n, ctx.rank, off.data(), len.data(), recv, ctx.chunk_bytes);
}

}  // namespace hostccl::algo
