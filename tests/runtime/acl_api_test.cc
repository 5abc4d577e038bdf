// Public AscendCL API tests through libhccl.so and the public headers: init/finalize codes,
// devices, stream ordering, events and timing, synchronize timeouts, bad inputs, profiler stubs.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"

namespace {

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
}

TEST(AclInit, RepeatAndFinalizeCodes) {
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);  // without aclInit
  EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);  // after finalize, as C03 does
  EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  EXPECT_EQ(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("/nonexistent/acl.json"), std::string::npos);
}

TEST(AclDevice, BeforeInitAndPerThread) {
  uint32_t n = 0;
  ASSERT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  EXPECT_EQ(n, 8u);
  ASSERT_NE(aclrtGetSocName(), nullptr);
  EXPECT_STREQ(aclrtGetSocName(), "HostCPU");
  int32_t dev = -1;
  EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_EQ(aclrtSetDevice(8), ACL_ERROR_RT_INVALID_DEVICEID);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([i, &ok] {
      int32_t d = -1;
      if (aclrtSetDevice(i) != ACL_SUCCESS) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (aclrtGetDevice(&d) == ACL_SUCCESS && d == i) ++ok;
      aclrtContext ctx = nullptr;
      if (aclrtGetCurrentContext(&ctx) == ACL_SUCCESS && ctx != nullptr) ++ok;
      if (aclrtResetDevice(i) == ACL_SUCCESS) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 12);
  EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST(AclDevice, Contexts) {
  aclrtContext ctx = nullptr, cur = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, 3), ACL_SUCCESS);
  int32_t dev = -1;
  ASSERT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
  EXPECT_EQ(dev, 3);
  ASSERT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, ctx);
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  ASSERT_EQ(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
  ASSERT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
  EXPECT_EQ(dev, 3);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtSetCurrentContext(ctx), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtResetDeviceForce(1), ACL_SUCCESS);
}

