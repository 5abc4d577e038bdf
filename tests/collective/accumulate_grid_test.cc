// HOSTCCL_ACCUMULATE=fp32 (semantics.md "Accumulation"): fp16/bf16 SUM and PROD of HcclReduce,
// HcclAllReduce, HcclReduceScatter and HcclReduceScatterV accumulate in fp32 and round once, on
// every algorithm. One gtest case per (operator, algorithm): the algorithm forced with
// HOSTCCL_ALGO in the placement it needs (chunked ones with a small chunk, so chains carry
// several fp32 partial chunks; node algorithms over 3 emulated hosts), the knob set, and every
// fp16/bf16 x sum/prod/max case checked bitwise against the harness reference, which follows the
// same knob (reference_fold.h: fp32 fold of x0, x1, ... in rank order, one rounding; MAX unchanged).
// Every algorithm meets the same reference, so their results are bitwise identical to each other.
// ReferenceDiffers pins that these inputs tell the two modes apart (a library that ignored the
// knob would fail here).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "collective/grid_common.h"
#include "harness/collective_check.h"
#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "harness/reducescatter_check.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

using grid::LibAlgo;

struct AccConfig {
  std::string op;  // HOSTCCL_ALGO operator name
  LibAlgo algo;
  int nranks;
  Mode mode;
  grid::Place place;
  int hosts;
  int chunk_bytes;
};

std::string Name(const AccConfig& c) {
  std::string s = c.op;
  (s += "_") += c.algo.name;
  (s += "_r") += std::to_string(c.nranks);
  if (c.hosts > 1) (s += "_hosts") += std::to_string(c.hosts);
  return s;
}
void PrintTo(const AccConfig& c, std::ostream* os) { *os << Name(c); }

std::vector<AccConfig> Configs() {
  std::vector<AccConfig> out;
  for (const char* op : {"reduce", "allreduce", "reducescatter", "reducescatterv"})
    for (const LibAlgo& a : grid::LibraryAlgorithms(op)) {
      const auto place = grid::PlacesFor(a)[0];
      const int hosts = a.nodes ? 3 : 1;
      out.push_back({op, a, a.nodes ? 5 : 4, place.first, place.second, hosts, a.chunked ? 4096 : 0});
    }
  return out;
}

const HcclDataType kTypes[] = {HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_BFP16};
const HcclReduceOp kOps[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX};

// Element counts per rank (a rank's block for ReduceScatter), within the algorithm's size limit.
std::vector<uint64_t> Counts(const AccConfig& g, uint64_t block_factor) {
  const uint64_t cap = std::min(grid::SizeLimit(g.op.c_str(), g.algo.name), grid::InlineSlotBytes(g.algo.name));
  std::vector<uint64_t> out;
  for (uint64_t c : {uint64_t{1}, uint64_t{7}, uint64_t{300}, uint64_t{5000}})
    if (c * 2 * block_factor <= cap) out.push_back(c);
  return out;
}

RunOptions Options(const AccConfig& g) {
  grid::GridConfig gc{0, g.nranks, g.mode, g.place, g.algo.name, g.chunk_bytes, false, g.hosts};
  RunOptions opts = grid::Options(gc, g.op.c_str());
  opts.env.push_back({"HOSTCCL_ACCUMULATE", "fp32"});
  return opts;
}

class AccumulateGrid : public ::testing::TestWithParam<AccConfig> {};

TEST_P(AccumulateGrid, Fp32AccumulationIsTheRankOrderFoldRoundedOnce) {
  const AccConfig& g = GetParam();
  const int n = g.nranks;
  uint64_t seed = Mix64(0xacc32000 + static_cast<uint64_t>(n) * 977 + g.algo.name.size());
  const bool rs = g.op.rfind("reducescatter", 0) == 0, v = g.op == "reducescatterv";
  const std::vector<uint64_t> counts = Counts(g, rs ? static_cast<uint64_t>(n) + 1 : 1);
  ASSERT_FALSE(counts.empty()) << Name(g);
  size_t cases = 0;
  RunResult res = RunRanks(n, g.mode, [&](RankContext& ctx) {
    uint64_t s = seed;
    size_t i = 0;
    for (HcclDataType t : kTypes)
      for (HcclReduceOp op : kOps)
        for (uint64_t count : counts) {
          ++i;
          s = Mix64(s + i);
          const bool in_place = i % 2 == 0;
          bool ok = true;
          if (g.op == "reduce") {
            ok = RunReduceCase(ctx, ReduceCase{t, op, count, static_cast<uint32_t>(i % 2 ? 0 : n - 1), in_place, s});
          } else if (g.op == "allreduce") {
            ok = RunAllReduceCase(ctx, AllReduceCase{t, op, count, in_place, s});
          } else {
            ReduceScatterCase c{t, op, count, in_place ? RsPlace::kOwnBlock : RsPlace::kSeparate, s};
            if (v) {  // uneven blocks with gaps and an empty one
              uint64_t at = 3;
              for (int r = 0; r < n; ++r) {
                const uint64_t len = r == 1 ? 0 : count + static_cast<uint64_t>(r);
                c.counts.push_back(len);
                c.displs.push_back(at);
                at += len + 2;
              }
              c.place = RsPlace::kSeparate;
            }
            ok = RunReduceScatterCase(ctx, c);
          }
          if (!ok) return false;
        }
    return true;
  }, Options(g));
  cases = std::size(kTypes) * std::size(kOps) * counts.size();
  EXPECT_TRUE(res.ok) << Name(g) << " (" << cases << " cases):\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(Default, AccumulateGrid, ::testing::ValuesIn(Configs()),
                         [](const auto& info) { return Name(info.param); });

