#include "algo/peer_fold.h"

#include <algorithm>
#include <vector>

#include "algo/primitives.h"
#include "algo/rank_scratch.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

Status ExchangeArgs(Context& ctx, net::PeerMemory* g, const OpArgs& a, const char* missing) {
  if (g == nullptr) return Status(Code::kInternal, missing);
  return g->Exchange(ctx.rank, ctx.fp, a.send, a.recv, a.send_desc, a.recv_desc, ctx.deadline, ctx.check_fp);
}

Status FoldPeers(Context& ctx, net::PeerMemory* g, const OpArgs& a, uint64_t begin, uint64_t end, char* dst) {
  return FoldPeersTo(ctx, g, a, begin, end, dst + begin * DataTypeSize(a.dtype));
}

Status FoldPeersTo(Context& ctx, net::PeerMemory* g, const OpArgs& a, uint64_t begin, uint64_t end, char* out) {
  if (begin >= end) return Status::Ok();
  const uint64_t es = DataTypeSize(a.dtype);
  const size_t n = static_cast<size_t>(ctx.size);
  const char* base_stack[kStackRanks];
  const void* srcs_stack[kStackRanks];
  const char** base = RankScratch(base_stack, n, []() -> auto& {
    thread_local ExitMarked<std::vector<const char*>> v;
    return v;
  });
  const void** srcs = RankScratch(srcs_stack, n, []() -> auto& {
    thread_local ExitMarked<std::vector<const void*>> v;
    return v;
  });
  std::string why;
  for (int r = 0; r < ctx.size; ++r) {
    const void* p = r == ctx.rank ? a.send : g->PeerSend(r, &why);
    if (p == nullptr) return Status(Code::kRemote, why);
    base[r] = static_cast<const char*>(p);
  }
  const uint64_t step = std::max<uint64_t>(1, kPeerFoldCheckBytes / es);
  for (uint64_t lo = begin; lo < end; lo += step) {
    if (lo != begin) HOSTCCL_RETURN_IF_ERROR(g->Check(ctx.fp.seq));
    const uint64_t hi = std::min(end, lo + step);
    for (size_t r = 0; r < n; ++r) srcs[r] = base[r] + lo * es;
    FoldInputs(ctx, a.dtype, a.op, out + (lo - begin) * es, srcs, ctx.size, hi - lo);
  }
  return Status::Ok();
}

Status EndPass(Context& ctx, net::PeerMemory* g, const Status& st) {
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
}

uint64_t ClaimPiece(const Context& ctx, net::PeerMemory* g, uint64_t pieces) {
  const uint64_t tag = ctx.fp.seq & ((uint64_t{1} << 40) - 1);
  const int workers = g->Workers();
  for (int k = 0; k < workers; ++k) {
    const int range = (ctx.rank + k) % workers;
    const uint64_t lo = pieces * static_cast<uint64_t>(range) / static_cast<uint64_t>(workers);
    const uint64_t len =
        pieces * static_cast<uint64_t>(range + 1) / static_cast<uint64_t>(workers) - lo;
    std::atomic<uint64_t>* w = g->WorkWord(range);
    uint64_t cur = w->load(std::memory_order_relaxed);
    while (true) {
      const uint64_t next = (cur >> 24) == tag ? (cur & kMaxClaimPieces) : 0;
      if (next >= len) break;
      if (w->compare_exchange_weak(cur, (tag << 24) | (next + 1), std::memory_order_relaxed))
        return lo + next;
    }
  }
  return pieces;
}

uint64_t ClaimPieceBytes(uint64_t total, int n, uint64_t max_piece) {
  const uint64_t per = 4 * static_cast<uint64_t>(std::max(n, 1));
  uint64_t piece = std::clamp<uint64_t>((total + per - 1) / per, 4096, std::max<uint64_t>(4096, max_piece));
  piece = std::max(piece, (total + kMaxClaimPieces / 2 - 1) / (kMaxClaimPieces / 2));
  return (piece + 63) / 64 * 64;
}

