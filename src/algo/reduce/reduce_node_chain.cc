// Reduce, "node_chain": a pipelined chain over hosts; inside a host, shared memory.
//
// What: hosts hold contiguous rank ranges H0 = [0, a), H1 = [a, b), ... For each chunk, host k
//   computes P_k = (..((P_{k-1} ⊕ x_first) ⊕ x_first+1)..) ⊕ x_last — the canonical rank-order fold
//   continued from the partial P_{k-1} that host k-1's leader sent — and its leader sends P_k on to
//   host k+1's leader (the last host's result goes to the root, or straight into the root's
//   recvBuf when the root lives on the last host). Inside a host the chunk is folded
//   slice-parallel: every local rank folds a sub-slice of the chunk from the shared input slot and
//   every local rank's mapped sendBuf, in rank order, into the shared output slot.
// fp32 accumulation (ctx.accumulate_fp32, fp16/bf16 sum/prod): P_k travels as fp32 (twice the
//   bytes between hosts, chunks of slot/4 elements), each host continues it in fp32 (FoldAcc32)
//   and only the last host rounds, once: the same bits as folding every input in one fp32 pass.
// Preconditions: ctx.nodes (contiguous hosts), ctx.node_shm with 2 x kNodeChainSlots x chunk bytes of
//   staging; every sendBuf of a host is aclrtMalloc memory (shareable). Any root; in place allowed.
// Steps and bytes: each host boundary carries S once (one direction); each leader sends S and
//   receives S; each local rank folds S/m from m (+1) inputs. One host barrier per chunk (it ends
//   chunk c's fold and starts chunk c+1), so time ~ S / min(link, fold rate) + hosts x chunk latency.
// Example: 2 hosts x 2 ranks, root 0, chunk 1 MiB: host 0 (ranks 0, 1) folds x0 ⊕ x1 per chunk into
//   its output slot, leader 0 sends it to rank 2; host 1 folds (P ⊕ x2) ⊕ x3 and its leader (rank 2)
//   sends the result to rank 0, whose receive lands in recvBuf.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

namespace {

// keep_last: AllReduce "node" (allreduce_node.cc): the last host also keeps the result, folded
// straight into its leader's recvBuf and sent to a root on another host from there.
Status NodeChain(Context& ctx, const ReduceArgs& a, bool keep_last) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node_chain reduce"));
  net::ShmGroup* g = host.group();
  net::Transport* t = ctx.transport;
  const int K = host.hosts(), j = host.host();
  const int lo = host.lo(), hi = host.hi(), m = hi - lo;
  const int li = ctx.rank - lo;
  const bool leader = li == 0;
  const bool last = j == K - 1;
  const bool root_here = a.root >= lo && a.root < hi;
  const uint64_t es = DataTypeSize(a.dtype);
  // fp32 accumulation: partials between hosts are fp32 (in_es from the previous host, out_es to
  // the next); the last host rounds once and its output has the element type.
  const bool wide = WidensFp32(ctx, a.dtype, a.op);
  const uint64_t in_es = wide ? sizeof(float) : es, out_es = wide && !last ? sizeof(float) : es;
  const uint64_t slot_bytes = g->staging_bytes() / (2 * kNodeChainSlots);
  uint64_t chunk = std::min<uint64_t>(ChunkElems(ctx, a), std::max<uint64_t>(1, slot_bytes / in_es));
  const uint64_t nchunks = (a.count + chunk - 1) / chunk;
  auto off = [&](uint64_t c) { return c * chunk; };
  auto len = [&](uint64_t c) { return std::min(chunk, a.count - c * chunk); };
  auto in_slot = [&](uint64_t c) { return g->Staging() + (c % kNodeChainSlots) * slot_bytes; };
  auto out_slot = [&](uint64_t c) { return g->Staging() + (kNodeChainSlots + c % kNodeChainSlots) * slot_bytes; };

