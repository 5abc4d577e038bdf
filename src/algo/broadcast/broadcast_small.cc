// Broadcast for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": one arrival. The root arrives with its whole buffer inline in its arrival slot
//   (<= 4 KiB, ShmGroup::kInlineBytes), the others with nothing; after the arrival every non-root
//   copies the root's slot into its buffer. The slot stays readable until the root's next arrival,
//   which needs every rank's next arrival, so the root may return at once. Fingerprints travel in
//   the arrival and are compared by every rank.
// "flat": the root sends its buffer to every other rank (one message step), each non-root receives
//   it straight into its buffer and answers with a 1-byte acknowledgement; once the root has every
//   acknowledgement it sends each rank a 1-byte completion notice (FinishRooted), which the
//   non-roots wait for. So no rank reports success unless every rank's fingerprint matched: a rank
//   that finds a mismatch aborts every peer, and the notice never comes.
//   Bytes: the root sends (n-1) S; latency three hops.
// Preconditions: "shm_inline": ctx.shm and S <= 4 KiB (its registry max_bytes: the selector gives a
//   larger call to the default rules, even when forced; called anyway it fails with kInternal). "flat": a transport (n = 1: nothing to do).
// Example: 3 ranks, root 2, 8 B: rank 2 arrives with its 8 bytes; ranks 0 and 1 copy them.
#include <cstring>
#include <vector>


#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/primitives.h"

namespace hostccl::algo {

Status BroadcastShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline broadcast needs a shared segment");
  const uint64_t bytes = a.bytes();
  if (bytes > net::ShmGroup::kInlineBytes)
    return MakeStatus(Code::kInternal, "shm_inline broadcast takes at most %zu bytes, not %llu",
                      net::ShmGroup::kInlineBytes, static_cast<unsigned long long>(bytes));
  const bool root = ctx.rank == a.root;
  uint64_t t = 0;
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, root ? a.send : nullptr, root ? bytes : 0, ctx.deadline, ctx.fp.seq, &t));
  if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
  if (!root) std::memcpy(a.recv, g->ArrivedPayload(a.root, t), bytes);
  return Status::Ok();
}

Status BroadcastFlat(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  if (n == 1) return Status::Ok();
  const uint64_t bytes = a.bytes();
  Requests rq(ctx);
  static const uint8_t kAck = 1;
  if (ctx.rank == a.root) {
    thread_local std::vector<uint8_t> acks;
    acks.assign(static_cast<size_t>(n), 0);
    for (int k = 1; k < n; ++k) HOSTCCL_RETURN_IF_ERROR(rq.Send((a.root + k) % n, a.send, bytes));
    for (int k = 1; k < n; ++k) {
      const int r = (a.root + k) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, &acks[static_cast<size_t>(r)], 1));
    }
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    return FinishRooted(ctx, a.root);
  }
  HOSTCCL_RETURN_IF_ERROR(RecvFrom(ctx, a.root, a.recv, bytes));
  HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, a.root, &kAck, 1));
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
