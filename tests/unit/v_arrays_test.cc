// The V arrays' arithmetic (src/common/v_arrays.h): extents, overlapping blocks, sums, the packed
// layout AlltoAllVC implies, the first differing index. The argument checks, the fingerprint and
// the owned copies of every V operator are built on these.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/v_arrays.h"

namespace hostccl::varr {
namespace {

TEST(VArrays, ExtentIsTheFurthestEndOfANonEmptyBlock) {
  const uint64_t counts[] = {2, 0, 3};
  const uint64_t displs[] = {4, 100, 0};  // block 1 is empty: its displacement does not count
  uint64_t e = 0;
  int bad = -1;
  ASSERT_TRUE(Extent(counts, displs, 3, &e, &bad));
  EXPECT_EQ(e, 6u);
  const uint64_t zero[] = {0, 0};
  ASSERT_TRUE(Extent(zero, displs, 2, &e, &bad));
  EXPECT_EQ(e, 0u);
  const uint64_t gap_c[] = {1, 1};
  const uint64_t gap_d[] = {10, 3};  // unordered, with gaps
  ASSERT_TRUE(Extent(gap_c, gap_d, 2, &e, &bad));
  EXPECT_EQ(e, 11u);
}

TEST(VArrays, ExtentOverflowNamesTheBlock) {
  const uint64_t counts[] = {1, 2};
  const uint64_t displs[] = {0, UINT64_MAX - 1};
  uint64_t e = 0;
  int bad = -1;
  EXPECT_FALSE(Extent(counts, displs, 2, &e, &bad));
  EXPECT_EQ(bad, 1);
  const uint64_t fits[] = {0, UINT64_MAX - 2};
  EXPECT_TRUE(Extent(counts, fits, 2, &e, &bad));
  EXPECT_EQ(e, UINT64_MAX);
}

TEST(VArrays, OverlapFindsThePairAndIgnoresEmptyAndTouchingBlocks) {
  int i = -1, j = -1;
  {
    const uint64_t c[] = {4, 4, 4};
    const uint64_t d[] = {8, 0, 4};  // touching: [8,12) [0,4) [4,8)
    EXPECT_FALSE(FindOverlap(c, d, 3, &i, &j));
  }
  {
    const uint64_t c[] = {4, 0, 4};
    const uint64_t d[] = {0, 2, 4};  // block 1 is empty inside block 0
    EXPECT_FALSE(FindOverlap(c, d, 3, &i, &j));
  }
  {
    const uint64_t c[] = {2, 10, 1};
    const uint64_t d[] = {20, 0, 9};  // block 2 lies inside block 1
    ASSERT_TRUE(FindOverlap(c, d, 3, &i, &j));
    EXPECT_EQ(i, 1);
    EXPECT_EQ(j, 2);
  }
  {
    const uint64_t c[] = {3, 3};
    const uint64_t d[] = {5, 5};  // the same range twice
    ASSERT_TRUE(FindOverlap(c, d, 2, &i, &j));
    EXPECT_EQ(i, 0);
    EXPECT_EQ(j, 1);
  }
  {
    // A long block hides behind a short one that starts at the same place: still found.
    const uint64_t c[] = {1, 100, 1};
    const uint64_t d[] = {0, 0, 50};
    ASSERT_TRUE(FindOverlap(c, d, 3, &i, &j));
    EXPECT_EQ(i, 0);
    EXPECT_EQ(j, 1);
  }
  {
    // More blocks than the stack scratch holds: the heap path, packed (no overlap) then one overlap.
    std::vector<uint64_t> c(1000, 2), d(1000);
    for (size_t k = 0; k < d.size(); ++k) d[k] = 2 * (999 - k);
    EXPECT_FALSE(FindOverlap(c.data(), d.data(), 1000, &i, &j));
    d[500] = d[10] + 1;
    ASSERT_TRUE(FindOverlap(c.data(), d.data(), 1000, &i, &j));
    EXPECT_EQ(i, 10);
    EXPECT_EQ(j, 500);
  }
}

// FindOverlap answers blocks laid out in rank order in one pass and sorts otherwise: both agree
// with a brute-force look at every pair, on random layouts (in order, shuffled, with empty blocks,
// touching, overlapping), and the pair it names does overlap.
TEST(VArrays, OverlapAgreesWithEveryPairOnRandomLayouts) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  auto next = [&](uint64_t m) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x % m;
  };
  for (int round = 0; round < 4000; ++round) {
    const int n = 1 + static_cast<int>(next(12));
    std::vector<uint64_t> c(static_cast<size_t>(n)), d(static_cast<size_t>(n));
    uint64_t at = 0;
    for (size_t k = 0; k < c.size(); ++k) {
      c[k] = next(4);  // 0 (empty) to 3
      if (round % 2 == 0) {
        d[k] = at;  // in rank order, touching or with gaps, sometimes stepping back into a block
        at += c[k] + next(3);
        if (next(8) == 0 && at > 1) at -= 2;
      } else {
        d[k] = next(20);
      }
    }
    bool brute = false;
    for (size_t a = 0; a < c.size(); ++a)
      for (size_t b = a + 1; b < c.size(); ++b)
        if (c[a] && c[b] && d[a] < d[b] + c[b] && d[b] < d[a] + c[a]) brute = true;
    int i = -1, j = -1;
    const bool found = FindOverlap(c.data(), d.data(), n, &i, &j);
    ASSERT_EQ(found, brute) << "round " << round;
    if (found) {
      ASSERT_TRUE(i >= 0 && i < j && j < n) << "round " << round;
      const size_t a = static_cast<size_t>(i), b = static_cast<size_t>(j);
      EXPECT_TRUE(c[a] && c[b] && d[a] < d[b] + c[b] && d[b] < d[a] + c[a]) << "round " << round;
    }
  }
}

