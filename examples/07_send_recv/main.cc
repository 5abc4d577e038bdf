// Point-to-point in four steps, with 4 ranks (one thread per device, as the official HCCL
// examples do):
//   1. allocate device buffers with aclrtMalloc;
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. even rank r sends 8 floats to r + 1 (HcclSend), odd rank r receives them from r - 1
//      (HcclRecv); then a ring exchange in one HcclBatchSendRecv: every rank sends to r + 1 and
//      receives from r - 1 (a send and a receive in one call cannot deadlock, whatever the order);
//   4. synchronize the stream and check what arrived.
// Send/Recv pairs are matched per ordered pair of ranks in issue order (no tags), and a Send
// completes only once its Recv is posted: two ranks that both Send first would wait for each
// other (reported at HCCL_EXEC_TIMEOUT). recvBufs start as a guard value. Public headers only;
// build: g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lhccl
// -lascendcl -lpthread
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

const int kRanks = 4;  // even: every even rank has an odd neighbour
const int kCount = 8;
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers; rank r's data is 100 r + i.
  void* send = nullptr;
  void* recv = nullptr;
  const size_t bytes = kCount * sizeof(float);
  CHECK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> host(kCount);
  for (int i = 0; i < kCount; ++i) host[i] = 100.0f * rank + i;
  CHECK(aclrtMemcpy(send, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> guard(kCount, kGuard);
  CHECK(aclrtMemcpy(recv, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3a: even -> odd neighbour.
  if (rank % 2 == 0) {
    CHECK(HcclSend(send, kCount, HCCL_DATA_TYPE_FP32, rank + 1, comm, stream));
  } else {
    CHECK(HcclRecv(recv, kCount, HCCL_DATA_TYPE_FP32, rank - 1, comm, stream));
  }
  // Step 4a: wait; the odd ranks hold their neighbour's data.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  bool mine = true;
  for (int i = 0; i < kCount; ++i)
    mine = mine && host[i] == (rank % 2 ? 100.0f * (rank - 1) + i : kGuard);

  // Step 3b: ring exchange in one call.
  const uint32_t next = (rank + 1) % kRanks, prev = (rank + kRanks - 1) % kRanks;
  HcclSendRecvItem items[2] = {{HCCL_SEND, send, kCount, HCCL_DATA_TYPE_FP32, next},
                               {HCCL_RECV, recv, kCount, HCCL_DATA_TYPE_FP32, prev}};
  CHECK(HcclBatchSendRecv(items, 2, comm, stream));
  // Step 4b: wait; every rank holds its left neighbour's data.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  for (int i = 0; i < kCount; ++i) mine = mine && host[i] == 100.0f * prev + i;
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d: %s; after the ring exchange recvBuf = %g %g ... (from rank %u)\n", rank,
                rank % 2 ? "received its even neighbour's 8 floats" : "sent 8 floats to its odd neighbour",
                host[0], host[1], prev);
    if (!mine) *ok = false;
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
  std::printf("%s\n", ok ? "send_recv example: OK" : "send_recv example: FAILED");
  return ok ? 0 : 1;
}
