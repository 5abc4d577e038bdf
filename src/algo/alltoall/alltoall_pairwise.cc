// AlltoAll family, "pairwise" (TCP, any placement with a transport, also across hosts):
// pairwise exchange with several steps in flight.
//
// What: step k = 1 .. n-1: rank r sends its block for (r + k) mod n and receives the block of
//   (r - k) mod n straight into recvBuf + RecvDispl(from); kWindow steps (2 kWindow requests) are
//   in flight at a time, so every link is busy in both directions while the next steps are posted;
//   a rank whose send total is at most 64 KiB posts all n-1 steps at once (one round trip; the
//   window is per rank: each pair still exchanges exactly one message each way, in order).
//   The own block is copied locally while the first steps are on the wire. Every pair exchanges
//   exactly one message each way (zero-length for empty blocks), so every rank sees every peer's
//   fingerprint: a disagreement in count, element size or AlltoAllVC's matrix fails every rank.
//   AlltoAllV first exchanges every rank's (sendCounts, sdispls, recvCounts) with every other
//   rank (3 n words each way per pair) and checks all pairs (CheckPairs) before any data moves,
//   so a disagreement fails every rank with the same message, never a length error on one side.
// Preconditions: a transport (or one rank); AlltoAllV: scratch of 24 n^2 bytes for the arrays.
// Bytes per rank: sends its send extent minus its own block, receives its receive extent minus its
//   own block; latency: ceil((n-1) / kWindow) round trips (small totals: one).
// Example: 4 ranks: rank 1 sends to 2, 3, 0 and receives from 0, 3, 2 (steps 1, 2, 3), all three
//   steps in flight at once (kWindow = 4).
#include <algorithm>
#include <cstring>

#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/primitives.h"

namespace hostccl::algo {
namespace {

constexpr int kWindow = 4;  // steps in flight (each a send and a receive)
constexpr uint64_t kSmallBytes = 64 << 10;  // send totals up to this post every step at once

}  // namespace

Status AlltoAllPairwise(Context& ctx, const OpArgs& a) {
  const int n = ctx.size, r = ctx.rank;
  const uint64_t es = DataTypeSize(a.dtype);
  const Blocks b{a};
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  auto copy_own = [&] {
    const uint64_t bytes = b.RecvCount(r) * es;
    if (bytes) std::memmove(recv + b.RecvDispl(r) * es, send + b.SendDispl(r) * es, bytes);
  };
  if (n == 1) {
    copy_own();
    return Status::Ok();
  }
  if (ctx.transport == nullptr) return Status(Code::kInternal, "pairwise alltoall needs a transport");
  if (a.kind == CollKind::kAlltoAllV) {
    const uint64_t words = 3 * static_cast<uint64_t>(n);
    auto* all = static_cast<uint64_t*>(ctx.scratch->Get(words * static_cast<uint64_t>(n) * sizeof(uint64_t)));
    if (all == nullptr) return Status(Code::kMemory, "cannot allocate the alltoallv arrays' scratch");
    Requests rq(ctx);
    for (int k = 1; k < n; ++k) {
      const int from = (r - k + n) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Recv(from, all + static_cast<uint64_t>(from) * words, words * sizeof(uint64_t)));
    }
    for (int k = 1; k < n; ++k)
      HOSTCCL_RETURN_IF_ERROR(rq.Send((r + k) % n, a.send_counts, words * sizeof(uint64_t)));
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    constexpr int kStack = 64;
    const uint64_t* rows_stack[kStack];
    std::vector<const uint64_t*> rows_heap;
    const uint64_t** rows = rows_stack;
    if (n > kStack) {
      rows_heap.resize(static_cast<size_t>(n));
      rows = rows_heap.data();
    }
    for (int i = 0; i < n; ++i) rows[i] = i == r ? a.send_counts : all + static_cast<uint64_t>(i) * words;
    HOSTCCL_RETURN_IF_ERROR(CheckPairs(ctx, rows, 2 * static_cast<size_t>(n)));
  }
  // Small totals: every step at once (one round trip); the window only matters for link sharing.
  uint64_t send_total = 0;
  for (int j = 0; j < n; ++j) send_total += b.SendCount(j);
  const int window = send_total * es <= kSmallBytes ? n : kWindow;
  Requests rq(ctx);
  bool own_done = false;
  for (int k0 = 1; k0 < n; k0 += window) {
    const int k1 = std::min(n, k0 + window);
    for (int k = k0; k < k1; ++k) {
      const int from = (r - k + n) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Recv(from, recv + b.RecvDispl(from) * es, b.RecvCount(from) * es));
    }
    for (int k = k0; k < k1; ++k) {
      const int to = (r + k) % n;
      HOSTCCL_RETURN_IF_ERROR(rq.Send(to, send + b.SendDispl(to) * es, b.SendCount(to) * es));
    }
    if (!own_done) {
      copy_own();
      own_done = true;
    }
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
  }
  return Status::Ok();
}

}  // namespace hostccl::algo
