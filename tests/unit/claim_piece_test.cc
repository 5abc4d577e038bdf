// algo::ClaimPiece (src/algo/peer_fold.h), the dynamic piece sharing of AllReduce "direct"/"shm":
// every piece of an operation goes to exactly one rank, a new operation (seq) starts again at
// piece 0 without a reset step, and a rank that never asks leaves all its pieces to the others.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "algo/peer_fold.h"
#include "transport/local/local_group.h"

namespace {

using hostccl::algo::ClaimPiece;
using hostccl::net::LocalGroup;

TEST(ClaimPiece, OneRankTakesEveryPieceInOrderThenNone) {
  LocalGroup g("claim-one", 2);
  for (uint64_t p = 0; p < 5; ++p) EXPECT_EQ(ClaimPiece(&g, 7, 5), p);
  EXPECT_EQ(ClaimPiece(&g, 7, 5), 5u);
  EXPECT_EQ(ClaimPiece(&g, 7, 5), 5u);  // stays exhausted within the operation
}

TEST(ClaimPiece, NextOperationStartsAtZero) {
  LocalGroup g("claim-next", 2);
  EXPECT_EQ(ClaimPiece(&g, 3, 2), 0u);
  EXPECT_EQ(ClaimPiece(&g, 3, 2), 1u);
  EXPECT_EQ(ClaimPiece(&g, 3, 2), 2u);
  EXPECT_EQ(ClaimPiece(&g, 4, 3), 0u);  // operation 4: a fresh count, whatever 3 left
  EXPECT_EQ(ClaimPiece(&g, 4, 3), 1u);
  EXPECT_EQ(ClaimPiece(&g, 5, 0), 0u);  // no pieces: nothing to claim
}

TEST(ClaimPiece, ConcurrentRanksClaimEachPieceExactlyOnce) {
  constexpr int kRanks = 4;
  constexpr uint64_t kPieces = 20000;
  LocalGroup g("claim-many", kRanks);
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    std::vector<std::atomic<int>> taken(kPieces);
    std::vector<uint64_t> per_rank(kRanks, 0);
    std::vector<std::thread> ts;
    for (int r = 0; r < kRanks; ++r)
      ts.emplace_back([&, r] {
        for (uint64_t p = ClaimPiece(&g, seq, kPieces); p < kPieces; p = ClaimPiece(&g, seq, kPieces)) {
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

}  // namespace
