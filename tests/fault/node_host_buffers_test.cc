// Buffers not from aclrtMalloc across hosts (HostcclCommAllowHostBuffers; 4 processes on 2 emulated
// hosts, HOSTCCL_NODE_ID, each operator's "node" plan forced). A node plan whose ranks copy through a
// host leader's mapped buffer cannot run on malloc'd memory: every rank of the call must fail at
// once (well before the execution timeout) with HCCL_E_NOT_SUPPORT naming aclrtMalloc and the
// HOSTCCL_ALGO plan that avoids it, and that plan must then run. The plans that need no mapping there (Scatter, AlltoAll: such blocks go over
// TCP; ReduceScatter: re-plans to "owner") must give every rank the right result.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fault/fault_util.h"

namespace {

using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 4;
constexpr uint64_t kCount = 4096;  // int32 elements per block

// One operator on malloc'd buffers: `send` holds kRanks blocks of kCount, `recv` as many.
struct NodeCall {
  const char* op;        // HOSTCCL_ALGO's operator name; its plan is "node" ("node_chain" for reduce)
  const char* fallback;  // the plan the error message suggests
  std::function<HcclResult(RankContext&, int32_t* send, int32_t* recv)> run;
};

RunOptions NodeOptions(const char* op, std::string plan = "") {
  RunOptions o = hostccl::faulttest::PlacementOptions("nodes", "hb", /*exec_ms=*/60000, /*connect_ms=*/20000,
                                                      /*run_s=*/60);
  if (plan.empty()) plan = std::string(op) == "reduce" ? "node_chain" : "node";
  o.env.push_back({"HOSTCCL_ALGO", std::string(op) + "=" + plan});
  return o;
}

std::vector<NodeCall> Unsupported() {
  static uint64_t counts[kRanks], displs[kRanks];
  for (int r = 0; r < kRanks; ++r) counts[r] = kCount, displs[r] = static_cast<uint64_t>(r) * kCount;
  return {
      {"reduce", "chain",
       [](RankContext& c, int32_t* s, int32_t* r) {
         return HcclReduce(s, r, kCount, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 0, c.comm, c.stream);
       }},
      {"allreduce", "rs_ag",
       [](RankContext& c, int32_t* s, int32_t* r) {
         return HcclAllReduce(s, r, kCount, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c.comm, c.stream);
       }},
      {"broadcast", "chain",
       [](RankContext& c, int32_t* s, int32_t*) { return HcclBroadcast(s, kCount, HCCL_DATA_TYPE_INT32, 0, c.comm, c.stream); }},
      {"allgather", "ring",
       [](RankContext& c, int32_t* s, int32_t* r) { return HcclAllGather(s, r, kCount, HCCL_DATA_TYPE_INT32, c.comm, c.stream); }},
      {"allgatherv", "ring",
       [](RankContext& c, int32_t* s, int32_t* r) {
         return HcclAllGatherV(s, kCount, r, counts, displs, HCCL_DATA_TYPE_INT32, c.comm, c.stream);
       }},
  };
}

class NodeHostBuffersUnsupported : public ::testing::TestWithParam<int> {};

TEST_P(NodeHostBuffersUnsupported, EveryRankFailsAtOnceNamingAclrtMallocAndAPlanThatRuns) {
  const NodeCall call = Unsupported()[static_cast<size_t>(GetParam())];
  auto body = [&call](RankContext& ctx) -> bool {
    if (!hostccl::test::AllowHostBuffers(ctx)) return false;
    std::vector<int32_t> send(kRanks * kCount, ctx.rank + 1), recv(kRanks * kCount, 0);
    const int64_t t0 = NowMs();
    const HcclResult enq = call.run(ctx, send.data(), recv.data());
    const aclError sync = aclrtSynchronizeStream(ctx.stream);
    const int64_t took = NowMs() - t0;
    const std::string msg = aclGetRecentErrMsg();
    if (enq != HCCL_SUCCESS) return ctx.Fail(hostccl::faulttest::Errno("enqueue", enq) + ": " + msg);
    if (sync == ACL_SUCCESS) return ctx.Fail(std::string(call.op) + " on malloc'd buffers across hosts succeeded");
    if (took > 10000) return ctx.Fail("the failure took " + std::to_string(took) + " ms: " + msg);
    HcclResult async = HCCL_SUCCESS;
    (void)HcclGetCommAsyncError(ctx.comm, &async);
    if (async != HCCL_E_NOT_SUPPORT)
      return ctx.Fail("HcclGetCommAsyncError reported " + std::to_string(async) + ", expected HCCL_E_NOT_SUPPORT (5): " + msg);
    if (msg.find("aclrtMalloc") == std::string::npos) return ctx.Fail("the message does not name aclrtMalloc: " + msg);
    const std::string hint = std::string("HOSTCCL_ALGO=") + call.op + "=" + call.fallback;
    if (msg.find(hint) == std::string::npos) return ctx.Fail("the message does not suggest " + hint + ": " + msg);
    return true;
  };
  auto res = RunRanks(kRanks, Mode::kProcesses, body, NodeOptions(call.op));
  EXPECT_TRUE(res.ok) << call.op << ": " << res.message;
  // The plan the message suggests runs on the same buffers.
  auto hinted = [&call](RankContext& ctx) -> bool {
    if (!hostccl::test::AllowHostBuffers(ctx)) return false;
    std::vector<int32_t> send(kRanks * kCount, ctx.rank + 1), recv(kRanks * kCount, 0);
    const HcclResult enq = call.run(ctx, send.data(), recv.data());
    if (enq != HCCL_SUCCESS || aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string(call.op) + "=" + call.fallback + " failed: " + aclGetRecentErrMsg());
    return true;
  };
  res = RunRanks(kRanks, Mode::kProcesses, hinted, NodeOptions(call.op, call.fallback));
  EXPECT_TRUE(res.ok) << call.op << "=" << call.fallback << ": " << res.message;
}

INSTANTIATE_TEST_SUITE_P(, NodeHostBuffersUnsupported, ::testing::Range(0, 5), [](const auto& info) {
  return std::string(Unsupported()[static_cast<size_t>(info.param)].op);
});

// Block b of rank r's sendBuf holds the value r * 100 + b (+ the element index for AlltoAll).
int32_t Value(int rank, int block, uint64_t i) { return rank * 100 + block + static_cast<int32_t>(i % 7); }

TEST(NodeHostBuffers, ScatterAlltoAllAndReduceScatterServeThemOverTcp) {
  for (const char* op : {"scatter", "alltoall", "reducescatter"}) {
    auto body = [op](RankContext& ctx) -> bool {
      if (!hostccl::test::AllowHostBuffers(ctx)) return false;
      std::vector<int32_t> send(kRanks * kCount), recv(kCount, -1);
      for (int b = 0; b < kRanks; ++b)
        for (uint64_t i = 0; i < kCount; ++i) send[static_cast<size_t>(b) * kCount + i] = Value(ctx.rank, b, i);
      const std::string o = op;
      HcclResult enq;
      if (o == "scatter") {
        enq = HcclScatter(send.data(), recv.data(), kCount, HCCL_DATA_TYPE_INT32, 1, ctx.comm, ctx.stream);
      } else if (o == "alltoall") {
        recv.assign(kRanks * kCount, -1);
        enq = HcclAlltoAll(send.data(), kCount, HCCL_DATA_TYPE_INT32, recv.data(), kCount, HCCL_DATA_TYPE_INT32,
                           ctx.comm, ctx.stream);
      } else {
        enq = HcclReduceScatter(send.data(), recv.data(), kCount, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, ctx.comm,
                                ctx.stream);
      }
      const aclError sync = aclrtSynchronizeStream(ctx.stream);
      if (enq != HCCL_SUCCESS || sync != ACL_SUCCESS)
        return ctx.Fail(o + " failed (enqueue " + std::to_string(enq) + ", synchronize " + std::to_string(sync) +
                        "): " + aclGetRecentErrMsg());
      for (uint64_t i = 0; i < recv.size(); ++i) {
        const int b = static_cast<int>(i / kCount);  // AlltoAll: the block from rank b
        const uint64_t e = i % kCount;
        int32_t want = 0;
        if (o == "scatter") want = Value(1, ctx.rank, e);
        else if (o == "alltoall") want = Value(b, ctx.rank, e);
        else for (int r = 0; r < kRanks; ++r) want += Value(r, ctx.rank, e);
        if (recv[i] != want)
          return ctx.Fail(o + ": element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", expected " +
                          std::to_string(want));
      }
      return true;
    };
    auto res = RunRanks(kRanks, Mode::kProcesses, body, NodeOptions(op));
    EXPECT_TRUE(res.ok) << op << ": " << res.message;
  }
}

}  // namespace
