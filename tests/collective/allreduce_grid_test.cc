// The HcclAllReduce grid that proves each algorithm: dtype (12) x op (4) at small counts, larger
// counts (multi-chunk, several slices, vector tails), in place, ranks {1,2,3,4,5,8}, algorithm
// (auto + every name, forced with HOSTCCL_ALGO=allreduce=<name>), threads and processes, and two
// emulated hosts (HOSTCCL_NODE_ID) for "node". Every rank's recvBuf must be bitwise the rank-order
// reference fold (tests/harness ExpectedReduce), its tail past count untouched, and its sendBuf
// unchanged (unless in place). Helper grids with more cases and the mismatch matrix live elsewhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "algo/registry.h"
#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "harness/reference_fold.h"
#include "harness/run_ranks.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardElems = 16;

struct ArCase {
  HcclDataType dtype;
  HcclReduceOp op;
  uint64_t count;
  bool in_place;
  uint64_t seed;
  bool host = false;  // malloc'd buffers (not shareable between processes)
};

std::string ArName(const ArCase& c) {
  std::string s = Desc(c.dtype).name;
  ((s += " ") += OpName(c.op)) += " count=";
  s += std::to_string(c.count);
  if (c.in_place) s += " in-place";
  if (c.host) s += " malloc";
  return s;
}