Status CopyClaimed(Context& ctx, net::PeerMemory* g, const ClaimCopy* items, size_t count, uint64_t piece,
                   bool stream) {
  uint64_t pieces = 0;
  for (size_t k = 0; k < count; ++k) pieces += (items[k].bytes + piece - 1) / piece;
  Status st;
  // A rank's claims grow within a range: walk the items with a cursor (item k, its first piece
  // `first`), back to the start when a claim moves to an earlier range.
  size_t k = 0;
  uint64_t first = 0, written = 0;
  for (uint64_t p = ClaimPiece(ctx, g, pieces); p < pieces; p = ClaimPiece(ctx, g, pieces)) {
    if (p < first) {
      k = 0;
      first = 0;
    }
    while (p >= first + (items[k].bytes + piece - 1) / piece) first += (items[k++].bytes + piece - 1) / piece;
    const ClaimCopy& it = items[k];
    const uint64_t lo = (p - first) * piece, len = std::min(piece, it.bytes - lo);
    const uint32_t start = static_cast<uint32_t>(ctx.rank) % it.ndst;  // spread the first writes
    for (uint32_t j = 0; j < it.ndst; ++j) {
      char* d = it.dst[(start + j) % it.ndst];
      if (d == it.src) continue;
      kern::CopyTo(d + lo, it.src + lo, len, stream);
      written += len;
    }
    if (written >= kPeerFoldCheckBytes) {
      written = 0;
      st = g->Check(ctx.fp.seq);
      if (!st.ok()) break;
    }
  }
  return EndPass(ctx, g, st);
}

Status ShmInlineFold(Context& ctx, const OpArgs& a, uint64_t in_bytes, uint64_t begin, const char* what) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return MakeStatus(Code::kInternal, "%s needs a shared segment", what);
  if (in_bytes > net::ShmGroup::kInlineBytes)
    return MakeStatus(Code::kInternal, "%s takes at most %zu bytes, not %llu", what, net::ShmGroup::kInlineBytes,
                      static_cast<unsigned long long>(in_bytes));
  uint64_t t = 0;
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, a.send, in_bytes, ctx.deadline, ctx.fp.seq, &t));
  if (ctx.may_run_ahead) g->PrefetchNextArrival();  // calls back to back: the next one comes soon
  if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
  const uint64_t off = begin * DataTypeSize(a.dtype);
  const void* stack[kStackRanks];
  const void** in = RankScratch(stack, static_cast<size_t>(ctx.size), []() -> auto& {
    thread_local ExitMarked<std::vector<const void*>> v;
    return v;
  });
  for (int r = 0; r < ctx.size; ++r) in[r] = g->ArrivedPayload(r, t) + off;
  FoldInputs(ctx, a.dtype, a.op, a.recv, in, ctx.size, a.count);
  return Status::Ok();
}

