// Link/load check for every function the public headers declare. Strongly declared functions fail
// the link if libhccl.so lacks them; weakly declared ones (HCOMM_WEAK_SYMBOL, as in HCCL) would
// silently resolve to null, so CheckAllSymbols() lists every null address and returns non-zero.
#include <cstdio>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

namespace {

typedef void (*AnyFunction)();

struct Entry {
  const char* name;
  AnyFunction address;
};

#define HOSTCCL_ENTRY(fn) \
  { #fn, reinterpret_cast < AnyFunction>(&fn) }

const Entry kEntries[] = {
    // hccl.h: operators.
    HOSTCCL_ENTRY(HcclAllReduce),
    HOSTCCL_ENTRY(HcclBroadcast),
    HOSTCCL_ENTRY(HcclReduceScatter),
    HOSTCCL_ENTRY(HcclReduceScatterV),
    HOSTCCL_ENTRY(HcclScatter),
    HOSTCCL_ENTRY(HcclAllGather),
    HOSTCCL_ENTRY(HcclAllGatherV),
    HOSTCCL_ENTRY(HcclSend),
    HOSTCCL_ENTRY(HcclRecv),
    HOSTCCL_ENTRY(HcclAlltoAllVC),
    HOSTCCL_ENTRY(HcclAlltoAllV),
    HOSTCCL_ENTRY(HcclAlltoAll),
    HOSTCCL_ENTRY(HcclReduce),
    HOSTCCL_ENTRY(HcclBatchSendRecv),
    // hccl_comm.h: communicator management.
    HOSTCCL_ENTRY(HcclCommInitClusterInfo),
    HOSTCCL_ENTRY(HcclCommInitClusterInfoConfig),
    HOSTCCL_ENTRY(HcclCreateSubCommConfig),
    HOSTCCL_ENTRY(HcclGetRootInfo),
    HOSTCCL_ENTRY(HcclCommInitRootInfo),
    HOSTCCL_ENTRY(HcclCommInitRootInfoConfig),
    HOSTCCL_ENTRY(HcclCommInitAll),
    HOSTCCL_ENTRY(HcclSetConfig),
    HOSTCCL_ENTRY(HcclGetConfig),
    HOSTCCL_ENTRY(HcclGetCommName),
    HOSTCCL_ENTRY(HcclCommGetHandleWithName),
    HOSTCCL_ENTRY(HcclGetRankSize),
    HOSTCCL_ENTRY(HcclGetRankId),
    HOSTCCL_ENTRY(HcclGetCommAsyncError),
    HOSTCCL_ENTRY(HcclGetErrorString),
    HOSTCCL_ENTRY(HcclGetCommConfigCapability),
    HOSTCCL_ENTRY(HcclBarrier),
    HOSTCCL_ENTRY(HcclCommDestroy),
    HOSTCCL_ENTRY(HcclCommSuspend),
    HOSTCCL_ENTRY(HcclCommRegCommStateCallback),
    HOSTCCL_ENTRY(HcclCommResume),
    HOSTCCL_ENTRY(HcclCommGetStatus),
    HOSTCCL_ENTRY(HcclCommSetMemoryRange),
    HOSTCCL_ENTRY(HcclCommUnsetMemoryRange),
    HOSTCCL_ENTRY(HcclCommActivateCommMemory),
    HOSTCCL_ENTRY(HcclCommDeactivateCommMemory),
    HOSTCCL_ENTRY(HcclCommWorkingDevNicSet),
    HOSTCCL_ENTRY(HcclGroupStart),
    HOSTCCL_ENTRY(HcclGroupEnd),
    HOSTCCL_ENTRY(HcclGroupStatusGet),
    HOSTCCL_ENTRY(HcclCommSymWinRegister),
    HOSTCCL_ENTRY(HcclCommSymWinDeregister),
    HOSTCCL_ENTRY(HcclCommSymWinGet),
    HOSTCCL_ENTRY(HcclConfigGetInfo),
    // acl_base_rt.h / acl_rt.h: runtime.
    HOSTCCL_ENTRY(aclFloat16ToFloat),
    HOSTCCL_ENTRY(aclFloatToFloat16),
    HOSTCCL_ENTRY(aclrtGetSocName),
    HOSTCCL_ENTRY(aclInit),
    HOSTCCL_ENTRY(aclFinalize),
    HOSTCCL_ENTRY(aclrtGetVersion),
    HOSTCCL_ENTRY(aclGetRecentErrMsg),
    HOSTCCL_ENTRY(aclrtSetDevice),
    HOSTCCL_ENTRY(aclrtResetDevice),
    HOSTCCL_ENTRY(aclrtResetDeviceForce),
    HOSTCCL_ENTRY(aclrtGetDevice),
    HOSTCCL_ENTRY(aclrtGetDeviceCount),
    HOSTCCL_ENTRY(aclrtSynchronizeDevice),
    HOSTCCL_ENTRY(aclrtGetRunMode),
    HOSTCCL_ENTRY(aclrtSetDeviceSatMode),
    HOSTCCL_ENTRY(aclrtCreateContext),
    HOSTCCL_ENTRY(aclrtDestroyContext),
    HOSTCCL_ENTRY(aclrtSetCurrentContext),
    HOSTCCL_ENTRY(aclrtGetCurrentContext),
    HOSTCCL_ENTRY(aclrtMalloc),
    HOSTCCL_ENTRY(aclrtFree),
    HOSTCCL_ENTRY(aclrtMallocHost),
    HOSTCCL_ENTRY(aclrtFreeHost),
    HOSTCCL_ENTRY(aclrtMemcpy),
    HOSTCCL_ENTRY(aclrtMemcpyAsync),
    HOSTCCL_ENTRY(aclrtMemset),
    HOSTCCL_ENTRY(aclrtMemsetAsync),
    HOSTCCL_ENTRY(aclrtGetMemInfo),
    HOSTCCL_ENTRY(aclrtCreateStream),
    HOSTCCL_ENTRY(aclrtCreateStreamWithConfig),
    HOSTCCL_ENTRY(aclrtDestroyStream),
    HOSTCCL_ENTRY(aclrtSynchronizeStream),
    HOSTCCL_ENTRY(aclrtSynchronizeStreamWithTimeout),
    HOSTCCL_ENTRY(aclrtSetStreamFailureMode),
    HOSTCCL_ENTRY(aclrtStreamWaitEvent),
    HOSTCCL_ENTRY(aclrtCreateEvent),
    HOSTCCL_ENTRY(aclrtCreateEventWithFlag),
    HOSTCCL_ENTRY(aclrtDestroyEvent),
    HOSTCCL_ENTRY(aclrtRecordEvent),
    HOSTCCL_ENTRY(aclrtResetEvent),
    HOSTCCL_ENTRY(aclrtSynchronizeEvent),
    HOSTCCL_ENTRY(aclrtEventElapsedTime),
    HOSTCCL_ENTRY(aclrtReserveMemAddress),
    HOSTCCL_ENTRY(aclrtReleaseMemAddress),
    HOSTCCL_ENTRY(aclrtMallocPhysical),
    HOSTCCL_ENTRY(aclrtFreePhysical),
    HOSTCCL_ENTRY(aclrtMapMem),
    HOSTCCL_ENTRY(aclrtUnmapMem),
    HOSTCCL_ENTRY(aclrtMemGetAllocationGranularity),
    // acl_rt.h: stream capture into models.
    HOSTCCL_ENTRY(aclmdlRICaptureBegin),
    HOSTCCL_ENTRY(aclmdlRICaptureGetInfo),
    HOSTCCL_ENTRY(aclmdlRICaptureEnd),
    HOSTCCL_ENTRY(aclmdlRICaptureThreadExchangeMode),
    HOSTCCL_ENTRY(aclmdlRIExecuteAsync),
    HOSTCCL_ENTRY(aclmdlRIDestroy),
    HOSTCCL_ENTRY(aclmdlRIDebugPrint),
    // acl_prof.h: profiler.
    HOSTCCL_ENTRY(aclprofInit),
    HOSTCCL_ENTRY(aclprofFinalize),
    HOSTCCL_ENTRY(aclprofCreateConfig),
    HOSTCCL_ENTRY(aclprofDestroyConfig),
    HOSTCCL_ENTRY(aclprofStart),
    HOSTCCL_ENTRY(aclprofStop),
};

}  // namespace

int CheckAllSymbols() {
  int missing = 0;
  for (const Entry& entry : kEntries) {
    if (entry.address == nullptr) {
      std::fprintf(stderr, "missing symbol: %s (weakly declared, not exported by libhccl.so)\n",
                   entry.name);
      ++missing;
    }
  }
  std::printf("%d of %zu declared functions resolved\n",
              static_cast<int>(sizeof(kEntries) / sizeof(kEntries[0])) - missing,
              sizeof(kEntries) / sizeof(kEntries[0]));
  return missing == 0 ? 0 : 1;
}
