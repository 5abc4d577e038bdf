// algo::ClaimPiece (src/algo/peer_fold.h), the dynamic piece sharing of AllReduce, AllGather and
// AlltoAll over peer memory: the pieces are cut into one contiguous range per worker; a worker
// claims its own range in order, then the following ranges; every piece of an operation goes to
// exactly one rank; a new operation (seq) starts every range again without a reset step; a
// worker that never asks leaves its whole range to the others.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "algo/context.h"
#include "algo/peer_fold.h"
#include "transport/local/local_group.h"

namespace {

using hostccl::algo::ClaimCopy;
using hostccl::algo::ClaimPiece;
using hostccl::algo::Context;
using hostccl::algo::CopyClaimed;
using hostccl::net::LocalGroup;

Context Ctx(int rank, int size, uint64_t seq) {
  Context c;
  c.rank = rank;
  c.size = size;
  c.fp.seq = seq;
  return c;
}

TEST(ClaimPiece, OneRankTakesItsRangeFirstThenTheOthersThenNone) {
  LocalGroup g("claim-one", 2);  // two workers: ranges [0, 2) and [2, 5) of 5 pieces
  ASSERT_EQ(g.Workers(), 2);
  const Context c1 = Ctx(1, 2, 7);
  for (uint64_t p : {2u, 3u, 4u, 0u, 1u}) EXPECT_EQ(ClaimPiece(c1, &g, 5), p);
  EXPECT_EQ(ClaimPiece(c1, &g, 5), 5u);
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 7), &g, 5), 5u);  // stays exhausted within the operation, for everyone
}

TEST(ClaimPiece, NextOperationStartsEveryRangeAgain) {
  LocalGroup g("claim-next", 2);
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 3), &g, 2), 0u);
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 3), &g, 2), 1u);  // rank 1's range, which it never claimed
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 3), &g, 2), 2u);
  EXPECT_EQ(ClaimPiece(Ctx(1, 2, 3), &g, 2), 2u);
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 4), &g, 3), 0u);  // operation 4: fresh counts, whatever 3 left
  EXPECT_EQ(ClaimPiece(Ctx(1, 2, 4), &g, 3), 1u);  // ranges [0, 1) and [1, 3)
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 4), &g, 3), 2u);
  EXPECT_EQ(ClaimPiece(Ctx(0, 2, 5), &g, 0), 0u);  // no pieces: nothing to claim
}

TEST(ClaimPiece, FewerPiecesThanWorkers) {
  LocalGroup g("claim-few", 4);  // ranges of 3 pieces among 4: [0,0) [0,1) [1,2) [2,3)
  EXPECT_EQ(ClaimPiece(Ctx(0, 4, 9), &g, 3), 0u);  // its own range is empty: the next one's
  EXPECT_EQ(ClaimPiece(Ctx(3, 4, 9), &g, 3), 2u);
  EXPECT_EQ(ClaimPiece(Ctx(3, 4, 9), &g, 3), 1u);  // wraps to range 0 (empty), 1 (taken), 2
  EXPECT_EQ(ClaimPiece(Ctx(2, 4, 9), &g, 3), 3u);
}

TEST(ClaimPiece, ConcurrentRanksClaimEachPieceExactlyOnce) {
  constexpr int kRanks = 4;
  constexpr uint64_t kPieces = 20001;
  LocalGroup g("claim-many", kRanks);
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    std::vector<std::atomic<int>> taken(kPieces);
    std::vector<uint64_t> per_rank(kRanks, 0);
    std::vector<std::thread> ts;
    // In operation 2 rank 3 never claims: its range goes to the others.
    for (int r = 0; r < kRanks; ++r)
      ts.emplace_back([&, r] {
        if (seq == 2 && r == 3) return;
        const Context c = Ctx(r, kRanks, seq);
        for (uint64_t p = ClaimPiece(c, &g, kPieces); p < kPieces; p = ClaimPiece(c, &g, kPieces)) {
          taken[p].fetch_add(1);
          ++per_rank[static_cast<size_t>(r)];
        }
      });
    for (auto& t : ts) t.join();
    uint64_t sum = 0;
    for (uint64_t p = 0; p < kPieces; ++p) ASSERT_EQ(taken[p].load(), 1) << "piece " << p << " of operation " << seq;
    for (uint64_t c : per_rank) sum += c;
    EXPECT_EQ(sum, kPieces);
  }
}

// CopyClaimed walks the items with a cursor: a worker that finished its own range and wraps to an
// earlier one must restart it. Rank 1 claims every piece (its range [3, 7), then rank 0's [0, 3))
// before rank 0 starts; every byte must still land in the right place.
TEST(CopyClaimed, AWorkerThatWrapsToAnEarlierRangeCopiesTheRightItems) {
  LocalGroup g("claim-copy", 2);
  constexpr uint64_t kPiece = 4096;
  const uint64_t sizes[] = {10000, 5000, 7000};  // 3 + 2 + 2 pieces
  std::vector<std::vector<char>> src(3), dst_a(3), dst_b(3);
  std::vector<std::vector<char*>> dsts(3);
  std::vector<ClaimCopy> items(3);
  for (size_t i = 0; i < 3; ++i) {
    src[i].resize(sizes[i]);
    for (uint64_t b = 0; b < sizes[i]; ++b) src[i][b] = static_cast<char>(b * 7 + i * 13 + 1);
    dst_a[i].assign(sizes[i], 0);
    dst_b[i].assign(sizes[i], 0);
    dsts[i] = {dst_a[i].data(), dst_b[i].data()};
    items[i] = ClaimCopy{src[i].data(), dsts[i].data(), 2, sizes[i]};
  }
  hostccl::Status st1, st0;
  Context c1 = Ctx(1, 2, 11), c0 = Ctx(0, 2, 11);
  std::thread t1([&] { st1 = CopyClaimed(c1, &g, items.data(), items.size(), kPiece, false); });
  // Rank 0's range (3 pieces) is all taken by rank 1 before rank 0 starts.
  const uint64_t tag = uint64_t{11} << 24;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool taken = false;
  while (!(taken = g.WorkWord(0)->load() == (tag | 3)) && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  EXPECT_TRUE(taken) << "rank 1 did not claim rank 0's range within 10 s";
  std::thread t0([&] { st0 = CopyClaimed(c0, &g, items.data(), items.size(), kPiece, false); });
  t1.join();
  t0.join();
  ASSERT_TRUE(st1.ok()) << st1.message();
  ASSERT_TRUE(st0.ok()) << st0.message();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(0, std::memcmp(dst_a[i].data(), src[i].data(), sizes[i])) << "item " << i;
    EXPECT_EQ(0, std::memcmp(dst_b[i].data(), src[i].data(), sizes[i])) << "item " << i;
  }
}

}  // namespace
