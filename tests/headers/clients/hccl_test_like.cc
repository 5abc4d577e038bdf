// Client-compile check that reproduces the syntax hccl_test and the HCCL examples use against the
// headers (hccl-api-facts.md 13.2): `= {0}` configs, Type::ENUMERATOR, positional braced structs
// fed from uint32_t/uint64_t variables, ACL_PROF_* ORed into a uint32_t, ignored results, client
// globals (s8..u64, KILO.., INT_MAX, namespace hccl, using namespace std::chrono). Compiled with
// -std=c++11/14/17 -Wall -Wextra -Werror, and linked (with all_symbols.cc) against libhccl.so.
// main() calls nothing unless given 1000+ arguments: running it only proves that every symbol
// resolves at load time (-Wl,-z,now).
#include <hccl/hccl_types.h>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

// The client defines these itself; our headers must not have defined them.
#if defined(KILO) || defined(MEGA) || defined(GIGA) || defined(INT_MAX) || defined(ACLCHECK) || \
    defined(HCCLCHECK) || defined(CONCAT)
#error "hostccl public headers define a macro that belongs to the client"
#endif
#define KILO 1024
#define MEGA (KILO * KILO)
#define GIGA (MEGA * KILO)
#define INT_MAX 2147483647
#define CONCAT(a, b) a##b
#define ACLCHECK(cmd)                  \
  do {                                 \
    aclError ret_ = (cmd);             \
    if (ret_ != ACL_SUCCESS) return 1; \
  } while (0)
#define HCCLCHECK(cmd)                  \
  do {                                  \
    HcclResult ret_ = (cmd);            \
    if (ret_ != HCCL_SUCCESS) return 1; \
  } while (0)

#include <chrono>
#include <cstring>
#include <iostream>
#include <utility>
#include <vector>

typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

namespace hccl {
class HcclTest {
 public:
  u64 Bytes() const { return static_cast<u64>(64) * MEGA; }
};
}  // namespace hccl
using namespace hccl;
using namespace std::chrono;

struct SymmetricBuffer {
  void* ptr{nullptr};
  aclrtDrvMemHandle handle{nullptr};
};

