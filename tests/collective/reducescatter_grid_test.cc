// The HcclReduceScatter correctness grid: dtype (12) x op (4) x recvCount {0, 1, 7, 1023, 1025,
// 65537, ~1M/n} x ranks {1,2,3,4,5,6,8} x in place (recvBuf disjoint, at the rank's own block,
// equal to sendBuf) x algorithm (auto + every reducescatter algorithm of the library's registry,
// forced with HOSTCCL_ALGO=reducescatter=<name>) x placement {threads (InitAll / RootInfo),
// processes over shared memory, processes over TCP, processes on emulated hosts}.
// Rank r's output must be bitwise the rank-order fold of block r ((x0 ⊕ x1) ⊕ ...) and every
// byte outside the output unchanged
// (harness/reducescatter_check.h). One gtest case = one communicator configuration
// (grid_common.h); its cases run inside one communicator, in the same order on every rank.
//   Default/ReduceScatterGrid.*  a subset covering every dtype x op, count class, rank count,
//                                placement, in-place form and algorithm (ReduceScatterGridCoverage).
//   Full/ReduceScatterGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                                reducescatter_grid_full, label long).
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr const char* kOp = "reducescatter";
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 1025, 65537};
const RsPlace kPlaces[] = {RsPlace::kSeparate, RsPlace::kOwnBlock, RsPlace::kSame};

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0x7e5ull << 48) ^
               case_index);
}

// About 1M elements of input in all (several chunks per block, vector kernels' tails).
uint64_t LargeCount(const GridConfig& g) { return (1u << 20) / static_cast<uint64_t>(g.nranks) + 3; }

