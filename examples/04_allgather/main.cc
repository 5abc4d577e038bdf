// The four steps of an HCCL AllGather, with 4 ranks (one thread per device, as the official HCCL
// examples do): each rank contributes 4 floats with rank-dependent values, and every rank gets all
// 16, block r holding rank r's 4.
//   1. allocate device buffers with aclrtMalloc (recvBuf holds rankSize x sendCount elements);
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. HcclAllGather on each rank's stream;
//   4. synchronize the stream and read the result on every rank.
// recvBufs are filled with a guard value first, so a block that is not written shows it. The call
// may also be made in place: sendBuf = recvBuf + rank x sendCount (the rank's input already in its
// block). Public headers only; build:
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
const int kSendCount = 4;
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers, inputs x_r[i] = 10 * r + i.
  void* send = nullptr;
  void* recv = nullptr;
  const size_t send_bytes = kSendCount * sizeof(float), recv_bytes = kRanks * send_bytes;
  CHECK(aclrtMalloc(&send, send_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, recv_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> input(kSendCount);
  for (int i = 0; i < kSendCount; ++i) input[i] = 10.0f * rank + i;
  CHECK(aclrtMemcpy(send, send_bytes, input.data(), send_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> host(kRanks * kSendCount, kGuard);
  CHECK(aclrtMemcpy(recv, recv_bytes, host.data(), recv_bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: all-gather (enqueued on the stream); the count is the per-rank sendCount.
  CHECK(HcclAllGather(send, recv, kSendCount, HCCL_DATA_TYPE_FP32, comm, stream));

  // Step 4: wait, then read the result on every rank.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), recv_bytes, recv, recv_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d recvBuf:", rank);
    for (int k = 0; k < kRanks * kSendCount; ++k) {
      const float expect = 10.0f * (k / kSendCount) + k % kSendCount;  // block r = rank r's input
      std::printf(" %g", host[k]);
      if (host[k] != expect) *ok = false;
    }
    std::printf("   (expected 0 1 2 3 10 11 12 13 20 ... 33)\n");
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
  std::printf("%s\n", ok ? "allgather example: OK" : "allgather example: FAILED");
  return ok ? 0 : 1;
}