static int RunEverything(int argc) {
  HcclTest test;
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  aclrtEvent start = nullptr;
  aclrtEvent end = nullptr;
  HcclRootInfo root_info;
  uint32_t rank_size = 2;
  uint32_t rank = 0;
  uint32_t dev = 0;
  uint64_t count = test.Bytes() / sizeof(float);

  HcclDataType types[] = {HCCL_DATA_TYPE_INT8,    HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,
                          HCCL_DATA_TYPE_FP16,    HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_INT64,
                          HCCL_DATA_TYPE_UINT64,  HCCL_DATA_TYPE_UINT8,  HCCL_DATA_TYPE_UINT16,
                          HCCL_DATA_TYPE_UINT32,  HCCL_DATA_TYPE_FP64,   HCCL_DATA_TYPE_BFP16,
                          HCCL_DATA_TYPE_INT128,  HCCL_DATA_TYPE_HIF8,   HCCL_DATA_TYPE_FP8E4M3,
                          HCCL_DATA_TYPE_FP8E5M2, HCCL_DATA_TYPE_FP8E8M0};
  HcclReduceOp ops[] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};

  HcclCommConfig config = {0};
  HcclCommConfigInit(&config);
  config.hcclWorldRankID = rank;
  config.hcclJobID = (static_cast<uint64_t>(11) << 32) | 0x0100007fu;
  config.hcclOpExpansionMode = 6;
  config.hcclSymWinMaxMemSizePerRank = 16;
  config.hcclBufferSize = 1024;
  config.hcclDeterministic = 1;
  std::strcpy(config.hcclCommName, "comm_1");

  aclrtMemAttr attr = aclrtMemAttr::ACL_DDR_MEM_HUGE;
  if (argc > 1) attr = ACL_HBM_MEM_HUGE;
  aclrtPhysicalMemProp prop;
  prop.handleType = aclrtMemHandleType::ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = aclrtMemAllocationType::ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = attr;
  prop.location.id = dev;
  prop.location.type = aclrtMemLocationType::ACL_MEM_LOCATION_TYPE_DEVICE;
  prop.reserve = 0;
  prop = {ACL_MEM_HANDLE_TYPE_NONE,
          ACL_MEM_ALLOCATION_TYPE_PINNED,
          attr,
          {dev, ACL_MEM_LOCATION_TYPE_DEVICE},
          0};
  aclrtPhysicalMemProp prop2 = {aclrtMemHandleType::ACL_MEM_HANDLE_TYPE_NONE,
                                aclrtMemAllocationType::ACL_MEM_ALLOCATION_TYPE_PINNED,
                                ACL_HBM_MEM_HUGE,
                                {dev, ACL_MEM_LOCATION_TYPE_DEVICE},
                                0};

  uint32_t prof_types = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS |
                        ACL_PROF_AICPU | ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX |
                        ACL_PROF_RUNTIME_API;

  std::vector<std::pair<void*, aclrtDrvMemHandle> > physical;
  SymmetricBuffer sym;
  HcclCommSymWindow win;
  float* host = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  float ms = 0.0f;
  uint32_t dev_count = 0;
  uint32_t next = (rank + 1) % rank_size;
  uint32_t prev = (rank + rank_size - 1) % rank_size;
  HcclSendRecvItem items[2] = {{HCCL_SEND, send, count, HCCL_DATA_TYPE_FP32, next},
                               {HCCL_RECV, recv, count, HCCL_DATA_TYPE_FP32, prev}};
  u64 counts[2] = {count, count};
  u64 displs[2] = {0, count};

  auto t0 = steady_clock::now();
  if (argc < 1000) {
    auto elapsed = duration_cast<microseconds>(steady_clock::now() - t0);
    seconds s(1);
    milliseconds msec = s;
    std::cout << "skip run " << elapsed.count() << " " << msec.count() << " " << prof_types << " "
              << sizeof(types) + sizeof(ops) + sizeof(items) + sizeof(prop2) << std::endl;
    return 0;
  }

  // The calls hccl_test, the HCCL examples and the hcomm examples make (hccl-api-facts 13.2-m).
  const char* soc = aclrtGetSocName();
  printf("%s\n", soc == nullptr ? "" : soc);
  ACLCHECK(aclrtGetDeviceCount(&dev_count));
  ACLCHECK(aclInit(nullptr));
  ACLCHECK(aclrtSetDevice(static_cast<int32_t>(dev)));
  int32_t cur = 0;
  ACLCHECK(aclrtGetDevice(&cur));
  ACLCHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
  ACLCHECK(aclrtCreateEvent(&start));
  ACLCHECK(aclrtCreateEventWithFlag(&end, ACL_EVENT_SYNC));
  ACLCHECK(aclrtCreateStream(&stream));
  ACLCHECK(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
  HCCLCHECK(HcclGetRootInfo(&root_info));
  const char* ip = root_info.internal;
  printf("%s %u\n", ip, HcclGetCommConfigCapability());
  HCCLCHECK(HcclCommInitRootInfo(rank_size, &root_info, rank, &comm));
  HCCLCHECK(HcclCommInitRootInfoConfig(rank_size, &root_info, rank, &config, &comm));
  HCCLCHECK(HcclCommInitClusterInfoConfig("rank_table.json", rank, &config, &comm));
  ACLCHECK(aclrtMalloc(&send, count * sizeof(float), ACL_MEM_MALLOC_HUGE_ONLY));
  ACLCHECK(aclrtMalloc(&recv, count * sizeof(float), ACL_MEM_MALLOC_HUGE_ONLY));
  ACLCHECK(aclrtMallocHost(reinterpret_cast<void**>(&host), count * sizeof(float)));
  ACLCHECK(aclrtMemcpy(send, count * sizeof(float), host, count * sizeof(float),
                       ACL_MEMCPY_HOST_TO_DEVICE));
  ACLCHECK(aclrtMemcpy(host, count * sizeof(float), recv, count * sizeof(float),
                       ACL_MEMCPY_DEVICE_TO_HOST));
  ACLCHECK(aclrtMemcpy(host, 8, host, 8, ACL_MEMCPY_HOST_TO_HOST));
  ACLCHECK(aclrtRecordEvent(start, stream));
  HCCLCHECK(HcclReduce(send, recv, count, types[4], ops[0], 0, comm, stream));
  HCCLCHECK(HcclAllReduce(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
  HCCLCHECK(HcclBroadcast(send, count, HCCL_DATA_TYPE_FP32, 0, comm, stream));
  HCCLCHECK(HcclAllGather(send, recv, count, HCCL_DATA_TYPE_FP32, comm, stream));
  HCCLCHECK(
      HcclReduceScatter(send, recv, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm, stream));
  HCCLCHECK(HcclScatter(nullptr, recv, count, HCCL_DATA_TYPE_FP32, 0, comm, stream));
  HCCLCHECK(HcclAlltoAll(send, count, HCCL_DATA_TYPE_FP32, recv, count, HCCL_DATA_TYPE_FP32, comm,
                         stream));
  HCCLCHECK(HcclAlltoAllV(send, counts, displs, HCCL_DATA_TYPE_FP32, recv, counts, displs,
                          HCCL_DATA_TYPE_FP32, comm, stream));
  HCCLCHECK(
      HcclAlltoAllVC(send, counts, HCCL_DATA_TYPE_FP32, recv, HCCL_DATA_TYPE_FP32, comm, stream));
  HCCLCHECK(HcclAllGatherV(send, count, recv, counts, displs, HCCL_DATA_TYPE_FP32, comm, stream));
  HCCLCHECK(HcclReduceScatterV(send, static_cast<const void*>(counts),
                               static_cast<const void*>(displs), recv, count, HCCL_DATA_TYPE_FP32,
                               HCCL_REDUCE_SUM, comm, stream));
  HCCLCHECK(HcclSend(send, count, HCCL_DATA_TYPE_FP32, next, comm, stream));
  HCCLCHECK(HcclRecv(recv, count, HCCL_DATA_TYPE_FP32, prev, comm, stream));
  HCCLCHECK(HcclBatchSendRecv(items, 2, comm, stream));
  ACLCHECK(aclrtRecordEvent(end, stream));
  ACLCHECK(aclrtStreamWaitEvent(stream, end));
  ACLCHECK(aclrtSynchronizeStream(stream));
  ACLCHECK(aclrtEventElapsedTime(&ms, start, end));
  ACLCHECK(aclrtResetEvent(end, stream));

  // Zero-copy and symmetric-memory paths (-z / -m).
  size_t granularity = 0;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  ACLCHECK(
      aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &granularity));
  ACLCHECK(aclrtGetMemInfo(attr, &free_bytes, &total_bytes));
  ACLCHECK(aclrtReserveMemAddress(&sym.ptr, granularity, 0, nullptr, 1));
  ACLCHECK(aclrtMallocPhysical(&sym.handle, granularity, &prop, 0));
  ACLCHECK(aclrtMapMem(sym.ptr, granularity, 0, sym.handle, 0));
  physical.push_back(std::make_pair(sym.ptr, sym.handle));
  HCCLCHECK(HcclCommSetMemoryRange(comm, sym.ptr, granularity, 0, 0));
  HCCLCHECK(HcclCommActivateCommMemory(comm, sym.ptr, granularity, 0, sym.handle, 0));
  HCCLCHECK(HcclCommDeactivateCommMemory(comm, sym.ptr));
  HCCLCHECK(HcclCommUnsetMemoryRange(comm, sym.ptr));
  HCCLCHECK(HcclCommSymWinRegister(comm, sym.ptr, granularity, &win, 1));
  HCCLCHECK(HcclCommSymWinDeregister(win));
  ACLCHECK(aclrtUnmapMem(sym.ptr));

  // Profiling (HCCL_TEST_PROFILING=1).
  aclprofConfig* prof_config =
      aclprofCreateConfig(&dev, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr, prof_types);
  aclprofInit("/tmp/prof", 9);
  ACLCHECK(aclprofStart(prof_config));
  ACLCHECK(aclprofStop(prof_config));
  aclprofFinalize();

  // Results deliberately ignored, as the clients do (no warn_unused_result allowed).
  aclrtFreePhysical(sym.handle);
  aclrtReleaseMemAddress(sym.ptr);
  aclrtFree(send);
  aclrtFree(recv);
  aclrtFreeHost(host);
  HcclCommDestroy(comm);
  aclrtDestroyStream(stream);
  aclrtDestroyEvent(start);
  aclrtDestroyEvent(end);
  aclrtResetDevice(static_cast<int32_t>(dev));
  return aclFinalize();
}

int CheckAllSymbols();  // all_symbols.cc

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--symbols") == 0) return CheckAllSymbols();
  return RunEverything(argc);
}
