// Scatter: "shm_inline" (processes of one host, small) and "flat" (TCP, any size).
//
// "shm_inline": the root runs ahead (pipelined completion, as Broadcast's shm_inline). It posts
//   its whole sendBuf (n x S <= 4 KiB, ShmGroup::kInlineBytes) inline in its arrival slot, copies
//   its own block locally and returns at once; every other rank posts its fingerprint without
//   marking the ticket done, waits for the root's slot alone, compares the root's fingerprint with
//   its own, copies its block out of the slot and marks the ticket done. Flow control by the ring
//   of slots (the root gets at most ring - 1 calls ahead); fingerprints not compared directly are
//   compared from the history at later posts and at the stream's synchronize. Bytes: the root
//   writes n x S into its slot and S locally, every other rank reads S.
// "flat": the root sends block r straight from its sendBuf to each rank r (all sends posted at once;
//   the root's link has to carry (n-1) S whatever the plan, so a chain or tree would not shorten it),
//   each rank receives it straight into its recvBuf and answers with a 1-byte acknowledgement; with
//   every acknowledgement the root sends each rank a 1-byte completion notice (FinishRooted), which
//   they wait for: no rank reports success unless every rank's fingerprint matched the root's.
//   Bytes: the root sends (n-1) S; every other rank receives S. Latency three hops.
// In place (root): recvBuf == sendBuf + root*S; the own copy is skipped.
// Preconditions: "shm_inline": ctx.shm; n x S > 4 KiB re-plans to "shm" (logged once; the rules
//   see one block, not n). "flat": a transport (n = 1: a local copy).
// Example: 3 ranks, root 0, 8 B each: rank 0 posts 24 bytes and returns; rank 2 copies bytes [16, 24)
//   of rank 0's slot and marks the ticket done.
#include <cstring>
#include <vector>

#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "algo/scatter/scatter_algorithms.h"
#include "common/log.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status ScatterShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline scatter needs a shared segment");
  const uint64_t bytes = a.bytes(), total = bytes * static_cast<uint64_t>(ctx.size);
  if (total > net::ShmGroup::kInlineBytes) {
    // The rules see one block; n of them do not fit: re-plan (identical on every rank) to "shm".
    if (g->FirstUse("scatter shm_inline -> shm"))
      HLOG_INFO(kAlgo, "HcclScatter #%llu: %llu bytes in all exceed the %zu-byte arrival slot; re-plan shm_inline -> shm",
                static_cast<unsigned long long>(ctx.fp.seq), static_cast<unsigned long long>(total),
                net::ShmGroup::kInlineBytes);
    return ScatterShm(ctx, a);
  }
  return ShmInlineRooted(ctx, a, a.send, total, bytes);
}

Status ScatterFlat(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  const uint64_t bytes = a.bytes();
  static const uint8_t kAck = 1;
  if (ctx.rank == a.root) {
    const char* send = static_cast<const char*>(a.send);
    const char* mine = send + static_cast<uint64_t>(a.root) * bytes;
    if (mine != a.recv) std::memcpy(a.recv, mine, bytes);
    if (n == 1) return Status::Ok();
    thread_local ExitMarked<std::vector<uint8_t>> acks;
    acks.assign(static_cast<size_t>(n), 0);
    Requests rq(ctx);
    for (int k = 1; k < n; ++k) {
      const int r = (a.root + k) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, &acks[static_cast<size_t>(r)], 1));
    }
    for (int k = 1; k < n; ++k) {
      const int r = (a.root + k) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Send(r, send + static_cast<uint64_t>(r) * bytes, bytes));
    }
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    return FinishRooted(ctx, a.root);
  }
  HOSTCCL_RETURN_IF_ERROR(RecvFrom(ctx, a.root, a.recv, bytes));
  HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, a.root, &kAck, 1));
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
