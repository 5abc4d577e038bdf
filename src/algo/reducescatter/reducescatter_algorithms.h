// The ReduceScatter and ReduceScatterV algorithms (one function each serves both operators; their
// rows are in algo/registry.cc, their default rules in core/selector.cc). Rank r's recvBuf gets recv_r[k] = ((send_0[b + k] ⊕ send_1[b + k]) ⊕ ...) ⊕
// send_{n-1}[b + k] with b = r x recvCount: whoever folds block r folds all n inputs of it in rank
// order (the canonical fold), on every algorithm. ReduceScatterV: block r is [sendDispls[r],
// + sendCounts[r]) instead (BlockAt/BlockLen); zero counts are empty blocks, gaps between blocks
// are never read or written. OpArgs.count is recvCount; the selector's size is one block's bytes
// (ReduceScatterV: the mean block).
//
// In place (collectives.md 1.6): recvBuf == sendBuf + r x recvCount (the rank's own block: read
// only by the fold that writes it) is safe everywhere; recvBuf == sendBuf (r > 0: the output
// covers block 0, which rank 0 or the sends still read) folds into staging that is copied to
// recvBuf once no rank reads this sendBuf any more (OutputCoversOtherBlocks).
#pragma once

#include <algorithm>

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status ReduceScatterDirect(Context& ctx, const OpArgs& args);     // threads: own block, one pass
Status ReduceScatterShm(Context& ctx, const OpArgs& args);        // processes of one host: own block, one pass
Status ReduceScatterShmInline(Context& ctx, const OpArgs& args);  // processes, input <= 4 KiB: one arrival
Status ReduceScatterFlat(Context& ctx, const OpArgs& args);       // TCP, small: blocks to owners in one hop
Status ReduceScatterOwner(Context& ctx, const OpArgs& args);      // TCP: pipelined owner fold (algo/owner_fold.h)
Status ReduceScatterNode(Context& ctx, const OpArgs& args);       // several hosts

// Block j of every sendBuf, in elements: ReduceScatter [j x count, (j+1) x count); ReduceScatterV
// [sendDispls[j], + sendCounts[j]) (the arrays are identical on every rank; count = sendCounts[r]).
inline uint64_t BlockAt(const OpArgs& a, int j) {
  return a.send_displs ? a.send_displs[j] : static_cast<uint64_t>(j) * a.count;
}
inline uint64_t BlockLen(const OpArgs& a, int j) { return a.send_counts ? a.send_counts[j] : a.count; }
// Elements of sendBuf the operation reads: the end of the last block.
inline uint64_t InputExtent(const OpArgs& a, int n) {
  uint64_t e = 0;
  for (int j = 0; j < n; ++j)
    if (BlockLen(a, j) > 0) e = std::max(e, BlockAt(a, j) + BlockLen(a, j));
  return e;
}

// True when this rank's recvBuf overlaps a block of its sendBuf other than its own (the
// recvBuf == sendBuf form of ReduceScatter on ranks > 0; ReduceScatterV's argument check rejects
// every overlap).
inline bool OutputCoversOtherBlocks(const OpArgs& a, int rank, int n) {
  if (a.send_counts != nullptr || a.count == 0) return false;
  const uint64_t block = a.bytes();
  const uintptr_t s = reinterpret_cast<uintptr_t>(a.send), r = reinterpret_cast<uintptr_t>(a.recv);
  if (r == s + block * static_cast<uint64_t>(rank)) return false;
  return r < s + block * static_cast<uint64_t>(n) && s < r + block;
}

}  // namespace hostccl::algo
