// Stream capture into models (aclmdlRI*; src/runtime/capture.h, docs/capture.md):
// - capture/replay: a D2D copy, an HcclAllReduce and an HcclAllGatherV (its V arrays changed
//   after the capture) captured once, nothing run during the capture, replayed three times with
//   new inputs, bit-exact, with ranks as threads and as processes; a plain call afterwards still
//   matches on every rank (each replay took its own sequence numbers);
// - errors: end without begin, the default stream, nested capture, synchronize during capture
//   (invalidates it), event work during capture, execute/destroy of a destroyed or still-capturing
//   model, unsafe calls by capture mode and thread, destroying a capturing stream;
// - a model executed on a capturing stream is recorded inside the outer model.
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/run_ranks.h"

namespace {

using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunRanks;

#define EXPECT_CODE(want, call)                                                                       \
  do {                                                                                                \
    auto got_ = (call);                                                                               \
    if (static_cast<int>(got_) != static_cast<int>(want))                                             \
      return c.Fail(std::string(#call) + " returned " + std::to_string(static_cast<int>(got_)) +     \
                    ", expected " #want " (" + aclGetRecentErrMsg() + ")");                          \
  } while (0)

constexpr size_t kCount = 4099;  // not a multiple of the rank count

bool ReadFloats(RankContext& c, const void* dev, size_t n, std::vector<float>* out) {
  out->assign(n, 0.0f);
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(out->data(), n * 4, dev, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
  return true;
}

bool CaptureReplayBody(RankContext& c) {
  const size_t bytes = kCount * 4;
  const int n = c.nranks;
  void *input = nullptr, *send = nullptr, *recv = nullptr, *gathered = nullptr;
  EXPECT_CODE(ACL_SUCCESS, aclrtMalloc(&input, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_CODE(ACL_SUCCESS, aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_CODE(ACL_SUCCESS, aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  // AllGatherV: rank r contributes 1 + r % 2 floats at displacement 2 r (gaps stay untouched).
  EXPECT_CODE(ACL_SUCCESS, aclrtMalloc(&gathered, 4 * 2 * n, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> guard(kCount, -7.0f);
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(recv, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(gathered, 8 * n, guard.data(), 8 * n, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<uint64_t> counts(n), displs(n);
  for (int r = 0; r < n; ++r) {
    counts[r] = static_cast<uint64_t>(1 + r % 2);
    displs[r] = static_cast<uint64_t>(2 * r);
  }

  aclmdlRI model = nullptr;
  EXPECT_CODE(ACL_SUCCESS, aclmdlRICaptureBegin(c.stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpyAsync(send, bytes, input, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, c.stream));
  EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream));
  EXPECT_CODE(HCCL_SUCCESS, HcclAllGatherV(send, counts[c.rank], gathered, counts.data(), displs.data(),
                                           HCCL_DATA_TYPE_FP32, c.comm, c.stream));
  EXPECT_CODE(ACL_SUCCESS, aclmdlRICaptureEnd(c.stream, &model));
  // The arrays were copied at the call: changing them now changes nothing.
  for (int r = 0; r < n; ++r) counts[r] = displs[r] = 0;
  // Nothing ran during the capture.
  std::vector<float> host;
  if (!ReadFloats(c, recv, kCount, &host)) return false;
  if (host[0] != -7.0f || host[kCount - 1] != -7.0f) return c.Fail("the captured AllReduce ran during the capture");

  const int sum_r = n * (n - 1) / 2;
  for (int step = 0; step < 3; ++step) {
    std::vector<float> in(kCount);
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(c.rank * 1000 + static_cast<int>(i % 512) + step * 7);
    EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(input, bytes, in.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    EXPECT_CODE(ACL_SUCCESS, aclmdlRIExecuteAsync(model, c.stream));
    EXPECT_CODE(ACL_SUCCESS, aclrtSynchronizeStream(c.stream));
    if (!ReadFloats(c, recv, kCount, &host)) return false;
    for (size_t i = 0; i < kCount; ++i) {
      float want = static_cast<float>(sum_r * 1000 + n * (static_cast<int>(i % 512) + step * 7));
      if (std::memcmp(&want, &host[i], 4) != 0)
        return c.Fail("step " + std::to_string(step) + " element " + std::to_string(i) + ": " +
                      std::to_string(host[i]) + " != " + std::to_string(want));
    }
    if (!ReadFloats(c, gathered, 2 * n, &host)) return false;
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < 2; ++k) {
        float want = k < 1 + r % 2 ? static_cast<float>(r * 1000 + k + step * 7) : -7.0f;
        if (host[2 * r + k] != want)
          return c.Fail("AllGatherV step " + std::to_string(step) + " slot " + std::to_string(2 * r + k) + ": " +
                        std::to_string(host[2 * r + k]) + " != " + std::to_string(want));
      }
  }
  EXPECT_CODE(ACL_SUCCESS, aclmdlRIDestroy(model));
  // A plain call after the replays: every rank's sequence numbers still agree.
  EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, c.comm, c.stream));
  EXPECT_CODE(ACL_SUCCESS, aclrtSynchronizeStream(c.stream));
  for (void* p : {input, send, recv, gathered}) EXPECT_CODE(ACL_SUCCESS, aclrtFree(p));
  return true;
}

struct Place {
  const char* name;
  Mode mode;
};
const Place kPlaces[] = {{"threads", Mode::kThreadsInitAll}, {"processes", Mode::kProcesses}};

class Capture : public ::testing::TestWithParam<Place> {};

TEST_P(Capture, AllReduceAndAllGatherVReplayedThreeTimes) {
  auto r = RunRanks(3, GetParam().mode, CaptureReplayBody);
  EXPECT_TRUE(r.ok) << r.message;
}

INSTANTIATE_TEST_SUITE_P(Places, Capture, ::testing::ValuesIn(kPlaces),
                         [](const auto& info) { return std::string(info.param.name); });

// Runtime-only cases on one thread (no communicator).
class CaptureRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)aclInit(nullptr);  // ACL_ERROR_REPEAT_INITIALIZE when another test ran first
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&buf_, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  void TearDown() override {
    if (stream_) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
    EXPECT_EQ(aclrtFree(buf_), ACL_SUCCESS);
  }
  unsigned char Byte(size_t at) {
    unsigned char b = 0;
    EXPECT_EQ(aclrtMemcpy(&b, 1, static_cast<unsigned char*>(buf_) + at, 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return b;
  }
  aclrtStream stream_ = nullptr;
  void* buf_ = nullptr;
};

TEST_F(CaptureRuntime, BeginEndErrors) {
  aclmdlRI model = nullptr;
  EXPECT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
  EXPECT_EQ(aclmdlRICaptureBegin(nullptr, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclmdlRICaptureBegin(stream_, static_cast<aclmdlRICaptureMode>(3)), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  EXPECT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED);  // nested
  aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  aclmdlRI capturing = nullptr;
  ASSERT_EQ(aclmdlRICaptureGetInfo(stream_, &st, &capturing), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  ASSERT_NE(capturing, nullptr);
  EXPECT_EQ(aclmdlRIExecuteAsync(capturing, stream_), ACL_ERROR_RT_MODEL_CAPTURED);
  EXPECT_EQ(aclmdlRIDestroy(capturing), ACL_ERROR_RT_MODEL_CAPTURED);
  ASSERT_EQ(aclrtMemsetAsync(buf_, 4096, 0x5a, 16, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_SUCCESS);
  EXPECT_EQ(model, capturing);
  ASSERT_EQ(aclmdlRICaptureGetInfo(stream_, &st, nullptr), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  EXPECT_EQ(Byte(0), 0) << "captured work ran";
  ASSERT_EQ(aclmdlRIExecuteAsync(model, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(Byte(0), 0x5a);
  EXPECT_EQ(Byte(16), 0);
  EXPECT_EQ(aclmdlRIDebugPrint(model), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
  EXPECT_EQ(aclmdlRIExecuteAsync(model, stream_), ACL_ERROR_INVALID_PARAM);  // after destroy
  EXPECT_EQ(aclmdlRIDestroy(model), ACL_ERROR_INVALID_PARAM);               // twice
  EXPECT_EQ(aclmdlRIExecuteAsync(nullptr, stream_), ACL_ERROR_INVALID_PARAM);
}

TEST_F(CaptureRuntime, SynchronizeDuringCaptureInvalidatesIt) {
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemsetAsync(buf_, 4096, 1, 16, stream_), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_ERROR_RT_STREAM_CAPTURED);
  aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  ASSERT_EQ(aclmdlRICaptureGetInfo(stream_, &st, nullptr), ACL_SUCCESS);
  EXPECT_EQ(st, ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
  aclmdlRI model = reinterpret_cast<aclmdlRI>(1);
  EXPECT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(model, nullptr);
  // The stream works normally again.
  ASSERT_EQ(aclrtMemsetAsync(buf_, 4096, 2, 16, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(Byte(0), 2);
}

TEST_F(CaptureRuntime, EventWorkDuringCaptureIsRefused) {
  aclrtEvent ev = nullptr;
  ASSERT_EQ(aclrtCreateEvent(&ev), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  EXPECT_EQ(aclrtRecordEvent(ev, stream_), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  aclmdlRI model = nullptr;
  EXPECT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(aclrtDestroyEvent(ev), ACL_SUCCESS);
}

TEST_F(CaptureRuntime, UnsafeCallsFollowTheThreadsMode) {
  char host[16] = {0};
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(buf_, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  EXPECT_EQ(aclrtMemset(buf_, 16, 0, 16), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  // Another thread (default mode GLOBAL) is also barred by a GLOBAL capture.
  int other = -1;
  std::thread([&] {
    (void)aclrtSetDevice(0);
    other = aclrtMemset(buf_, 16, 0, 16);
  }).join();
  EXPECT_EQ(other, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  ASSERT_EQ(aclmdlRICaptureThreadExchangeMode(&mode), ACL_SUCCESS);
  EXPECT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);  // the previous mode
  EXPECT_EQ(aclrtMemcpy(buf_, 16, host, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);  // runs now
  ASSERT_EQ(aclmdlRICaptureThreadExchangeMode(&mode), ACL_SUCCESS);
  EXPECT_EQ(mode, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
  mode = static_cast<aclmdlRICaptureMode>(7);
  EXPECT_EQ(aclmdlRICaptureThreadExchangeMode(&mode), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclmdlRICaptureThreadExchangeMode(nullptr), ACL_ERROR_INVALID_PARAM);
  aclmdlRI model = nullptr;
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemset(buf_, 16, 0, 16), ACL_SUCCESS);  // no capture: allowed again
  EXPECT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);

  // A THREAD_LOCAL capture bars only its own thread.
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemset(buf_, 16, 0, 16), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
  std::thread([&] {
    (void)aclrtSetDevice(0);
    other = aclrtMemset(buf_, 16, 0, 16);
  }).join();
  EXPECT_EQ(other, ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_SUCCESS);
  EXPECT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
}

TEST_F(CaptureRuntime, ModelInsideAModel) {
  aclmdlRI inner = nullptr, outer = nullptr;
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemsetAsync(buf_, 4096, 3, 8, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &inner), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRIExecuteAsync(inner, stream_), ACL_SUCCESS);  // recorded, not run
  ASSERT_EQ(aclrtMemsetAsync(static_cast<char*>(buf_) + 8, 4088, 4, 8, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &outer), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRIDestroy(inner), ACL_SUCCESS);  // the outer model keeps what it needs
  EXPECT_EQ(Byte(0), 0);
  ASSERT_EQ(aclmdlRIExecuteAsync(outer, stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(Byte(0), 3);
  EXPECT_EQ(Byte(8), 4);
  EXPECT_EQ(aclmdlRIDestroy(outer), ACL_SUCCESS);
}

TEST_F(CaptureRuntime, DestroyingACapturingStreamDropsTheCapture) {
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_SUCCESS);
  aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  aclmdlRI capturing = nullptr;
  ASSERT_EQ(aclmdlRICaptureGetInfo(stream_, &st, &capturing), ACL_SUCCESS);
  ASSERT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
  stream_ = nullptr;
  EXPECT_EQ(aclrtMemset(buf_, 16, 0, 16), ACL_SUCCESS);  // no capture is active any more
  aclrtStream other = nullptr;
  ASSERT_EQ(aclrtCreateStream(&other), ACL_SUCCESS);
  EXPECT_EQ(aclmdlRIExecuteAsync(capturing, other), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
}

}  // namespace
