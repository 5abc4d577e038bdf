// AllGather for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": every rank arrives with its block inline in its arrival slot (S <= 4 KiB,
//   ShmGroup::kInlineBytes), and after the one arrival every rank copies all n slots into its
//   recvBuf in rank order. Slots of an arrival stay readable until the owner's next arrival, which
//   needs every rank's next arrival, so nothing else is needed: one arrival per operation. In place
//   is safe (blocks are read from the slots, the own one too).
// "flat": every rank sends its block to every other rank (one message step) and receives theirs
//   straight into its recvBuf at their blocks. Every pair exchanges a message, so a rank whose
//   fingerprint differs is seen by every other rank, and no rank can finish before it has heard
//   from every rank. Bytes per rank: sends and receives (n-1) S; latency one hop.
//   In place: after AllGatherInPlace the own block is sendBuf, which no receive writes.
// Preconditions: "shm_inline": ctx.shm; S > 4 KiB (only when forced) re-plans to "shm", logged
//   once. "flat": a transport (n = 1: a local copy).
// Example: 3 ranks, 8 B each: rank 2 arrives with its 8 bytes; every rank copies slots 0, 1, 2 to
//   recv+0, +8, +16.
#include <cstring>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/primitives.h"
#include "common/log.h"

namespace hostccl::algo {

Status AllGatherShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline allgather needs a shared segment");
  const uint64_t bytes = a.bytes();
  if (bytes > net::ShmGroup::kInlineBytes) {
    // Forced beyond the slot: re-plan (identical on every rank) to "shm".
    if (g->FirstUse("allgather shm_inline -> shm"))
      HLOG_INFO(kAlgo, "HcclAllGather #%llu: a %llu-byte block exceeds the %zu-byte arrival slot; re-plan shm_inline -> shm",
                static_cast<unsigned long long>(ctx.fp.seq), static_cast<unsigned long long>(bytes),
                net::ShmGroup::kInlineBytes);
    return AllGatherShm(ctx, a);
  }
  uint64_t t = 0;
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, a.send, bytes, ctx.deadline, ctx.fp.seq, &t));
  if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
  char* recv = static_cast<char*>(a.recv);
  for (int r = 0; r < ctx.size; ++r)
    std::memcpy(recv + static_cast<uint64_t>(r) * bytes, g->ArrivedPayload(r, t), bytes);
  return Status::Ok();
}

Status AllGatherFlat(Context& ctx, const OpArgs& in) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  const int n = ctx.size;
  const uint64_t bytes = a.bytes();
  char* recv = static_cast<char*>(a.recv);
  char* own = recv + static_cast<uint64_t>(ctx.rank) * bytes;
  if (a.send != own) std::memcpy(own, a.send, bytes);
  if (n == 1) return Status::Ok();
  Requests rq(ctx);
  for (int k = 1; k < n; ++k) {
    const int r = (ctx.rank + n - k) % n;
    HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, recv + static_cast<uint64_t>(r) * bytes, bytes));
  }
  // Sends to the ranks after this one first, so the ranks' sends are spread over their peers.
  for (int k = 1; k < n; ++k) HOSTCCL_RETURN_IF_ERROR(rq.Send((ctx.rank + k) % n, own, bytes));
  return rq.WaitAll();
}

}  // namespace hostccl::algo
