// The HcclAllGather correctness grid: dtype (all 17 movable types) x sendCount {0, 1, 7, 1023,
// 65537, 256K+3} x ranks {1,2,3,4,5,6,8} x in place {no, sendBuf == recvBuf + r x sendCount,
// sendBuf == recvBuf} x algorithm (auto + every allgather algorithm of the library's registry,
// forced with HOSTCCL_ALGO=allgather=<name>) x placement {threads (InitAll / RootInfo), processes
// over shared memory, processes over TCP, processes on emulated hosts}. Every rank's block i must
// be bitwise rank i's input, guards untouched, sendBuf unchanged (collective/movement_cases.h).
// One gtest case = one communicator configuration (grid_common.h).
//   Default/AllGatherGrid.*  a subset covering every dtype, count, rank count, in-place form,
//                            placement and algorithm (checked by AllGatherGridCoverage).
//   Full/AllGatherGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                            allgather_grid_full, label long).
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
using movement::AllGatherCase;
using movement::InPlace;

constexpr const char* kOp = "allgather";
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 65537, (1u << 18) + 3};
const InPlace kForms[] = {InPlace::kNo, InPlace::kBlock, InPlace::kEqual};

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0xa9ull << 48) ^
               case_index);
}

std::vector<AllGatherCase> Cases(const GridConfig& g) {
  const auto& types = MovableDtypes();
  const size_t nt = types.size();
  std::vector<AllGatherCase> out;
  // shm_inline carries blocks of up to 4 KiB; beyond that it re-plans to shm (the last case).
  const uint64_t limit = grid::InlineSlotBytes(g.algo);
  auto add = [&](HcclDataType t, uint64_t count, InPlace ip, bool capped = true) {
    if (capped) count = std::min<uint64_t>(count, limit / MovableDesc(t).size);
    out.push_back({t, count, ip, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types) {
      add(d.type, 0, InPlace::kNo);
      for (uint64_t count : kAllCounts)
        for (InPlace ip : kForms) add(d.type, count, ip);
    }
    return out;
  }
  const int k = g.index;
  for (size_t di = 0; di < nt; ++di)
    add(types[di].type, kSmallCounts[(di + static_cast<size_t>(k)) % 3], kForms[(di + static_cast<size_t>(k) / 3) % 3]);
  add(HCCL_DATA_TYPE_FP32, 0, kForms[k % 3]);
  add(types[(k * 5 + 2) % nt].type, static_cast<uint64_t>(g.nranks + 1), kForms[(k + 1) % 3]);
  add(types[(k * 5) % nt].type, 65537, kForms[k % 3]);
  add(types[(k * 5 + 6) % nt].type, 65537, kForms[(k + 2) % 3]);
  add(HCCL_DATA_TYPE_FP32, (1u << 18) + 3, kForms[(k + 1) % 3], /*capped=*/false);
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class AllGatherGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(AllGatherGrid, EveryRankHasEveryBlock) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  const std::vector<AllGatherCase> cases = Cases(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const AllGatherCase& c : cases)
      if (!movement::RunAllGatherCase(ctx, c)) return false;
    return true;
  }, grid::Options(g, kOp));
  EXPECT_TRUE(res.ok) << grid::ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, AllGatherGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, AllGatherGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

// Buffers not from aclrtMalloc, every in-place form: between processes of one host (peers cannot
// map them) shm re-plans to ring over TCP; thread ranks over shared memory read them in place.
TEST(AllGatherHostBuffers, EveryRankHasEveryBlock) {
  const int n = 3;
  std::vector<AllGatherCase> cases;
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP8E4M3};
  const uint64_t counts[] = {7, 1025, 65537};
  for (size_t i = 0; i < 6; ++i) {
    AllGatherCase c{types[i % 3], counts[i % 3], kForms[i % 3], Mix64(0xa9b0000 + i)};
    c.host_buf = true;
    cases.push_back(c);
  }
  for (grid::HostBufRun run : grid::kHostBufRuns) {
    RunResult res = RunRanks(n, grid::HostBufMode(run), [&](RankContext& ctx) {
      for (const AllGatherCase& c : cases)
        if (!movement::RunAllGatherCase(ctx, c)) return false;
      return true;
    }, RunOptions{});
    EXPECT_TRUE(res.ok) << grid::HostBufRunName(run) << ": " << res.message;
  }
}

TEST(AllGatherGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<int> dtypes;
  std::set<uint64_t> counts;
  std::set<int> ranks;
  std::set<Mode> modes;
  std::set<Place> auto_places;
  std::set<InPlace> forms;
  for (const GridConfig& g : Defaults()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    if (g.algo.empty()) auto_places.insert(g.place);
    for (const AllGatherCase& c : Cases(g)) {
      dtypes.insert(c.dtype);
      counts.insert(c.count);
      forms.insert(c.in_place);
    }
  }
  const auto library = grid::LibraryAlgorithms(kOp);
  EXPECT_GE(library.size(), 6u) << "the grid sees too few allgather algorithms in the registry";
  for (const grid::LibAlgo& a : library) {
    bool single = false, several = false;
    for (const GridConfig& g : Defaults()) {
      if (g.algo != a.name || !grid::Runs(a, g)) continue;
      (g.nranks == 1 ? single : several) = true;
    }
    EXPECT_TRUE(several) << "no default configuration runs allgather algorithm " << a.name << " on several ranks";
    if (!a.nodes) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(dtypes.size(), 17u);
  EXPECT_EQ(forms.size(), 3u);
  for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 65537ull, (1ull << 18) + 3}) EXPECT_TRUE(counts.count(c)) << c;
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(auto_places, (std::set<Place>{Place::kThreads, Place::kShm, Place::kTcp, Place::kHosts}));
}

}  // namespace
}  // namespace hostccl::test
