// An aclgraph client written the way CANN's HCCL aclgraph sample is: it includes only
// <hccl/hccl.h>, <hccl/hccl_types.h> and <mpi.h> (the aclmdlRI declarations must come through
// hccl.h), is compiled by ctest with `mpicxx -std=c++14 ... -lhccl -lacl -lmpi` (so libacl.so must
// exist) and run under mpirun. Rank 0 makes the root info, MPI_Bcast sends it, every rank joins
// with HcclCommInitRootInfoConfig (hcclDeterministic = 1); sendBuf holds the rank number; the
// AllReduce(sum) is captured once between aclmdlRICaptureBegin/End on a created stream and
// replayed four times; every rank checks recvBuf = n(n-1)/2 after each replay, and that nothing
// ran during the capture. Exit 0 = every rank passed.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <hccl/hccl.h>
#include <hccl/hccl_types.h>
#include <mpi.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    int rc_ = static_cast<int>(call);                                                    \
    if (rc_ != 0) {                                                                      \
      std::printf("rank %d: %s failed: %d (%s)\n", rank, #call, rc_, aclGetRecentErrMsg()); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static int Run(int rank, int size) {
  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(rank));
  HcclRootInfo root{};
  if (rank == 0) CHECK(HcclGetRootInfo(&root));
  MPI_Bcast(&root, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  config.hcclDeterministic = 1;
  HcclComm comm = nullptr;
  CHECK(HcclCommInitRootInfoConfig(static_cast<uint32_t>(size), &root, static_cast<uint32_t>(rank), &config, &comm));

  const uint64_t count = static_cast<uint64_t>(size);
  const size_t bytes = count * sizeof(float);
  void* send = nullptr;
  void* recv = nullptr;
  CHECK(aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
  CHECK(aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
  std::vector<float> host(count, static_cast<float>(rank));
  CHECK(aclrtMemcpy(send, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  std::vector<float> zero(count, 0.0f);
  CHECK(aclrtMemcpy(recv, bytes, zero.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));

  aclmdlRI model = nullptr;
  CHECK(aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  CHECK(HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  CHECK(aclmdlRICaptureEnd(stream, &model));
  CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  if (host[0] != 0.0f) {
    std::printf("rank %d: the captured AllReduce ran before it was replayed\n", rank);
    return 1;
  }
  const float want = static_cast<float>(size * (size - 1) / 2);
  for (int i = 0; i < 4; ++i) {
    CHECK(aclmdlRIExecuteAsync(model, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host.data(), bytes, recv, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint64_t k = 0; k < count; ++k)
      if (host[k] != want) {
        std::printf("rank %d: replay %d: recvBuf[%llu] = %g, want %g\n", rank, i, static_cast<unsigned long long>(k),
                    host[k], want);
        return 1;
      }
  }
  std::printf("rank %d: AllReduce(sum) replayed 4 times, recvBuf[0] = %g\n", rank, host[0]);
  CHECK(aclmdlRIDestroy(model));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtFree(send));
  CHECK(aclrtFree(recv));
  CHECK(HcclCommDestroy(comm));
  CHECK(aclrtResetDevice(rank));
  CHECK(aclFinalize());
  return 0;
}

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = Run(rank, size);
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) std::printf("%s\n", any ? "aclgraph client: FAILED" : "aclgraph client: OK");
  return any;
}
