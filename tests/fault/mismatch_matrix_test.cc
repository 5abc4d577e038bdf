// Mismatched arguments whose sizes straddle an algorithm switch (issue 14 item 2, issue 21 item 1):
// one rank's call would select another algorithm than the others' (src/core/selector.cc: "gather"
// up to kGatherMaxBytes per rank, then "chain" over TCP or "node_chain" across hosts; "shm" re-plans
// inside at the inline, CMA and staging sizes; thread ranks always run "direct"). Every rank must
// still fail within 2 s (the exec timeout is 20 s, so waiting for it shows) with a message that
// says "mismatch" and names both ranks' arguments.
//
// One launch per placement (processes over shared memory, with aclrtMalloc or heap buffers; over
// TCP; across two emulated hosts; thread ranks): each case runs on its own sub-communicator of all ranks (HcclCreateSubCommConfig),
// so one launch covers the whole table and a failed case leaves the next one a fresh communicator.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fault/fault_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 4;
constexpr int kOdd = 3;  // the rank that misbehaves
constexpr int64_t kFailWithinMs = 2000 * hostccl::faulttest::kSlowdown;

struct Call {
  uint64_t count;
  HcclDataType dtype = HCCL_DATA_TYPE_FP32;
  HcclReduceOp op = HCCL_REDUCE_SUM;
  uint32_t root = 2;
};

// What the others call and what rank kOdd calls instead; `skip`: rank kOdd skips the others' first
// call (so its only call meets their first one). The message must show both texts.
struct Case {
  const char* name;
  Call normal;
  Call odd;
  const char* normal_text;
  const char* odd_text;
  bool skip = false;
};

constexpr uint64_t kGatherMaxElems = (256 << 10) / 4;  // kGatherMaxBytes in fp32 elements

