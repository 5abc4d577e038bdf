// AscendCL result codes used by the runtime (same numbers as include/acl; hccl-api-facts.md
// §4.2). The runtime's acl-shaped functions return these ints directly so that src/api only
// forwards; src/api/acl_*.cc static_asserts that they equal the public constants.
#pragma once

namespace hostccl::rt {

inline constexpr int kAclSuccess = 0;
inline constexpr int kAclInvalidParam = 100000;        // ACL_ERROR_INVALID_PARAM
inline constexpr int kAclRepeatInitialize = 100002;    // ACL_ERROR_REPEAT_INITIALIZE
inline constexpr int kAclInvalidFile = 100003;         // ACL_ERROR_INVALID_FILE
inline constexpr int kAclRepeatFinalize = 100037;      // ACL_ERROR_REPEAT_FINALIZE
inline constexpr int kAclApiNotSupport = 200001;       // ACL_ERROR_API_NOT_SUPPORT
inline constexpr int kAclRtInvalidDeviceId = 107001;   // ACL_ERROR_RT_INVALID_DEVICEID
inline constexpr int kAclRtContextNull = 107002;       // ACL_ERROR_RT_CONTEXT_NULL
inline constexpr int kAclRtTaskTimeout = 107020;       // ACL_ERROR_RT_TASK_TIMEOUT
inline constexpr int kAclRtModelCaptured = 107026;     // ACL_ERROR_RT_MODEL_CAPTURED
inline constexpr int kAclRtStreamCaptured = 107027;    // ACL_ERROR_RT_STREAM_CAPTURED
inline constexpr int kAclRtStreamNotCaptured = 107029; // ACL_ERROR_RT_STREAM_NOT_CAPTURED
inline constexpr int kAclRtCaptureModeNotSupport = 107030;  // ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
inline constexpr int kAclRtFeatureNotSupport = 207000; // ACL_ERROR_RT_FEATURE_NOT_SUPPORT
inline constexpr int kAclRtCaptureInvalidated = 507903;  // ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
inline constexpr int kAclRtMemoryAllocation = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION
inline constexpr int kAclRtInternalError = 507000;     // ACL_ERROR_RT_INTERNAL_ERROR
inline constexpr int kAclRtStreamSyncTimeout = 507046; // ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
inline constexpr int kAclRtEventSyncTimeout = 507047;  // ACL_ERROR_RT_EVENT_SYNC_TIMEOUT

}  // namespace hostccl::rt
