// ReduceScatter, "owner": bandwidth-optimal over TCP, pipelined (algo/owner_fold.h).
//
// What: rank j owns block j = elements [j x B, (j+1) x B) of every sendBuf (B = recvCount), cut
//   into chunks; every rank sends chunk c of block j to j straight from its sendBuf, and j folds
//   chunk c of all n inputs in rank order into its recvBuf as soon as the n-1 peers' chunks landed
//   in its staging slots (OwnerFold). The reduce-scatter half of AllReduce "rs_ag", on the
//   operator's own blocks.
// Bytes per rank: sends (n-1) x B, receives (n-1) x B (the bandwidth-optimal volume); folds n x B.
//   Starts and ends with FinishAll (an empty message to and from every peer): every rank sees a
//   mismatched peer before any chunk travels, and no rank returns while peers still receive from it.
// In place: recvBuf == sendBuf + r x B is OwnerFold's safe form. recvBuf == sendBuf (r > 0) would
//   overwrite block 0 while it is still being sent: the fold then goes to a heap buffer that is
//   copied into recvBuf after every send completed (a rare form: one allocation per call).
// ReduceScatterV: owner j's slice is its block [sendDispls[j], + sendCounts[j]); empty blocks have
//   no chunks (a rank that disagrees about the arrays is found by the stall probes).
// Preconditions: a transport (any n; n = 1 copies).
// Example: 3 ranks, recvCount 1M fp32, 1 MiB chunks: rank 1 sends elements [0, 1M) to rank 0 and
//   [2M, 3M) to rank 2 in 4 chunks each, receives chunk c of [1M, 2M) from ranks 0 and 2 and folds
//   (s0 ⊕ s1) ⊕ s2 of it into recvBuf while later chunks travel.
#include <algorithm>
#include <cstring>
#include <memory>

#include "algo/owner_fold.h"
#include "algo/primitives.h"
#include "algo/reducescatter/reducescatter_algorithms.h"

namespace hostccl::algo {

Status ReduceScatterOwner(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  const uint64_t es = DataTypeSize(a.dtype);
  if (n == 1) {
    const char* own = static_cast<const char*>(a.send) + BlockAt(a, 0) * es;
    if (a.recv != own && a.count > 0) std::memcpy(a.recv, own, a.bytes());
    return Status::Ok();
  }
  OwnerSlices s;
  s.lo.resize(static_cast<size_t>(n));
  s.hi.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    s.lo[static_cast<size_t>(r)] = BlockAt(a, r);
    s.hi[static_cast<size_t>(r)] = BlockAt(a, r) + BlockLen(a, r);
  }
  const uint64_t align = std::max<uint64_t>(1, 64 / es);
  // From ctx.chunk_bytes, not ChunkElems (which stops at this rank's own count: ReduceScatterV's
  // counts differ per rank, and sender and owner must cut a block alike).
  s.chunk = std::max<uint64_t>(align, std::max<uint64_t>(ctx.chunk_bytes, 64) / es / align * align);
  std::unique_ptr<char[]> staged;
  if (OutputCoversOtherBlocks(a, ctx.rank, n)) staged.reset(new (std::nothrow) char[a.bytes()]);
  if (OutputCoversOtherBlocks(a, ctx.rank, n) && !staged)
    return Status(Code::kMemory, "cannot allocate reduce-scatter staging");
  char* out = staged ? staged.get() : static_cast<char*>(a.recv);
  // Every pair first exchanges an empty message: a rank whose call differs is seen by every rank
  // before any chunk is in flight (a rank that failed on a mismatch and closed its sockets under
  // unread chunks would otherwise reset its peers' connections before they read the mismatch).
  HOSTCCL_RETURN_IF_ERROR(FinishAll(ctx));
  HOSTCCL_RETURN_IF_ERROR(OwnerFold(ctx, a, s, out, OwnerFoldHooks{}));
  if (staged) std::memcpy(a.recv, out, a.bytes());
  // A rank with a small (or empty) block is done long before its peers received its chunks.
  return FinishAll(ctx);
}

}  // namespace hostccl::algo
