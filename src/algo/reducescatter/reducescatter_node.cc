// ReduceScatter, "node": two hosts (contiguous rank ranges; HOSTCCL_NODE_ID emulates hosts on one
// machine), shared memory inside each host, over TCP only the bytes the canonical fold needs.
//
// What: host H0 holds ranks [0, m0), host H1 ranks [m0, n) (m1 = n - m0). P0 = x0 ⊕ ... ⊕ x(m0-1)
//   is H0's partial; the canonical fold of any element is P0 ⊕ x(m0) ⊕ ... ⊕ x(n-1), so H1's
//   inputs can only join after P0, one by one.
//   1. One arrival on each host (buffers published, fingerprints compared); then every rank sends
//      one byte to every rank of the other host (its host's sendBufs mappable or not) and receives
//      theirs: every cross-host pair compares fingerprints before data moves, and when any sendBuf
//      cannot be mapped every rank of both hosts re-plans to "owner" (logged once).
//   2. Blocks of H1 (owner j >= m0): H0 rank (j - m0) mod m0 folds P0 of block j out of H0's mapped
//      sendBufs chunk by chunk and sends it to j; j folds P0 ⊕ x(m0) ⊕ ... ⊕ x(n-1) of each chunk
//      (its host's sendBufs, mapped) into its recvBuf as it lands.
//   3. Blocks of H0 (owner r < m0) are cut in two at a fraction f (below): part A goes round trip:
//      r folds P0 of it, sends it to helper m0 + r mod m1, which folds its host's inputs onto it
//      and sends the result back into r's recvBuf. Part B comes raw: every H1 rank sends its
//      part B of block r to r, which folds P0 and the m1 raw inputs in rank order.
//   4. Every send and receive completed, a host barrier (peers' sendBufs are no longer read), then
//      FinishAll (no rank returns while a peer still receives from it).
// Bytes over the link, per direction (B0, B1 = total bytes of H0's and H1's blocks): H0 -> H1 carries
//   B1 + f B0, H1 -> H0 f B0 + m1 (1 - f) B0; f = 1 - B1 / (m1 B0) (clamped to [0, 1]) makes the
//   two equal, B0 + B1 - B1 / m1 (for 2 x 2 with S = the sendBuf: 3/4 S each way, the minimum for
//   the canonical fold; "owner" sends S each way). Chunks (ctx.chunk_bytes) keep both directions
//   busy: H0 sends its part-A partials first, H1 its raw parts B first.
// In place: recvBuf == sendBuf + r x recvCount: block r of x_r is read only by r itself (its own
//   folds and part-A partial, each chunk before its result lands). recvBuf == sendBuf (r > 0):
//   the result goes to a heap buffer copied into recvBuf after the host barrier.
// ReduceScatterV: block j is [sendDispls[j], + sendCounts[j]) (BlockAt/BlockLen); empty parts send
//   nothing. Other host counts than 2: every rank re-plans to "owner" (logged once).
// Preconditions: ctx.nodes, ctx.node_shm, a transport.
// Example: 2 hosts x 2 ranks, recvCount 4M fp32 (16 MiB blocks, f = 1/2): rank 0 sends P0 of
//   block 0's first 8 MiB to rank 2 and P0 of block 2 to rank 2; ranks 2 and 3 send rank 0 their
//   inputs of block 0's last 8 MiB; rank 2 returns ((P0 ⊕ x2) ⊕ x3) of the first 8 MiB.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "algo/reducescatter/reducescatter_algorithms.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

