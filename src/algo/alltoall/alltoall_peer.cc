// AlltoAll family, "direct" (threads of one process) and "shm" (processes of one host): each rank
// pulls its blocks straight out of its peers' sendBufs, single pass, over PeerMemory.
//
// What: Exchange publishes every rank's buffers and fingerprint (AlltoAllV also its sendCounts,
//   sdispls and recvCounts as the exchange payload: read in place by thread ranks, inline in the
//   arrival slot, 24 n bytes, for processes), then rank r copies, for k = 0 .. n-1 and
//   i = (r + k) mod n, the block rank i addressed to r (AlltoAll: i's elements [r c, r c + c);
//   AlltoAllVC: i's row prefix sum; AlltoAllV: i's sdispls[r], sendCounts[r]) into
//   recvBuf + RecvDispl(i). The rotation spreads the n readers over the n sources. One closing
//   barrier: no rank returns (and reuses its sendBuf) while a peer may still read it.
// Preconditions: "direct": ctx.local. "shm": ctx.shm, every rank's sendBuf shareable (aclrtMalloc)
//   and, for AlltoAllV, 24 n <= 4096 bytes of arrays (n <= 170); otherwise every rank re-plans
//   (all read the same descriptors) to "pairwise" over TCP and logs it once.
// Mismatch: the fingerprint (count, element size, AlltoAllVC's matrix hash) is compared in the
//   exchange; AlltoAllV's pairs are checked by every rank from the published arrays (CheckPairs),
//   before anything is copied.
// Bytes per rank: reads and writes its receive extent once (S = sum of its recvCounts x size);
//   no messages. Large copies (>= 4 MiB per operation) use streaming stores.
// Example: 3 ranks, AlltoAll count 2: rank 1 copies rank 1's [2,4) into its [2,4), then rank 2's
//   [2,4) into its [4,6), then rank 0's [2,4) into its [0,2).
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/peer_fold.h"
#include "common/log.h"
#include "kernels/copy.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {
namespace {

constexpr uint64_t kStreamBytes = 4 << 20;   // whole operations from this size copy with streaming stores
constexpr uint64_t kCheckBytes = 4 << 20;    // bytes copied between abort / peer-death checks

// `offset`: where AlltoAllV's arrays start in each rank's exchange payload (shm_inline puts a
// header first).
Status Pull(Context& ctx, net::PeerMemory* g, const OpArgs& a, size_t offset = 0) {
  const int n = ctx.size, r = ctx.rank;
  // AlltoAllV: the rows published in the exchange, checked pair by pair on every rank.
  constexpr int kStack = 64;
  const uint64_t* rows_stack[kStack];
  thread_local std::vector<const uint64_t*> rows_heap;
  const uint64_t** rows = rows_stack;
  if (a.kind == CollKind::kAlltoAllV) {
    if (n > kStack) {
      rows_heap.resize(static_cast<size_t>(n));
      rows = rows_heap.data();
    }
    for (int i = 0; i < n; ++i)
      rows[i] = i == r ? a.send_counts
                      : reinterpret_cast<const uint64_t*>(static_cast<const char*>(g->PeerPayload(i)) + offset);
    Status st = CheckPairs(ctx, rows);
    if (!st.ok()) {
      // Every rank found the same pair. Thread ranks read each other's arrays in place: leave only
      // when every rank is done reading (then fail with the verdict, whatever the barrier says).
      (void)g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
      return st;
    }
  }
  Status st = PullBlocks(ctx, g, a, 0, n, a.kind == CollKind::kAlltoAllV ? rows : nullptr, nullptr);
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
}

// The exchange, with AlltoAllV's arrays as the payload (3 n words: sendCounts, sdispls, recvCounts
// are contiguous in the task's copy, core/communicator.cc CopyArrays).
Status Exchange(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const bool v = a.kind == CollKind::kAlltoAllV;
  const size_t bytes = v ? 3 * static_cast<size_t>(ctx.size) * sizeof(uint64_t) : 0;
  return g->Exchange(ctx.rank, ctx.fp, a.send, a.recv, a.send_desc, a.recv_desc, ctx.deadline, ctx.check_fp,
                     v ? a.send_counts : nullptr, bytes);
}

}  // namespace

Status CheckPairs(const Context& ctx, const uint64_t* const* rows) {
  const int n = ctx.size;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const uint64_t sent = rows[i][j], expected = rows[j][2 * n + i];
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

Status PullBlocks(Context& ctx, net::PeerMemory* g, const OpArgs& a, int lo, int hi, const uint64_t* const* rows,
                  const std::function<Status()>* tick) {
  const int n = ctx.size, r = ctx.rank;
  const uint64_t es = DataTypeSize(a.dtype);
  const Blocks b{a};
  uint64_t total = 0;
  for (int i = lo; i < hi; ++i) total += b.RecvCount(i);
  const bool stream = total * es >= kStreamBytes;
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
  HOSTCCL_RETURN_IF_ERROR(Exchange(ctx, g, a));
  return Pull(ctx, g, a);
}

Status AlltoAllShm(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm alltoall needs a shared segment");
  const bool v = a.kind == CollKind::kAlltoAllV;
  // Too many ranks for AlltoAllV's arrays to travel in the arrival slot: every rank knows n, so
  // every rank re-plans alike before the exchange.
  if (v && 3 * static_cast<size_t>(ctx.size) * sizeof(uint64_t) > g->PayloadLimit()) {
    if (ctx.transport == nullptr)
      return MakeStatus(Code::kNotSupport, "shm alltoallv takes at most %zu ranks and there is no TCP path",
                        g->PayloadLimit() / 24);
    if (g->FirstUse("alltoallv shm -> pairwise (ranks)"))
      HLOG_INFO(kAlgo, "HcclAlltoAllV #%llu: %d ranks' arrays do not fit the arrival slot; re-plan shm -> pairwise",
                static_cast<unsigned long long>(ctx.fp.seq), ctx.size);
    return AlltoAllPairwise(ctx, a);
  }
  HOSTCCL_RETURN_IF_ERROR(Exchange(ctx, g, a));
  return ShmPullAfterExchange(ctx, g, a, 0);
}

Status ShmPullAfterExchange(Context& ctx, net::ShmGroup* g, const OpArgs& a, size_t payload_offset) {
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  if (unshared < 0) return Pull(ctx, g, a, payload_offset);
  // Re-plan (identical on every rank: all read the same descriptors): "pairwise" over TCP.
  return ReplanOverTransport(ctx, g, a, unshared, "sendBuf", "alltoall shm -> pairwise", &AlltoAllPairwise);
}

}  // namespace hostccl::algo
