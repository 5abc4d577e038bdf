// The HcclAllReduce correctness grid: dtype (12) x op (4) x count {0, 1, 7, 1023, 65537, 1M+3} x
// ranks {1,2,3,4,5,6,8} x in-place x algorithm (auto + every allreduce algorithm of the library's
// registry, forced with HOSTCCL_ALGO=allreduce=<name>) x placement {threads (InitAll / RootInfo),
// processes over shared memory, processes over TCP, processes on emulated hosts}.
// Every rank's recvBuf must be bitwise the rank-order fold ((x0 ⊕ x1) ⊕ ...) and bit-identical
// on every rank (NaN payloads included), guards untouched, inputs unchanged when not in place
// (harness/collective_check.h). One gtest case = one communicator configuration (grid_common.h);
// its cases run inside one communicator, in the same order on every rank.
//   Default/AllReduceGrid.*  a subset covering every dtype x op, count, rank count, placement,
//                            in-place and algorithm (checked by AllReduceGridCoverage).
//   Full/AllReduceGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                            allreduce_grid_full, label long).
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

constexpr const char* kOp = "allreduce";
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 65537, (1u << 20) + 3};

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ (0xa11ull << 48) ^
               case_index);
}

// The ordered case list of one configuration (identical on every rank).
std::vector<AllReduceCase> Cases(const GridConfig& g) {
  const auto& types = ReducibleDtypes();
  const auto& ops = ReduceOps();
  std::vector<AllReduceCase> out;
  // A forced algorithm with a size limit (registry max_bytes) gets every case capped to it but
  // one (the fallback to the default rules above the limit).
  const uint64_t limit = grid::SizeLimit(kOp, g.algo);
  bool cap = true;
  auto add = [&](HcclDataType t, HcclReduceOp op, uint64_t count, bool in_place) {
    if (cap) count = std::min<uint64_t>(count, limit / Desc(t).size);
    out.push_back({t, op, count, in_place, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types)
      for (HcclReduceOp op : ops) {
        add(d.type, op, 0, false);
        for (uint64_t count : kAllCounts)
          for (bool in_place : {false, true}) add(d.type, op, count, in_place);
      }
    return out;
  }
  // Every dtype x op at a small count, count and in-place rotating with the configuration index.
  const int k = g.index;
  for (size_t di = 0; di < types.size(); ++di)
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int j = static_cast<int>(di * ops.size() + oi);
      add(types[di].type, ops[oi], kSmallCounts[(j + k) % 3], (j + k) % 2 == 1);
    }
  add(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, k % 2 == 1);
  // Count = ranks - 1 and ranks + 1: some slice owners get nothing, or one element more.
  add(types[(k * 3 + 1) % 12].type, ops[(k + 3) % 4], static_cast<uint64_t>(g.nranks > 1 ? g.nranks - 1 : 2), k % 2 == 0);
  add(types[(k * 3 + 2) % 12].type, ops[(k + 1) % 4], static_cast<uint64_t>(g.nranks + 1), k % 2 == 1);
  // The shared-memory inline size (4 KiB of fp32) exactly and one element above.
  add(HCCL_DATA_TYPE_FP32, ops[(k + 2) % 4], 1024, k % 2 == 0);
  cap = false;  // beyond a forced algorithm's limit: the default rules take it
  add(HCCL_DATA_TYPE_FP32, ops[(k + 3) % 4], 1025, k % 2 == 1);
  cap = true;
  // Larger messages (multi-chunk, vector kernels' tails): two at 65537, one at 1M+3.
  add(types[(k * 5) % 12].type, ops[k % 4], 65537, k % 2 == 0);
  add(types[(k * 5 + 6) % 12].type, ops[(k + 1) % 4], 65537, k % 2 == 1);
  add(types[(k * 7 + 3) % 12].type, ops[(k + 2) % 4], (1u << 20) + 3, k % 3 == 0);
  return out;
}

const std::vector<GridConfig>& Defaults() {
  static const std::vector<GridConfig> v = grid::DefaultConfigs(kOp);
  return v;
}

class AllReduceGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(AllReduceGrid, EveryRankHasTheRankOrderFold) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  const std::vector<AllReduceCase> cases = Cases(g);
  const std::string board_dir = MakeBoardDir();
  RunOptions opts = grid::Options(g, kOp);
  opts.env.push_back(BoardEnv(board_dir));
  const std::string tag = grid::ConfigName(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    uint32_t size = 0, id = 0;
    if (HcclGetRankSize(ctx.comm, &size) != HCCL_SUCCESS || size != static_cast<uint32_t>(g.nranks) ||
        HcclGetRankId(ctx.comm, &id) != HCCL_SUCCESS || id != static_cast<uint32_t>(ctx.rank))
      return ctx.Fail("communicator reports rank " + std::to_string(id) + " of " + std::to_string(size));
    ResultBoard board;
    bool ok = true;
    for (const AllReduceCase& c : cases)
      if (!(ok = RunAllReduceCase(ctx, c, &board))) break;
    board.Compare(ctx, board_dir, tag);  // publishes always; rank 0 compares if it has no failure yet
    return ok;
  }, opts);
  RemoveBoardDir(board_dir);
  EXPECT_TRUE(res.ok) << tag << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, AllReduceGrid, ::testing::ValuesIn(Defaults()),
                         [](const auto& info) { return grid::ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, AllReduceGrid, ::testing::ValuesIn(grid::FullConfigs(kOp)),
                         [](const auto& info) {
                           return grid::ConfigName(info.param) + "_" + std::to_string(info.param.index);
                         });

