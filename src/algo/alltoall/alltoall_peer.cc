// AlltoAll family, "direct" (threads of one process), "shm" and "shm_pull" (processes of one host):
// single pass over PeerMemory, each block copied once straight from its sendBuf into its recvBuf.
//
// What: Exchange publishes every rank's buffers and fingerprint (AlltoAllV also its sendCounts,
//   sdispls, recvCounts and rdispls as the exchange payload: read in place by thread ranks, inline
//   in the arrival slot, 32 n bytes, for processes; VPayloadWords), then:
//   "direct"/"shm" (claimed): the n^2 blocks, item (i, j) = the block rank i addresses to rank j
//     (AlltoAll: i's elements [j c, j c + c) to j's [i c, ...); AlltoAllVC: row and column prefix
//     sums of the matrix; AlltoAllV: i's sdispls[j], sendCounts[j] to j's rdispls[i]), in the order
//     (i, j), are cut into pieces of up to 256 KiB that the ranks claim one at a time (CopyClaimed,
//     algo/peer_fold.h): on idle cores each rank copies about 1/n of them; a rank that waits for
//     a core leaves its share to the running ones; with more processes than cores only one per
//     core claims (PeerMemory::Workers: 8 ranks on 2 cores, ranks 0 and 1). Needs every recvBuf
//     mapped; "shm" re-plans to "shm_pull" (logged once) when one is not, and AlltoAllV pulls when
//     its rdispls did not fit the slot (n > 128).
//   "shm_pull": rank r copies, for k = 0 .. n-1 and i = (r + k) mod n, the block rank i addressed
//     to r into recvBuf + RecvDispl(i) (the rotation spreads the n readers over the n sources).
//   Non-temporal stores when the call's buffers do not fit the cache (kern::StreamStores: a
//   quarter of the last-level cache, twice it on AMD); the claimed push learns it per
//   communicator from 4 MiB to 4 x that (kern::StoreLearner: the first calls of each footprint
//   class timed with each kind). One closing barrier: no rank returns (and reuses its sendBuf)
//   while a peer may still read it.
// Preconditions: "direct": ctx.local. "shm"/"shm_pull": ctx.shm, every rank's sendBuf shareable
//   (aclrtMalloc) and, for AlltoAllV, 24 n <= 4096 bytes of arrays (n <= 170); otherwise every rank
//   re-plans (all read the same descriptors) to "pairwise" over TCP and logs it once.
// Mismatch: the fingerprint (count, element size, AlltoAllVC's matrix hash) is compared in the
//   exchange; AlltoAllV's pairs are checked by every rank from the published arrays (CheckPairs),
//   before anything is copied.
// Bytes in all: every block read and written once (n S, S = a rank's receive total); no messages.
// In place: never (sendBuf == recvBuf is rejected by the argument check).
// Example: 3 ranks, AlltoAll count 2 (8 bytes per block, one piece each): the first claim copies
//   rank 0's [0,2) into rank 0's [0,2), the next rank 0's [2,4) into rank 1's [0,2), ...; the
//   ninth rank 2's [4,6) into rank 2's [4,6). shm_pull: rank 1 copies rank 1's [2,4) into its
//   [2,4), then rank 2's [2,4) into its [4,6), then rank 0's [2,4) into its [0,2).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/peer_fold.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/copy.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {
namespace {

constexpr uint64_t kAlltoAllPieceBytes = 256 << 10;  // the largest piece of the claimed push
constexpr uint64_t kCheckBytes = 4 << 20;    // bytes copied between abort / peer-death checks

// The claimed push: every (source i, destination j) block is one item, from i's sendBuf at its
// displacement for j to j's recvBuf at j's displacement for i; items in the order (i, j), cut into
// pieces the ranks claim (CopyClaimed). `rows`: AlltoAllV's published arrays with rdispls (4n
// words). Ends with the closing barrier.
Status Push(Context& ctx, net::PeerMemory* g, const OpArgs& a, const uint64_t* const* rows) {
  if (!TakesPieces(ctx, g)) return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
  const int n = ctx.size;
  const size_t un = static_cast<size_t>(n);
  const uint64_t es = DataTypeSize(a.dtype);
  thread_local ExitMarked<std::vector<const char*>> sends;
  thread_local ExitMarked<std::vector<char*>> recvs, dsts;
  thread_local ExitMarked<std::vector<ClaimCopy>> items;
  thread_local ExitMarked<std::vector<uint64_t>> col;  // AlltoAllVC: rank j's receive displacement of the next source
  sends.assign(un, nullptr);
  recvs.assign(un, nullptr);
  items.assign(un * un, ClaimCopy{});
  dsts.assign(un * un, nullptr);
  col.assign(un, 0);
  Status st;
  std::string why;
  // A rank's buffers are looked up only for a non-empty block (an empty side may be NULL).
  auto send_of = [&](int r) {
    const size_t k = static_cast<size_t>(r);
    if (sends[k] == nullptr && st.ok()) {
      sends[k] = static_cast<const char*>(r == ctx.rank ? a.send : g->PeerSend(r, &why));
      if (sends[k] == nullptr) st = MakeStatus(Code::kRemote, "rank %d's sendBuf: %s", r, why.c_str());
    }
    return sends[k];
  };
  auto recv_of = [&](int r) {
    const size_t k = static_cast<size_t>(r);
    if (recvs[k] == nullptr && st.ok()) {
      recvs[k] = static_cast<char*>(r == ctx.rank ? a.recv : g->PeerRecv(r, &why));
      if (recvs[k] == nullptr) st = MakeStatus(Code::kRemote, "rank %d's recvBuf: %s", r, why.c_str());
    }
    return recvs[k];
  };
  uint64_t total = 0;
  for (int i = 0; i < n && st.ok(); ++i) {
    uint64_t sdispl = 0;  // AlltoAllVC: i's row prefix
    for (int j = 0; j < n; ++j) {
      const size_t uj = static_cast<size_t>(j);
      uint64_t count = 0, displ = 0, rdispl = 0;
      switch (a.kind) {
        case CollKind::kAlltoAllV:
          count = rows[i][j];
          displ = rows[i][un + uj];
          rdispl = rows[j][3 * un + static_cast<size_t>(i)];
          break;
        case CollKind::kAlltoAllVC:
          count = a.matrix[static_cast<size_t>(i) * un + uj];
          displ = sdispl;
          rdispl = col[uj];
          sdispl += count;
          col[uj] += count;
          break;
        default:
          count = a.count;
          displ = uj * a.count;
          rdispl = static_cast<uint64_t>(i) * a.count;
          break;
      }
      if (count == 0) continue;
      const char* src = send_of(i);
      char* dst = recv_of(j);
      if (!st.ok()) break;
      const size_t k = static_cast<size_t>(i) * un + uj;
      dsts[k] = dst + rdispl * es;
      ClaimCopy& it = items[k];
      it.src = src + displ * es;
      it.dst = &dsts[k];
      it.ndst = 1;
      it.bytes = count * es;
      total += it.bytes;
    }
  }
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  // Every rank's sendBuf and recvBuf (2 S per rank on average): the stores this communicator
  // learned for the footprint (the first calls of a footprint class are timed), else the rule.
  const kern::StoreLearner::Choice stores = ctx.alltoall_stores != nullptr
                                                ? ctx.alltoall_stores->Choose(2 * total)
                                                : kern::StoreLearner::Choice{kern::StreamStores(2 * total), -1};
  const uint64_t start = stores.bucket >= 0 ? NowNs() : 0;
  st = CopyClaimed(ctx, g, items.data(), items.size(), ClaimPieceBytes(total, n, kAlltoAllPieceBytes), stores.stream);
  if (st.ok() && stores.bucket >= 0) ctx.alltoall_stores->Learn(stores, NowNs() - start);
  return st;
}

// `offset`: where AlltoAllV's arrays start in each rank's exchange payload (shm_inline puts a
// header first); `v_words`: how many were published (VPayloadWords). `push`: the claimed push
// (every recvBuf mapped; AlltoAllV needs the published rdispls), else the pull.
Status Copy(Context& ctx, net::PeerMemory* g, const OpArgs& a, size_t offset, size_t v_words, bool push) {
  const int n = ctx.size, r = ctx.rank;
  // AlltoAllV: the rows published in the exchange, checked pair by pair on every rank.
  constexpr int kStack = 64;
  const uint64_t* rows_stack[kStack];
  thread_local ExitMarked<std::vector<const uint64_t*>> rows_heap;
  const uint64_t** rows = rows_stack;
  if (a.kind == CollKind::kAlltoAllV) {
    if (n > kStack) {
      rows_heap.resize(static_cast<size_t>(n));
      rows = rows_heap.data();
    }
    for (int i = 0; i < n; ++i)
      rows[i] = i == r ? a.send_counts
                      : reinterpret_cast<const uint64_t*>(static_cast<const char*>(g->PeerPayload(i)) + offset);
    Status st = CheckPairs(ctx, rows, 2 * static_cast<size_t>(n));
    if (!st.ok()) {
      // Every rank found the same pair. Thread ranks read each other's arrays in place: leave only
      // when every rank is done reading (then fail with the verdict, whatever the barrier says).
      (void)g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
      return st;
    }
    if (v_words < 4 * static_cast<size_t>(n)) push = false;
  }
  if (push) return Push(ctx, g, a, a.kind == CollKind::kAlltoAllV ? rows : nullptr);
  Status st = PullBlocks(ctx, g, a, 0, n, a.kind == CollKind::kAlltoAllV ? rows : nullptr, nullptr);
  return EndPass(ctx, g, st);
}

// The exchange, with AlltoAllV's arrays as the payload (VPayloadWords of them).
Status Exchange(Context& ctx, net::PeerMemory* g, const OpArgs& a, size_t* v_words) {
  const bool v = a.kind == CollKind::kAlltoAllV;
  *v_words = v ? VPayloadWords(ctx.size, g->PayloadLimit()) : 0;
  return g->Exchange(ctx.rank, ctx.fp, a.send, a.recv, a.send_desc, a.recv_desc, ctx.deadline, ctx.check_fp,
                     v ? a.send_counts : nullptr, *v_words * sizeof(uint64_t));
}

}  // namespace

