// The benchmarks' -S arithmetic (bench/bench_common.h bench_one_clock): from every rank's start and
// end of each isolated call, the median time from the last start to the last end, the median
// spread of the starts, and how often the rank that started last most often did so. Two ranks are
// played here by one process: the fake max-over-ranks folds in the other rank's arrays.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "bench_common.h"

namespace {

// The other rank's contribution to each max-over-ranks call, in call order.
struct OtherRank {
  std::vector<double> stamps;  // its n starts, n ends, n negated starts
  double last_count = 0;
  bool as_ns = false;  // the result comes back in whole ns, as hostccl_coll_bench carries it
};

void MaxAllN(void* ctx, double* v, long n) {
  auto* o = static_cast<OtherRank*>(ctx);
  ASSERT_EQ(static_cast<size_t>(n), o->stamps.size());
  for (long i = 0; i < n; ++i) {
    v[i] = std::max(v[i], o->stamps[static_cast<size_t>(i)]);
    if (o->as_ns) v[i] = std::round(v[i] * 1e3) / 1e3;
  }
}

double MaxAll(void* ctx, double v) { return std::max(v, static_cast<OtherRank*>(ctx)->last_count); }

std::vector<double> Stamps(const std::vector<double>& starts, const std::vector<double>& ends) {
  std::vector<double> s(starts);
  s.insert(s.end(), ends.begin(), ends.end());
  for (double t : starts) s.push_back(-t);
  return s;
}

// Rank 0's view of bench_one_clock over n calls with its own starts and ends and rank 1's
// contribution: {latency, exit skew, share of calls the later rank started last (%)}.
std::array<double, 3> OneClock(OtherRank* rank1, const std::vector<double>& starts,
                               const std::vector<double>& ends) {
  bench_comm c{};
  c.size = 2;
  c.ctx = rank1;
  c.max_all = MaxAll;
  c.max_all_n = MaxAllN;
  std::vector<double> mine = Stamps(starts, ends);
  std::array<double, 3> out{};
  bench_one_clock(&c, mine.data(), static_cast<long>(starts.size()), out.data());
  return out;
}

TEST(BenchOneClock, LatencyFromTheLastStartSkewAndTheLaterRank) {
  // Rank 0 starts at 10, 20, 30 and ends at 15, 26, 34; rank 1 starts at 11, 19, 31 and ends at
  // 15.5, 26.5, 33. Last start to last end: 15.5 - 11, 26.5 - 20, 34 - 31 = 4.5, 6.5, 3; the starts
  // 1 apart each time; rank 1 started last in calls 0 and 2, rank 0 in call 1.
  OtherRank rank1{Stamps({11, 19, 31}, {15.5, 26.5, 33}), 2};
  const auto out = OneClock(&rank1, {10, 20, 30}, {15, 26, 34});
  EXPECT_DOUBLE_EQ(out[0], 4.5);  // median of 4.5, 6.5, 3
  EXPECT_DOUBLE_EQ(out[1], 1.0);
  EXPECT_NEAR(out[2], 200.0 / 3, 1e-9);  // rank 1: 2 of 3 calls
}

TEST(BenchOneClock, TheLaterRankEveryTime) {
  // Rank 0 always leaves the barrier 0.15 after rank 1 and ends first: the per-rank medians would
  // be 0.25 and 0.4 (rank 1 waits inside its call), the group's latency is 0.25.
  OtherRank rank1{Stamps({0, 10}, {0.4, 10.4}), 0};
  const auto out = OneClock(&rank1, {0.15, 10.15}, {0.35, 10.35});
  EXPECT_NEAR(out[0], 0.25, 1e-9);
  EXPECT_NEAR(out[1], 0.15, 1e-9);
  EXPECT_DOUBLE_EQ(out[2], 100.0);
}

TEST(BenchOneClock, StampsCarriedAsWholeNanoseconds) {
  // Rank 0's starts have a fraction of a ns; the max comes back rounded to whole ns, and rank 0
  // still counts as the later one where it was.
  OtherRank rank1{Stamps({11, 19, 31}, {15.5, 26.5, 33}), 2, true};
  const auto out = OneClock(&rank1, {10.0004, 20.0004, 30.0004}, {15, 26, 34});
  EXPECT_NEAR(out[0], 4.5, 1e-9);
  EXPECT_NEAR(out[2], 200.0 / 3, 1e-9);  // max(rank 0's 1, rank 1's 2) of 3
  // and rank 0 did count call 1 as its own: with a count of 0 the max would still be 2, so look
  // at rank 0's count alone
  OtherRank silent{Stamps({11, 19, 31}, {15.5, 26.5, 33}), 0, true};
  EXPECT_NEAR(OneClock(&silent, {10.0004, 20.0004, 30.0004}, {15, 26, 34})[2], 100.0 / 3, 1e-9);
}

}  // namespace
