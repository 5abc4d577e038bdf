// HcclBroadcast, algorithm by algorithm: every broadcast algorithm (forced with
// HOSTCCL_ALGO=broadcast=<name>, plus the automatic choice) over thread ranks, process ranks and
// emulated hosts (HOSTCCL_NODE_ID), all 17 movable dtypes (int128 and the 8-bit floats included),
// several roots and counts (0, 1, odd, uneven slices, multi-chunk). Buffers hold random bits (NaN
// payloads must survive): every rank's buffer must equal the root's bitwise, the root's must be
// unchanged and the guard bytes past `count` untouched. Then HCCL's argument checks, in HCCL's
// order, and the per-chip profile rules. (The larger grid and mismatch matrix: broadcast_grid_test.)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/input_gen.h"
#include "harness/reference_fold.h"
#include "harness/run_ranks.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardBytes = 64;

struct MoveType {
  HcclDataType type;
  const char* name;
  size_t size;
};

const std::vector<MoveType>& MoveTypes() {
  static const std::vector<MoveType> v = {
      {HCCL_DATA_TYPE_INT8, "int8", 1},       {HCCL_DATA_TYPE_INT16, "int16", 2},
      {HCCL_DATA_TYPE_INT32, "int32", 4},     {HCCL_DATA_TYPE_FP16, "fp16", 2},
      {HCCL_DATA_TYPE_FP32, "fp32", 4},       {HCCL_DATA_TYPE_INT64, "int64", 8},
      {HCCL_DATA_TYPE_UINT64, "uint64", 8},   {HCCL_DATA_TYPE_UINT8, "uint8", 1},
      {HCCL_DATA_TYPE_UINT16, "uint16", 2},   {HCCL_DATA_TYPE_UINT32, "uint32", 4},
      {HCCL_DATA_TYPE_FP64, "fp64", 8},       {HCCL_DATA_TYPE_BFP16, "bfp16", 2},
      {HCCL_DATA_TYPE_INT128, "int128", 16},  {HCCL_DATA_TYPE_HIF8, "hif8", 1},
      {HCCL_DATA_TYPE_FP8E4M3, "fp8e4m3", 1}, {HCCL_DATA_TYPE_FP8E5M2, "fp8e5m2", 1},
      {HCCL_DATA_TYPE_FP8E8M0, "fp8e8m0", 1},
  };
  return v;
}

struct BcCase {
  size_t type;  // index into MoveTypes()
  uint64_t count;
  int root;
  uint64_t seed;
};

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

