// AlltoAll family, "shm_inline" (processes of one host, small blocks): one arrival moves everything.
//
// What: every rank arrives with a payload that starts with a form word, inline in its arrival
//   slot (ShmGroup::kInlineBytes = 4 KiB):
//   - packed (1), when its send blocks for the other ranks fit the slot: [1][AlltoAllV: its
//     sendCounts and recvCounts as 32-bit words, 2 n of them, padded to 8 bytes; only when every
//     count is below 2^32][those blocks, packed in rank order, its own block left out];
//   - out (0), otherwise: [0][AlltoAllV: its sendCounts, sdispls, recvCounts and rdispls, 4 n
//     64-bit words (3 n, without rdispls, for 127 < n <= 170: VPayloadWords)]; the blocks stay in
//     its sendBuf.
//   After the arrival (fingerprints compared there) every rank reads every rank's form word:
//   - all packed: rank r asks for every peer line it reads below at once (read prefetches),
//     AlltoAllV's pairs are checked from the counts in the slots (CheckPairs), then rank r copies
//     its own block from its sendBuf into its recvBuf and, for each i != r, i's packed block for r
//     out of i's slot into recvBuf + RecvDispl(i). No barrier: a slot stays readable until its
//     owner's next-but-one arrival, which needs this rank's next arrival.
//   - not all packed: every rank (all read the same words) continues as "shm": AlltoAll and
//     AlltoAllVC on the same arrival (the buffers were published with it), AlltoAllV too when every
//     rank's form is out. Then the claimed copy between the mapped buffers (or its re-plan to
//     "shm_pull") and the closing barrier, or shm's own re-plan to "pairwise" for unmappable
//     sendBufs; logged once per group.
//   - AlltoAllV, some packed and some out (mixed): the packed ranks published no displacements.
//     With at most kMixedPullBytes from the out ranks in all, at most 64 ranks and every sendBuf
//     mappable (PullsMixed, the same answer everywhere), every rank checks the pairs and pulls:
//     a packed rank's block for it out of that rank's slot, an out rank's out of its mapped
//     sendBuf at the published sdispls, then the closing barrier. Otherwise every rank arrives
//     once more with its four arrays and continues as "shm" on that arrival.
//   Nothing is written into recvBuf before the arrival and its checks passed.
// Preconditions: ctx.shm. AlltoAllV with 8 + 24 n > 4 KiB (n > 170): every rank runs "shm" instead
//   (which re-plans to "pairwise"), decided from n alone. Buffers need not be aclrtMalloc memory
//   when the blocks fit (nothing is mapped).
// Bytes per rank: writes what it sends to the others (<= 4 KiB - header) into its slot, reads what
//   it receives from them out of their slots, copies its own block locally; one arrival, no
//   messages (mixed and pulled: also reads its blocks from the out ranks' sendBufs; a barrier).
//   8-byte blocks at n ranks: AlltoAll 8 + 8 (n - 1) bytes per slot, AlltoAllV 8 + 8 n + 8 (n - 1):
//   at 2 ranks both fit the slot's first line (32 payload bytes).
// Example: 3 ranks, AlltoAll count 1 of fp32: rank 1's slot holds [1][b10 b12]; rank 2 copies b02
//   from rank 0's slot at offset 8 + 4, b12 from rank 1's at 8 + 4, its own b22 from its sendBuf.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/peer_fold.h"
#include "common/log.h"
#include "common/thread_state.h"

namespace hostccl::algo {
namespace {

constexpr uint64_t kOut = 0, kPacked = 1;  // the form word

// Where rank i's block for rank r starts among i's packed blocks (elements): after its blocks for
// 0 .. r-1 but its own, which stays out of its slot. `displ`: PeerBlock's displacement of that
// block (AlltoAll, AlltoAllVC: their packing is rank order, so less i's own block when i < r);
// `counts_i`: AlltoAllV, rank i's published sendCounts.
uint64_t PackedOffset(const OpArgs& a, int n, int i, int r, const uint32_t* counts_i, uint64_t displ) {
  if (counts_i != nullptr) {
    uint64_t packed = 0;
    for (int k = 0; k < r; ++k)
      if (k != i) packed += counts_i[k];
    return packed;
  }
  if (i > r) return displ;
  uint64_t own_displ = 0, own = 0;
  PeerBlock(a, n, i, i, nullptr, &own_displ, &own);
  return displ - own;
}

// Asks for the cache lines of [p, p + bytes) for reading.
void PrefetchLines(const char* p, uint64_t bytes) {
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t a = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}; a < end; a += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 3);
}

