// Reduce, "shm": slice-parallel fold over device memory shared between the processes of a host.
//
// What: like "direct", but ranks are processes: every rank publishes descriptors of its sendBuf
//   and recvBuf in the shared segment; after an arrival (a barrier that also carries every rank's
//   fingerprint) each rank maps (once, cached) the peers'
//   aclrtMalloc buffers and folds its slice of all ranks' inputs, in rank order, straight into the
//   root's recvBuf. A second barrier ends the operation.
// Small inputs (<= ShmGroup::kInlineBytes) travel in the arrival slot itself (the ticket, the
//   fingerprint and the first 32 bytes share one cache line). Pipelined completion (a call issued
//   back to back, ctx.may_run_ahead): a non-root posts its slot (ShmGroup::Post) and returns at
//   once, its input copied out, so its stream
//   moves on to the next queued call; the ring of slots bounds how far it runs ahead (ring - 1
//   tickets, ShmGroup::RingSlots). The root waits for every slot, compares the fingerprints,
//   folds from the slots in rank order and marks the ticket done; a non-root's synchronize
//   waits for that (Communicator::Settle) and reports a mismatch or failure of any call it ran
//   ahead of. Nobody waits for a second barrier.
// Plan (identical on every rank, since all read the same descriptors):
//   all sendBufs and the root's recvBuf shareable -> slice-parallel (reads n x S/n, writes S/n per rank);
//   a sendBuf not shareable, or the root's recvBuf not and process_vm_writev allowed ->
//     ReduceShmUnshared (single-copy CMA, staging through the segment, or TCP);
//   sendBufs shareable, root's recvBuf not, no CMA -> the root folds everything itself.
// Preconditions: ctx.shm (all ranks on this host); in place allowed on any rank.
// Example: 4 ranks, count 1000 fp32: slices of 256/256/256/232 elements (64-byte aligned); rank 2
//   reads elements [512, 768) of x0, x1, x2, x3 and writes them into the root's recvBuf.
#include <cstring>
#include <vector>

#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "algo/rank_scratch.h"
#include "algo/reduce/reduce_algorithms.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

Status ReduceShm(Context& ctx, const ReduceArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm reduce needs a shared segment");
  const uint64_t es = DataTypeSize(a.dtype);
  const uint64_t bytes = a.count * es;
  const bool inline_data = bytes <= net::ShmGroup::kInlineBytes;
  if (!inline_data) g->Publish(ctx.rank, a.send_desc, a.recv_desc);
  uint64_t t = 0;
  if (inline_data && ctx.rank != a.root && ctx.may_run_ahead) {
    // Small, non-root: the input is in the segment once posted; the sendBuf is no longer read.
    HOSTCCL_RETURN_IF_ERROR(g->Post(ctx.fp, a.send, bytes, ctx.deadline, ctx.fp.seq, ctx.check_fp, &t));
    ctx.ran_ahead = g;
    return Status::Ok();
  }
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, a.send, inline_data ? bytes : 0, ctx.deadline, ctx.fp.seq, &t));
  if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
  if (inline_data && ctx.rank != a.root) {
    // Small, not ahead: its own slot stays readable for the root; it reads no other slot of t
    // any more, so a non-root that ran ahead need not wait for this rank's next call to settle.
    g->MarkDone(t);
    return Status::Ok();
  }
  if (inline_data) {
    // Small, root: every input is in the segment; fold alone, then release the slots.
    const void* stack[kStackRanks];
    const void** in = RankScratch(stack, static_cast<size_t>(ctx.size), []() -> auto& {
      thread_local ExitMarked<std::vector<const void*>> v;
      return v;
    });
    for (int r = 0; r < ctx.size; ++r) in[r] = r == ctx.rank ? a.send : g->ArrivedPayload(r, t);
    FoldInputs(ctx, a.dtype, a.op, a.recv, in, ctx.size, a.count);
    g->MarkDone(t);
    return Status::Ok();
  }

  const bool sends_shared = g->FirstUnmappable(/*recv_too=*/false) < 0;
  const bool recv_shared = g->Shareable(g->RecvDesc(a.root));
  // Not shareable: single-copy (CMA), staging or TCP (reduce_shm_unshared.cc); every rank alike.
  if (!sends_shared || (!recv_shared && g->cma())) return ReduceShmUnshared(ctx, a);

  if (recv_shared) return ReduceSlices(ctx, g, a);  // the same fold as "direct" (algo/peer_fold.h)
  // sendBufs shareable, the root's recvBuf not, no CMA: the root folds everything itself.
  Status st;
  if (ctx.rank == a.root) st = FoldPeers(ctx, g, a, 0, a.count, static_cast<char*>(a.recv));
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  return g->Barrier(ctx.deadline, ctx.fp.seq);
}

}  // namespace hostccl::algo
