// The HcclScatter correctness grid: dtype (all 17 movable types) x recvCount {0, 1, 7, 1023, 65537,
// 256K+3} x ranks {1,2,3,4,5,6,8} x root {0, middle, last} x in place (root: recvBuf == sendBuf +
// root x recvCount) x algorithm (auto + every scatter algorithm of the library's registry, forced
// with HOSTCCL_ALGO=scatter=<name>) x placement {threads (InitAll / RootInfo), processes over
// shared memory, processes over TCP, processes on emulated hosts}. Rank r's recvBuf must be
// bitwise block r of the root's sendBuf, the root's sendBuf unchanged, guards untouched;
// non-roots pass sendBuf = NULL (collective/movement_cases.h). One gtest case = one communicator
// configuration (grid_common.h).
//   Default/ScatterGrid.*  a subset covering every dtype, root class, count, rank count, in-place,
//                          placement and algorithm (checked by ScatterGridCoverage).
//   Full/ScatterGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                          scatter_grid_full, label long).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collective/grid_common.h"
#include "collective/movement_cases.h"

namespace hostccl::test {
namespace {

using grid::GridConfig;
using grid::Place;
using movement::ScatterCase;

constexpr const char* kOp = "scatter";
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 65537, (1u << 18) + 3};

uint32_t RootOfClass(int cls, int nranks) {
  return cls == 0 ? 0u : cls == 1 ? static_cast<uint32_t>(nranks / 2) : static_cast<uint32_t>(nranks - 1);
}

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0x5cull << 48) ^
               case_index);
}

std::vector<ScatterCase> Cases(const GridConfig& g) {
  const auto& types = MovableDtypes();
  const size_t nt = types.size();
  std::vector<ScatterCase> out;
  // shm_inline carries the root's n blocks in one 4 KiB slot; beyond that it re-plans to shm (the
  // last case).
  const uint64_t limit = grid::InlineSlotBytes(g.algo) == UINT64_MAX ? UINT64_MAX : grid::InlineSlotBytes(g.algo) / g.nranks;
  auto add = [&](HcclDataType t, uint64_t count, uint32_t root, bool in_place, bool capped = true) {
    if (capped) count = std::min<uint64_t>(count, limit / MovableDesc(t).size);
    out.push_back({t, count, root, in_place, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types) {
      add(d.type, 0, static_cast<uint32_t>(g.nranks - 1), false);
      for (uint64_t count : kAllCounts)
        for (int cls = 0; cls < 3; ++cls) {
          const uint32_t root = RootOfClass(cls, g.nranks);
          if (cls > 0 && root == RootOfClass(cls - 1, g.nranks)) continue;
          for (bool ip : {false, true}) add(d.type, count, root, ip);
        }
    }
    return out;
  }
  const int k = g.index;
  for (size_t di = 0; di < nt; ++di)
    for (int cls = 0; cls < 3; ++cls)
      add(types[di].type, kSmallCounts[(static_cast<int>(di) + cls + k) % 3], RootOfClass(cls, g.nranks),
          (static_cast<int>(di) + cls + k) % 2 == 0);
  add(HCCL_DATA_TYPE_FP32, 0, RootOfClass(k % 3, g.nranks), false);
  add(types[(k * 5 + 2) % nt].type, static_cast<uint64_t>(g.nranks + 1), RootOfClass((k + 2) % 3, g.nranks), k % 2 == 1);
  add(types[(k * 5) % nt].type, 65537, RootOfClass(k % 3, g.nranks), false);
  add(types[(k * 5 + 6) % nt].type, 65537, RootOfClass((k + 1) % 3, g.nranks), true);
  add(HCCL_DATA_TYPE_FP32, (1u << 18) + 3, RootOfClass((k + 2) % 3, g.nranks), k % 2 == 0, /*capped=*/false);
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class ScatterGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(ScatterGrid, EveryRankHasItsBlock) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  const std::vector<ScatterCase> cases = Cases(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const ScatterCase& c : cases)
      if (!movement::RunScatterCase(ctx, c)) return false;
    return true;
  }, grid::Options(g, kOp));
  EXPECT_TRUE(res.ok) << grid::ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, ScatterGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, ScatterGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

// The root's sendBuf not from aclrtMalloc: between processes of one host (peers cannot map it) shm
// re-plans to flat over TCP; thread ranks over shared memory read it in place.
TEST(ScatterHostBuffers, EveryRankHasItsBlock) {
  const int n = 3;
  std::vector<ScatterCase> cases;
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP8E4M3};
  const uint64_t counts[] = {7, 1025, 65537};
  for (size_t i = 0; i < 6; ++i) {
    ScatterCase c{types[i % 3], counts[i % 3], static_cast<uint32_t>(i % n), i % 2 == 1, Mix64(0x5cb0000 + i)};
    c.host_buf = true;
    cases.push_back(c);
  }
  for (grid::HostBufRun run : grid::kHostBufRuns) {
    RunResult res = RunRanks(n, grid::HostBufMode(run), [&](RankContext& ctx) {
      for (const ScatterCase& c : cases)
        if (!movement::RunScatterCase(ctx, c)) return false;
      return true;
    }, RunOptions{});
    EXPECT_TRUE(res.ok) << grid::HostBufRunName(run) << ": " << res.message;
  }
}

TEST(ScatterGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_root;
  std::set<int> dtypes;
  std::set<uint64_t> counts;
  std::set<int> ranks;
  std::set<Mode> modes;
  std::set<Place> auto_places;
  bool in_place = false, out_of_place = false;
  for (const GridConfig& g : Defaults()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    if (g.algo.empty()) auto_places.insert(g.place);
    for (const ScatterCase& c : Cases(g)) {
      dtypes.insert(c.dtype);
      counts.insert(c.count);
      (c.in_place ? in_place : out_of_place) = true;
      if (g.nranks >= 3)
        dtype_root.insert({c.dtype, c.root == 0 ? 0 : c.root == static_cast<uint32_t>(g.nranks - 1) ? 2 : 1});
    }
  }
  const auto library = grid::LibraryAlgorithms(kOp);
  EXPECT_GE(library.size(), 4u) << "the grid sees too few scatter algorithms in the registry";
  for (const grid::LibAlgo& a : library) {
    bool single = false, several = false;
    for (const GridConfig& g : Defaults()) {
      if (g.algo != a.name || !grid::Runs(a, g)) continue;
      (g.nranks == 1 ? single : several) = true;
    }
    EXPECT_TRUE(several) << "no default configuration runs scatter algorithm " << a.name << " on several ranks";
    if (!a.nodes) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(dtypes.size(), 17u);
  EXPECT_EQ(dtype_root.size(), 17u * 3);
  EXPECT_TRUE(in_place && out_of_place);
  for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 65537ull, (1ull << 18) + 3}) EXPECT_TRUE(counts.count(c)) << c;
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(auto_places, (std::set<Place>{Place::kThreads, Place::kShm, Place::kTcp, Place::kHosts}));
}

}  // namespace
}  // namespace hostccl::test
