// AllGather, "direct" (threads of one process), "shm" and "shm_pull" (processes of one host):
// single pass over PeerMemory (transport/peer_memory.h).
//
// What: after Exchange (buffers and fingerprints published, compared):
//   "direct"/"shm" (push, claimed): block q (rank q's sendBuf, S bytes) is cut into pieces of up
//     to 256 KiB (ClaimPieceBytes), which the ranks claim one at a time from the group's work word
//     (CopyClaimed, algo/peer_fold.h); the rank that claims a piece reads it once out of q's
//     sendBuf and writes it into every rank's recvBuf at q*S + its offset (the second and later
//     writes read it from cache). On idle cores each rank copies about 1/n of the pieces; a rank
//     that waits for a core (2 ranks on 2 busy cores) leaves its share to the running ones; with
//     more processes than cores only one per core claims (PeerMemory::Workers). Needs every
//     recvBuf mapped too; "shm" re-plans to "shm_pull" (logged once) when one is not.
//   "shm_pull": rank r copies block q of every peer q straight out of q's sendBuf into its own
//     recvBuf (peers in the order r+1, r+2, ..., own block last), in pieces with an abort/peer-death
//     check between them; each rank writes only its own recvBuf.
//   Stores are non-temporal when the call's buffers do not fit the last-level cache
//   (kern::StreamStores). One closing barrier: no rank returns (and reuses its sendBuf) before
//   every peer has read it.
// Bytes in all (S = sendCount x element size): push reads n S (each block once) and writes n^2 S;
//   pull reads n^2 S and writes n^2 S; no messages.
// In place: sendBuf == recvBuf + r*S: block r of rank r's recvBuf is the source and is never
//   written (the copy whose destination is its source is skipped; other ranks write only their own
//   block r). sendBuf == recvBuf is first rewritten to that form (AllGatherInPlace: a local copy
//   before Exchange).
// Preconditions: "direct": ctx.local. "shm"/"shm_pull": ctx.shm and every rank's sendBuf shareable
//   (aclrtMalloc memory); otherwise every rank (they all read the same descriptors) re-plans to
//   "ring" over TCP and logs it once.
// Example: 3 ranks, 4 fp32 each (one piece per block): the first claimant takes rank 0's 16 bytes
//   and writes them at recv+0 of ranks 0, 1 and 2; the next claim gets rank 1's block (to recv+16),
//   the next rank 2's (to recv+32). shm_pull: rank 1 copies rank 2's 16 bytes to recv+32, then rank
//   0's to recv+0, and its own to recv+16.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/peer_fold.h"
#include "common/log.h"
#include "common/thread_state.h"
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

namespace {

// The pull's footprint: every rank's sendBuf (its block) and recvBuf (all blocks).
bool StreamPull(const Context& ctx, const uint64_t* len) {
  uint64_t total = 0;
  for (int q = 0; q < ctx.size; ++q) total += len[q];
  return kern::StreamStores(total * static_cast<uint64_t>(ctx.size + 1));
}

}  // namespace

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
    const bool stream = StreamPull(ctx, len);
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
  return EndPass(ctx, g, st);
}

Status PushBlocks(Context& ctx, net::PeerMemory* g, const void* send, char* recv, const uint64_t* off,
                  const uint64_t* len) {
  if (!TakesPieces(ctx, g)) return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
  const int n = ctx.size;
  const size_t un = static_cast<size_t>(n);
  thread_local ExitMarked<std::vector<char*>> recvs, dsts;
  thread_local ExitMarked<std::vector<ClaimCopy>> items;
  recvs.assign(un, nullptr);
  dsts.assign(un * un, nullptr);
  items.assign(un, ClaimCopy{});
  Status st;
  std::string why;
  uint64_t total = 0;
  // Looked up only when some block is not empty (with none, a NULL recvBuf is allowed).
  bool any = false;
  for (int q = 0; q < n; ++q) any = any || len[q] > 0;
  for (int r = 0; r < n && st.ok() && any; ++r) {
    recvs[static_cast<size_t>(r)] = r == ctx.rank ? recv : static_cast<char*>(g->PeerRecv(r, &why));
    if (recvs[static_cast<size_t>(r)] == nullptr) st = MakeStatus(Code::kRemote, "rank %d's recvBuf: %s", r, why.c_str());
  }
  for (int q = 0; q < n && st.ok(); ++q) {
    const size_t uq = static_cast<size_t>(q);
    ClaimCopy& it = items[uq];
    it.bytes = len[uq];
    if (it.bytes == 0) continue;
    it.src = static_cast<const char*>(q == ctx.rank ? send : g->PeerSend(q, &why));
    if (it.src == nullptr) {
      st = MakeStatus(Code::kRemote, "rank %d's sendBuf: %s", q, why.c_str());
      break;
    }
    for (size_t r = 0; r < un; ++r) dsts[uq * un + r] = recvs[r] + off[uq];
    it.dst = &dsts[uq * un];
    it.ndst = static_cast<uint32_t>(n);
    total += it.bytes;
  }
  if (!st.ok()) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  }
  const bool stream = kern::StreamStores(total * static_cast<uint64_t>(n + 1));
  return CopyClaimed(ctx, g, items.data(), un, ClaimPieceBytes(total, n, kAllGatherPieceBytes), stream);
}

namespace {

enum class Dir { kPush, kPull };

Status Gather(Context& ctx, net::PeerMemory* g, const OpArgs& a, Dir dir) {
  const size_t n = static_cast<size_t>(ctx.size);
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  off.resize(n);
  len.assign(n, a.bytes());
  for (size_t r = 0; r < n; ++r) off[r] = r * a.bytes();
  char* recv = static_cast<char*>(a.recv);
  return dir == Dir::kPush ? PushBlocks(ctx, g, a.send, recv, off.data(), len.data())
                           : PullBlocks(ctx, g, a.send, recv, off.data(), len.data());
}

}  // namespace

Status AllGatherDirect(Context& ctx, const OpArgs& in) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "direct allgather needs every rank in this process"));
  return Gather(ctx, g, a, Dir::kPush);
}

namespace {

Status Shm(Context& ctx, const OpArgs& in, Dir dir) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  net::ShmGroup* g = ctx.shm;
  HOSTCCL_RETURN_IF_ERROR(ExchangeArgs(ctx, g, a, "shm allgather needs a shared segment"));
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  if (unshared < 0) {
    if (dir == Dir::kPush && g->FirstUnmappable(/*recv_too=*/true) >= 0) {
      if (g->FirstUse("allgather shm -> shm_pull"))
        HLOG_INFO(kAlgo, "HcclAllGather #%llu: rank %d's recvBuf: not aclrtMalloc memory; re-plan shm -> shm_pull",
                  static_cast<unsigned long long>(ctx.fp.seq), g->FirstUnmappable(true));
      dir = Dir::kPull;
    }
    return Gather(ctx, g, a, dir);
  }
  // Re-plan (identical on every rank: all read the same descriptors): "ring" over TCP. The
  // in-place rewrite is already done; ring sees sendBuf == recvBuf + r*S.
  return ReplanOverTransport(ctx, g, a, unshared, "sendBuf", "allgather shm -> ring", &AllGatherRing);
}

}  // namespace

Status AllGatherShm(Context& ctx, const OpArgs& in) { return Shm(ctx, in, Dir::kPush); }
Status AllGatherShmPull(Context& ctx, const OpArgs& in) { return Shm(ctx, in, Dir::kPull); }

}  // namespace hostccl::algo
