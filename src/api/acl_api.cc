// AscendCL entry points: initialisation, devices, contexts, SoC, versions, fp16, recent error.
// Thin extern "C" wrappers over src/runtime (the logic and the chosen codes live there; see
// docs/runtime.md). Memory calls are in acl_mem_api.cc, streams/events in acl_stream_api.cc,
// the profiler no-ops in acl_prof_api.cc.
#include "acl/acl.h"
#include "api/enum_bits.h"
#include "api/export.h"
#include "runtime/capture.h"
#include "runtime/acl_codes.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/fp16.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"

namespace rt = hostccl::rt;

// The runtime's codes are the public ones.
static_assert(rt::kAclInvalidParam == ACL_ERROR_INVALID_PARAM);
static_assert(rt::kAclRepeatInitialize == ACL_ERROR_REPEAT_INITIALIZE);
static_assert(rt::kAclInvalidFile == ACL_ERROR_INVALID_FILE);
static_assert(rt::kAclRepeatFinalize == ACL_ERROR_REPEAT_FINALIZE);
static_assert(rt::kAclApiNotSupport == ACL_ERROR_API_NOT_SUPPORT);
static_assert(rt::kAclRtInvalidDeviceId == ACL_ERROR_RT_INVALID_DEVICEID);
static_assert(rt::kAclRtContextNull == ACL_ERROR_RT_CONTEXT_NULL);
static_assert(rt::kAclRtTaskTimeout == ACL_ERROR_RT_TASK_TIMEOUT);
static_assert(rt::kAclRtMemoryAllocation == ACL_ERROR_RT_MEMORY_ALLOCATION);
static_assert(rt::kAclRtInternalError == ACL_ERROR_RT_INTERNAL_ERROR);
static_assert(rt::kAclRtStreamSyncTimeout == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
static_assert(rt::kAclRtEventSyncTimeout == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);

HOSTCCL_API aclError aclInit(const char* configPath) { return rt::AclInit(configPath); }
HOSTCCL_API aclError aclFinalize(void) { return rt::AclFinalize(); }

HOSTCCL_API aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  if (majorVersion == nullptr || minorVersion == nullptr || patchVersion == nullptr)
    return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: a version pointer is null");
  // The AscendCL interface version whose subset hostccl implements.
  *majorVersion = 1;
  *minorVersion = 17;
  *patchVersion = 0;
  return ACL_SUCCESS;
}

HOSTCCL_API const char* aclGetRecentErrMsg(void) { return rt::RecentError(); }

HOSTCCL_API aclError aclrtSetDevice(int32_t deviceId) { return rt::SetDevice(deviceId); }
HOSTCCL_API aclError aclrtResetDevice(int32_t deviceId) { return rt::ResetDevice(deviceId); }
HOSTCCL_API aclError aclrtResetDeviceForce(int32_t deviceId) { return rt::ResetDeviceForce(deviceId); }
HOSTCCL_API aclError aclrtGetDevice(int32_t* deviceId) { return rt::GetDevice(deviceId); }
HOSTCCL_API aclError aclrtGetDeviceCount(uint32_t* count) { return rt::GetDeviceCount(count); }
HOSTCCL_API aclError aclrtSynchronizeDevice(void) {
  if (int rc = rt::CheckCaptureSafe("aclrtSynchronizeDevice"); rc != 0) return rc;
  return rt::SynchronizeDevice();
}

HOSTCCL_API aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  if (runMode == nullptr) return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is null");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

HOSTCCL_API aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
  // Accepted and ignored: hostccl's float arithmetic is always IEEE (INF/NaN).
  const int m = hostccl::api::EnumBits(mode);
  if (m != ACL_RT_OVERFLOW_MODE_SATURATION && m != ACL_RT_OVERFLOW_MODE_INFNAN)
    return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclrtSetDeviceSatMode: mode %d is not SATURATION (0) or INFNAN (1)", m);
  return ACL_SUCCESS;
}

HOSTCCL_API aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  return rt::CreateContext(context, deviceId);
}
HOSTCCL_API aclError aclrtDestroyContext(aclrtContext context) { return rt::DestroyContext(context); }
HOSTCCL_API aclError aclrtSetCurrentContext(aclrtContext context) { return rt::SetCurrentContext(context); }
HOSTCCL_API aclError aclrtGetCurrentContext(aclrtContext* context) { return rt::GetCurrentContext(context); }

HOSTCCL_API const char* aclrtGetSocName(void) { return rt::SocName(); }

HOSTCCL_API float aclFloat16ToFloat(aclFloat16 value) { return rt::HalfToFloat(value); }
HOSTCCL_API aclFloat16 aclFloatToFloat16(float value) { return rt::FloatToHalf(value); }