// Buffers not from aclrtMalloc between processes of one host (the shared-memory plans cannot map
// them: copied with process_vm_readv/writev or staged): malloc'd sendBuf and/or recvBuf and in
// place, HOSTCCL_CMA auto and off, counts above the inline size and across several CMA / staging
// chunks.
struct HostBufConfig {
  int nranks;
  const char* cma;
  grid::HostBufRun run = grid::HostBufRun::kProcesses;
};

std::string HostBufName(const HostBufConfig& c) {
  std::string s = "r";
  ((s += std::to_string(c.nranks)) += "_cma_") += c.cma;
  if (c.run != grid::HostBufRun::kProcesses) (s += "_") += grid::HostBufRunName(c.run);
  return s;
}
void PrintTo(const HostBufConfig& c, std::ostream* os) { *os << HostBufName(c); }

std::vector<AllReduceCase> HostBufCases(const HostBufConfig& g) {
  struct Kind { bool send, recv, in_place; };
  const Kind kinds[] = {{true, false, false}, {false, true, false}, {true, true, false}, {true, false, true}};
  const uint64_t counts[] = {7, 1025, 65537, 300007};
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_INT8,
                                HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_FP16};
  const auto& ops = ReduceOps();
  std::vector<AllReduceCase> out;
  size_t i = 0;
  for (const Kind& k : kinds)
    for (uint64_t count : counts) {
      AllReduceCase c{types[i % 6], ops[i % 4], count, k.in_place, Mix64(0xa11b0000 + i * 31 + g.nranks)};
      c.host_send = k.send;
      c.host_recv = k.recv;
      out.push_back(c);
      ++i;
    }
  AllReduceCase empty{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, false, Mix64(0xa11b1)};
  empty.host_send = empty.host_recv = true;
  out.push_back(empty);
  return out;
}

class AllReduceHostBuffers : public ::testing::TestWithParam<HostBufConfig> {};

TEST_P(AllReduceHostBuffers, EveryRankHasTheRankOrderFold) {
  const HostBufConfig& g = GetParam();
  const std::vector<AllReduceCase> cases = HostBufCases(g);
  RunOptions opts;
  opts.env.push_back({"HOSTCCL_CMA", g.cma});
  opts.timeout_s = 120;
  RunResult res = RunRanks(g.nranks, grid::HostBufMode(g.run), [&](RankContext& ctx) {
    for (const AllReduceCase& c : cases)
      if (!RunAllReduceCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << HostBufName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, AllReduceHostBuffers,
                         ::testing::Values(HostBufConfig{2, "auto"}, HostBufConfig{3, "auto"}, HostBufConfig{4, "auto"},
                                           HostBufConfig{3, "off"},
                                           HostBufConfig{3, "auto", grid::HostBufRun::kThreadsShm}),
                         [](const auto& info) { return HostBufName(info.param); });

// The default subset covers what it claims, checked against the library's registry: every
// allreduce algorithm is forced by a default configuration where it really runs (its placement
// needs are met), at one rank where one rank can run it, and at several ranks.
TEST(AllReduceGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_op;
  std::set<uint64_t> counts;
  std::set<int> ranks;
  std::set<Mode> modes;
  std::set<Place> auto_places;
  bool in_place = false, out_of_place = false;
  for (const GridConfig& g : Defaults()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    if (g.algo.empty()) auto_places.insert(g.place);
    for (const AllReduceCase& c : Cases(g)) {
      dtype_op.insert({c.dtype, c.op});
      counts.insert(c.count);
      (c.in_place ? in_place : out_of_place) = true;
    }
  }
  const auto library = grid::LibraryAlgorithms(kOp);
  EXPECT_FALSE(library.empty()) << "HcclAllReduce works but the grid sees no allreduce algorithm in the registry";
  for (const grid::LibAlgo& a : library) {
    bool single = false, several = false;
    for (const GridConfig& g : Defaults()) {
      if (g.algo != a.name || !grid::Runs(a, g)) continue;
      (g.nranks == 1 ? single : several) = true;
    }
    EXPECT_TRUE(several) << "no default configuration runs allreduce algorithm " << a.name << " on several ranks";
    if (!a.nodes) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(dtype_op.size(), 48u);
  for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 1024ull, 1025ull, 65537ull, (1ull << 20) + 3})
    EXPECT_TRUE(counts.count(c)) << c;
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(auto_places, (std::set<Place>{Place::kThreads, Place::kShm, Place::kTcp, Place::kHosts}));
  EXPECT_TRUE(in_place && out_of_place);
}

}  // namespace
}  // namespace hostccl::test
