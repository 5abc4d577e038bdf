// An HCCL AllReduce captured into a graph (aclmdlRI) once and replayed, with 4 ranks (one thread
// per device, as the official HCCL examples do): the aclgraph way of cutting the per-call host
// cost of a step that repeats with the same buffers.
//   1. allocate device buffers with aclrtMalloc (an input, the send and the recv buffer);
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. capture: between aclmdlRICaptureBegin and aclmdlRICaptureEnd nothing runs; the stream
//      records a device-to-device copy (input -> sendBuf) and the HcclAllReduce into a model;
//   4. replay: for each step write a new input, aclmdlRIExecuteAsync the model, synchronize the
//      stream and check the result; then aclmdlRIDestroy.
// Each replay is a new AllReduce on every rank. Synchronous copies are "unsafe" during a capture.
// The ranks are threads of one process, so each captures in THREAD_LOCAL mode: a GLOBAL capture
// would forbid the other ranks' synchronous copies while it lasts. For one copy inside its own
// capture the example switches its thread to RELAXED (aclmdlRICaptureThreadExchangeMode). Public
// headers only; build:
// g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lhccl -lascendcl
// -lpthread
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hccl/hccl_types.h"

#define CHECK(call)                                                               \
  do {                                                                            \
    int rc_ = static_cast<int>(call);                                             \
    if (rc_ != 0) {                                                               \
      std::printf("%s failed: %d (%s)\n", #call, rc_, aclGetRecentErrMsg());      \
      return false;                                                               \
    }                                                                             \
  } while (0)

namespace {

const int kRanks = 4;
const int kCount = 8;
const int kSteps = 3;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers.
  void* input = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  const size_t bytes = kCount * sizeof(float);
  CHECK(aclrtMalloc(&input, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: capture the copy and the all-reduce (nothing runs yet).
  aclmdlRI model = nullptr;
  CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
  CHECK(aclrtMemcpyAsync(send, bytes, input, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
  CHECK(HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  // A synchronous copy is not captured; THREAD_LOCAL mode forbids it in this thread, RELAXED
  // allows it (it runs now).
  std::vector<float> zeros(kCount, 0.0f);
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  CHECK(aclmdlRICaptureThreadExchangeMode(&mode));
  CHECK(aclrtMemcpy(recv, bytes, zeros.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK(aclmdlRICaptureThreadExchangeMode(&mode));  // back to the previous mode
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  CHECK(aclmdlRICaptureGetInfo(stream, &status, nullptr));
  if (status != ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE) *ok = false;
  CHECK(aclmdlRICaptureEnd(stream, &model));

  // Step 4: replay it, one step at a time, with new input (x_r[i] = 10 * r + i + 100 * step).
  std::vector<float> host(kCount);
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kCount; ++i) host[i] = 10.0f * rank + i + 100.0f * step;
    CHECK(aclrtMemcpy(input, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclmdlRIExecuteAsync(model, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d step %d recvBuf:", rank, step);
    for (int i = 0; i < kCount; ++i) {
      float expect = 10.0f * (0 + 1 + 2 + 3) + kRanks * (i + 100.0f * step);  // sum over r
      std::printf(" %g", host[i]);
      if (host[i] != expect) *ok = false;
    }
    std::printf("\n");
  }
  CHECK(aclmdlRIDestroy(model));
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtFree(input));
  CHECK(aclrtFree(send));
  CHECK(aclrtFree(recv));
  CHECK(aclrtResetDevice(rank));
  return true;
}

}  // namespace

int main() {
  if (aclInit(nullptr) != ACL_SUCCESS) return 1;
  HcclRootInfo root_info;
  if (HcclGetRootInfo(&root_info) != HCCL_SUCCESS) return 1;  // once, on the "root process"
  bool ok = true;
  bool rank_ok[kRanks];
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] { rank_ok[r] = RunRank(r, &root_info, &ok); });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) ok = ok && rank_ok[r];
  aclFinalize();
  std::printf("%s\n", ok ? "aclgraph example: OK" : "aclgraph example: FAILED");
  return ok ? 0 : 1;
}