bool RunCase(RankContext& ctx, const BcCase& c, bool host) {
  const MoveType& t = MoveTypes()[c.type];
  const std::string name = std::string(t.name) + " count=" + std::to_string(c.count) + " root=" +
                           std::to_string(c.root) + (host ? " malloc" : "");
  const size_t bytes = c.count * t.size, total = bytes + kGuardBytes;
  // The root's data: random bits (the same on every rank, so each can check); everyone's guard
  // and every non-root's initial contents: per-rank random bits.
  std::vector<char> root_data(total), before(total);
  FillGuard(root_data.data(), total, c.seed);
  FillGuard(before.data(), total, c.seed ^ (0x51ull * static_cast<uint64_t>(ctx.rank + 1)));
  if (ctx.rank == c.root) std::copy(root_data.begin(), root_data.begin() + static_cast<ptrdiff_t>(bytes), before.begin());
  Buf buf;
  if (host && !hostccl::test::AllowHostBuffers(ctx)) return false;
  if (!buf.Alloc(total, host)) return ctx.Fail(name + ": allocation failed");
  if (aclrtMemcpy(buf.get(), total, before.data(), total, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
    return ctx.Fail(name + ": copy in failed");
  HcclResult r = HcclBroadcast(buf.get(), c.count, t.type, static_cast<uint32_t>(c.root), ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclBroadcast returned " + std::to_string(r));
  if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
    return ctx.Fail(name + ": aclrtSynchronizeStream failed: " + aclGetRecentErrMsg());
  std::vector<char> after(total);
  if (aclrtMemcpy(after.data(), total, buf.get(), total, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
    return ctx.Fail(name + ": copy out failed");
  std::string m = CompareBytes(before.data() + bytes, after.data() + bytes, kGuardBytes,
                               name + ": buffer changed beyond count");
  if (!m.empty()) return ctx.Fail(m);
  m = CompareBytes(root_data.data(), after.data(), bytes,
                   name + ": rank " + std::to_string(ctx.rank) + (ctx.rank == c.root ? " (root) changed" : " differs from the root"));
  if (!m.empty()) return ctx.Fail(m);
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
      {8, Mode::kThreadsInitAll, "", 0, 0, true},
      {5, Mode::kThreadsRootInfo, "flat", 0, 0, false},
      {4, Mode::kThreadsInitAll, "chain", 8192, 0, false},
      {2, Mode::kProcesses, "", 0, 0, false},
      {3, Mode::kProcesses, "shm", 0, 0, false},
      {5, Mode::kProcesses, "shm_inline", 0, 0, false},
      {4, Mode::kProcesses, "", 0, 0, true},  // malloc'd buffers: shm re-plans to chain
      {2, Mode::kProcesses, "flat", 0, 0, false},
      {3, Mode::kProcesses, "chain", 4096, 0, false},
      {8, Mode::kProcesses, "chain", 0, 0, false},
      {4, Mode::kProcesses, "", 0, 2, false},
      {5, Mode::kProcesses, "node", 4096, 2, false},
      {6, Mode::kProcesses, "node", 0, 3, false},
  };
  std::vector<Config> out;
  for (const auto& r : rows)
    out.push_back({static_cast<int>(out.size()), r.n, r.m, r.algo, r.chunk, r.hosts, r.host_bufs});
  return out;
}

std::vector<BcCase> Cases(const Config& g) {
  const auto& types = MoveTypes();
  const size_t nt = types.size();
  std::vector<BcCase> out;
  const int k = g.index, n = g.nranks;
  auto seed = [&]() { return Mix64((static_cast<uint64_t>(k) << 32) ^ out.size() ^ 0xbcbcull); };
  const uint64_t small[] = {1, 7, 1023};
  const bool inline_only = g.algo == "shm_inline";
  for (size_t di = 0; di < nt; ++di) {
    uint64_t count = small[(di + static_cast<size_t>(k)) % 3];
    if (inline_only) count = std::min<uint64_t>(count, 4096 / types[di].size);
    out.push_back({di, count, static_cast<int>((di + static_cast<size_t>(k)) % static_cast<size_t>(n)), seed()});
  }
  out.push_back({4, 0, n - 1, seed()});
  if (inline_only) {
    out.push_back({4, 1024, n - 1, seed()});  // exactly 4 KiB
    out.push_back({12, 256, n / 2, seed()});  // int128, 4 KiB
    return out;
  }
  out.push_back({(static_cast<size_t>(k) * 5) % nt, static_cast<uint64_t>(n) * 64 + 3, n / 2, seed()});
  out.push_back({12, 65537, n - 1, seed()});                     // int128, 1 MiB + 16 B
  out.push_back({15, (1u << 20) + 3, 0, seed()});                // fp8e4m3, several chunks
  out.push_back({(static_cast<size_t>(k) * 7 + 3) % nt, (1u << 20) + 5, n / 2, seed()});
  return out;
}

class BroadcastAlgo : public ::testing::TestWithParam<Config> {};

TEST_P(BroadcastAlgo, EveryRankEqualsTheRootBitwise) {
  const Config& g = GetParam();
  const std::vector<BcCase> cases = Cases(g);
  RunOptions opts;
  if (!g.algo.empty()) opts.env.push_back({"HOSTCCL_ALGO", "broadcast=" + g.algo});
  if (g.chunk_bytes) opts.env.push_back({"HOSTCCL_CHUNK_BYTES", std::to_string(g.chunk_bytes)});
  if (g.hosts > 1) {
    const int n = g.nranks, h = g.hosts;
    opts.rank_env = [n, h](int rank) {
      return std::vector<std::pair<std::string, std::string>>{
          {"HOSTCCL_NODE_ID", "bchost" + std::to_string(rank * h / n)}};
    };
  }
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& ctx) {
    for (const BcCase& c : cases)
      if (!RunCase(ctx, c, g.host_bufs)) return false;
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << ConfigName(g) << " (" << cases.size() << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, BroadcastAlgo, ::testing::ValuesIn(Configs()),
                         [](const auto& info) { return ConfigName(info.param); });

// HCCL's legacy order (collectives.md 2.2): count 0 -> SUCCESS before anything; NULL comm, buf,
// stream -> E_PTR; count > 0x7FFFFFFFF -> E_PARA; dtype -> E_NOT_SUPPORT; root >= n -> E_PARA.
// Each call combines a fault with every later one, so only the first in that order may show.
TEST(BroadcastArgs, ChecksInHcclOrder) {
  RunResult res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& ctx) {
    void* buf = nullptr;
    if (aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return ctx.Fail("aclrtMalloc");
    const auto bad_dt = static_cast<HcclDataType>(13);
    struct { const char* what; HcclResult got; HcclResult want; } rows[] = {
        {"count 0, everything else bad", HcclBroadcast(nullptr, 0, bad_dt, 7, nullptr, nullptr), HCCL_SUCCESS},
        {"NULL comm", HcclBroadcast(buf, 1, bad_dt, 7, nullptr, ctx.stream), HCCL_E_PTR},
        {"NULL buf", HcclBroadcast(nullptr, 1ull << 40, bad_dt, 7, ctx.comm, ctx.stream), HCCL_E_PTR},
        {"NULL stream", HcclBroadcast(buf, 1ull << 40, bad_dt, 7, ctx.comm, nullptr), HCCL_E_PTR},
        {"count too large", HcclBroadcast(buf, 0x800000000ull, bad_dt, 7, ctx.comm, ctx.stream), HCCL_E_PARA},
        {"dtype 13", HcclBroadcast(buf, 1, bad_dt, 7, ctx.comm, ctx.stream), HCCL_E_NOT_SUPPORT},
        {"dtype 255", HcclBroadcast(buf, 1, static_cast<HcclDataType>(255), 0, ctx.comm, ctx.stream),
         HCCL_E_NOT_SUPPORT},
        {"root == n", HcclBroadcast(buf, 1, HCCL_DATA_TYPE_FP32, 2, ctx.comm, ctx.stream), HCCL_E_PARA},
        {"misaligned buf", HcclBroadcast(static_cast<char*>(buf) + 1, 1, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream),
         HCCL_E_PARA},
        {"count in bytes", HcclBroadcast(buf, 64, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream), HCCL_E_PARA},
    };
    for (const auto& r : rows)
      if (r.got != r.want)
        ctx.Fail(std::string(r.what) + ": got " + std::to_string(r.got) + ", want " + std::to_string(r.want));
    // Nothing was enqueued by the rejected calls: a valid broadcast still works and matches.
    char data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    char init[16] = {};
    (void)aclrtMemcpy(buf, 16, ctx.rank == 1 ? data : init, 16, ACL_MEMCPY_HOST_TO_DEVICE);
    if (HcclBroadcast(buf, 1, HCCL_DATA_TYPE_INT128, 1, ctx.comm, ctx.stream) != HCCL_SUCCESS ||
        aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      ctx.Fail("valid int128 broadcast after the rejected calls failed");
    char out[16] = {};
    (void)aclrtMemcpy(out, 16, buf, 16, ACL_MEMCPY_DEVICE_TO_HOST);
    if (std::string(out, 16) != std::string(data, 16)) ctx.Fail("int128 broadcast: wrong bytes");
    (void)aclrtFree(buf);
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

// Per-chip data-movement rules (collectives.md 5.1/5.2): 310P has no Broadcast; A2/A3 move no
// int128 and no 8-bit floats; 910 no bf16 either; 950 moves the 8-bit floats but not int128.
// The profile check comes before the root check (HCCL's step order, as for HcclReduce).
TEST(BroadcastArgs, ProfileRules) {
  struct Row { const char* soc; HcclDataType t; HcclResult want; };
  const Row rows[] = {
      {"Atlas310P", HCCL_DATA_TYPE_FP32, HCCL_E_NOT_SUPPORT}, {"AtlasA2", HCCL_DATA_TYPE_INT128, HCCL_E_NOT_SUPPORT},
      {"AtlasA3", HCCL_DATA_TYPE_FP8E4M3, HCCL_E_NOT_SUPPORT}, {"AtlasA3", HCCL_DATA_TYPE_BFP16, HCCL_SUCCESS},
      {"Atlas910", HCCL_DATA_TYPE_BFP16, HCCL_E_NOT_SUPPORT},   {"Atlas910", HCCL_DATA_TYPE_UINT64, HCCL_SUCCESS},
      {"Ascend950", HCCL_DATA_TYPE_HIF8, HCCL_SUCCESS},         {"Ascend950", HCCL_DATA_TYPE_INT128, HCCL_E_NOT_SUPPORT},
  };
  for (const Row& row : rows) {
    RunOptions opts;
    opts.env.push_back({"HOSTCCL_SOC", row.soc});
    RunResult res = RunRanks(2, Mode::kThreadsInitAll, [&](RankContext& ctx) {
      void* buf = nullptr;
      if (aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return ctx.Fail("aclrtMalloc");
      HcclResult r = HcclBroadcast(buf, 1, row.t, 0, ctx.comm, ctx.stream);
      if (r == HCCL_SUCCESS && aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) ctx.Fail("synchronize failed");
      if (r != row.want) ctx.Fail("got " + std::to_string(r) + ", want " + std::to_string(row.want));
      if (row.want != HCCL_SUCCESS && HcclBroadcast(buf, 1, row.t, 9, ctx.comm, ctx.stream) != HCCL_E_NOT_SUPPORT)
        ctx.Fail("a profile rejection must come before the root check");
      (void)aclrtFree(buf);
      return true;
    }, opts);
    EXPECT_TRUE(res.ok) << row.soc << " dtype " << row.t << ": " << res.message;
  }
}

// A mismatch must fail every rank, also those whose own part went well: over TCP with 4 ranks and
// root 2, rank 3 passes a count above the flat/chain bound (16 KiB), the others one below it. Ranks
// 0 and 1 receive matching data from the root (flat) and used to report success; the root's
// completion notice, sent only once every rank acknowledged, makes them fail too. The same on two
// emulated hosts (node against flat).
TEST(BroadcastMismatch, EveryRankFails) {
  for (const char* placement : {"tcp", "nodes"}) {
    RunOptions opts;
    if (std::string(placement) == "tcp") {
      opts.env.push_back({"HOSTCCL_TRANSPORT", "tcp"});
    } else {
      opts.rank_env = [](int rank) {
        return std::vector<std::pair<std::string, std::string>>{{"HOSTCCL_NODE_ID", rank < 2 ? "bm-a" : "bm-b"}};
      };
    }
    opts.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
    RunResult res = RunRanks(4, Mode::kProcesses, [](RankContext& ctx) {
      const uint64_t count = ctx.rank == 3 ? 65536 : 1024;  // fp32: 256 KiB against 4 KiB
      Buf buf;
      if (!buf.Alloc(65536 * 4, false)) return ctx.Fail("aclrtMalloc");
      const auto t0 = std::chrono::steady_clock::now();
      HcclResult r = HcclBroadcast(buf.get(), count, HCCL_DATA_TYPE_FP32, 2, ctx.comm, ctx.stream);
      const bool sync_ok = r == HCCL_SUCCESS && aclrtSynchronizeStream(ctx.stream) == ACL_SUCCESS;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string msg = aclGetRecentErrMsg();
      if (sync_ok) return ctx.Fail("the mismatched broadcast succeeded");
      if (s > 6.0) return ctx.Fail("the mismatch took " + std::to_string(s) + " s: " + msg);
      if (msg.find("mismatch") == std::string::npos) return ctx.Fail("the error does not say mismatch: " + msg);
      return true;
    }, opts);
    EXPECT_TRUE(res.ok) << placement << ":\n" << res.message;
  }
}

}  // namespace
}  // namespace hostccl::test