  uint64_t ticket = 0;
  // While this host's ranks gather, ranks on other hosts may already wait on this one (those whose
  // call took "gather" if another rank here took this plan: a count across the threshold): their
  // probes are answered (and fingerprints compared) while this rank sleeps here, and in the host
  // barriers below (so a leader asleep there is not taken for stopped, and an ABORT from another
  // host reaches the ranks that only wait in shared memory).
  HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, ctx.deadline, &ticket));
  Status st;
  const char* need_send = keep_last ? "sendBufs from aclrtMalloc (or force HOSTCCL_ALGO=allreduce=rs_ag)"
                                    : "sendBufs from aclrtMalloc (or force HOSTCCL_ALGO=reduce=chain)";
  std::vector<const char*> peers(static_cast<size_t>(m));
  for (int r = 0; r < m; ++r) {
    const char* p = r == li ? static_cast<const char*>(a.send)
                            : host.PeerSend(r, need_send, &st);
    if (p == nullptr) return st;
    peers[static_cast<size_t>(r)] = p;
  }
  // The final result goes straight into the root's recvBuf when the root is on the last host and
  // its recvBuf is mapped; otherwise into the output slot, which the root copies out.
  char* final_dst = nullptr;
  if (last && root_here) {
    std::string why;  // not mapped: the output slot instead
    void* p = a.root == ctx.rank ? a.recv : g->PeerRecv(a.root - lo, &why);
    final_dst = static_cast<char*>(p);
  } else if (last && keep_last) {
    final_dst = leader ? static_cast<char*>(a.recv)
                       : host.PeerRecv(0, "recvBufs from aclrtMalloc (or force HOSTCCL_ALGO=allreduce=rs_ag)", &st);
    if (final_dst == nullptr) return st;
  }

  // Leaders' receives of partials (posted ahead) and the root's receives of final chunks.
  std::vector<net::RequestId> in_reqs(nchunks), out_reqs(nchunks), finals;
  std::vector<bool> out_pending(nchunks, false);
  const int prev_leader = j > 0 ? host.first_of(j - 1) : -1;
  const int next = last ? a.root : host.first_of(j + 1);
  const bool send_out = leader && !(last && root_here);
  if (ctx.rank == a.root && !(last && root_here)) {
    finals.resize(nchunks);
    for (uint64_t c = 0; c < nchunks; ++c)
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(host.first_of(K - 1), static_cast<char*>(a.recv) + off(c) * es,
                                       len(c) * es, ctx.fp, &finals[c]));
  }
  auto post_in = [&](uint64_t c) -> Status {
    return t->Irecv(prev_leader, in_slot(c), len(c) * in_es, ctx.fp, &in_reqs[c]);
  };
  // Before the barrier that opens chunk c: its input has arrived and its output slot is free.
  auto prepare = [&](uint64_t c) -> Status {
    if (!leader) return Status::Ok();
    if (j > 0) {
      // Slot of chunk c-2: its fold ended at the previous barrier (chunk c-1's slot may still be read).
      if (c + kNodeChainSlots - 2 < nchunks) HOSTCCL_RETURN_IF_ERROR(post_in(c + kNodeChainSlots - 2));
      HOSTCCL_RETURN_IF_ERROR(t->Wait(in_reqs[c], ctx.deadline));
    }
    if (c >= kNodeChainSlots && out_pending[c - kNodeChainSlots]) {
      HOSTCCL_RETURN_IF_ERROR(t->Wait(out_reqs[c - kNodeChainSlots], ctx.deadline));
      out_pending[c - kNodeChainSlots] = false;
    }
    return Status::Ok();
  };

  // The leader's TCP waits end at ctx.deadline and its abort names the rank it found stopped (on
  // another host); the other ranks of this host, who can only see that the leader is late, give
  // that abort a second to arrive before blaming the leader.
  const Deadline step_deadline = GraceDeadline(ctx, leader, 1000000000ull);
  if (leader && j > 0)
    for (uint64_t c = 0; c < std::min<uint64_t>(kNodeChainSlots - 2, nchunks); ++c)
      if (st.ok()) st = post_in(c);
  if (st.ok() && nchunks > 0) st = prepare(0);
  if (!st.ok()) return host.Fail(st);
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(step_deadline));
  thread_local ExitMarked<std::vector<const void*>> srcs;
  for (uint64_t c = 0; c < nchunks; ++c) {
    uint64_t b = 0, e = 0;
    PartRange(len(c), m, li, std::max<uint64_t>(1, 64 / es), &b, &e);
    if (b < e) {
      srcs.clear();
      if (j > 0 && !wide) srcs.push_back(in_slot(c) + b * es);
      for (int r = 0; r < m; ++r) srcs.push_back(peers[static_cast<size_t>(r)] + (off(c) + b) * es);
      char* dst = final_dst ? final_dst + (off(c) + b) * es : out_slot(c) + b * out_es;
      if (wide) {  // continue the fp32 partial; round only on the last host
        const float* partial = j > 0 ? reinterpret_cast<const float*>(in_slot(c) + b * in_es) : nullptr;
        kern::FoldAcc32(a.dtype, a.op, dst, !last, partial, srcs.data(), m, e - b);
      } else {
        FoldInputs(ctx, a.dtype, a.op, dst, srcs.data(), static_cast<int>(srcs.size()), e - b);
      }
    }
    if (c + 1 < nchunks) st = prepare(c + 1);
    if (!st.ok()) return host.Fail(st);
    HOSTCCL_RETURN_IF_ERROR(host.Barrier(step_deadline));  // chunk c folded; chunk c+1 ready
    if (last && root_here && final_dst == nullptr && ctx.rank == a.root)
      std::memcpy(static_cast<char*>(a.recv) + off(c) * es, out_slot(c), len(c) * es);
    if (send_out) {
      const char* src = final_dst != nullptr ? final_dst + off(c) * es : out_slot(c);
      HOSTCCL_RETURN_IF_ERROR(t->Isend(next, src, len(c) * out_es, ctx.fp, &out_reqs[c]));
      out_pending[c] = true;
    }
  }
  for (uint64_t c = 0; c < nchunks; ++c)
    if (out_pending[c]) HOSTCCL_RETURN_IF_ERROR(t->Wait(out_reqs[c], ctx.deadline));
  if (!finals.empty()) HOSTCCL_RETURN_IF_ERROR(t->WaitAll(finals.data(), finals.size(), ctx.deadline));
  return FinishRooted(ctx, a.root);
}

}  // namespace

Status ReduceNodeChain(Context& ctx, const ReduceArgs& a) { return NodeChain(ctx, a, false); }

Status ReduceNodeChainKeepLast(Context& ctx, const ReduceArgs& a) { return NodeChain(ctx, a, true); }

}  // namespace hostccl::algo