size_t VPayloadWords(int n, size_t room) {
  const size_t un = static_cast<size_t>(n);
  if (4 * un * sizeof(uint64_t) <= room) return 4 * un;
  return 3 * un * sizeof(uint64_t) <= room ? 3 * un : 0;
}


template <typename Word>
Status CheckPairs(const Context& ctx, const Word* const* rows, size_t recv_at) {
  const int n = ctx.size;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const uint64_t sent = rows[i][j], expected = rows[j][recv_at + static_cast<size_t>(i)];
      if (sent == expected) continue;
      return MakeStatus(Code::kPara,
                        "HcclAlltoAllV #%llu mismatch: rank %d sends sendCounts[%d] = %llu elements to rank %d, but "
                        "rank %d expects recvCounts[%d] = %llu from rank %d",
                        static_cast<unsigned long long>(ctx.fp.seq), i, j, static_cast<unsigned long long>(sent), j,
                        j, i, static_cast<unsigned long long>(expected), i);
    }
  }
  return Status::Ok();
}

template Status CheckPairs(const Context&, const uint64_t* const*, size_t);
template Status CheckPairs(const Context&, const uint32_t* const*, size_t);

Status PullBlocks(Context& ctx, net::PeerMemory* g, const OpArgs& a, int lo, int hi, const uint64_t* const* rows,
                  const std::function<Status()>* tick) {
  const int n = ctx.size, r = ctx.rank;
  const uint64_t es = DataTypeSize(a.dtype);
  const Blocks b{a};
  uint64_t total = 0;
  for (int i = lo; i < hi; ++i) total += b.RecvCount(i);
  // Footprint: about n ranks' sendBufs and recvBufs of this rank's receive extent each.
  const bool stream = kern::StreamStores(2 * total * es * static_cast<uint64_t>(n));
  Status st;
  uint64_t since_check = 0;
  const int m = hi - lo;
  for (int k = 0; k < m && st.ok(); ++k) {
    const int i = lo + (r - lo + k) % m;
    uint64_t displ = 0, count = 0;
    PeerBlock(a, n, i, r, rows ? rows[i] : nullptr, &displ, &count);
    if (count == 0) continue;
    std::string why;
    const char* src = static_cast<const char*>(i == r ? a.send : g->PeerSend(i - lo, &why));
    if (src == nullptr) return MakeStatus(Code::kRemote, "rank %d's sendBuf: %s", i, why.c_str());
    char* dst = static_cast<char*>(a.recv) + b.RecvDispl(i) * es;
    const char* from = src + displ * es;
    const uint64_t bytes = count * es;
    // Pieces, so an abort or a dead peer is noticed within kCheckBytes of copying.
    for (uint64_t off = 0; off < bytes && st.ok(); off += kCheckBytes) {
      const uint64_t len = std::min(kCheckBytes, bytes - off);
      if (stream)
        kern::CopyStreaming(dst + off, from + off, len);
      else
        std::memcpy(dst + off, from + off, len);
      since_check += len;
      if (since_check >= kCheckBytes) {
        since_check = 0;
        st = g->Check(ctx.fp.seq);
        if (st.ok() && tick != nullptr) st = (*tick)();
      }
    }
  }
  return st;
}

