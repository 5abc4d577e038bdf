// AllGather, "ring": bandwidth-optimal over TCP, pipelined chunk by chunk (RingGather, also the
// leaders' step of "node").
//
// What: ranks in a ring r -> r+1 -> ... Block q starts at rank q and travels q -> q+1 -> ... ->
//   q-1 (n-1 hops). Each block is cut into chunks (ctx.chunk_bytes, identical on every rank); a
//   rank posts every receive from its predecessor at once, straight into its recvBuf at the
//   chunk's final place (no staging), sends its own block's chunks, and forwards each received
//   chunk to its successor as soon as it has landed — except the chunks of its successor's own
//   block. All n links carry data at once, so the time is (n-1) S / link bandwidth plus one
//   chunk of fill per hop.
// Matching: per pair, messages match in posting order; a rank sends blocks r, r-1, ..., r-n+2 (in
//   chunk order) and its successor receives blocks r, r-1, ..., r-n+2 in the same order.
// Bytes per rank: sends (n-1) S, receives (n-1) S (the minimum for a rank's link).
// Mismatch: every link's frames are compared by their receiver, and no rank finishes before data
//   that crossed every other link reached it, so a differing fingerprint fails every rank.
// In place: after AllGatherInPlace the own block is sendBuf (block r), which no receive writes.
// Preconditions: a transport (n = 1: a local copy).
// Example: 3 ranks: rank 1 sends block 1 to rank 2 and receives block 0 from rank 0, which it
//   forwards to rank 2; then it receives block 2 (via rank 0) and keeps it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status RingGather(Context& ctx, const int* members, int m, int me, const uint64_t* off, const uint64_t* len,
                  char* recv, uint64_t chunk) {
  if (m <= 1) return Status::Ok();
  net::Transport* t = ctx.transport;
  if (t == nullptr) return Status(Code::kInternal, "ring allgather needs a transport");
  chunk = std::max<uint64_t>(64, chunk / 64 * 64);
  const int next = members[(me + 1) % m], prev = members[(me + m - 1) % m];
  // At least one (possibly empty) message per block: every link carries frames, so a mismatch is
  // seen even where the blocks are empty (AllGatherV zero counts).
  auto chunks = [&](int b) { return std::max<uint64_t>(1, (len[b] + chunk - 1) / chunk); };
  struct Piece {
    int block;
    uint64_t lo, n;
  };
  thread_local ExitMarked<std::vector<Piece>> pieces;
  thread_local ExitMarked<std::vector<net::RequestId>> recvs, sends;
  pieces.clear();
  recvs.clear();
  sends.clear();
  // Receives: blocks me-1, me-2, ..., me-(m-1) (= me+1), each in chunk order.
  for (int k = 1; k < m; ++k) {
    const int b = (me + m - k) % m;
    for (uint64_t c = 0; c < chunks(b); ++c) {
      const uint64_t lo = c * chunk, n = std::min(chunk, len[b] - std::min(len[b], lo));
      net::RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(prev, recv + off[b] + lo, n, ctx.fp, &id));
      pieces.push_back({b, lo, n});
      recvs.push_back(id);
    }
  }
  for (uint64_t c = 0; c < chunks(me); ++c) {
    const uint64_t lo = c * chunk, n = std::min(chunk, len[me] - std::min(len[me], lo));
    net::RequestId id;
    HOSTCCL_RETURN_IF_ERROR(t->Isend(next, recv + off[me] + lo, n, ctx.fp, &id));
    sends.push_back(id);
  }
  const int keep = (me + 1) % m;  // the successor's own block ends here
  for (size_t i = 0; i < pieces.size(); ++i) {
    HOSTCCL_RETURN_IF_ERROR(t->Wait(recvs[i], ctx.deadline));
    const Piece& p = pieces[i];
    if (p.block == keep) continue;
    net::RequestId id;
    HOSTCCL_RETURN_IF_ERROR(t->Isend(next, recv + off[p.block] + p.lo, p.n, ctx.fp, &id));
    sends.push_back(id);
  }
  return t->WaitAll(sends.data(), sends.size(), ctx.deadline);
}

Status AllGatherRing(Context& ctx, const OpArgs& in) {
  const OpArgs a = AllGatherInPlace(ctx, in);
  const int n = ctx.size;
  const uint64_t bytes = a.bytes();
  char* recv = static_cast<char*>(a.recv);
  char* own = recv + static_cast<uint64_t>(ctx.rank) * bytes;
  if (a.send != own) std::memcpy(own, a.send, bytes);
  if (n == 1) return Status::Ok();
  thread_local ExitMarked<std::vector<int>> members;
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  members.resize(static_cast<size_t>(n));
  off.resize(static_cast<size_t>(n));
  len.assign(static_cast<size_t>(n), bytes);
  for (int r = 0; r < n; ++r) {
    members[static_cast<size_t>(r)] = r;
    off[static_cast<size_t>(r)] = static_cast<uint64_t>(r) * bytes;
  }
  return RingGather(ctx, members.data(), n, ctx.rank, off.data(), len.data(), recv, ctx.chunk_bytes);
}

}  // namespace hostccl::algo