// AlltoAllV's packed form: its 2 n counts as 32-bit words into `out`, false when one is 2^32 or
// more.
bool PackCounts(const OpArgs& a, int n, uint32_t* out) {
  uint64_t any = 0;
  for (int j = 0; j < n; ++j) {
    any |= a.send_counts[j] | a.recv_counts[j];
    out[j] = static_cast<uint32_t>(a.send_counts[j]);
    out[n + j] = static_cast<uint32_t>(a.recv_counts[j]);
  }
  return (any >> 32) == 0;
}

// AlltoAllV's four arrays one after the other, `words` of them (4 n, or 3 n without rdispls:
// VPayloadWords) into `out`.
void PutArrays(const OpArgs& a, int n, size_t words, uint64_t* out) {
  const uint64_t* arrays[4] = {a.send_counts, a.send_displs, a.recv_counts, a.recv_displs};
  const size_t un = static_cast<size_t>(n);
  for (size_t k = 0; k * un < words; ++k) std::copy(arrays[k], arrays[k] + un, out + k * un);
}

// `a` with AlltoAllV's arrays as one run of 4 n words, as "shm" and "pairwise" read them: a queued
// task's copies already are one (core's TaskArrays); an inline attempt reads the caller's arrays
// in place, so they are copied into a block of this thread's.
OpArgs Joined(const OpArgs& a, int n) {
  const size_t un = static_cast<size_t>(n);
  if (a.send_displs == a.send_counts + un && a.recv_counts == a.send_counts + 2 * un &&
      a.recv_displs == a.send_counts + 3 * un)
    return a;
  thread_local ExitMarked<std::vector<uint64_t>> store;
  store.resize(4 * un);
  uint64_t* w = store.data();
  PutArrays(a, n, 4 * un, w);
  OpArgs c = a;
  c.send_counts = w;
  c.send_displs = w + un;
  c.recv_counts = w + 2 * un;
  c.recv_displs = w + 3 * un;
  return c;
}

// Mixed forms (AlltoAllV): up to this many bytes sent by the out-form ranks in all, every rank
// pulls its blocks (PullMixed); above it the ranks arrive again and run the claimed push, which
// shares the copying of large blocks between all ranks.
constexpr uint64_t kMixedPullBytes = 256 << 10;
constexpr int kMixedPullRanks = 64;

// Rank i's published arrays when it took the out form (its sendCounts first), else nullptr.
const uint64_t* OutRow(net::ShmGroup* g, int i) {
  const char* p = static_cast<const char*>(g->PeerPayload(i));
  uint64_t f = 0;
  std::memcpy(&f, p, sizeof f);
  return f == kOut ? reinterpret_cast<const uint64_t*>(p + sizeof f) : nullptr;
}

// Whether mixed forms pull (the same answer on every rank: all read the same slots and
// descriptors): few enough ranks, every sendBuf mappable, at most kMixedPullBytes from the out ranks.
bool PullsMixed(net::ShmGroup* g, int n, uint64_t es) {
  if (n > kMixedPullRanks || g->FirstUnmappable(/*recv_too=*/false) >= 0) return false;
  uint64_t total = 0;
  for (int i = 0; i < n; ++i)
    if (const uint64_t* row = OutRow(g, i))
      for (int j = 0; j < n; ++j) {
        const uint64_t bytes = row[j] > kMixedPullBytes ? kMixedPullBytes + 1 : row[j] * es;
        total = std::min(total + bytes, kMixedPullBytes + 1);
      }
  return total <= kMixedPullBytes;
}