// The ordered case list of one configuration (identical on every rank).
std::vector<ReduceScatterCase> Cases(const GridConfig& g) {
  const auto& types = ReducibleDtypes();
  const auto& ops = ReduceOps();
  std::vector<ReduceScatterCase> out;
  auto add = [&](HcclDataType t, HcclReduceOp op, uint64_t count, RsPlace p) {
    out.push_back({t, op, count, p, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types)
      for (HcclReduceOp op : ops) {
        add(d.type, op, 0, RsPlace::kSeparate);
        for (uint64_t count : kAllCounts)
          for (RsPlace p : kPlaces) add(d.type, op, count, p);
        add(d.type, op, LargeCount(g), kPlaces[out.size() % 3]);
      }
    return out;
  }
  // Every dtype x op at a small count; count and in-place form rotate with the configuration.
  const int k = g.index;
  for (size_t di = 0; di < types.size(); ++di)
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int j = static_cast<int>(di * ops.size() + oi);
      add(types[di].type, ops[oi], kSmallCounts[(j + k) % 3], kPlaces[(j + k) % 3]);
    }
  add(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, kPlaces[k % 3]);
  // One element per rank in both in-place forms (the same-pointer form overwrites block 0).
  add(types[(k * 3 + 1) % 12].type, ops[(k + 3) % 4], 1, RsPlace::kSame);
  add(types[(k * 3 + 2) % 12].type, ops[(k + 1) % 4], 1, RsPlace::kOwnBlock);
  // Around the shared-memory inline size and larger messages (multi-chunk, kernel tails).
  add(HCCL_DATA_TYPE_FP32, ops[(k + 2) % 4], 1024 / static_cast<uint64_t>(g.nranks), kPlaces[(k + 1) % 3]);
  add(HCCL_DATA_TYPE_FP32, ops[(k + 3) % 4], 1025, kPlaces[(k + 2) % 3]);
  add(types[(k * 5) % 12].type, ops[k % 4], 65537, kPlaces[k % 3]);
  add(types[(k * 5 + 6) % 12].type, ops[(k + 1) % 4], 65537, RsPlace::kSame);
  add(types[(k * 7 + 3) % 12].type, ops[(k + 2) % 4], LargeCount(g), kPlaces[(k + 1) % 3]);
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class ReduceScatterGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(ReduceScatterGrid, EveryRankHasItsBlocksRankOrderFold) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  ASSERT_TRUE(ReduceScatterImplemented());
  const std::vector<ReduceScatterCase> cases = Cases(g);
  const RunOptions opts = grid::Options(g, kOp);
  const std::string tag = grid::ConfigName(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const ReduceScatterCase& c : cases)
      if (!RunReduceScatterCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << tag << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, ReduceScatterGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, ReduceScatterGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

// sendBufs not from aclrtMalloc between processes of one host: shm re-plans to "owner" over TCP
// (logged); malloc'd recvBufs are fine for shm (each rank writes only its own). Thread ranks over
// shared memory read malloc'd sendBufs in place.
TEST(ReduceScatterHostBuffers, EveryRankHasItsBlocksRankOrderFold) {
  ASSERT_TRUE(ReduceScatterImplemented());
  std::vector<ReduceScatterCase> cases;
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_FP64};
  uint64_t i = 0;
  for (uint64_t count : {7ull, 1025ull, 65537ull})
    for (int kind = 0; kind < 3; ++kind) {
      ReduceScatterCase c{types[i % 4], ReduceOps()[i % 4], count, kind == 2 ? RsPlace::kOwnBlock : RsPlace::kSeparate,
                          Mix64(0x7e5b0000 + i)};
      c.host_send = kind != 1;
      c.host_recv = kind != 0;
      cases.push_back(c);
      ++i;
    }
  RunOptions opts;
  opts.env.push_back({"HOSTCCL_ALGO", "reducescatter=shm"});
  for (grid::HostBufRun run : grid::kHostBufRuns) {
    RunResult res = RunRanks(3, grid::HostBufMode(run), [&](RankContext& ctx) {
      for (const ReduceScatterCase& c : cases)
        if (!RunReduceScatterCase(ctx, c)) return false;
      return true;
    }, opts);
    EXPECT_TRUE(res.ok) << grid::HostBufRunName(run) << ": " << res.message;
  }
}

// "node" on uneven hosts (1 + 2 and 2 + 3 ranks: the share of H0's blocks that goes round trip is 0
// and 1/2) with small chunks (many per part), in every buffer form; and with a malloc'd sendBuf,
// which makes every rank of both hosts re-plan to "owner" (logged). Every rank's block is still
// the canonical fold.
TEST(ReduceScatterNode, UnevenHostsAndHostBuffers) {
  ASSERT_TRUE(ReduceScatterImplemented());
  for (int n : {3, 5}) {
    const int split = n / 2;
    std::vector<ReduceScatterCase> cases;
    uint64_t i = 0;
    cases.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, RsPlace::kSeparate, Mix64(0x7e5c0000)});
    for (uint64_t count : {7ull, 1025ull, 65537ull})
      for (RsPlace p : kPlaces) {
        cases.push_back({i % 2 ? HCCL_DATA_TYPE_FP32 : HCCL_DATA_TYPE_BFP16, ReduceOps()[i % 4], count, p,
                         Mix64(0x7e5c0001 + i)});
        ++i;
      }
    ReduceScatterCase h{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 65537, RsPlace::kSeparate, Mix64(0x7e5c1000 + n)};
    h.host_send = true;
    cases.push_back(h);
    RunOptions opts;
    opts.env.push_back({"HOSTCCL_ALGO", "reducescatter=node"});
    opts.env.push_back({"HOSTCCL_CHUNK_BYTES", "4096"});
    opts.rank_env = [split](int rank) {
      return std::vector<std::pair<std::string, std::string>>{
          {"HOSTCCL_NODE_ID", rank < split ? "rs-node-a" : "rs-node-b"}};
    };
    RunResult res = RunRanks(n, Mode::kProcesses, [&](RankContext& ctx) {
      for (const ReduceScatterCase& c : cases)
        if (!RunReduceScatterCase(ctx, c)) return false;
      return true;
    }, opts);
    EXPECT_TRUE(res.ok) << n << " ranks on 2 hosts:\n" << res.message;
  }
}

// The default subset covers what it claims, checked against the library's registry.
TEST(ReduceScatterGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_op;
  std::set<uint64_t> counts;
  std::set<int> ranks;
  std::set<Mode> modes;
  std::set<Place> auto_places;
  std::set<RsPlace> places;
  for (const GridConfig& g : Defaults()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    if (g.algo.empty()) auto_places.insert(g.place);
    for (const ReduceScatterCase& c : Cases(g)) {
      dtype_op.insert({c.dtype, c.op});
      counts.insert(c.recv_count);
      places.insert(c.place);
    }
  }
  const auto library = grid::LibraryAlgorithms(kOp);
  EXPECT_FALSE(library.empty()) << "the grid sees no reducescatter algorithm in the registry";
  for (const grid::LibAlgo& a : library) {
    bool single = false, several = false;
    for (const GridConfig& g : Defaults()) {
      if (g.algo != a.name || !grid::Runs(a, g)) continue;
      (g.nranks == 1 ? single : several) = true;
    }
    EXPECT_TRUE(several) << "no default configuration runs reducescatter algorithm " << a.name << " on several ranks";
    if (!a.nodes) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(dtype_op.size(), 48u);
  for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 1025ull, 65537ull}) EXPECT_TRUE(counts.count(c)) << c;
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(auto_places, (std::set<Place>{Place::kThreads, Place::kShm, Place::kTcp, Place::kHosts}));
  EXPECT_EQ(places.size(), 3u);
}

}  // namespace
}  // namespace hostccl::test