TEST(VArrays, SumsSaturateAndStride) {
  const uint64_t m[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3 x 3
  EXPECT_EQ(Sum(m, 9), 45u);
  EXPECT_EQ(Sum(m + 3, 3), 15u);     // row 1
  EXPECT_EQ(Sum(m + 1, 3, 3), 15u);  // column 1
  const uint64_t big[] = {UINT64_MAX - 1, 5};
  EXPECT_EQ(Sum(big, 2), UINT64_MAX);
  EXPECT_EQ(FirstAbove(m, 9, 6), 6);
  EXPECT_EQ(FirstAbove(m, 9, 9), -1);
  EXPECT_EQ(FirstAbove(m + 2, 3, 5, 3), 1);  // column 2: 3 6 9
  const uint64_t z[] = {0, 0, 7, 0};
  EXPECT_TRUE(AnyNonZero(z, 4));
  EXPECT_FALSE(AnyNonZero(z, 2));
  EXPECT_FALSE(AnyNonZero(z, 2, 3));  // entries 0 and 3
}

TEST(VArrays, PackedLayoutOfAlltoAllVC) {
  // m[i*3 + j]: elements rank i sends to rank j.
  const uint64_t m[] = {1, 2, 3,
                        4, 0, 6,
                        7, 8, 9};
  uint64_t sc[3], sd[3], rc[3], rd[3];
  PackedLayout(m, 3, 1, sc, sd, rc, rd);
  EXPECT_EQ(std::vector<uint64_t>(sc, sc + 3), (std::vector<uint64_t>{4, 0, 6}));   // row 1
  EXPECT_EQ(std::vector<uint64_t>(sd, sd + 3), (std::vector<uint64_t>{0, 4, 4}));
  EXPECT_EQ(std::vector<uint64_t>(rc, rc + 3), (std::vector<uint64_t>{2, 0, 8}));   // column 1
  EXPECT_EQ(std::vector<uint64_t>(rd, rd + 3), (std::vector<uint64_t>{0, 2, 2}));
}

TEST(VArrays, FirstDifferenceAndItsDescription) {
  const uint64_t a[] = {1, 2, 3, 4};
  const uint64_t b[] = {1, 2, 5, 4};
  EXPECT_EQ(FirstDifference(a, b, 4), 2);
  EXPECT_EQ(FirstDifference(a, a, 4), -1);
  EXPECT_EQ(DescribeDifference("recvCounts", 2, 0, 3, 1, 5), "recvCounts[2] (rank 0: 3, rank 1: 5)");
}

}  // namespace
}  // namespace hostccl::varr