// Mixed forms, small: rank r takes a packed rank's block for it out of that rank's slot and an
// out rank's out of that rank's mapped sendBuf (PullBlocks, at the published sdispls), then the
// closing barrier (out ranks' sendBufs are read). The pairs are checked first, from both forms'
// counts (the packed ones widened to the arrays' layout), the same on every rank.
Status PullMixed(Context& ctx, net::ShmGroup* g, const OpArgs& a, size_t header) {
  const int n = ctx.size, r = ctx.rank;
  const size_t un = static_cast<size_t>(n);
  const uint64_t es = DataTypeSize(a.dtype);
  // Per rank 3 n words (sendCounts, unused, recvCounts) for the packed ones, then a zero row.
  thread_local ExitMarked<std::vector<uint64_t>> widened;
  widened.assign(un * 3 * un + 2 * un, 0);
  const uint64_t* zero = widened.data() + un * 3 * un;
  const uint64_t* check[kMixedPullRanks];
  const uint64_t* pull[kMixedPullRanks];  // a packed rank's row is zero: PullBlocks skips it
  const uint32_t* packed[kMixedPullRanks] = {};  // a packed rank's counts in its slot
  for (int i = 0; i < n; ++i) {
    const size_t ui = static_cast<size_t>(i);
    if (const uint64_t* row = OutRow(g, i)) {
      check[ui] = pull[ui] = row;
      continue;
    }
    const uint32_t* counts = packed[ui] =
        reinterpret_cast<const uint32_t*>(static_cast<const char*>(g->PeerPayload(i)) + sizeof(uint64_t));
    uint64_t* row = widened.data() + ui * 3 * un;
    for (size_t j = 0; j < un; ++j) {
      row[j] = counts[j];
      row[2 * un + j] = counts[un + j];
    }
    check[ui] = row;
    pull[ui] = zero;
  }
  HOSTCCL_RETURN_IF_ERROR(CheckPairs(ctx, check, 2 * un));
  const Blocks b{a};
  char* recv = static_cast<char*>(a.recv);
  for (int i = 0; i < n; ++i) {
    const size_t ui = static_cast<size_t>(i);
    if (packed[ui] == nullptr || packed[ui][r] == 0) continue;
    const uint64_t count = packed[ui][r];
    const char* from = i == r ? static_cast<const char*>(a.send) + b.SendDispl(r) * es  // this rank's own block
                              : static_cast<const char*>(g->PeerPayload(i)) + header +
                                    PackedOffset(a, n, i, r, packed[ui], 0) * es;
    std::memcpy(recv + b.RecvDispl(i) * es, from, count * es);
  }
  return EndPass(ctx, g, PullBlocks(ctx, g, a, 0, n, pull, nullptr));
}

}  // namespace

