// Scatter, "direct" (threads of one process) and "shm" (processes of one host): single pass over
// PeerMemory (transport/peer_memory.h).
//
// What: after Exchange (buffers and fingerprints published, compared), rank r copies block r of
//   the root's sendBuf (rank r*S .. (r+1)*S) straight into its recvBuf, in pieces with an
//   abort/peer-death check between them (non-temporal stores when the root's sendBuf and the
//   recvBufs, 2 n S bytes, exceed the cache: kern::StreamStores); the root copies its
//   own block (nothing to do in place). One closing barrier: the root does not return (and reuse
//   or free its sendBuf) before every rank has its block.
// Bytes per rank: reads S from the root, writes S; all ranks copy at once; no messages.
// In place (root): recvBuf == sendBuf + root*S: source and destination are the same bytes; skipped.
// Preconditions: "direct": ctx.local. "shm": ctx.shm and the root's sendBuf shareable (aclrtMalloc
//   memory; recvBufs are written only by their owners); otherwise every rank (they all read the same
//   descriptors) re-plans to "flat" over TCP and logs it once.
// Example: 4 ranks, root 1, 1000 fp32 each: rank 3 copies bytes [12000, 16000) of rank 1's sendBuf
//   into its recvBuf.
#include <algorithm>

#include "algo/peer_fold.h"
#include "algo/scatter/scatter_algorithms.h"
#include "kernels/copy.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {
namespace {

Status CopyMine(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const uint64_t bytes = a.bytes();
  std::string why;
  Status st;
  const char* root = static_cast<const char*>(ctx.rank == a.root ? a.send : g->PeerSend(a.root, &why));
  if (root == nullptr) st = Status(Code::kRemote, why);
  const char* src = root ? root + static_cast<uint64_t>(ctx.rank) * bytes : nullptr;
  char* dst = static_cast<char*>(a.recv);
  if (st.ok() && src != dst) {
    const bool stream = kern::StreamStores(2 * bytes * static_cast<uint64_t>(ctx.size));
    for (uint64_t lo = 0; lo < bytes && st.ok(); lo += kPeerFoldCheckBytes) {
      const uint64_t len = std::min(bytes - lo, kPeerFoldCheckBytes);
      kern::CopyTo(dst + lo, src + lo, len, stream);
      if (lo + len < bytes) st = g->Check(ctx.fp.seq);
    }
  }
  return EndPass(ctx, g, st);
}

}  // namespace

Status ScatterDirect(Context& ctx, const OpArgs& a) {
  return DirectPass(ctx, a, "direct scatter needs every rank in this process", &CopyMine);
}

Status ScatterShm(Context& ctx, const OpArgs& a) {
  static constexpr ShmReplan kReplan{PeerBuffers::kRootSendBuf, "sendBuf (the root's)", "scatter shm -> flat",
                                     &ScatterFlat};
  return ShmPass(ctx, a, "shm scatter needs a shared segment", &CopyMine, kReplan);
}

}  // namespace hostccl::algo
