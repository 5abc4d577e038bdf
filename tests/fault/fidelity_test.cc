// NPU fidelity (docs/semantics.md §9, HOSTCCL_FIDELITY): by default an operator buffer that is not
// device memory gets HCCL_E_PARA naming aclrtMalloc and changes nothing, and a runtime call on a
// thread with no current device gets ACL_ERROR_RT_CONTEXT_NULL; HOSTCCL_FIDELITY=0,
// HostcclSetFidelity(0) and HostcclCommAllowHostBuffers relax it. Both modes are pinned here.
// Public API only; every test leaves HOSTCCL_FIDELITY unset and the override at -1.
#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/run_ranks.h"

namespace {

using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kAclRtContextNull = 107002;  // ACL_ERROR_RT_CONTEXT_NULL

std::string Recent() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

// Runs fn on a fresh thread, which has no current device.
template <typename F>
void OnFreshThread(F&& fn) {
  std::thread t(std::forward<F>(fn));
  t.join();
}

class FidelityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(getenv("HOSTCCL_FIDELITY"), nullptr) << "this test pins the default; run it without HOSTCCL_FIDELITY";
  }
  void TearDown() override {
    unsetenv("HOSTCCL_FIDELITY");
    HostcclSetFidelity(-1);
  }
};

TEST_F(FidelityTest, RuntimeCallsWithoutADeviceFailAsOnAnNpu) {
  OnFreshThread([] {
    void* p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), kAclRtContextNull);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(Recent().find("aclrtSetDevice"), std::string::npos) << Recent();
    EXPECT_NE(Recent().find("aclrtMalloc"), std::string::npos) << Recent();
    aclrtStream s = nullptr;
    EXPECT_EQ(aclrtCreateStream(&s), kAclRtContextNull);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), kAclRtContextNull);  // the default stream needs a device
    EXPECT_EQ(aclrtSynchronizeDevice(), kAclRtContextNull);
    // With a device the same calls work.
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(1), ACL_SUCCESS);
  });
}

TEST_F(FidelityTest, RelaxedRuntimeUsesDeviceZero) {
  auto relaxed = [] {
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    int32_t dev = -1;
    EXPECT_NE(aclrtGetDevice(&dev), ACL_SUCCESS);  // still no current device: only the default is implicit
  };
  setenv("HOSTCCL_FIDELITY", "0", 1);
  OnFreshThread(relaxed);
  unsetenv("HOSTCCL_FIDELITY");
  HostcclSetFidelity(0);  // the code path, whatever the variable says
  setenv("HOSTCCL_FIDELITY", "1", 1);
  OnFreshThread(relaxed);
  HostcclSetFidelity(-1);  // back to the variable (1): strict again
  OnFreshThread([] {
    void* p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), kAclRtContextNull);
  });
}

// One AllReduce per kind of buffer; returns the call's result and checks that a rejected call left
// the output untouched and the communicator usable.
enum class Buf { kDevice, kMalloc, kMallocHost, kStack };