class Buf {
 public:
  ~Buf() {
    if (p_ && host_) std::free(p_);
    if (p_ && !host_) (void)aclrtFree(p_);
  }
  bool Alloc(size_t bytes, bool host) {
    host_ = host;
    if (host) return (p_ = std::malloc(bytes)) != nullptr;
    return aclrtMalloc(&p_, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  bool host_ = false;
};

bool RunAllReduceCase(RankContext& ctx, const ArCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  const std::string name = ArName(c);
  const size_t bytes = c.count * d.size, recv_bytes = bytes + kGuardElems * d.size;
  std::vector<char> input(bytes), before(recv_bytes);
  GenerateInput(d, c.op, c.seed, ctx.rank, c.count, input.data());
  FillGuard(before.data(), recv_bytes, c.seed ^ (0x9e37ull * (ctx.rank + 1)));
  if (c.in_place) std::copy(input.begin(), input.end(), before.begin());
  Buf sbuf, rbuf;
  if (!rbuf.Alloc(recv_bytes, c.host) || (!c.in_place && !sbuf.Alloc(bytes ? bytes : 64, c.host)))
    return ctx.Fail(name + ": allocation failed");
  void* send = c.in_place ? rbuf.get() : sbuf.get();
  if (aclrtMemcpy(rbuf.get(), recv_bytes, before.data(), recv_bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
      (!c.in_place && bytes && aclrtMemcpy(send, bytes, input.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS))
    return ctx.Fail(name + ": copy in failed");
  HcclResult r = HcclAllReduce(send, rbuf.get(), c.count, c.dtype, c.op, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclAllReduce returned " + std::to_string(r));
  if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
    return ctx.Fail(name + ": aclrtSynchronizeStream failed: " + aclGetRecentErrMsg());
  std::vector<char> after(recv_bytes);
  if (aclrtMemcpy(after.data(), recv_bytes, rbuf.get(), recv_bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
    return ctx.Fail(name + ": copy out failed");
  if (!c.in_place && bytes) {
    std::vector<char> s(bytes);
    (void)aclrtMemcpy(s.data(), bytes, send, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    std::string m = CompareBytes(input.data(), s.data(), bytes, name + ": sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }
  std::string m = CompareBytes(before.data() + bytes, after.data() + bytes, recv_bytes - bytes,
                               name + ": recvBuf changed beyond count");
  if (!m.empty()) ctx.Fail(m);
  if (c.count == 0) return true;
  std::vector<char> expected(bytes);
  ReduceCase rc{c.dtype, c.op, c.count, 0, false, c.seed};
  ExpectedReduce(rc, ctx.nranks, expected.data());
  m = CompareElems(d, expected.data(), after.data(), c.count, name + ": rank " + std::to_string(ctx.rank) + " result");
  if (!m.empty()) ctx.Fail(m);
  return true;
}

struct Config {
  int index;
  int nranks;
  Mode mode;
  std::string algo;  // "" = automatic
  int chunk_bytes;
  int hosts;  // > 1: processes split into this many emulated hosts (HOSTCCL_NODE_ID)
  bool host_bufs;
};

std::string ConfigName(const Config& c) {
  std::string s = "r";
  s += std::to_string(c.nranks);
  s += c.mode == Mode::kProcesses ? "_proc" : c.mode == Mode::kThreadsInitAll ? "_initall" : "_rootinfo";
  s += "_";
  s += c.algo.empty() ? std::string("auto") : c.algo;
  if (c.chunk_bytes) (s += "_chunk") += std::to_string(c.chunk_bytes);
  if (c.hosts > 1) (s += "_hosts") += std::to_string(c.hosts);
  if (c.host_bufs) s += "_malloc";
  return s;
}
void PrintTo(const Config& c, std::ostream* os) { *os << ConfigName(c); }

std::vector<Config> Configs() {
  const struct { int n; Mode m; const char* algo; int chunk; int hosts; bool host_bufs; } rows[] = {
      {1, Mode::kThreadsInitAll, "", 0, 0, false},
      {2, Mode::kThreadsRootInfo, "direct", 0, 0, false},
      {3, Mode::kThreadsInitAll, "direct", 0, 0, false},
      {8, Mode::kThreadsInitAll, "", 0, 0, false},
      {2, Mode::kProcesses, "", 0, 0, false},
      {3, Mode::kProcesses, "shm", 0, 0, false},
      {5, Mode::kProcesses, "shm_inline", 0, 0, false},
      {4, Mode::kProcesses, "", 0, 0, true},  // malloc'd buffers: shm re-plans to rs_ag
      {2, Mode::kProcesses, "flat", 0, 0, false},
      {5, Mode::kThreadsRootInfo, "flat", 0, 0, false},
      {2, Mode::kProcesses, "rs_ag", 4096, 0, false},
      {3, Mode::kProcesses, "rs_ag", 0, 0, false},
      {4, Mode::kThreadsInitAll, "rs_ag", 8192, 0, false},
      {8, Mode::kProcesses, "rs_ag", 0, 0, false},
      {4, Mode::kProcesses, "", 0, 2, false},
      {5, Mode::kProcesses, "node", 4096, 2, false},
  };
  std::vector<Config> out;
  for (const auto& r : rows)
    out.push_back({static_cast<int>(out.size()), r.n, r.m, r.algo, r.chunk, r.hosts, r.host_bufs});
  return out;
}

std::vector<ArCase> Cases(const Config& g) {
  const auto& types = ReducibleDtypes();
  const auto& ops = ReduceOps();
  std::vector<ArCase> out;
  const uint64_t small[] = {1, 7, 1023};
  const int k = g.index;
  auto seed = [&]() { return Mix64((static_cast<uint64_t>(k) << 32) ^ out.size() ^ 0xa11edull); };
  const bool inline_only = g.algo == "shm_inline";
  for (size_t di = 0; di < types.size(); ++di)
    for (size_t oi = 0; oi < ops.size(); ++oi) {
      const int j = static_cast<int>(di * ops.size() + oi);
      uint64_t count = small[(j + k) % 3];
      if (inline_only) count = std::min<uint64_t>(count, 4096 / types[di].size);
      out.push_back({types[di].type, ops[oi], count, (j + k) % 2 == 1, seed(), g.host_bufs});
    }
  out.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, false, seed(), g.host_bufs});
  if (inline_only) {
    out.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1024, true, seed(), false});  // exactly 4 KiB
    return out;
  }
  out.push_back({types[(k * 5) % 12].type, ops[k % 4], 65537, k % 2 == 0, seed(), g.host_bufs});
  out.push_back({types[(k * 5 + 6) % 12].type, ops[(k + 1) % 4], 65537, k % 2 == 1, seed(), g.host_bufs});
  out.push_back({types[(k * 7 + 3) % 12].type, ops[(k + 2) % 4], (1u << 20) + 3, true, seed(), g.host_bufs});
  out.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, (1u << 20) + 3, false, seed(), g.host_bufs});
  return out;
}

class AllReduceGrid : public ::testing::TestWithParam<Config> {};

TEST_P(AllReduceGrid, EveryRankMatchesReferenceFold) {
  const Config& g = GetParam();
  const std::vector<ArCase> cases = Cases(g);
  RunOptions opts;
  if (!g.algo.empty()) opts.env.push_back({"HOSTCCL_ALGO", "allreduce=" + g.algo});
  if (g.chunk_bytes) opts.env.push_back({"HOSTCCL_CHUNK_BYTES", std::to_string(g.chunk_bytes)});
  if (g.hosts > 1) {
    const int n = g.nranks, h = g.hosts;
    opts.rank_env = [n, h](int rank) {
      return std::vector<std::pair<std::string, std::string>>{
          {"HOSTCCL_NODE_ID", "arhost" + std::to_string(rank * h / n)}};
    };
  }
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const ArCase& c : cases)
      if (!RunAllReduceCase(ctx, c)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, AllReduceGrid, ::testing::ValuesIn(Configs()),
                         [](const auto& info) { return ConfigName(info.param); });

// Every AllReduce algorithm of the library's registry is forced by a configuration whose placement
// lets it run (so it is tested, not replaced by the default rules).
TEST(AllReduceGridCoverage, EveryAlgorithmIsForcedWhereItRuns) {
  for (const algo::Algorithm& a : algo::Algorithms()) {
    if (a.op != CollKind::kAllReduce) continue;
    bool forced = false;
    for (const Config& g : Configs()) {
      if (g.algo != a.name) continue;
      const bool threads = g.mode != Mode::kProcesses;
      if ((a.needs & algo::kNeedsLocal) && !threads) continue;
      if ((a.needs & algo::kNeedsShm) && (threads || g.hosts > 1)) continue;
      if ((a.needs & algo::kNeedsNodes) && (threads || g.hosts < 2)) continue;
      forced = true;
    }
    EXPECT_TRUE(forced) << "no configuration runs allreduce algorithm " << a.name;
  }
}

}  // namespace
}  // namespace hostccl::test
