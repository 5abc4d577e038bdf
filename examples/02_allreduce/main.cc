// The four steps of an HCCL AllReduce, with 4 ranks (one thread per device, as the official HCCL
// examples do): 8 floats per rank with rank-dependent values, sum, every rank gets the result.
//   1. allocate device buffers with aclrtMalloc;
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. HcclAllReduce on each rank's stream;
//   4. synchronize the stream and read the result on every rank.
// recvBufs are filled with a guard value first, so a rank that is not written shows it. The call
// may also be made in place (sendBuf == recvBuf). Public headers only; build:
// g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lhccl -lascendcl
// -lpthread
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

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
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers, inputs x_r[i] = 10 * r + i.
  void* send = nullptr;
  void* recv = nullptr;
  const size_t bytes = kCount * sizeof(float);
  CHECK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> host(kCount);
  for (int i = 0; i < kCount; ++i) host[i] = 10.0f * rank + i;
  CHECK(aclrtMemcpy(send, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> guard(kCount, kGuard);
  CHECK(aclrtMemcpy(recv, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: all-reduce (enqueued on the stream).
  CHECK(HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));

  // Step 4: wait, then read the result on every rank.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d recvBuf:", rank);
    for (int i = 0; i < kCount; ++i) {
      float expect = 10.0f * (0 + 1 + 2 + 3) + kRanks * i;  // sum over r of (10 r + i)
      std::printf(" %g", host[i]);
      if (host[i] != expect) *ok = false;
    }
    std::printf("   (expected 60 64 68 ... 88)\n");
  }
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtDestroyStream(stream));
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
  std::printf("%s\n", ok ? "allreduce example: OK" : "allreduce example: FAILED");
  return ok ? 0 : 1;
}
