// The HcclBroadcast correctness grid: dtype (all 17 movable types, int128 and the 8-bit floats
// included) x count {0, 1, 7, 1023, 65537, 1M+3} x ranks {1,2,3,4,5,6,8} x root {0, middle, last}
// x algorithm (auto + every broadcast algorithm of the library's registry, forced with
// HOSTCCL_ALGO=broadcast=<name>) x placement {threads (InitAll / RootInfo), processes over shared
// memory, processes over TCP, processes on emulated hosts}. Every rank's buffer must be bitwise
// the root's (random bits: NaN payloads and signalling NaNs must survive), the root's buffer
// unchanged, guards untouched (harness/collective_check.h). One gtest case = one communicator
// configuration (grid_common.h).
//   Default/BroadcastGrid.*  a subset covering every dtype, root class, count, rank count,
//                            placement and algorithm (checked by BroadcastGridCoverage).
//   Full/BroadcastGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                            broadcast_grid_full, label long).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collective/grid_common.h"
#include "harness/collective_check.h"
#include "harness/input_gen.h"

namespace hostccl::test {
namespace {

using grid::GridConfig;
using grid::Place;

constexpr const char* kOp = "broadcast";
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 65537, (1u << 20) + 3};

uint32_t RootOfClass(int cls, int nranks) {
  return cls == 0 ? 0u : cls == 1 ? static_cast<uint32_t>(nranks / 2) : static_cast<uint32_t>(nranks - 1);
}

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0xbcull << 48) ^
               case_index);
}

std::vector<BroadcastCase> Cases(const GridConfig& g) {
  const auto& types = MovableDtypes();
  const size_t nt = types.size();
  std::vector<BroadcastCase> out;
  // A forced algorithm with a size limit (registry max_bytes) gets every case capped to it but
  // one (the fallback to the default rules above the limit).
  const uint64_t limit = grid::SizeLimit(kOp, g.algo);
  bool cap = true;
  auto add = [&](HcclDataType t, uint64_t count, uint32_t root) {
    if (cap) count = std::min<uint64_t>(count, limit / MovableDesc(t).size);
    out.push_back({t, count, root, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types) {
      add(d.type, 0, static_cast<uint32_t>(g.nranks - 1));
      for (uint64_t count : kAllCounts)
        for (int cls = 0; cls < 3; ++cls) {
          const uint32_t root = RootOfClass(cls, g.nranks);
          if (cls > 0 && root == RootOfClass(cls - 1, g.nranks)) continue;
          add(d.type, count, root);
        }
    }
    return out;
  }
  // Every dtype with every root class, the small count rotating with the configuration index.
  const int k = g.index;
  for (size_t di = 0; di < nt; ++di)
    for (int cls = 0; cls < 3; ++cls)
      add(types[di].type, kSmallCounts[(static_cast<int>(di) + cls + k) % 3], RootOfClass(cls, g.nranks));
  add(HCCL_DATA_TYPE_FP32, 0, RootOfClass(k % 3, g.nranks));
  // Counts just above a multiple of the rank count (uneven slices) and larger messages
  // (several chunks; 1M+3 of a 16-byte type is 16 MiB).
  add(types[(k * 5 + 2) % nt].type, static_cast<uint64_t>(g.nranks + 1), RootOfClass((k + 2) % 3, g.nranks));
  cap = false;  // beyond a forced algorithm's limit: the default rules take it
  add(types[(k * 5) % nt].type, 65537, RootOfClass(k % 3, g.nranks));
  cap = true;
  add(types[(k * 5 + 6) % nt].type, 65537, RootOfClass((k + 1) % 3, g.nranks));
  add(types[(k * 7 + 3) % nt].type, (1u << 20) + 3, RootOfClass((k + 2) % 3, g.nranks));
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class BroadcastGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(BroadcastGrid, EveryRankHasTheRootsBits) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  const std::vector<BroadcastCase> cases = Cases(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const BroadcastCase& c : cases)
      if (!RunBroadcastCase(ctx, c)) return false;
    return true;
  }, grid::Options(g, kOp));
  EXPECT_TRUE(res.ok) << grid::ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, BroadcastGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, BroadcastGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

// Buffers not from aclrtMalloc between processes of one host (cannot be mapped by the peers:
// copied with process_vm_readv/writev or staged), HOSTCCL_CMA auto and off; and between thread
// ranks over shared memory ("threads_shm"), which read them in place.
class BroadcastHostBuffers : public ::testing::TestWithParam<const char*> {};

TEST_P(BroadcastHostBuffers, EveryRankHasTheRootsBits) {
  const int n = 3;
  std::vector<BroadcastCase> cases;
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP16};
  const uint64_t counts[] = {7, 1025, 65537, 300007};
  for (size_t i = 0; i < 8; ++i) {
    BroadcastCase c{types[i % 4], counts[i % 4], static_cast<uint32_t>(i % n), Mix64(0xbcb0000 + i)};
    c.host_buf = true;
    cases.push_back(c);
  }
  const bool threads = std::string(GetParam()) == "threads_shm";
  const grid::HostBufRun run = threads ? grid::HostBufRun::kThreadsShm : grid::HostBufRun::kProcesses;
  RunOptions opts;
  if (!threads) opts.env.push_back({"HOSTCCL_CMA", GetParam()});
  opts.timeout_s = 120;
  RunResult res = RunRanks(n, grid::HostBufMode(run), [&](RankContext& ctx) {
    for (const BroadcastCase& c : cases)
      if (!RunBroadcastCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << GetParam() << ":\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, BroadcastHostBuffers, ::testing::Values("auto", "off", "threads_shm"),
                         [](const auto& info) {
                           return std::string(info.param) == "threads_shm" ? std::string(info.param)
                                                                           : std::string("cma_") + info.param;
                         });

TEST(BroadcastGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_root;
  std::set<int> dtypes;
  std::set<uint64_t> counts;
  std::set<int> ranks;
  std::set<Mode> modes;
  std::set<Place> auto_places;
  for (const GridConfig& g : Defaults()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    if (g.algo.empty()) auto_places.insert(g.place);
    for (const BroadcastCase& c : Cases(g)) {
      dtypes.insert(c.dtype);
      counts.insert(c.count);
      if (g.nranks >= 3)
        dtype_root.insert({c.dtype, c.root == 0 ? 0 : c.root == static_cast<uint32_t>(g.nranks - 1) ? 2 : 1});
    }
  }
  const auto library = grid::LibraryAlgorithms(kOp);
  EXPECT_FALSE(library.empty()) << "HcclBroadcast works but the grid sees no broadcast algorithm in the registry";
  for (const grid::LibAlgo& a : library) {
    bool single = false, several = false;
    for (const GridConfig& g : Defaults()) {
      if (g.algo != a.name || !grid::Runs(a, g)) continue;
      (g.nranks == 1 ? single : several) = true;
    }
    EXPECT_TRUE(several) << "no default configuration runs broadcast algorithm " << a.name << " on several ranks";
    if (!a.nodes) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(dtypes.size(), 17u);
  EXPECT_EQ(dtype_root.size(), 17u * 3);
  for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 65537ull, (1ull << 20) + 3}) EXPECT_TRUE(counts.count(c)) << c;
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(auto_places, (std::set<Place>{Place::kThreads, Place::kShm, Place::kTcp, Place::kHosts}));
}

}  // namespace
}  // namespace hostccl::test
