// Broadcast for small messages: "shm_inline" (processes of one host) and "flat" (TCP).
//
// "shm_inline": the root runs ahead (pipelined completion, docs/performance.md). It posts its whole
//   buffer (<= 4 KiB, ShmGroup::kInlineBytes) inline in its arrival slot (ShmGroup::Post) and
//   returns at once, so its stream moves on to the next queued call; the others post their
//   fingerprints without marking the ticket done (Post with `reads`), wait for the root's slot
//   alone (AwaitArrival), compare the root's fingerprint with their own, copy the slot into their
//   buffer and mark the ticket done. The root reuses that slot only `ring` tickets later, once every
//   rank marked it done (flow control: the root gets at most ring - 1 calls ahead of the slowest
//   rank). Fingerprints the ranks did not compare directly (non-root against non-root, the root
//   against everyone) are compared from the fingerprint history at later posts and at the
//   stream's synchronize (Communicator::Settle), where a mismatch or a failed peer of any call that
//   ran ahead is reported on every rank. Bytes: the root writes S into its slot, every other rank
//   reads S from it.
// "flat": the root sends its buffer to every other rank (one message step), each non-root receives
//   it straight into its buffer and answers with a 1-byte acknowledgement; once the root has every
//   acknowledgement it sends each rank a 1-byte completion notice (FinishRooted), which the
//   non-roots wait for. So no rank reports success unless every rank's fingerprint matched: a rank
//   that finds a mismatch aborts every peer, and the notice never comes.
//   Bytes: the root sends (n-1) S; latency three hops.
// Preconditions: "shm_inline": ctx.shm and S <= 4 KiB (its registry max_bytes: the selector gives a
//   larger call to the default rules, even when forced; called anyway it fails with kInternal). "flat": a transport (n = 1: nothing to do).
// Example: 3 ranks, root 2, 8 B: rank 2 posts its 8 bytes and returns; ranks 0 and 1 post, wait for
//   rank 2's slot, copy the 8 bytes and mark the ticket done.
#include <cstring>
#include <vector>


#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status BroadcastShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline broadcast needs a shared segment");
  const uint64_t bytes = a.bytes();
  if (bytes > net::ShmGroup::kInlineBytes)
    return MakeStatus(Code::kInternal, "shm_inline broadcast takes at most %zu bytes, not %llu",
                      net::ShmGroup::kInlineBytes, static_cast<unsigned long long>(bytes));
  return ShmInlineRooted(ctx, a, a.send, bytes, 0);
}

Status BroadcastFlat(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  if (n == 1) return Status::Ok();
  const uint64_t bytes = a.bytes();
  Requests rq(ctx);
  static const uint8_t kAck = 1;
  if (ctx.rank == a.root) {
    thread_local ExitMarked<std::vector<uint8_t>> acks;
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
