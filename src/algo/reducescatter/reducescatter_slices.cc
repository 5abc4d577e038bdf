// ReduceScatter, "direct" (threads of one process) and "shm" (processes of one host): one pass
// over PeerMemory (algo/peer_fold.h).
//
// What: after Exchange (buffers and fingerprints published, compared), rank r folds block r of
//   all n sendBufs, read in place, in rank order into its own recvBuf (FoldPeersTo; peers checked
//   every 4 MiB). One final barrier keeps every sendBuf alive until all ranks are done reading.
// Bytes per rank: reads n x B, writes B (B = recvCount x element size); no messages.
// In place: recvBuf == sendBuf + r x B is read only by rank r's own fold. recvBuf == sendBuf
//   (r > 0) overwrites block 0, which rank 0 reads: the fold goes to scratch and is copied into
//   recvBuf after the final barrier.
// Preconditions: "direct": ctx.local. "shm": ctx.shm and every sendBuf shareable (aclrtMalloc
//   memory; recvBufs are only written by their owner); otherwise every rank (they all read the
//   same descriptors) re-plans to "owner" over TCP and logs it once.
// ReduceScatterV: the same with block r at sendDispls[r] (BlockAt).
// Example: 4 ranks, recvCount 1000 fp32: rank 2 folds elements [2000, 3000) of send_0..send_3
//   into its recvBuf[0, 1000).
#include <cstring>

#include "algo/peer_fold.h"
#include "algo/reducescatter/reducescatter_algorithms.h"

namespace hostccl::algo {
namespace {

Status OwnBlock(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const bool staged = OutputCoversOtherBlocks(a, ctx.rank, ctx.size);
  char* out = staged ? static_cast<char*>(ctx.scratch->Get(a.bytes())) : static_cast<char*>(a.recv);
  Status st = staged && out == nullptr ? Status(Code::kMemory, "cannot allocate reduce-scatter staging")
                             : FoldPeersTo(ctx, g, a, BlockAt(a, ctx.rank), BlockAt(a, ctx.rank) + a.count, out);
  HOSTCCL_RETURN_IF_ERROR(EndPass(ctx, g, st));
  if (staged) std::memcpy(a.recv, out, a.bytes());
  return Status::Ok();
}

}  // namespace

Status ReduceScatterDirect(Context& ctx, const OpArgs& a) {
  return DirectPass(ctx, a, "direct reducescatter needs every rank in this process", &OwnBlock);
}

Status ReduceScatterShm(Context& ctx, const OpArgs& a) {
  static constexpr ShmReplan kReplan{PeerBuffers::kSendBufs, "sendBuf", "reducescatter shm -> owner",
                                     &ReduceScatterOwner};
  return ShmPass(ctx, a, "shm reducescatter needs a shared segment", &OwnBlock, kReplan);
}

}  // namespace hostccl::algo
