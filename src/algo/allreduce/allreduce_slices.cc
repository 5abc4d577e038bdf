// AllReduce, "direct" (threads of one process) and "shm" (processes of one host): slice-parallel,
// single pass over PeerMemory (algo/peer_fold.h).
//
// What: after Exchange (buffers and fingerprints published, compared), the count is cut into
//   64-byte aligned pieces (kAllReducePieceBytes; smaller for small inputs, about 4 per rank at
//   least), which the ranks claim one at a time (ClaimPiece, algo/peer_fold.h): the rank that
//   claims piece P folds P of all n sendBufs in rank order and writes it into every rank's
//   recvBuf at P. How depends on the call's footprint, 2 n S bytes (kern::StreamStores):
//   - in cache: the fold goes straight into the claimant's own recvBuf, which is then copied into
//     the others' with ordinary stores (the piece is still in this core's cache for the copies);
//   - beyond it: the fold goes into a scratch piece that stays in cache, streamed from there into
//     every recvBuf, the own first, with non-temporal stores (memory sees the n reads and the n
//     writes of the piece and no read for ownership).
//   On idle cores each rank does about 1/n of the pieces; a rank that waits for a core (2 ranks on
//   2 busy cores) leaves its share to the running ones instead of holding them in the final
//   barrier. With more processes than cores only one per core claims (PeerMemory::Workers);
//   the others wait in the barrier. The result does not depend on who folds a piece. One final
//   barrier.
// In place (sendBuf == recvBuf on any rank) is safe without an extra barrier: piece P of every
//   input is read only by the rank that claimed P, which overwrites recvBuf_j[P] only after it
//   folded P.
// Preconditions: "direct": ctx.local. "shm": ctx.shm and every sendBuf and recvBuf shareable
//   (aclrtMalloc memory); otherwise every rank (they all read the same descriptors) re-plans to
//   "rs_ag" over TCP and logs it once.
// Bytes in all: reads n x S, writes n x S (S = count x element size; about 1/n of it per rank on
//   idle cores); beyond the cache all of it memory traffic, none read for ownership; no messages.
// Example: 4 ranks, count 1000 fp32 (4000 bytes): one piece of 1024 elements (4 KiB at least);
//   the first rank to claim it folds elements [0, 1000) of x0..x3 and writes them into all four
//   recvBufs, the others find nothing left and wait in the barrier. 2 ranks, 64 MiB: 512 pieces
//   of 128 KiB, about 256 folded by each.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "common/thread_state.h"
#include "kernels/copy.h"

namespace hostccl::algo {
namespace {

Status Slices(Context& ctx, net::PeerMemory* g, const OpArgs& a) {
  if (!TakesPieces(ctx, g)) return g->Barrier(ctx.rank, ctx.deadline, ctx.fp.seq);
  const uint64_t es = DataTypeSize(a.dtype);
  const int n = ctx.size;
  // Pieces: kAllReducePieceBytes, smaller for a small input (at least ~4 per rank, each a multiple
  // of 64 bytes and at least 4 KiB), larger only beyond kMaxClaimPieces of them.
  const uint64_t align = std::max<uint64_t>(1, 64 / es);
  uint64_t piece = (a.count + 4 * static_cast<uint64_t>(n) - 1) / (4 * static_cast<uint64_t>(n));
  piece = std::clamp<uint64_t>(piece, std::max<uint64_t>(1, 4096 / es), std::max<uint64_t>(1, kAllReducePieceBytes / es));
  piece = std::max(piece, (a.count + kMaxClaimPieces - 1) / kMaxClaimPieces);
  piece = (piece + align - 1) / align * align;
  const uint64_t pieces = (a.count + piece - 1) / piece;
  Status st;
  thread_local ExitMarked<std::vector<char*>> dsts;
  dsts.assign(static_cast<size_t>(n), nullptr);
  std::string why;
  for (int r = 0; r < n && st.ok(); ++r) {
    dsts[static_cast<size_t>(r)] = static_cast<char*>(r == ctx.rank ? a.recv : g->PeerRecv(r, &why));
    if (dsts[static_cast<size_t>(r)] == nullptr) st = Status(Code::kRemote, why);
  }
  // Every rank's sendBuf and recvBuf: beyond the cache, non-temporal stores (kern::StreamStores).
  const bool stream = kern::StreamStores(2 * static_cast<uint64_t>(n) * a.count * es);
  char* tmp = nullptr;
  if (st.ok() && a.count > 0 && stream) {
    tmp = static_cast<char*>(ctx.scratch->Get(std::min(a.count, piece) * es));
    if (tmp == nullptr) st = Status(Code::kMemory, "cannot allocate the allreduce piece scratch");
  }
  uint64_t folded = 0;
  for (uint64_t p = st.ok() ? ClaimPiece(ctx, g, pieces) : pieces; p < pieces;
       p = ClaimPiece(ctx, g, pieces)) {
    const uint64_t lo = p * piece, hi = std::min(a.count, lo + piece);
    if (folded >= kPeerFoldCheckBytes) {
      folded = 0;
      st = g->Check(ctx.fp.seq);
      if (!st.ok()) break;
    }
    // In cache, the own recvBuf holds the folded piece (in place is safe: piece P of every
    // sendBuf is read here before any recvBuf's P is written, and by no other rank); beyond it,
    // the scratch piece, whose ordinary stores never leave the cache (folding into the own
    // recvBuf would read it for ownership and write it back).
    char* own = dsts[static_cast<size_t>(ctx.rank)] + lo * es;
    char* folded_piece = stream ? tmp : own;
    st = FoldPeersTo(ctx, g, a, lo, hi, folded_piece);
    if (!st.ok()) break;
    for (int k = stream ? 0 : 1; k < n; ++k) {
      const int r = (ctx.rank + k) % n;
      kern::CopyTo(dsts[static_cast<size_t>(r)] + lo * es, folded_piece, (hi - lo) * es, stream);
    }
    folded += (hi - lo) * es;
  }
  return EndPass(ctx, g, st);
}

}  // namespace

Status AllReduceDirect(Context& ctx, const OpArgs& a) {
  return DirectPass(ctx, a, "direct allreduce needs every rank in this process", &Slices);
}

Status AllReduceShm(Context& ctx, const OpArgs& a) {
  static constexpr ShmReplan kReplan{PeerBuffers::kAllBuffers, "buffers", "allreduce shm -> rs_ag", &AllReduceRsAg};
  return ShmPass(ctx, a, "shm allreduce needs a shared segment", &Slices, kReplan);
}

}  // namespace hostccl::algo