bool AllReduceWith(RankContext& ctx, Buf kind, HcclResult want, bool allow = false) {
  constexpr uint64_t n = 16;
  std::vector<float> heap_send(n, 1.0f + ctx.rank), heap_recv(n, -7.0f);
  float stack_send[n], stack_recv[n];
  void *send = nullptr, *recv = nullptr;
  switch (kind) {
    case Buf::kDevice:
      if (aclrtMalloc(&send, n * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
          aclrtMalloc(&recv, n * 4, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        return ctx.Fail("aclrtMalloc");
      break;
    case Buf::kMallocHost:
      if (aclrtMallocHost(&send, n * 4) != ACL_SUCCESS || aclrtMallocHost(&recv, n * 4) != ACL_SUCCESS)
        return ctx.Fail("aclrtMallocHost");
      break;
    case Buf::kMalloc: send = heap_send.data(); recv = heap_recv.data(); break;
    case Buf::kStack: send = stack_send; recv = stack_recv; break;
  }
  for (uint64_t i = 0; i < n; ++i) {
    static_cast<float*>(send)[i] = 1.0f + ctx.rank;
    static_cast<float*>(recv)[i] = -7.0f;
  }
  if (allow && HostcclCommAllowHostBuffers(ctx.comm) != HCCL_SUCCESS) return ctx.Fail("HostcclCommAllowHostBuffers");
  HcclResult r = HcclAllReduce(send, recv, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
  bool ok = true;
  if (r != want) ok = ctx.Fail("HcclAllReduce returned " + std::to_string(r) + ": " + Recent());
  if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) ok = ctx.Fail("synchronize: " + Recent());
  const float expect = r == HCCL_SUCCESS ? ctx.nranks * (ctx.nranks + 1) / 2.0f : -7.0f;
  for (uint64_t i = 0; i < n && ok; ++i)
    if (static_cast<float*>(recv)[i] != expect)
      ok = ctx.Fail("recvBuf[" + std::to_string(i) + "] = " + std::to_string(static_cast<float*>(recv)[i]));
  if (r != HCCL_SUCCESS && Recent().find("aclrtMalloc") == std::string::npos)
    ok = ctx.Fail("the message does not name aclrtMalloc: " + Recent());
  if (kind == Buf::kDevice) {
    (void)aclrtFree(send);
    (void)aclrtFree(recv);
  } else if (kind == Buf::kMallocHost) {
    (void)aclrtFreeHost(send);
    (void)aclrtFreeHost(recv);
  }
  return ok;
}

TEST_F(FidelityTest, HostBuffersAreRejectedAndChangeNothing) {
  auto r = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& ctx) {
    return AllReduceWith(ctx, Buf::kMalloc, HCCL_E_PARA) && AllReduceWith(ctx, Buf::kStack, HCCL_E_PARA) &&
           AllReduceWith(ctx, Buf::kMallocHost, HCCL_E_PARA) &&
           // The communicator is unharmed: device buffers still work.
           AllReduceWith(ctx, Buf::kDevice, HCCL_SUCCESS);
  });
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_F(FidelityTest, OneHostSideIsEnoughToReject) {
  auto r = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& ctx) {
    void* dev = nullptr;
    if (aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return ctx.Fail("aclrtMalloc");
    std::vector<float> host(16, 3.0f);
    bool ok = true;
    if (HcclAllReduce(dev, host.data(), 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream) != HCCL_E_PARA ||
        Recent().find("recvBuf") == std::string::npos)
      ok = ctx.Fail("host recvBuf: " + Recent());
    if (HcclBroadcast(host.data(), 16, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream) != HCCL_E_PARA)
      ok = ctx.Fail("host Broadcast buf: " + Recent());
    HcclSendRecvItem items[2] = {{HCCL_SEND, dev, 16, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(1 - ctx.rank)},
                                 {HCCL_RECV, host.data(), 16, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(1 - ctx.rank)}};
    if (HcclBatchSendRecv(items, 2, ctx.comm, ctx.stream) != HCCL_E_PARA || Recent().find("item 1") == std::string::npos)
      ok = ctx.Fail("host batch item: " + Recent());
    if (host[0] != 3.0f) ok = ctx.Fail("a rejected call wrote the host buffer");
    (void)aclrtFree(dev);
    return ok;
  });
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_F(FidelityTest, RelaxedByTheVariable) {
  RunOptions opts;
  opts.env = {{"HOSTCCL_FIDELITY", "0"}};
  auto r = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& ctx) {
    return AllReduceWith(ctx, Buf::kMalloc, HCCL_SUCCESS) && AllReduceWith(ctx, Buf::kMallocHost, HCCL_SUCCESS);
  }, opts);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_F(FidelityTest, RelaxedPerCommunicatorWhateverTheVariableSays) {
  RunOptions opts;
  opts.env = {{"HOSTCCL_FIDELITY", "1"}};
  auto r = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& ctx) {
    return AllReduceWith(ctx, Buf::kMalloc, HCCL_E_PARA) &&
           AllReduceWith(ctx, Buf::kMalloc, HCCL_SUCCESS, /*allow=*/true) &&
           AllReduceWith(ctx, Buf::kStack, HCCL_SUCCESS);
  }, opts);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(HostcclCommAllowHostBuffers(nullptr), HCCL_E_PTR);
}

TEST_F(FidelityTest, RelaxedForTheProcessByHostcclSetFidelity) {
  HostcclSetFidelity(0);
  auto r = RunRanks(2, Mode::kThreadsInitAll,
                    [](RankContext& ctx) { return AllReduceWith(ctx, Buf::kMalloc, HCCL_SUCCESS); });
  EXPECT_TRUE(r.ok) << r.message;
  HostcclSetFidelity(-1);
}

}  // namespace
