// End-to-end probe for HostcclCommInitFromEnv (public headers only): every rank creates the
// communicator from the launcher's environment, checks its rank and size, and destroys it.
// Usage: fromenv_probe <expected world size>. Exit 0 = this rank is fine.
#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  uint32_t expected = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 0;
  uint32_t env_rank = 0, env_size = 0;
  if (HostcclGetEnvRank(&env_rank, &env_size) != HCCL_SUCCESS) {
    std::fprintf(stderr, "HostcclGetEnvRank failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  HcclComm comm = nullptr;
  HcclResult r = HostcclCommInitFromEnv(&comm);
  if (r != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %u: HostcclCommInitFromEnv -> %d\n", env_rank, static_cast<int>(r));
    return 1;
  }
  uint32_t rank = 0, size = 0;
  if (HcclGetRankId(comm, &rank) != HCCL_SUCCESS || HcclGetRankSize(comm, &size) != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %u: HcclGetRankId/HcclGetRankSize failed\n", env_rank);
    return 1;
  }
  bool ok = rank == env_rank && size == env_size && (expected == 0 || size == expected);
  char name[128] = {};
  if (HcclGetCommName(comm, name) != HCCL_SUCCESS || name[0] == '\0') ok = false;
  aclrtStream stream = nullptr;
  if (aclrtCreateStream(&stream) != ACL_SUCCESS || HcclBarrier(comm, stream) != HCCL_SUCCESS ||
      aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
    std::fprintf(stderr, "rank %u: HcclBarrier failed: %s\n", rank, aclGetRecentErrMsg());
    ok = false;
  }
  if (stream) aclrtDestroyStream(stream);
  std::printf("fromenv rank %u of %u %s\n", rank, size, ok ? "ok" : "MISMATCH");
  if (HcclCommDestroy(comm) != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %u: HcclCommDestroy failed\n", rank);
    return 1;
  }
  return ok ? 0 : 1;
}
