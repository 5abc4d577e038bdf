// The HcclReduceScatterV correctness grid: dtype (12) x op (4) x block layouts (equal blocks,
// random counts with zeros and gaps, blocks in reverse rank order, one non-empty block, every
// count zero) x ranks x algorithm (auto + every reducescatterv algorithm of the registry, forced
// with HOSTCCL_ALGO=reducescatterv=<name>) x placement {threads, processes over shared memory,
// processes over TCP, emulated hosts}. Rank r's recvBuf (NULL when its count is 0) must be
// bitwise the rank-order fold of block r; bytes of sendBuf in gaps and past the last block, and of
// recvBuf past recvCount, unchanged (harness/reducescatter_check.h).
//   Default/ReduceScatterVGrid.*  subset covering every dtype x op, layout, placement, algorithm.
//   Full/ReduceScatterVGrid.*     cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                                 reducescatterv_grid_full, label long).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collective/grid_common.h"
#include "harness/input_gen.h"
#include "harness/reducescatter_check.h"

namespace hostccl::test {
namespace {

using grid::GridConfig;
using grid::Place;

constexpr const char* kOp = "reducescatterv";
enum Layout { kEqual, kGaps, kReverse, kOneBlock, kAllZero, kLayouts };

// Block layout on n ranks with blocks of about `mean` elements (the same on every rank: a pure
// function of its arguments).
void MakeLayout(Layout l, int n, uint64_t mean, uint64_t seed, std::vector<uint64_t>* counts,
                std::vector<uint64_t>* displs) {
  counts->assign(static_cast<size_t>(n), 0);
  displs->assign(static_cast<size_t>(n), 0);
  uint64_t at = 0;
  for (int j = 0; j < n; ++j) {
    const uint64_t h = Mix64(seed + static_cast<uint64_t>(j));
    const size_t i = static_cast<size_t>(l == kReverse ? n - 1 - j : j);
    uint64_t c = mean;
    if (l == kGaps || l == kReverse) c = (h % 4 == 0) ? 0 : 1 + h % (2 * mean);
    if (l == kOneBlock) c = j == n / 2 ? mean : 0;
    if (l == kAllZero) c = 0;
    if (l == kGaps || l == kReverse) at += (h >> 8) % 5;  // a gap before the block
    (*counts)[i] = c;
    (*displs)[i] = c == 0 && (h >> 16) % 2 ? 1000000 + j : at;  // an empty block may point anywhere
    at += c;
  }
}

uint64_t Seed(const GridConfig& g, size_t i) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0x75ull << 48) ^ i);
}

std::vector<ReduceScatterCase> Cases(const GridConfig& g) {
  const auto& types = ReducibleDtypes();
  const auto& ops = ReduceOps();
  std::vector<ReduceScatterCase> out;
  auto add = [&](HcclDataType t, HcclReduceOp op, uint64_t mean, Layout l) {
    ReduceScatterCase c{t, op, 0, RsPlace::kSeparate, Seed(g, out.size())};
    MakeLayout(l, g.nranks, mean, c.seed, &c.counts, &c.displs);
    out.push_back(c);
  };
  const int k = g.index;
  for (size_t di = 0; di < types.size(); ++di)
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int j = static_cast<int>(di * ops.size() + oi);
      if (g.full) {
        for (int l = 0; l < kLayouts; ++l)
          for (uint64_t mean : {1ull, 7ull, 1023ull, 65537ull}) add(types[di].type, ops[oi], mean, static_cast<Layout>(l));
      } else {
        add(types[di].type, ops[oi], (j + k) % 2 ? 7 : 300, static_cast<Layout>((j + k) % (kLayouts - 1)));
      }
    }
  if (!g.full) {
    add(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 5, kAllZero);
    add(types[(k * 5) % 12].type, ops[k % 4], 65537, kGaps);
    add(types[(k * 5 + 3) % 12].type, ops[(k + 1) % 4], 200003, kReverse);
  }
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class ReduceScatterVGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(ReduceScatterVGrid, EveryRankHasItsBlocksRankOrderFold) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  ASSERT_TRUE(ReduceScatterImplemented());
  const std::vector<ReduceScatterCase> cases = Cases(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const ReduceScatterCase& c : cases)
      if (!RunReduceScatterCase(ctx, c)) return false;
    return true;
  }, grid::Options(g, kOp));
  EXPECT_TRUE(res.ok) << grid::ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, ReduceScatterVGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, ReduceScatterVGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

TEST(ReduceScatterVGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_op;
  bool zero_block = false, gap = false, reverse = false, all_zero = false;
  for (const GridConfig& g : Defaults())
    for (const ReduceScatterCase& c : Cases(g)) {
      dtype_op.insert({c.dtype, c.op});
      uint64_t sum = 0;
      for (size_t j = 0; j < c.counts.size(); ++j) {
        sum += c.counts[j];
        if (c.counts[j] == 0) zero_block = true;
        if (j > 0 && c.counts[j] && c.counts[j - 1] && c.displs[j] > c.displs[j - 1] + c.counts[j - 1]) gap = true;
        if (j > 0 && c.counts[j] && c.counts[j - 1] && c.displs[j] < c.displs[j - 1]) reverse = true;
      }
      if (sum == 0) all_zero = true;
    }
  EXPECT_EQ(dtype_op.size(), 48u);
  EXPECT_TRUE(zero_block && gap && reverse && all_zero);
  for (const grid::LibAlgo& a : grid::LibraryAlgorithms(kOp)) {
    bool several = false;
    for (const GridConfig& g : Defaults()) several |= g.algo == a.name && grid::Runs(a, g) && g.nranks > 1;
    EXPECT_TRUE(several) << a.name;
  }
  EXPECT_FALSE(grid::LibraryAlgorithms(kOp).empty());
}

}  // namespace
}  // namespace hostccl::test
