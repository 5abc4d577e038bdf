// Broadcast, "direct" (threads of one process) and "shm" (processes of one host): slice-parallel,
// single pass over PeerMemory (transport/peer_memory.h).
//
// What: after Exchange (buffers and fingerprints published, compared), rank i (the root included)
//   owns the 64-byte-aligned slice S_i = PartRange(count, n, i) and copies S_i of the root's buffer
//   into every non-root's buffer, piece by piece (kBroadcastPieceBytes: the piece is read from the
//   root once and stays in cache for the n-2 further writes; the copies are written with
//   non-temporal stores when the call's n S bytes of buffers exceed the cache:
//   kern::StreamStores). One closing barrier: no rank returns
//   (and the root cannot reuse or free its buffer) before every copy is done.
// The root's buffer is only read. Non-roots' buffers are only written by slice owners, each byte once.
// Preconditions: "direct": ctx.local. "shm": ctx.shm and every rank's buffer shareable (aclrtMalloc
//   memory); otherwise every rank (they all read the same descriptors) re-plans to "chain" over TCP
//   and logs it once.
// Bytes per rank: reads S/n, writes (n-1) S/n (S = count x element size); no messages.
// Example: 4 ranks, root 1, 1000 fp32: slices 256/256/256/232 elements; rank 2 copies elements
//   [512, 768) of rank 1's buffer into the buffers of ranks 0, 2 and 3.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "common/thread_state.h"
#include "kernels/copy.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {
namespace {

Status Slices(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size;
  uint64_t begin = 0, end = 0;
  PartRange(a.count, n, ctx.rank, std::max<uint64_t>(1, 64 / es), &begin, &end);
  Status st;
  if (begin < end) {
    std::string why;
    const char* src = static_cast<const char*>(a.root == ctx.rank ? a.send : g->PeerSend(a.root, &why));
    if (src == nullptr) st = Status(Code::kRemote, why);
    thread_local ExitMarked<std::vector<char*>> dsts;
    dsts.clear();
    for (int r = 0; r < n && st.ok(); ++r) {
      if (r == a.root) continue;
      char* d = static_cast<char*>(r == ctx.rank ? a.recv : g->PeerRecv(r, &why));
      if (d == nullptr) st = Status(Code::kRemote, why);
      dsts.push_back(d);
    }
    const uint64_t piece = std::max<uint64_t>(1, kBroadcastPieceBytes / es);
    // The root's buffer and the n-1 copies: beyond the cache nobody reads the copies during the
    // operation, so filling the cache with them (and reading each line first) only costs bandwidth.
    const bool stream = kern::StreamStores(a.bytes() * static_cast<uint64_t>(n));
    for (uint64_t lo = begin; lo < end && st.ok(); lo += piece) {
      const uint64_t len = (std::min(end, lo + piece) - lo) * es;
      for (char* d : dsts) kern::CopyTo(d + lo * es, src + lo * es, len, stream);
      if ((lo - begin) * es % (4 << 20) == 0) st = g->Check(ctx.fp.seq);
    }
  }
  return EndPass(ctx, g, st);
}

}  // namespace

Status BroadcastDirect(Context& ctx, const OpArgs& a) {
  return DirectPass(ctx, a, "direct broadcast needs every rank in this process", &Slices);
}

Status BroadcastShm(Context& ctx, const OpArgs& a) {
  static constexpr ShmReplan kReplan{PeerBuffers::kSendBufs, "buffer", "broadcast shm -> chain", &BroadcastChain};
  return ShmPass(ctx, a, "shm broadcast needs a shared segment", &Slices, kReplan);
}

}  // namespace hostccl::algo
