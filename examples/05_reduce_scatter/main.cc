// The four steps of an HCCL ReduceScatter, with 4 ranks (one thread per device, as the official
// HCCL examples do): each rank's sendBuf holds 4 blocks of 2 floats (block j is meant for rank j),
// the blocks are summed across ranks, and rank r receives the sum of block r.
//   1. allocate device buffers with aclrtMalloc (sendBuf: ranks x recvCount elements);
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. HcclReduceScatter on each rank's stream;
//   4. synchronize the stream and read each rank's block of the result.
// recvBufs are filled with a guard value first, so a rank that is not written shows it. The call
// may also be made in place, with recvBuf = sendBuf + rank x recvCount elements. Public headers
// only; build: g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64
// -lhccl -lascendcl -lpthread
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
const int kRecvCount = 2;                   // elements each rank receives
const int kSendCount = kRanks * kRecvCount;  // elements each rank sends
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers, inputs x_r[i] = 10 * r + i (i < 8: block j is elements 2j, 2j+1).
  void* send = nullptr;
  void* recv = nullptr;
  const size_t send_bytes = kSendCount * sizeof(float), recv_bytes = kRecvCount * sizeof(float);
  CHECK(aclrtMalloc(&send, send_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, recv_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> host(kSendCount);
  for (int i = 0; i < kSendCount; ++i) host[i] = 10.0f * rank + i;
  CHECK(aclrtMemcpy(send, send_bytes, host.data(), send_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> guard(kRecvCount, kGuard);
  CHECK(aclrtMemcpy(recv, recv_bytes, guard.data(), recv_bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: reduce-scatter (enqueued on the stream): recvCount is what each rank receives.
  CHECK(HcclReduceScatter(send, recv, kRecvCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));

  // Step 4: wait, then read this rank's block of the sum.
  CHECK(aclrtSynchronizeStream(stream));
  std::vector<float> out(kRecvCount);
  CHECK(aclrtMemcpy(out.data(), recv_bytes, recv, recv_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d recvBuf:", rank);
    for (int k = 0; k < kRecvCount; ++k) {
      // sum over r' of (10 r' + 2 rank + k) = 60 + 4 (2 rank + k)
      const float expect = 10.0f * (0 + 1 + 2 + 3) + kRanks * (kRecvCount * rank + k);
      std::printf(" %g", out[k]);
      if (out[k] != expect) *ok = false;
    }
    std::printf("   (expected %g %g)\n", 60.0f + 4 * (2 * rank), 60.0f + 4 * (2 * rank + 1));
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
  std::printf("%s\n", ok ? "reduce_scatter example: OK" : "reduce_scatter example: FAILED");
  return ok ? 0 : 1;
}
