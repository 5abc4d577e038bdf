// The four steps of an HCCL Broadcast, with 4 ranks (one thread per device, as the official HCCL
// examples do): 8 floats from root 2 to every rank.
//   1. allocate one device buffer per rank with aclrtMalloc (Broadcast works in place: the root's
//      buffer is read, every other rank's is overwritten);
//   2. create the communicator: HcclGetRootInfo (once) + HcclCommInitRootInfo (every rank);
//   3. HcclBroadcast on each rank's stream;
//   4. synchronize the stream and read the buffer on every rank.
// Non-root buffers are filled with a guard value first, so a rank that is not written shows it.
// Public headers only; build: g++ -std=c++14 main.cc -I$ASCEND_HOME_PATH/include
// -L$ASCEND_HOME_PATH/lib64 -lhccl -lascendcl -lpthread
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
const uint32_t kRoot = 2;
const float kGuard = -12345.0f;
std::mutex g_print;

bool RunRank(int rank, const HcclRootInfo* root_info, bool* ok) {
  CHECK(aclrtSetDevice(rank));
  // Step 1: one device buffer; the root's holds x[i] = 100 + i, the others' the guard.
  void* buf = nullptr;
  const size_t bytes = kCount * sizeof(float);
  CHECK(aclrtMalloc(&buf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  std::vector<float> host(kCount, kGuard);
  if (rank == static_cast<int>(kRoot)) {
    for (int i = 0; i < kCount; ++i) host[i] = 100.0f + i;
  }
  CHECK(aclrtMemcpy(buf, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

  // Step 2: communicator.
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfo(kRanks, root_info, rank, &comm));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  // Step 3: broadcast (enqueued on the stream).
  CHECK(HcclBroadcast(buf, kCount, HCCL_DATA_TYPE_FP32, kRoot, comm, stream));

  // Step 4: wait, then read the buffer on every rank.
  CHECK(aclrtSynchronizeStream(stream));
  CHECK(aclrtMemcpy(host.data(), bytes, buf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  {
    std::lock_guard<std::mutex> lock(g_print);
    std::printf("rank %d%s buf:", rank, rank == static_cast<int>(kRoot) ? " (root)" : "");
    for (int i = 0; i < kCount; ++i) {
      std::printf(" %g", host[i]);
      if (host[i] != 100.0f + i) *ok = false;
    }
    std::printf("   (expected 100 101 ... 107)\n");
  }
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtFree(buf));
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
  std::printf("%s\n", ok ? "broadcast example: OK" : "broadcast example: FAILED");
  return ok ? 0 : 1;
}