// The grid can fail: for these inputs (3 ranks and more, moderate values) the fp32-accumulated
// reference differs from the per-step one in some elements for every type and op that widens,
// and equals it for MAX.
TEST(AccumulateReference, ReferenceDiffers) {
  for (HcclDataType t : kTypes)
    for (HcclReduceOp op : kOps) {
      const DtypeDesc& d = Desc(t);
      const ReduceCase c{t, op, 300, 0, false, 12345};
      std::vector<char> native(c.count * d.size), wide(c.count * d.size);
      ASSERT_EQ(unsetenv("HOSTCCL_ACCUMULATE"), 0);
      ExpectedReduce(c, 4, native.data());
      ASSERT_EQ(setenv("HOSTCCL_ACCUMULATE", "fp32", 1), 0);
      ExpectedReduce(c, 4, wide.data());
      ASSERT_EQ(unsetenv("HOSTCCL_ACCUMULATE"), 0);
      const std::string diff = CompareElems(d, native.data(), wide.data(), c.count, "fp32 vs native");
      if (op == HCCL_REDUCE_MAX)
        EXPECT_TRUE(diff.empty()) << d.name << " max: " << diff;
      else
        EXPECT_FALSE(diff.empty()) << d.name << " " << OpName(op) << ": the two references agree";
    }
}

// Ranks that disagree on HOSTCCL_ACCUMULATE: a fp16 sum is a mismatch on every rank (the
// fingerprint carries the mode; the message shows "acc=fp32" against its absence), over shared
// memory and over TCP; a fp16 max first, which the knob does not change, still succeeds.
TEST(AccumulateMismatch, DisagreeingRanksFailWithAMismatch) {
  for (const char* transport : {"auto", "tcp"}) {
    RunOptions opts;
    opts.env.push_back({"HOSTCCL_TRANSPORT", transport});
    opts.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
    opts.rank_env = [](int rank) {
      return std::vector<std::pair<std::string, std::string>>{{"HOSTCCL_ACCUMULATE", rank == 2 ? "fp32" : "native"}};
    };
    RunResult res = RunRanks(3, Mode::kProcesses, [&](RankContext& ctx) {
      const uint64_t count = 64;
      void *send = nullptr, *recv = nullptr;
      if (aclrtMalloc(&send, count * 2, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
          aclrtMalloc(&recv, count * 2, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return ctx.Fail("aclrtMalloc failed");
      std::vector<uint16_t> ones(count, 0x3c00);  // fp16 1.0
      bool ok = aclrtMemcpy(send, count * 2, ones.data(), count * 2, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
      if (ok && (HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, ctx.comm, ctx.stream) !=
                     HCCL_SUCCESS ||
                 aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS))
        ok = ctx.Fail(std::string("max failed: ") + aclGetRecentErrMsg());
      if (ok) {
        const HcclResult r = HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
        const aclError e = r == HCCL_SUCCESS ? aclrtSynchronizeStream(ctx.stream) : ACL_SUCCESS;
        const std::string msg = aclGetRecentErrMsg();
        if (r == HCCL_SUCCESS && e == ACL_SUCCESS)
          ok = ctx.Fail("sum with disagreeing HOSTCCL_ACCUMULATE succeeded");
        else if (msg.find("mismatch") == std::string::npos || msg.find("acc=fp32") == std::string::npos)
          ok = ctx.Fail("message does not name the accumulation mismatch: " + msg);
      }
      (void)aclrtFree(send);
      (void)aclrtFree(recv);
      return ok;
    }, opts);
    EXPECT_TRUE(res.ok) << transport << ":\n" << res.message;
  }
}

}  // namespace
}  // namespace hostccl::test