std::vector<Case> Cases() {
  std::vector<Case> c;
  // gather <-> chain / node_chain (and shm: inline -> CMA / staging -> large plans).
  c.push_back({"count 8 vs 1Mi", {8}, {1 << 20}, "count=8 ", "count=1048576 "});
  c.push_back({"count 1Mi vs 8", {1 << 20}, {8}, "count=1048576 ", "count=8 "});
  c.push_back({"count at the gather threshold", {kGatherMaxElems}, {kGatherMaxElems + 1}, "count=65536 ", "count=65537 "});
  c.push_back({"count above vs at the threshold", {kGatherMaxElems + 1}, {kGatherMaxElems}, "count=65537 ", "count=65536 "});
  // shm's inline payload (4 KiB) and CMA bound (1 MiB) as counts of fp32.
  c.push_back({"count 1024 vs 1025", {1024}, {1025}, "count=1024 ", "count=1025 "});
  c.push_back({"count 256Ki vs 256Ki+1", {256 << 10}, {(256 << 10) + 1}, "count=262144 ", "count=262145 "});
  // 100,000 elements: fp16 is 200 KB (gather), fp32 400 KB (chain).
  c.push_back({"dtype fp32 vs fp16", {100000}, {100000, HCCL_DATA_TYPE_FP16}, "fp32", "fp16"});
  c.push_back({"dtype fp16 vs fp32", {100000, HCCL_DATA_TYPE_FP16}, {100000}, "fp16", "fp32"});
  c.push_back({"dtype fp32 vs int8", {100000}, {100000, HCCL_DATA_TYPE_INT8}, "fp32", "int8"});
  c.push_back({"op small", {8}, {8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX}, "sum", "max"});
  c.push_back({"op large", {1 << 20}, {1 << 20, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN}, "sum", "min"});
  c.push_back({"root small", {8}, {8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1}, "root=2", "root=1"});
  c.push_back({"root large", {1 << 20}, {1 << 20, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 3}, "root=2", "root=3"});
  c.push_back({"root large, odd is the root", {1 << 20}, {1 << 20, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0}, "root=2", "root=0"});
  // Rank kOdd skips a small call: its large call meets the others' small one.
  c.push_back({"skipped call", {8}, {1 << 20}, "count=8 ", "count=1048576 ", true});
  return c;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One case on `comm`: the mismatched call (after the skipped one, for `skip`), then the checks.
bool RunCase(RankContext& ctx, HcclComm comm, aclrtStream stream, const Case& c, void* send, void* recv) {
  const std::string where = std::string("case '") + c.name + "': ";
  const int64_t t0 = NowMs();
  auto call = [&](const Call& a) {
    return HcclReduce(send, recv, a.count, a.dtype, a.op, a.root, comm, stream);
  };
  HcclResult r = HCCL_SUCCESS;
  if (ctx.rank == kOdd) {
    r = call(c.odd);
  } else {
    r = call(c.normal);
    if (c.skip && r == HCCL_SUCCESS) (void)call(c.odd);  // fails at once once the first one failed
  }
  if (r != HCCL_SUCCESS) return ctx.Fail(where + hostccl::faulttest::Errno("HcclReduce (enqueue)", r));
  const aclError s = aclrtSynchronizeStream(stream);
  const int64_t took = NowMs() - t0;
  const std::string msg = aclGetRecentErrMsg();
  if (s == ACL_SUCCESS) return ctx.Fail(where + "the mismatched call succeeded");
  if (took > kFailWithinMs) return ctx.Fail(where + "failure took " + std::to_string(took) + " ms: " + msg);
  if (!Contains(msg, "mismatch")) return ctx.Fail(where + "message does not say mismatch: " + msg);
  bool names_other = false;
  for (int q = 0; q < kRanks; ++q)
    if (q != kOdd && Contains(msg, "rank " + std::to_string(q) + " ")) names_other = true;
  if (!Contains(msg, "rank " + std::to_string(kOdd) + " ") || !names_other)
    return ctx.Fail(where + "message does not name rank 3 and another rank: " + msg);
  if (!Contains(msg, c.normal_text) || !Contains(msg, c.odd_text))
    return ctx.Fail(where + "message does not show '" + c.normal_text + "' and '" + c.odd_text + "': " + msg);
  HcclResult async = HCCL_SUCCESS;
  (void)HcclGetCommAsyncError(comm, &async);
  if (async != HCCL_E_PARA) return ctx.Fail(where + "HcclGetCommAsyncError reported " + std::to_string(async));
  return true;
}

// host_buffers: sendBuf/recvBuf from the heap, not aclrtMalloc (not shareable), so "shm" re-plans
// into its cma / staging plans (reduce_shm_unshared.cc) after the first arrival.
bool RunMatrix(RankContext& ctx, bool host_buffers) {
  DevBuf dsend, drecv;
  const size_t bytes = (4u << 20) + 64;  // the largest case: 1Mi fp32 and 256Ki+1 fp32
  std::vector<char> hsend, hrecv;
  void* send = nullptr;
  void* recv = nullptr;
  if (host_buffers) {
    if (!hostccl::test::AllowHostBuffers(ctx)) return false;  // NPU fidelity would reject them
    hsend.assign(bytes, 0);
    hrecv.assign(bytes, 0);
    send = hsend.data();
    recv = hrecv.data();
  } else {
    if (!dsend.Alloc(bytes, 1.0f, false) || !drecv.Alloc(bytes, 1.0f, false)) return ctx.Fail("aclrtMalloc failed");
    send = dsend.ptr;
    recv = drecv.ptr;
  }
  uint32_t all[kRanks];
  for (int q = 0; q < kRanks; ++q) all[q] = static_cast<uint32_t>(q);
  const auto cases = Cases();
  bool ok = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    HcclComm sub = nullptr;
    HcclResult r = HcclCreateSubCommConfig(&ctx.comm, kRanks, all, static_cast<uint64_t>(i + 1),
                                           static_cast<uint32_t>(ctx.rank), nullptr, &sub);
    if (r != HCCL_SUCCESS) return ctx.Fail(std::string("case '") + cases[i].name + "': " +
                                           hostccl::faulttest::Errno("HcclCreateSubCommConfig", r));
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return ctx.Fail("aclrtCreateStream failed");
    ok = RunCase(ctx, sub, stream, cases[i], send, recv) && ok;
    (void)aclrtDestroyStream(stream);
    (void)HcclCommDestroy(sub);
  }
  return ok;
}

RunOptions Options(const std::string& placement) {
  return hostccl::faulttest::PlacementOptions(placement, "mx", 20000, 20000, 110);
}

class MismatchMatrixTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MismatchMatrixTest, EveryStraddlingPairFailsFastNamingBoth) {
  const std::string placement = GetParam();
  const Mode mode = placement.rfind("threads", 0) == 0 ? Mode::kThreadsInitAll : Mode::kProcesses;
  const bool host_buffers = placement == "shm_host_buffers";
  auto res = RunRanks(kRanks, mode, [host_buffers](RankContext& ctx) { return RunMatrix(ctx, host_buffers); },
                      Options(placement));
  EXPECT_TRUE(res.ok) << res.message;
}

INSTANTIATE_TEST_SUITE_P(Placements, MismatchMatrixTest,
                         ::testing::Values("shm", "shm_host_buffers", "tcp", "nodes", "threads", "threads_local"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