TEST(AclMemory, BadInputs) {
  void* p = nullptr;
  EXPECT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMalloc(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMallocHost(nullptr, 64), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMallocHost(&p, 0), ACL_ERROR_INVALID_PARAM);
  // More than the host has left: a clear error before any memory is touched. (200 TiB, so that
  // without the check the mapping itself fails rather than pre-faulting the machine into the
  // out-of-memory killer; the message tells the two apart.)
  size_t avail = 0, total = 0;
  ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &avail, &total), ACL_SUCCESS);
  ASSERT_LT(total, size_t{200} << 40);
  EXPECT_EQ(aclrtMalloc(&p, size_t{200} << 40, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("exceed the host memory available"), std::string::npos)
      << aclGetRecentErrMsg();
  int local = 0;
  EXPECT_EQ(aclrtFree(&local), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFreeHost(&local), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  char host[256] = {};
  EXPECT_EQ(aclrtMemcpy(p, 128, host, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("destMax"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(nullptr, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(p, 256, nullptr, 256, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(p, 256, host, 256, static_cast<aclrtMemcpyKind>(42)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemset(p, 16, 0, 32), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemset(nullptr, 16, 0, 8), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpyAsync(p, 128, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
  size_t free_b = 0, total_b = 0;
  ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b), ACL_SUCCESS);
  EXPECT_GT(total_b, 0u);
  EXPECT_LE(free_b, total_b);
  EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total_b), ACL_ERROR_INVALID_PARAM);
}

TEST(AclMemory, SyncCopyRoundTripIncludingStaticSource) {
  static const unsigned char kPattern[8] = {0x5a, 0x5a, 0x5a, 0x5a, 0xa5, 0xa5, 0xa5, 0xa5};
  void *dev = nullptr, *host = nullptr;
  ASSERT_EQ(aclrtMalloc(&dev, 8, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
  ASSERT_EQ(aclrtMallocHost(&host, 8), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(dev, 8, kPattern, 8, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(host, 8, dev, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(std::memcmp(host, kPattern, 8), 0);
  ASSERT_EQ(aclrtMemset(host, 8, 0x11, 8), ACL_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char*>(host)[7], 0x11);
  EXPECT_EQ(aclrtFreeHost(host), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

TEST(AclStream, ThousandsOfAsyncOpsRunInOrder) {
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  constexpr size_t kN = 4096;
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(aclrtMalloc(&a, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&b, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  auto* pa = static_cast<unsigned char*>(a);
  auto* pb = static_cast<unsigned char*>(b);
  // Each round: set a[i..] = v, copy a -> b, so b's final bytes record the last write order.
  for (int round = 0; round < 3000; ++round) {
    size_t off = static_cast<size_t>(round * 37) % (kN - 64);
    ASSERT_EQ(aclrtMemsetAsync(pa + off, 64, round & 0xff, 64, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(pb + off, 64, pa + off, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
  }
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  std::vector<unsigned char> want(kN, 0), got(kN);
  std::vector<bool> touched(kN, false);
  for (int round = 0; round < 3000; ++round) {
    size_t off = static_cast<size_t>(round * 37) % (kN - 64);
    for (size_t i = 0; i < 64; ++i) want[off + i] = round & 0xff, touched[off + i] = true;
  }
  ASSERT_EQ(aclrtMemcpy(got.data(), kN, b, kN, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (size_t i = 0; i < kN; ++i)
    if (touched[i]) ASSERT_EQ(got[i], want[i]) << i;
  // Null stream = default stream of the current device.
  ASSERT_EQ(aclrtMemsetAsync(a, kN, 9, kN, nullptr), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  EXPECT_EQ(pa[kN - 1], 9);
  ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
  EXPECT_EQ(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  // A destroyed handle is recognised everywhere.
  EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
  char x[4];
  EXPECT_EQ(aclrtMemcpyAsync(x, 4, x, 4, ACL_MEMCPY_HOST_TO_HOST, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
}

TEST(AclEvent, ElapsedTimeOrderedAndNonNegative) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  aclrtEvent e0 = nullptr, e1 = nullptr, e2 = nullptr;
  ASSERT_EQ(aclrtCreateEvent(&e0), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateEvent(&e1), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateEventWithFlag(&e2, ACL_EVENT_SYNC), ACL_SUCCESS);
  float ms = -1;
  EXPECT_EQ(aclrtEventElapsedTime(&ms, e0, e1), ACL_ERROR_INVALID_PARAM);  // never recorded
  EXPECT_EQ(aclrtSynchronizeEvent(e0), ACL_SUCCESS);                        // never recorded: complete
  std::vector<char> buf(1 << 20);
  ASSERT_EQ(aclrtRecordEvent(e0, s), ACL_SUCCESS);
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(aclrtMemsetAsync(buf.data(), buf.size(), i, buf.size(), s), ACL_SUCCESS);
  ASSERT_EQ(aclrtRecordEvent(e1, s), ACL_SUCCESS);
  ASSERT_EQ(aclrtRecordEvent(e2, s), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  float a = -1, b = -1, c = -1;
  ASSERT_EQ(aclrtEventElapsedTime(&a, e0, e1), ACL_SUCCESS);
  ASSERT_EQ(aclrtEventElapsedTime(&b, e0, e2), ACL_SUCCESS);
  ASSERT_EQ(aclrtEventElapsedTime(&c, e1, e2), ACL_SUCCESS);
  EXPECT_GT(a, 0.0f);  // 20 MiB of memset takes measurable time
  EXPECT_GE(b, a);
  EXPECT_GE(c, 0.0f);
  EXPECT_EQ(aclrtSynchronizeEvent(e1), ACL_SUCCESS);
  EXPECT_EQ(aclrtResetEvent(e1, s), ACL_SUCCESS);
  EXPECT_EQ(aclrtEventElapsedTime(&a, e0, e1), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtEventElapsedTime(nullptr, e0, e2), ACL_ERROR_INVALID_PARAM);
  for (auto e : {e0, e1, e2}) EXPECT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyEvent(e0), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtRecordEvent(e0, s), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// Two streams and an event, destroyed at the end of the test.
struct TwoStreamsAndEvent {
  aclrtStream first = nullptr, second = nullptr;
  aclrtEvent ev = nullptr;
  TwoStreamsAndEvent() {
    EXPECT_EQ(aclrtCreateStream(&first), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateStream(&second), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateEvent(&ev), ACL_SUCCESS);
  }
  ~TwoStreamsAndEvent() {
    EXPECT_EQ(aclrtSynchronizeStream(first), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(second), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyEvent(ev), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(first), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(second), ACL_SUCCESS);
  }
};

TEST(AclEvent, StreamWaitEventOrdersAcrossStreams) {
  TwoStreamsAndEvent t;
  aclrtStream producer = t.first, consumer = t.second;
  aclrtEvent ev = t.ev;
  std::vector<char> src(1 << 22, 0), dst(1 << 22, 0);
  ASSERT_EQ(aclrtMemsetAsync(src.data(), src.size(), 3, src.size(), producer), ACL_SUCCESS);
  ASSERT_EQ(aclrtRecordEvent(ev, producer), ACL_SUCCESS);
  ASSERT_EQ(aclrtStreamWaitEvent(consumer, ev), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpyAsync(dst.data(), dst.size(), src.data(), src.size(), ACL_MEMCPY_HOST_TO_HOST, consumer),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(consumer), ACL_SUCCESS);
  EXPECT_EQ(dst.back(), 3);
  EXPECT_EQ(dst.front(), 3);
}

// aclrtFree of memory that work already enqueued will write: the call succeeds at once and the
// pointer is gone from the registry, but the memory stays mapped until that work completed (it
// used to be unmapped at once: the queued memset then crashed the process).
TEST(AclMemory, FreeWithQueuedWorkUnmapsOnceTheWorkIsDone) {
  TwoStreamsAndEvent t;
  aclrtStream s = t.first, other = t.second;
  aclrtEvent ev = t.ev;
  constexpr size_t kBytes = 4 << 20;
  void* p = nullptr;
  ASSERT_EQ(aclrtMalloc(&p, kBytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtStreamWaitEvent(s, ev), ACL_SUCCESS);  // holds the memset back
  ASSERT_EQ(aclrtMemsetAsync(p, kBytes, 7, kBytes, s), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);  // freed for the caller already
  EXPECT_EQ(msync(p, kBytes, MS_ASYNC), 0) << "unmapped while a memset on it is queued";
  ASSERT_EQ(aclrtRecordEvent(ev, other), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);  // the memset ran; then the memory goes
  errno = 0;
  EXPECT_EQ(msync(p, kBytes, MS_ASYNC), -1);
  EXPECT_EQ(errno, ENOMEM) << "still mapped after the work completed";
}

TEST(AclEvent, SyncWithTimeoutOnStreamBlockedByUnrecordedEvent) {
  aclrtStream s = nullptr, other = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateStream(&other), ACL_SUCCESS);
  aclrtEvent ev = nullptr;
  ASSERT_EQ(aclrtCreateEvent(&ev), ACL_SUCCESS);
  int flag = 0;
  ASSERT_EQ(aclrtStreamWaitEvent(s, ev), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemsetAsync(&flag, sizeof(flag), 1, sizeof(flag), s), ACL_SUCCESS);
  uint64_t t0 = NowMs();
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 100), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  uint64_t took = NowMs() - t0;
  EXPECT_GE(took, 90u);
  EXPECT_LT(took, 5000u);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("100 ms"), std::string::npos);
  EXPECT_EQ(flag, 0);  // the later task did not overtake the wait
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_INVALID_PARAM);
  // Recording the event on another stream releases it.
  ASSERT_EQ(aclrtRecordEvent(ev, other), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 10000), ACL_SUCCESS);
  EXPECT_NE(flag, 0);
  EXPECT_EQ(aclrtDestroyEvent(ev), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
}

TEST(AclEvent, DestroyingABlockedStreamReturnsPromptly) {
  aclrtStream s = nullptr;
  ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  aclrtEvent ev = nullptr;
  ASSERT_EQ(aclrtCreateEvent(&ev), ACL_SUCCESS);
  ASSERT_EQ(aclrtStreamWaitEvent(s, ev), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
  uint64_t t0 = NowMs();
  EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  EXPECT_LT(NowMs() - t0, 5000u);
  EXPECT_EQ(aclrtDestroyEvent(ev), ACL_SUCCESS);
}

TEST(AclMisc, VersionRunModeSatModeFp16Prof) {
  int32_t ma = 0, mi = 0, pa = -1;
  EXPECT_EQ(aclrtGetVersion(&ma, &mi, &pa), ACL_SUCCESS);
  EXPECT_EQ(ma, 1);
  EXPECT_EQ(aclrtGetVersion(nullptr, &mi, &pa), ACL_ERROR_INVALID_PARAM);
  aclrtRunMode mode = ACL_DEVICE;
  EXPECT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
  EXPECT_EQ(mode, ACL_HOST);
  EXPECT_EQ(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN), ACL_SUCCESS);
  // A small conversion table (the exhaustive check is in runtime_internal_test).
  struct { float f; aclFloat16 h; } table[] = {
      {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-1.5f, 0xbe00}, {65504.0f, 0x7bff},
      {1e6f, 0x7c00}, {6.1035156e-5f, 0x0400}, {5.9604645e-8f, 0x0001}, {2.9802322e-8f, 0x0000},
      {1.0009765625f, 0x3c01}, {1.00048828125f, 0x3c00} /* tie -> even */, {1.00146484375f, 0x3c02}};
  for (auto& row : table) {
    EXPECT_EQ(aclFloatToFloat16(row.f), row.h) << row.f;
    if (row.h != 0x7c00 && row.f != 2.9802322e-8f && row.f != 1.00048828125f && row.f != 1.00146484375f)
      EXPECT_EQ(aclFloat16ToFloat(row.h), row.f);
  }
  EXPECT_TRUE(aclFloat16ToFloat(0x7e00) != aclFloat16ToFloat(0x7e00));  // NaN
  EXPECT_EQ(aclprofInit("/tmp", 4), ACL_SUCCESS);
  uint32_t devs[1] = {0};
  aclprofConfig* cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr, 0x1AF);
  ASSERT_NE(cfg, nullptr);
  EXPECT_EQ(aclprofStart(cfg), ACL_SUCCESS);
  EXPECT_EQ(aclprofStop(cfg), ACL_SUCCESS);
  EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
  EXPECT_EQ(aclprofFinalize(), ACL_SUCCESS);
}

TEST(AclVmm, ReserveMapThroughPublicApi) {
  aclrtPhysicalMemProp prop = {ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_ALLOCATION_TYPE_PINNED, ACL_HBM_MEM_HUGE,
                               {0u, ACL_MEM_LOCATION_TYPE_DEVICE}, 0};
  size_t gran = 0;
  ASSERT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &gran), ACL_SUCCESS);
  void* va = nullptr;
  ASSERT_EQ(aclrtReserveMemAddress(&va, gran, 0, nullptr, 1), ACL_SUCCESS);
  aclrtDrvMemHandle h = nullptr;
  ASSERT_EQ(aclrtMallocPhysical(&h, gran, &prop, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtMapMem(va, gran, 0, h, 0), ACL_SUCCESS);
  float vals[4] = {1, 2, 3, 4};
  ASSERT_EQ(aclrtMemcpy(va, gran, vals, sizeof(vals), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(static_cast<float*>(va)[3], 4.0f);
  EXPECT_EQ(aclrtUnmapMem(va), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreePhysical(h), ACL_SUCCESS);
  EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

}  // namespace