Status ReduceScatterNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node reducescatter"));
  net::ShmGroup* g = host.group();
  net::Transport* t = ctx.transport;
  const unsigned long long seq = static_cast<unsigned long long>(ctx.fp.seq);
  if (host.hosts() != 2) {
    if (g->FirstUse("reducescatter node -> owner (hosts)"))
      HLOG_INFO(kAlgo, "%s #%llu: %d hosts (node folds across two); re-plan node -> owner", CollKindName(a.kind), seq,
                host.hosts());
    return ReduceScatterOwner(ctx, a);
  }
  const int n = ctx.size, r = ctx.rank;
  const int m0 = host.first_of(1), m1 = n - m0;
  const bool h0 = r < m0;
  const int lo = h0 ? 0 : m0, m = h0 ? m0 : m1, olo = h0 ? m0 : 0, om = h0 ? m1 : m0;
  const uint64_t es = DataTypeSize(a.dtype);
  const uint64_t align = std::max<uint64_t>(1, 64 / es);
  const uint64_t chunk = std::max<uint64_t>(align, std::max<uint64_t>(ctx.chunk_bytes, 64) / es / align * align);

  // 1. The host's arrival, then one byte with every rank of the other host.
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, ctx.deadline, &ticket));
  const uint8_t mappable = g->FirstUnmappable(/*recv_too=*/false) < 0 ? 1 : 0;
  thread_local ExitMarked<std::vector<uint8_t>> flags;
  flags.assign(static_cast<size_t>(om), 0);
  {
    Requests rq(ctx);
    Status st;
    for (int k = 0; k < om && st.ok(); ++k) st = rq.Recv(olo + k, &flags[static_cast<size_t>(k)], 1);
    for (int k = 0; k < om && st.ok(); ++k) st = rq.Send(olo + k, &mappable, 1);
    if (st.ok()) st = rq.WaitAll();
    if (!st.ok()) return host.Fail(st);
  }
  bool all = mappable != 0;
  for (uint8_t f : flags) all = all && f != 0;
  if (!all) {
    if (g->FirstUse("reducescatter node -> owner (unmapped)"))
      HLOG_INFO(kAlgo, "%s #%llu: a sendBuf is not aclrtMalloc memory; re-plan node -> owner", CollKindName(a.kind),
                seq);
    return ReduceScatterOwner(ctx, a);
  }

  // Geometry (identical on every rank): part A of H0's block j is its first alen(j) elements.
  uint64_t b0 = 0, b1 = 0;
  for (int j = 0; j < n; ++j) (j < m0 ? b0 : b1) += BlockLen(a, j);
  double f = b0 == 0 ? 0.0 : 1.0 - static_cast<double>(b1) / (static_cast<double>(m1) * static_cast<double>(b0));
  f = std::clamp(f, 0.0, 1.0);
  auto alen = [&](int j) {
    const uint64_t l = BlockLen(a, j);
    return std::min(l, static_cast<uint64_t>(static_cast<double>(l) * f) / align * align);
  };
  auto pieces = [&](uint64_t len) { return (len + chunk - 1) / chunk; };
  auto piece = [&](uint64_t len, uint64_t c) { return std::min(chunk, len - c * chunk); };

  // Every rank's sendBuf of this host, mapped (index = rank - lo).
  thread_local ExitMarked<std::vector<const char*>> base;
  base.assign(static_cast<size_t>(m), nullptr);
  for (int k = 0; k < m; ++k) {
    std::string why;
    const void* p = lo + k == r ? a.send : g->PeerSend(k, &why);
    if (p == nullptr) return host.Fail(Status(Code::kRemote, why));
    base[static_cast<size_t>(k)] = static_cast<const char*>(p);
  }
  // Left fold of `pre` (if given) then this host's inputs at element e, into dst.
  thread_local ExitMarked<std::vector<const void*>> srcs;
  auto fold_host = [&](char* dst, const char* pre, uint64_t e, uint64_t cnt) {
    srcs.clear();
    if (pre != nullptr) srcs.push_back(pre);
    for (const char* b : base) srcs.push_back(b + e * es);
    kern::FoldN(a.dtype, a.op, dst, srcs.data(), static_cast<int>(srcs.size()), cnt);
  };

  std::unique_ptr<char[]> staged;
  if (OutputCoversOtherBlocks(a, r, n)) {
    staged.reset(new (std::nothrow) char[a.bytes()]);
    if (!staged) return host.Fail(Status(Code::kMemory, "cannot allocate reduce-scatter staging"));
  }
  char* out = staged ? staged.get() : static_cast<char*>(a.recv);
  const uint64_t own_at = BlockAt(a, r), own_len = BlockLen(a, r);
  thread_local ExitMarked<std::vector<net::RequestId>> sends, recvs;
  sends.clear();
  recvs.clear();
  Status st;
  auto isend = [&](int peer, const void* p, uint64_t cnt) {
    net::RequestId id;
    if (st.ok()) st = t->Isend(peer, p, cnt * es, ctx.fp, &id);
    if (st.ok()) sends.push_back(id);
  };
  auto irecv = [&](int peer, void* p, uint64_t cnt) {
    net::RequestId id;
    if (st.ok()) st = t->Irecv(peer, p, cnt * es, ctx.fp, &id);
    if (st.ok()) recvs.push_back(id);
  };
  auto tick = [&]() {
    if (st.ok()) st = g->Check(ctx.fp.seq);
    if (st.ok()) st = host.Progress();
  };

  if (h0) {
    const uint64_t al = alen(r), bl = own_len - al;
    const int helper = m0 + r % m1;
    uint64_t h1_elems = 0;
    for (int j = m0 + r; j < n; j += m0) h1_elems += BlockLen(a, j);
    const uint64_t need = (al + h1_elems + static_cast<uint64_t>(m1) * bl) * es;
    char* scratch = static_cast<char*>(ctx.scratch->Get(std::max<uint64_t>(need, 64)));
    if (scratch == nullptr) return host.Fail(Status(Code::kMemory, "cannot allocate the node reduce-scatter staging"));
    char* p0a = scratch;
    char* p0h1 = p0a + al * es;
    char* raw = p0h1 + h1_elems * es;  // m1 x bl: H1 rank k's part B at raw + k x bl
    // Receives: part B raw from every H1 rank (per peer before the result of part A), part A back.
    for (int k = 0; k < m1; ++k)
      for (uint64_t c = 0; c < pieces(bl); ++c)
        irecv(m0 + k, raw + (static_cast<uint64_t>(k) * bl + c * chunk) * es, piece(bl, c));
    const size_t first_a = recvs.size();
    for (uint64_t c = 0; c < pieces(al); ++c) irecv(helper, out + c * chunk * es, piece(al, c));
    // Sends: P0 of part A to the helper first, then P0 of this rank's H1 blocks.
    for (uint64_t c = 0; c < pieces(al) && st.ok(); ++c) {
      fold_host(p0a + c * chunk * es, nullptr, own_at + c * chunk, piece(al, c));
      isend(helper, p0a + c * chunk * es, piece(al, c));
      tick();
    }
    char* p = p0h1;
    for (int j = m0 + r; j < n && st.ok(); j += m0) {
      const uint64_t l = BlockLen(a, j);
      for (uint64_t c = 0; c < pieces(l) && st.ok(); ++c) {
        fold_host(p + c * chunk * es, nullptr, BlockAt(a, j) + c * chunk, piece(l, c));
        isend(j, p + c * chunk * es, piece(l, c));
        tick();
      }
      p += l * es;
    }
    // Part B: P0 and the raw inputs in rank order, chunk by chunk as they land.
    thread_local ExitMarked<std::vector<const void*>> in;
    for (uint64_t c = 0; c < pieces(bl) && st.ok(); ++c) {
      const uint64_t e = own_at + al + c * chunk, cnt = piece(bl, c);
      in.clear();
      for (const char* b : base) in.push_back(b + e * es);
      for (int k = 0; k < m1 && st.ok(); ++k) {
        st = t->Wait(recvs[static_cast<size_t>(k) * pieces(bl) + c], ctx.deadline);
        in.push_back(raw + (static_cast<uint64_t>(k) * bl + c * chunk) * es);
      }
      if (st.ok()) kern::FoldN(a.dtype, a.op, out + (al + c * chunk) * es, in.data(), n, cnt);
      if (c % 8 == 7) tick();
    }
    if (st.ok() && recvs.size() > first_a) st = t->WaitAll(recvs.data() + first_a, recvs.size() - first_a, ctx.deadline);
  } else {
    const int from = (r - m0) % m0;  // computes P0 of this rank's block
    uint64_t help_elems = 0;
    for (int j = r - m0; j < m0; j += m1) help_elems += alen(j);
    const uint64_t need = (own_len + help_elems) * es;
    char* scratch = static_cast<char*>(ctx.scratch->Get(std::max<uint64_t>(need, 64)));
    if (scratch == nullptr) return host.Fail(Status(Code::kMemory, "cannot allocate the node reduce-scatter staging"));
    char* p0own = scratch;
    char* p0a = p0own + own_len * es;
    // Receives: the part-A partials of the helped blocks (their owners send them first), then P0
    // of the own block.
    char* p = p0a;
    for (int j = r - m0; j < m0; j += m1) {
      const uint64_t al = alen(j);
      for (uint64_t c = 0; c < pieces(al); ++c) irecv(j, p + c * chunk * es, piece(al, c));
      p += al * es;
    }
    const size_t first_own = recvs.size();
    for (uint64_t c = 0; c < pieces(own_len); ++c) irecv(from, p0own + c * chunk * es, piece(own_len, c));
    // Sends: the raw parts B of every H0 block first (before any result of part A, per peer).
    for (int j = 0; j < m0; ++j) {
      const uint64_t al = alen(j), bl = BlockLen(a, j) - al;
      const char* src = static_cast<const char*>(a.send) + (BlockAt(a, j) + al) * es;
      for (uint64_t c = 0; c < pieces(bl); ++c) isend(j, src + c * chunk * es, piece(bl, c));
    }
    // The helped blocks: fold this host's inputs onto each partial chunk, send the result back.
    size_t w = 0;
    p = p0a;
    for (int j = r - m0; j < m0 && st.ok(); j += m1) {
      const uint64_t al = alen(j);
      for (uint64_t c = 0; c < pieces(al) && st.ok(); ++c, ++w) {
        st = t->Wait(recvs[w], ctx.deadline);
        if (!st.ok()) break;
        char* q = p + c * chunk * es;
        fold_host(q, q, BlockAt(a, j) + c * chunk, piece(al, c));
        isend(j, q, piece(al, c));
        if (c % 8 == 7) tick();
      }
      p += al * es;
    }
    // The own block: P0 ⊕ this host's inputs, chunk by chunk.
    for (uint64_t c = 0; c < pieces(own_len) && st.ok(); ++c) {
      st = t->Wait(recvs[first_own + c], ctx.deadline);
      if (st.ok()) fold_host(out + c * chunk * es, p0own + c * chunk * es, own_at + c * chunk, piece(own_len, c));
      if (c % 8 == 7) tick();
    }
  }
  if (st.ok() && !sends.empty()) st = t->WaitAll(sends.data(), sends.size(), ctx.deadline);
  if (!st.ok()) return host.Fail(st);
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(ctx.deadline));
  if (staged) std::memcpy(a.recv, out, a.bytes());
  return FinishAll(ctx);
}

}  // namespace hostccl::algo