Status ShmInlineRooted(Context& ctx, const OpArgs& a, const void* payload, uint64_t payload_bytes, uint64_t stride) {
  net::ShmGroup* g = ctx.shm;
  const uint64_t bytes = a.bytes();
  const uint64_t off = static_cast<uint64_t>(ctx.rank) * stride;
  const bool root = ctx.rank == a.root;
  uint64_t t = 0;
  if (root) {
    if (ctx.may_run_ahead) {
      // Pipelined: post and move on; the others release the slot as they copy it.
      HOSTCCL_RETURN_IF_ERROR(g->Post(ctx.fp, payload, payload_bytes, ctx.deadline, ctx.fp.seq, ctx.check_fp, &t,
                                      /*reads=*/false, /*wake=*/true));
      ctx.ran_ahead = g;
    } else {
      HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, payload, payload_bytes, ctx.deadline, ctx.fp.seq, &t));
      if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
        return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
    }
    const char* mine = static_cast<const char*>(payload) + off;
    if (mine != a.recv) std::memcpy(a.recv, mine, bytes);
    return Status::Ok();
  }
  if (!ctx.may_run_ahead) {
    HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, nullptr, 0, ctx.deadline, ctx.fp.seq, &t));
    if (int r = ctx.check_fp ? g->FirstMismatch(t) : -1; r >= 0)
      return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, t), 0, g->ArrivedFp(r, t), r));
    std::memcpy(a.recv, g->ArrivedPayload(a.root, t) + off, bytes);  // readable until the root's next arrival
    return Status::Ok();
  }
  // Pipelined: announce without waiting for the other non-roots (their fingerprints are compared
  // from the history later: the settle), wait for the root's slot only, copy, release it.
  // An inline attempt waits for the root only briefly: else it gives up (kAgain) keeping its
  // ticket, and the stream runs it again from here.
  const bool attempt = g->Attempting(ctx.fp.seq);
  HOSTCCL_RETURN_IF_ERROR(g->Post(ctx.fp, nullptr, 0, ctx.deadline, ctx.fp.seq, ctx.check_fp, &t, /*reads=*/true));
  HOSTCCL_RETURN_IF_ERROR(g->AwaitArrival(a.root, t, ctx.deadline, ctx.fp.seq, attempt));
  ctx.ran_ahead = g;
  if (ctx.check_fp && g->ArrivedFp(a.root, t) != ctx.fp)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(a.root, t), a.root, ctx.fp, ctx.rank));
  std::memcpy(a.recv, g->ArrivedPayload(a.root, t) + off, bytes);
  g->MarkDone(t);
  return Status::Ok();
}

Status ReduceSlices(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  uint64_t begin = 0, end = 0;
  PartRange(a.count, ctx.size, ctx.rank, std::max<uint64_t>(1, 64 / es), &begin, &end);
  Status st;
  if (begin < end) {
    std::string why;
    char* dst = static_cast<char*>(ctx.rank == a.root ? a.recv : g->PeerRecv(a.root, &why));
    st = dst == nullptr ? Status(Code::kRemote, why) : FoldPeers(ctx, g, a, begin, end, dst);
  }
  return EndPass(ctx, g, st);
}

Status ReplanOverTransport(Context& ctx, net::ShmGroup* g, const OpArgs& a, int who, const char* buffer,
                           const char* plan, Status (*fallback)(Context&, const OpArgs&)) {
  if (ctx.transport == nullptr)
    return MakeStatus(Code::kNotSupport, "rank %d's %s: not aclrtMalloc memory, and there is no TCP path", who,
                      buffer);
  if (g->FirstUse(plan))
    HLOG_INFO(kAlgo, "%s #%llu: rank %d's %s: not aclrtMalloc memory; re-plan %s", CollKindName(a.kind),
              static_cast<unsigned long long>(ctx.fp.seq), who, buffer, plan);
  return fallback(ctx, a);
}

Status DirectPass(Context& ctx, const OpArgs& a, const char* missing, PeerPass pass) {
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, ctx.local, a, missing));
  return pass(ctx, ctx.local, a);
}

Status ShmPass(Context& ctx, const OpArgs& a, const char* missing, PeerPass pass, const ShmReplan& replan) {
  net::ShmGroup* g = ctx.shm;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, missing));
  int unshared = -1;
  switch (replan.needs) {
    case PeerBuffers::kSendBufs: unshared = g->FirstUnmappable(/*recv_too=*/false); break;
    case PeerBuffers::kAllBuffers: unshared = g->FirstUnmappable(/*recv_too=*/true); break;
    case PeerBuffers::kRootSendBuf: unshared = g->Shareable(g->SendDesc(a.root)) ? -1 : a.root; break;
  }
  if (unshared < 0) return pass(ctx, g, a);
  return ReplanOverTransport(ctx, g, a, unshared, replan.buffer, replan.plan, replan.fallback);
}

}  // namespace hostccl::algo
