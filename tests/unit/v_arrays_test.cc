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
