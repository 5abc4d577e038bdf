// The ReduceScatter algorithms (their rows are in algo/registry.cc, their default rules in
// core/selector.cc). Rank r's recvBuf gets recv_r[k] = ((send_0[b + k] ⊕ send_1[b + k]) ⊕ ...) ⊕
// send_{n-1}[b + k] with b = r x recvCount: whoever folds block r folds all n inputs of it in rank
// order (the canonical fold), on every algorithm. OpArgs.count is recvCount; the selector's size
// is recvCount x element size (one block).
//
// In place (collectives.md 1.6): recvBuf == sendBuf + r x recvCount (the rank's own block: read
// only by the fold that writes it) is safe everywhere; recvBuf == sendBuf (r > 0: the output
// covers block 0, which rank 0 or the sends still read) folds into staging that is copied to
// recvBuf once no rank reads this sendBuf any more (OutputCoversOtherBlocks).
#pragma once

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status ReduceScatterDirect(Context& ctx, const OpArgs& args);     // threads: own block, one pass
Status ReduceScatterShm(Context& ctx, const OpArgs& args);        // processes of one host: own block, one pass
Status ReduceScatterShmInline(Context& ctx, const OpArgs& args);  // processes, input <= 4 KiB: one arrival
Status ReduceScatterFlat(Context& ctx, const OpArgs& args);       // TCP, small: blocks to owners in one hop
Status ReduceScatterOwner(Context& ctx, const OpArgs& args);      // TCP: pipelined owner fold (algo/owner_fold.h)
Status ReduceScatterNode(Context& ctx, const OpArgs& args);       // several hosts

// True when this rank's recvBuf overlaps a block of its sendBuf other than its own (the
// recvBuf == sendBuf form on ranks > 0).
inline bool OutputCoversOtherBlocks(const OpArgs& a, int rank, int n) {
  const uint64_t block = a.bytes();
  const uintptr_t s = reinterpret_cast<uintptr_t>(a.send), r = reinterpret_cast<uintptr_t>(a.recv);
  if (r == s + block * static_cast<uint64_t>(rank)) return false;
  return r < s + block * static_cast<uint64_t>(n) && s < r + block;
}

}  // namespace hostccl::algo
