// AllGather, "direct" (threads of one process) and "shm" (processes of one host): single pass
// over PeerMemory (transport/peer_memory.h), each rank pulling.
//
// What: after Exchange (buffers and fingerprints published, compared), rank r copies block q of
//   every peer q straight out of q's sendBuf into its own recvBuf at q*S (peers in the order r+1,
//   r+2, ... so the ranks do not all read the same peer at once), in pieces with an abort/peer-death
//   check between them; its own block from its own sendBuf (nothing to do in place). From 4 MiB
//   per block the copies use non-temporal stores (nobody reads the result during the operation).
//   One closing barrier: no rank returns (and reuses its sendBuf) before every peer has read it.
//   Pull, not push: each rank writes only its own recvBuf (local pages, no cache lines bouncing
//   between writers) and reads each peer's block once; the volume is the same either way.
// Bytes per rank: reads (n-1) S from peers, writes n S (S = sendCount x element size); no messages.
// In place: sendBuf == recvBuf + r*S: peers read block r of this rank's recvBuf, which only this
//   rank could write, and it does not (its own block is already there). sendBuf == recvBuf is
//   first rewritten to that form (AllGatherInPlace: a local copy before Exchange).
// Preconditions: "direct": ctx.local. "shm": ctx.shm and every rank's sendBuf shareable (aclrtMalloc
//   memory; recvBufs are written only by their owners); otherwise every rank (they all read the same
//   descriptors) re-plans to "ring" over TCP and logs it once.
// Example: 3 ranks, 4 fp32 each: rank 1 copies rank 2's 16 bytes to recv+32, then rank 0's to recv+0,
//   and its own to recv+16.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/peer_fold.h"
#include "common/log.h"
#include "kernels/copy.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {

OpArgs AllGatherInPlace(const Context& ctx, const OpArgs& a) {
  OpArgs b = a;
  if (a.send != a.recv || ctx.rank == 0) return b;
  const uint64_t bytes = a.bytes();
  char* mine = static_cast<char*>(a.recv) + static_cast<uint64_t>(ctx.rank) * bytes;
  std::memcpy(mine, a.send, bytes);  // block 0 and block r (r >= 1) are disjoint
  b.send = mine;
  b.send_desc = a.recv_desc;
  b.send_desc.addr += static_cast<uint64_t>(ctx.rank) * bytes;
  return b;
}

Status PullBlocks(Context& ctx, net::PeerMemory* g, const void* send, char* recv, const uint64_t* off,
                  const uint64_t* len) {
  const int n = ctx.size;
  Status st;
  std::string why;
  uint64_t unchecked = 0;  // bytes copied since the last abort/peer-death check
  for (int k = 0; k < n && st.ok(); ++k) {
    const int q = (ctx.rank + 1 + k) % n;  // own block last
    const uint64_t bytes = len[q];
    if (bytes == 0) continue;
    char* dst = recv + off[q];
    const char* src = static_cast<const char*>(q == ctx.rank ? send : g->PeerSend(q, &why));
    if (src == nullptr) {
      st = Status(Code::kRemote, why);
      break;
    }
    if (src == dst) continue;
    const bool stream = bytes >= kAllGatherStreamBytes;
    for (uint64_t lo = 0; lo < bytes && st.ok(); lo += kPeerFoldCheckBytes) {
      const uint64_t piece = std::min(bytes - lo, kPeerFoldCheckBytes);
      if (stream)
        kern::CopyStreaming(dst + lo, src + lo, piece);
      else
        std::memcpy(dst + lo, src + lo, piece);
      unchecked += piece;
      if (unchecked >= kPeerFoldCheckBytes) {
        st = g->Check(ctx.fp.seq);
        unchecked = 0;
      }
    }
  }
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
}

namespace {

Status Pull(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  const size_t n = static_cast<size_t>(ctx.size);
  thread_local std::vector<uint64_t> off, len;
  off.resize(n);
  len.assign(n, a.bytes());
  for (size_t r = 0; r < n; ++r) off[r] = r * a.bytes();
  return PullBlocks(ctx, g, a.send, static_cast<char*>(a.recv), off.data(), len.data());
}

}  // namespace

Status AllGatherDirect(Context& ctx, const OpArgs& in) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "direct allgather needs every rank in this process"));
  return Pull(ctx, g, a);
}

Status AllGatherShm(Context& ctx, const OpArgs& in) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  net::ShmGroup* g = ctx.shm;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "shm allgather needs a shared segment"));
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  if (unshared < 0) return Pull(ctx, g, a);
  // Re-plan (identical on every rank: all read the same descriptors): "ring" over TCP. The
  // in-place rewrite is already done; ring sees sendBuf == recvBuf + r*S.
  return ReplanOverTransport(ctx, g, a, unshared, "sendBuf", "allgather shm -> ring", &AllGatherRing);
}

}  // namespace hostccl::algo
