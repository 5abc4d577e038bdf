// The HcclReduce correctness grid: dtype (12) x op (4) x count {0, 1, 7, 1023, 65537, 1M+3} x
// ranks {1,2,3,4,5,8} x root {0, middle, last} x in-place x algorithm (auto + every name in kAlgos,
// forced with HOSTCCL_ALGO=reduce=<name>) x mode {threads (InitAll / RootInfo), processes}.
// One gtest case = one communicator configuration (ranks, mode, algorithm, chunk size); the
// communicator is created once and every (dtype, op, count, root, in-place) case of that
// configuration runs inside it, in the same order on every rank (RunReduceCase checks results,
// guards and unchanged inputs).
//   Default/ReduceGrid.*  a subset that covers every dtype x op, algorithm, rank count, mode,
//                         in-place, root class and count at least once (< 3 min on 2 cores).
//   Full/ReduceGrid.*     the whole cross product; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                         label "long").
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "algo/registry.h"
#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "collective/grid_common.h"
#include "harness/run_ranks.h"

namespace hostccl::test {
namespace {

struct GridConfig {
  int index;
  int nranks;
  Mode mode;
  std::string algo;  // "" = automatic choice
  int chunk_bytes;   // 0 = library default; small values force multi-chunk pipelines
  bool full;
  int hosts = 1;     // processes only: >1 emulates that many hosts (HOSTCCL_NODE_ID per rank)
};

// "" = automatic, then every reduce algorithm of the library (src/algo/reduce; the coverage test
// below fails when the library gains one that is not listed here). "direct" runs only when all
// ranks are threads of one process, "shm" needs processes of one host, "node_chain" ranks on
// several hosts (emulated here with HOSTCCL_NODE_ID), "gather"/"chain" run anywhere; elsewhere the
// library falls back to its table.
const char* const kAlgos[] = {"", "direct", "gather", "chain", "shm", "node_chain", "shm_cma", "shm_staging"};
constexpr int kNumAlgos = static_cast<int>(sizeof(kAlgos) / sizeof(kAlgos[0]));
const uint64_t kSmallCounts[] = {1, 7, 1023};
const uint64_t kAllCounts[] = {1, 7, 1023, 65537, (1u << 20) + 3};

// Names are built with += only: GCC 12 at -O3 warns falsely (-Wrestrict, GCC bug 105651) about the
// insert inside `"literal" + std::string`.
std::string ConfigName(const GridConfig& c) {
  std::string s = "r";
  s += std::to_string(c.nranks);
  s += c.mode == Mode::kProcesses ? "_proc" : c.mode == Mode::kThreadsInitAll ? "_initall" : "_rootinfo";
  s += "_";
  s += c.algo.empty() ? std::string("auto") : c.algo;
  if (c.chunk_bytes) (s += "_chunk") += std::to_string(c.chunk_bytes);
  if (c.hosts > 1) (s += "_hosts") += std::to_string(c.hosts);
  return s;
}

void PrintTo(const GridConfig& c, std::ostream* os) { *os << ConfigName(c); }

std::vector<GridConfig> DefaultConfigs() {
  // Every rank count, every algorithm, all three modes, some forced small chunks; every algorithm
  // forced at one rank (their single-rank branches copy the input: count > 1 and not in place
  // are among the cases); node_chain and the automatic plan across emulated hosts.
  const struct { int n; Mode m; const char* algo; int chunk; int hosts = 1; } rows[] = {
      {1, Mode::kThreadsInitAll, "", 0},
      {2, Mode::kProcesses, "", 0},
      {2, Mode::kThreadsRootInfo, "direct", 0},
      {3, Mode::kThreadsInitAll, "direct", 4096},
      {3, Mode::kProcesses, "gather", 0},
      {4, Mode::kThreadsRootInfo, "", 0},
      {4, Mode::kProcesses, "chain", 0},
      {5, Mode::kThreadsInitAll, "direct", 2048},
      {5, Mode::kProcesses, "gather", 0},
      {8, Mode::kThreadsInitAll, "", 0},
      {8, Mode::kProcesses, "chain", 8192},
      {3, Mode::kProcesses, "shm", 0},
      {5, Mode::kProcesses, "shm", 0},
      {2, Mode::kThreadsInitAll, "chain", 4096},
      {3, Mode::kThreadsRootInfo, "gather", 0},
      {1, Mode::kThreadsRootInfo, "direct", 0},
      {1, Mode::kProcesses, "gather", 0},
      {1, Mode::kProcesses, "chain", 0},
      {1, Mode::kProcesses, "shm", 0},
      {4, Mode::kProcesses, "node_chain", 0, 2},
      {5, Mode::kProcesses, "node_chain", 8192, 3},
      {6, Mode::kProcesses, "", 0, 2},
      // shm's re-plans forced on aclrtMalloc buffers (ReduceHostBuffers below runs them on malloc'd ones).
      {3, Mode::kProcesses, "shm_cma", 0},
      {4, Mode::kProcesses, "shm_staging", 0},
      {1, Mode::kProcesses, "shm_cma", 0},
      {1, Mode::kProcesses, "shm_staging", 0},
  };
  std::vector<GridConfig> out;
  for (const auto& r : rows)
    out.push_back({static_cast<int>(out.size()), r.n, r.m, r.algo, r.chunk, false, r.hosts});
  return out;
}

std::vector<GridConfig> FullConfigs() {
  std::vector<GridConfig> out;
  for (int n : {1, 2, 3, 4, 5, 8})
    for (Mode m : {Mode::kThreadsInitAll, Mode::kThreadsRootInfo, Mode::kProcesses})
      for (const char* a : kAlgos) {
        const int hosts = m == Mode::kProcesses && n > 1 && std::string(a) == "node_chain" ? 2 : 1;
        out.push_back({static_cast<int>(out.size()), n, m, a, 0, true, hosts});
      }
  // The chunked paths once more with a small chunk, for every algorithm.
  for (const char* a : kAlgos)
    for (int n : {3, 8}) {
      const int hosts = std::string(a) == "node_chain" ? 2 : 1;
      out.push_back({static_cast<int>(out.size()), n, Mode::kProcesses, a, 4096, true, hosts});
    }
  return out;
}

uint32_t RootOfClass(int cls, int nranks) {
  return cls == 0 ? 0u : cls == 1 ? static_cast<uint32_t>(nranks / 2) : static_cast<uint32_t>(nranks - 1);
}

uint64_t Seed(const GridConfig& g, size_t case_index) {
  return Mix64((static_cast<uint64_t>(g.full) << 62) ^ (static_cast<uint64_t>(g.index) << 32) ^ case_index);
}

// The ordered case list of one configuration (identical on every rank).
std::vector<ReduceCase> Cases(const GridConfig& g) {
  const auto& types = ReducibleDtypes();
  const auto& ops = ReduceOps();
  std::vector<ReduceCase> out;
  auto add = [&](HcclDataType t, HcclReduceOp op, uint64_t count, uint32_t root, bool in_place) {
    out.push_back({t, op, count, root, in_place, Seed(g, out.size())});
  };
  if (g.full) {
    for (const auto& d : types)
      for (HcclReduceOp op : ops) {
        add(d.type, op, 0, static_cast<uint32_t>(g.nranks - 1), false);
        for (uint64_t count : kAllCounts)
          for (int cls = 0; cls < 3; ++cls) {
            uint32_t root = RootOfClass(cls, g.nranks);
            if (cls > 0 && root == RootOfClass(cls - 1, g.nranks)) continue;  // same rank again
            for (bool in_place : {false, true}) add(d.type, op, count, root, in_place);
          }
      }
    return out;
  }
  // Default: every dtype x op at a small count, rotating count, root class and in-place with the
  // configuration index so that across configurations each combination appears.
  const int k = g.index;
  for (size_t di = 0; di < types.size(); ++di)
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int j = static_cast<int>(di * ops.size() + oi);
      add(types[di].type, ops[oi], kSmallCounts[(j + k) % 3], RootOfClass((j / 3 + k) % 3, g.nranks),
          (j + k) % 2 == 1);
    }
  add(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, static_cast<uint32_t>(g.nranks - 1), k % 2 == 1);
  // Larger messages (multi-chunk, vector kernels' tails): two at 65537, one at 1M+3.
  add(types[(k * 5) % 12].type, ops[k % 4], 65537, RootOfClass(k % 3, g.nranks), k % 2 == 0);
  add(types[(k * 5 + 6) % 12].type, ops[(k + 1) % 4], 65537, RootOfClass((k + 1) % 3, g.nranks), k % 2 == 1);
  add(types[(k * 7 + 3) % 12].type, ops[(k + 2) % 4], (1u << 20) + 3, RootOfClass((k + 2) % 3, g.nranks),
      k % 3 == 0);
  return out;
}

class ReduceGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(ReduceGrid, MatchesReferenceFold) {
  const GridConfig& g = GetParam();
  if (g.full && std::getenv("HOSTCCL_FULL_GRID") == nullptr)  // test-harness switch, not a library knob
    GTEST_SKIP() << "full grid: set HOSTCCL_FULL_GRID=1 (ctest -L long)";
  const std::vector<ReduceCase> cases = Cases(g);
  RunOptions opts;
  if (!g.algo.empty()) opts.env.push_back({"HOSTCCL_ALGO", "reduce=" + g.algo});
  if (g.chunk_bytes) opts.env.push_back({"HOSTCCL_CHUNK_BYTES", std::to_string(g.chunk_bytes)});
  if (g.full) opts.timeout_s = 7200;
  if (g.hosts > 1) {
    // Contiguous blocks of ranks per emulated host (the node-aware plan needs contiguous ranges).
    opts.rank_env = [&g](int rank) {
      const int host = rank * g.hosts / g.nranks;
      return std::vector<std::pair<std::string, std::string>>{
          {"HOSTCCL_NODE_ID", std::string("grid-host-").append(std::to_string(host))}};
    };
  }
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    uint32_t size = 0, id = 0;
    if (HcclGetRankSize(ctx.comm, &size) != HCCL_SUCCESS || size != static_cast<uint32_t>(g.nranks) ||
        HcclGetRankId(ctx.comm, &id) != HCCL_SUCCESS || id != static_cast<uint32_t>(ctx.rank))
      return ctx.Fail("communicator reports rank " + std::to_string(id) + " of " + std::to_string(size));
    for (const ReduceCase& c : cases)
      if (!RunReduceCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, ReduceGrid, ::testing::ValuesIn(DefaultConfigs()),
                         [](const auto& info) { return ConfigName(info.param); });
INSTANTIATE_TEST_SUITE_P(Full, ReduceGrid, ::testing::ValuesIn(FullConfigs()),
                         [](const auto& info) { return ConfigName(info.param) + "_" + std::to_string(info.param.index); });

// Buffers not from aclrtMalloc between processes (reduce_shm_unshared.cc): malloc'd sendBufs
// and/or recvBufs (and in place) at 2, 3, 4 process ranks, with HOSTCCL_CMA=auto (inputs up to
// 1 MiB single-copy with process_vm_readv/writev, larger ones staged) and =off (all staged).
// Counts above the inline size, not multiples of the CMA chunk (64 Ki fp32) or of the staging slot
// (64 Ki fp32), several chunks of both, and a slice of exactly one CMA chunk.
struct HostBufConfig {
  int nranks;
  const char* cma;
  grid::HostBufRun run = grid::HostBufRun::kProcesses;
};

std::string HostBufName(const HostBufConfig& c) {
  std::string s = "r";  // += only, as in ConfigName
  ((s += std::to_string(c.nranks)) += "_cma_") += c.cma;
  if (c.run != grid::HostBufRun::kProcesses) (s += "_") += grid::HostBufRunName(c.run);
  return s;
}
void PrintTo(const HostBufConfig& c, std::ostream* os) { *os << HostBufName(c); }

std::vector<ReduceCase> HostBufCases(const HostBufConfig& g) {
  struct Kind { bool send, recv, in_place; };
  const Kind kinds[] = {{true, false, false}, {false, true, false}, {true, true, false}, {true, false, true}};
  const uint64_t counts[] = {1025, 16411, 65537, 200003};
  const HcclDataType types[] = {HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_INT8,
                                HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_INT32};
  const auto& ops = ReduceOps();
  std::vector<ReduceCase> out;
  size_t i = 0;
  for (const Kind& k : kinds)
    for (uint64_t count : counts) {
      const uint32_t root = RootOfClass(static_cast<int>(i % 3), g.nranks);
      ReduceCase c{types[i % 6], ops[i % 4], count, root, k.in_place, Mix64(0xc3a0000 + i * 31 + g.nranks)};
      c.host_send = k.send;
      c.host_recv = k.recv;
      out.push_back(c);
      ++i;
    }
  // A small (inline) and an empty call with malloc'd buffers, and the CMA chunk boundary exactly.
  ReduceCase small{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 7, 0, false, Mix64(0xc3a1)};
  small.host_send = small.host_recv = true;
  out.push_back(small);
  ReduceCase empty = small;
  empty.count = 0;
  out.push_back(empty);
  ReduceCase boundary{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 65536 * static_cast<uint64_t>(g.nranks),
                      static_cast<uint32_t>(g.nranks - 1), false, Mix64(0xc3a2)};
  boundary.host_send = true;
  out.push_back(boundary);
  ReduceCase cma_chunks{HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 250000, 0, false, Mix64(0xc3a3)};
  cma_chunks.host_send = true;
  out.push_back(cma_chunks);
  ReduceCase staged{HCCL_DATA_TYPE_FP64, HCCL_REDUCE_PROD, 200003, static_cast<uint32_t>(g.nranks / 2), true,
                    Mix64(0xc3a4)};
  staged.host_send = true;
  out.push_back(staged);
  return out;
}

class ReduceHostBuffers : public ::testing::TestWithParam<HostBufConfig> {};

TEST_P(ReduceHostBuffers, MatchesReferenceFold) {
  const HostBufConfig& g = GetParam();
  const std::vector<ReduceCase> cases = HostBufCases(g);
  RunOptions opts;
  opts.env.push_back({"HOSTCCL_CMA", g.cma});
  opts.timeout_s = 120;
  RunResult res = RunRanks(g.nranks, grid::HostBufMode(g.run), [&](RankContext& ctx) {
    for (const ReduceCase& c : cases)
      if (!RunReduceCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << HostBufName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, ReduceHostBuffers,
                         ::testing::Values(HostBufConfig{2, "auto"}, HostBufConfig{3, "auto"},
                                           HostBufConfig{4, "auto"}, HostBufConfig{2, "off"},
                                           HostBufConfig{3, "off"}, HostBufConfig{4, "off"},
                                           HostBufConfig{3, "auto", grid::HostBufRun::kThreadsShm}),
                         [](const auto& info) { return HostBufName(info.param); });

// The default subset really covers what it claims, checked against the library's own registry
// of algorithms (src/algo/registry.h, the HcclReduce rows): every algorithm the library has is
// forced by some default configuration whose placement meets its requirements (so it really runs
// rather than falling back to the table), and also at one rank where one rank can run it.
bool Runs(const algo::Algorithm& a, const GridConfig& g) {
  const bool threads = g.mode != Mode::kProcesses;
  if ((a.needs & algo::kNeedsLocal) && !threads) return false;
  if ((a.needs & algo::kNeedsShm) && (threads || g.hosts > 1)) return false;
  if ((a.needs & algo::kNeedsNodes) && (threads || g.hosts < 2)) return false;
  return true;
}

TEST(ReduceGridCoverage, DefaultSubsetCoversEveryClass) {
  std::set<std::pair<int, int>> dtype_op;
  std::set<uint64_t> counts;
  std::set<int> ranks, root_classes;
  std::set<Mode> modes;
  bool in_place = false, out_of_place = false, several_hosts = false;
  for (const GridConfig& g : DefaultConfigs()) {
    ranks.insert(g.nranks);
    modes.insert(g.mode);
    several_hosts |= g.hosts > 1 && g.algo.empty();
    for (const ReduceCase& c : Cases(g)) {
      dtype_op.insert({c.dtype, c.op});
      counts.insert(c.count);
      if (g.nranks >= 3) root_classes.insert(c.root == 0 ? 0 : c.root == static_cast<uint32_t>(g.nranks - 1) ? 2 : 1);
      (c.in_place ? in_place : out_of_place) = true;
    }
  }
  std::set<std::string> listed;
  for (const char* a : kAlgos)
    if (*a) listed.insert(a);
  std::set<std::string> library;
  for (const algo::Algorithm& a : algo::Algorithms()) {
    if (a.op != CollKind::kReduce) continue;
    library.insert(a.name);
    bool forced = false, single = false;
    for (const GridConfig& g : DefaultConfigs()) {
      if (g.algo != a.name || !Runs(a, g)) continue;
      forced = true;
      single |= g.nranks == 1;
    }
    EXPECT_TRUE(forced) << "no default configuration runs reduce algorithm " << a.name;
    if (!(a.needs & algo::kNeedsNodes)) {
      EXPECT_TRUE(single) << "no default configuration forces " << a.name << " at one rank";
    }
  }
  EXPECT_EQ(listed, library) << "kAlgos must list exactly the library's reduce algorithms";
  EXPECT_EQ(dtype_op.size(), 48u);
  EXPECT_EQ(counts, (std::set<uint64_t>{0, 1, 7, 1023, 65537, (1u << 20) + 3}));
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(root_classes.size(), 3u);
  EXPECT_TRUE(in_place && out_of_place);
  EXPECT_TRUE(several_hosts) << "the automatic plan across hosts is not in the default subset";
}

}  // namespace
}  // namespace hostccl::test
