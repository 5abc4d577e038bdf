// The four steps of an HCCL AlltoAll and AlltoAllV, with 4 ranks (one thread per device, as the
// official HCCL examples do).
//   1. allocate device buffers with aclrtMalloc;
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. HcclAlltoAll: rank r sends block j (2 floats, 100 r + 10 j + k) to rank j, and receives
//      block i from rank i; then HcclAlltoAllV: rank r sends r + 1 floats to every rank, so rank j
//      receives 1, 2, 3, 4 floats from ranks 0..3, packed (recvCounts {1,2,3,4}, rdispls {0,1,3,6});
//   4. synchronize the stream and read the results on every rank.
// recvBufs are filled with a guard value first, so a block that is not written shows it. sendBuf
// and recvBuf must be different buffers. Counts and displacements are in elements. Public headers
// only; build: g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lhccl
// -lascendcl -lpthread
#include <cstdint>
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
const int kBlock = 2;  // AlltoAll: floats per block
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: device buffers. AlltoAll: n blocks of kBlock floats each way. AlltoAllV: rank r sends
  // r + 1 floats to every rank (value 1000 r + j), and receives 1 + 2 + 3 + 4 = 10 floats.
  const size_t a2a_bytes = kRanks * kBlock * sizeof(float);
  const int v_send = kRanks * (rank + 1), v_recv = kRanks * (kRanks + 1) / 2;
  void *send = nullptr, *recv = nullptr, *vsend = nullptr, *vrecv = nullptr;
  CHECK(aclrtMalloc(&send, a2a_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&recv, a2a_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&vsend, v_send * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&vrecv, v_recv * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> host(kRanks * kBlock);
  for (int j = 0; j < kRanks; ++j)
    for (int k = 0; k < kBlock; ++k) host[j * kBlock + k] = 100.0f * rank + 10.0f * j + k;
  CHECK(aclrtMemcpy(send, a2a_bytes, host.data(), a2a_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> guard(kRanks * kBlock, kGuard);
  CHECK(aclrtMemcpy(recv, a2a_bytes, guard.data(), a2a_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> vhost(v_send);
  for (int i = 0; i < v_send; ++i) vhost[i] = 1000.0f * rank + i / (rank + 1);  // block j: 1000 r + j
  CHECK(aclrtMemcpy(vsend, v_send * sizeof(float), vhost.data(), v_send * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> vguard(v_recv, kGuard);
  CHECK(aclrtMemcpy(vrecv, v_recv * sizeof(float), vguard.data(), v_recv * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));
  uint64_t send_counts[kRanks], sdispls[kRanks], recv_counts[kRanks], rdispls[kRanks];
  uint64_t at = 0;
  for (int i = 0; i < kRanks; ++i) {
    send_counts[i] = rank + 1;
    sdispls[i] = i * (rank + 1);
    recv_counts[i] = i + 1;
    rdispls[i] = at;
    at += i + 1;
  }

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: all-to-all, then all-to-all-v (both enqueued on the stream; the arrays may be reused
  // as soon as the call returns).
  CHECK(HcclAlltoAll(send, kBlock, HCCL_DATA_TYPE_FP32, recv, kBlock, HCCL_DATA_TYPE_FP32, comm, stream));
  CHECK(HcclAlltoAllV(vsend, send_counts, sdispls, HCCL_DATA_TYPE_FP32, vrecv, recv_counts, rdispls,
                      HCCL_DATA_TYPE_FP32, comm, stream));

  // Step 4: wait, then read the results on every rank.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), a2a_bytes, recv, a2a_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  std::vector<float> vgot(v_recv);
  CHECK(aclrtMemcpy(vgot.data(), v_recv * sizeof(float), vrecv, v_recv * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d alltoall recvBuf:", rank);
    for (int i = 0; i < kRanks; ++i)
      for (int k = 0; k < kBlock; ++k) {
        const float expect = 100.0f * i + 10.0f * rank + k;  // block i = rank i's block for this rank
        std::printf(" %g", host[i * kBlock + k]);
        if (host[i * kBlock + k] != expect) *ok = false;
      }
    std::printf("\nrank %d alltoallv recvBuf:", rank);
    for (int i = 0; i < kRanks; ++i)
      for (uint64_t k = 0; k < recv_counts[i]; ++k) {
        const float expect = 1000.0f * i + rank;  // i + 1 copies of rank i's value for this rank
        std::printf(" %g", vgot[rdispls[i] + k]);
        if (vgot[rdispls[i] + k] != expect) *ok = false;
      }
    std::printf("\n");
  }
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtFree(send));
  CHECK(aclrtFree(recv));
  CHECK(aclrtFree(vsend));
  CHECK(aclrtFree(vrecv));
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
  std::printf("%s\n", ok ? "alltoall example: OK" : "alltoall example: FAILED");
  return ok ? 0 : 1;
}