Status AlltoAllDirect(Context& ctx, const OpArgs& a) {
  net::LocalGroup* g = ctx.local;
  if (g == nullptr) return Status(Code::kInternal, "direct alltoall needs every rank in this process");
  size_t words = 0;
  HOSTCCL_RETURN_IF_ERROR(Exchange(ctx, g, a, &words));
  return Copy(ctx, g, a, 0, words, /*push=*/true);
}

namespace {

Status Shm(Context& ctx, const OpArgs& a, bool push) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm alltoall needs a shared segment");
  const bool v = a.kind == CollKind::kAlltoAllV;
  // Too many ranks for AlltoAllV's arrays to travel in the arrival slot: every rank knows n, so
  // every rank re-plans alike before the exchange.
  if (v && VPayloadWords(ctx.size, g->PayloadLimit()) == 0) {
    if (ctx.transport == nullptr)
      return MakeStatus(Code::kNotSupport, "shm alltoallv takes at most %zu ranks and there is no TCP path",
                        g->PayloadLimit() / 24);
    if (g->FirstUse("alltoallv shm -> pairwise (ranks)"))
      HLOG_INFO(kAlgo, "HcclAlltoAllV #%llu: %d ranks' arrays do not fit the arrival slot; re-plan shm -> pairwise",
                static_cast<unsigned long long>(ctx.fp.seq), ctx.size);
    return AlltoAllPairwise(ctx, a);
  }
  size_t words = 0;
  HOSTCCL_RETURN_IF_ERROR(Exchange(ctx, g, a, &words));
  return ShmCopyAfterExchange(ctx, g, a, 0, words, push);
}

}  // namespace

Status AlltoAllShm(Context& ctx, const OpArgs& a) { return Shm(ctx, a, true); }
Status AlltoAllShmPull(Context& ctx, const OpArgs& a) { return Shm(ctx, a, false); }

Status ShmCopyAfterExchange(Context& ctx, net::ShmGroup* g, const OpArgs& a, size_t payload_offset, size_t v_words,
                            bool push) {
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  if (unshared >= 0)  // re-plan (identical on every rank: all read the same descriptors): "pairwise" over TCP
    return ReplanOverTransport(ctx, g, a, unshared, "sendBuf", "alltoall shm -> pairwise", &AlltoAllPairwise);
  if (push && g->FirstUnmappable(/*recv_too=*/true) >= 0) {
    if (g->FirstUse("alltoall shm -> shm_pull"))
      HLOG_INFO(kAlgo, "%s #%llu: rank %d's recvBuf: not aclrtMalloc memory; re-plan shm -> shm_pull",
                CollKindName(a.kind), static_cast<unsigned long long>(ctx.fp.seq), g->FirstUnmappable(true));
    push = false;
  }
  return Copy(ctx, g, a, payload_offset, v_words, push);
}

}  // namespace hostccl::algo