Status AlltoAllShmInline(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm_inline alltoall needs a shared segment");
  const int n = ctx.size, r = ctx.rank;
  const bool v = a.kind == CollKind::kAlltoAllV;
  const size_t limit = g->PayloadLimit();
  // AlltoAllV's arrays in the out form (with rdispls when they fit: shm's claimed push needs them).
  const size_t words = v ? VPayloadWords(n, limit - sizeof(uint64_t)) : 0;
  if (v && words == 0) return AlltoAllShm(ctx, Joined(a, n));  // AlltoAllV, n > 170: the same on every rank
  // The packed form's header: the form word, AlltoAllV's counts as 32-bit words.
  const size_t header =
      sizeof(uint64_t) + (v ? (2 * static_cast<size_t>(n) * sizeof(uint32_t) + 7) / 8 * 8 : 0);
  const uint64_t es = DataTypeSize(a.dtype);
  const Blocks b{a};
  uint64_t peer_total = 0;  // elements for the other ranks: this rank's own block stays out of the slot
  for (int j = 0; j < n; ++j)
    if (j != r) peer_total += b.SendCount(j);
  thread_local ExitMarked<std::vector<uint64_t>> stage;  // 8-byte aligned: the arrays are read in place
  stage.resize((limit + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  char* p = reinterpret_cast<char*>(stage.data());
  const bool fits = peer_total <= (limit - header) / (es ? es : 1) &&
                    (!v || PackCounts(a, n, reinterpret_cast<uint32_t*>(p + sizeof(uint64_t))));
  const uint64_t form = fits ? kPacked : kOut;
  std::memcpy(p, &form, sizeof form);
  size_t bytes = sizeof form;
  if (fits) {
    bytes = header;
    const char* send = static_cast<const char*>(a.send);
    for (int j = 0; j < n; ++j) {
      const uint64_t len = j == r ? 0 : b.SendCount(j) * es;
      if (len) std::memcpy(p + bytes, send + b.SendDispl(j) * es, len);
      bytes += len;
    }
  } else if (v) {
    PutArrays(a, n, words, reinterpret_cast<uint64_t*>(p + sizeof form));
    bytes += words * sizeof(uint64_t);
  }
  HOSTCCL_RETURN_IF_ERROR(g->Exchange(ctx.rank, ctx.fp, a.send, a.recv, a.send_desc, a.recv_desc, ctx.deadline,
                                      ctx.check_fp, p, bytes));
  int packed = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t f = 0;
    std::memcpy(&f, g->PeerPayload(i), sizeof f);
    packed += f == kPacked;
  }
  if (packed != n) {
    if (v && packed > 0 && PullsMixed(g, n, es)) {
      if (g->FirstUse("alltoallv shm_inline mixed"))
        HLOG_INFO(kAlgo,
                  "HcclAlltoAllV #%llu: some ranks' blocks exceed the %zu-byte arrival slot; every rank pulls its "
                  "blocks out of the slots and the mapped sendBufs",
                  static_cast<unsigned long long>(ctx.fp.seq), limit);
      return PullMixed(ctx, g, a, header);
    }
    if (g->FirstUse("alltoall shm_inline -> shm"))
      HLOG_INFO(kAlgo, "%s #%llu: a rank's blocks exceed the %zu-byte arrival slot; re-plan shm_inline -> shm",
                CollKindName(a.kind), static_cast<unsigned long long>(ctx.fp.seq), limit);
    if (!v) return ShmCopyAfterExchange(ctx, g, a, sizeof(uint64_t), words, /*push=*/true);
    const OpArgs joined = Joined(a, n);
    if (packed == 0) return ShmCopyAfterExchange(ctx, g, joined, sizeof(uint64_t), words, /*push=*/true);
    // Mixed forms, more bytes: the packed ranks' displacements were not published. Every rank
    // arrives again with its four arrays (the buffers stay published; the fingerprints are
    // compared again), then the claimed push.
    HOSTCCL_RETURN_IF_ERROR(g->Exchange(ctx.rank, ctx.fp, a.send, a.recv, a.send_desc, a.recv_desc, ctx.deadline,
                                        ctx.check_fp, joined.send_counts, words * sizeof(uint64_t)));
    return ShmCopyAfterExchange(ctx, g, joined, 0, words, /*push=*/true);
  }
  constexpr int kStack = 64;
  const uint32_t* rows_stack[kStack];
  thread_local ExitMarked<std::vector<const uint32_t*>> rows_heap;
  const uint32_t** rows = rows_stack;
  if (v) {
    if (n > kStack) {
      rows_heap.resize(static_cast<size_t>(n));
      rows = rows_heap.data();
    }
    for (int i = 0; i < n; ++i)
      rows[i] = reinterpret_cast<const uint32_t*>(static_cast<const char*>(g->PeerPayload(i)) + sizeof(uint64_t));
  }
  // Rank i's block for this rank: its count and where it starts in i's slot.
  auto block_in_slot = [&](int i, uint64_t* count) {
    uint64_t displ = 0;
    if (v)
      *count = rows[i][r];
    else
      PeerBlock(a, n, i, r, nullptr, &displ, count);
    const uint64_t at = PackedOffset(a, n, i, r, v ? rows[i] : nullptr, displ);
    return static_cast<const char*>(g->PeerPayload(i)) + header + at * es;
  };
  // Every peer line read below, asked for at once: otherwise the pair check's miss on a peer's
  // counts and the copy's miss on its block follow one another.
  for (int i = 0; i < n; ++i) {
    if (i == r) continue;
    PrefetchLines(static_cast<const char*>(g->PeerPayload(i)), header);
    uint64_t count = 0;
    const char* at = block_in_slot(i, &count);  // AlltoAllV: reads i's counts (asked for just above)
    if (count) PrefetchLines(at, count * es);
  }
  if (v) HOSTCCL_RETURN_IF_ERROR(CheckPairs(ctx, rows, static_cast<size_t>(n)));
  char* recv = static_cast<char*>(a.recv);
  for (int i = 0; i < n; ++i) {
    if (i == r) {  // checked like the others (CheckPairs' pair (r, r)), copied from the sendBuf
      const uint64_t count = b.SendCount(r);
      const char* own = static_cast<const char*>(a.send) + b.SendDispl(r) * es;
      if (count) std::memcpy(recv + b.RecvDispl(r) * es, own, count * es);
      continue;
    }
    uint64_t count = 0;
    const char* from = block_in_slot(i, &count);
    if (count) std::memcpy(recv + b.RecvDispl(i) * es, from, count * es);
  }
  return Status::Ok();
}

}  // namespace hostccl::algo
