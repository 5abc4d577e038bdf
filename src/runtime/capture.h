// Stream capture (aclmdlRICaptureBegin/End, aclmdlRIExecuteAsync, aclmdlRIDestroy, ...): work
// issued on a capturing stream is recorded into a model (aclmdlRI) instead of running; executing
// the model issues the recorded work again, in order, on any stream. See docs/capture.md.
//
// Contract:
//  - A model is a list of replay steps. Plain stream work (aclrtMemcpyAsync, aclrtMemsetAsync,
//    ...) is recorded by the stream's Enqueue as "enqueue this task again"; an HCCL operator is
//    recorded by the communicator as "issue this call again" (Stream::Capture), so every
//    execution is a new collective call with its own sequence number on every rank. Arguments,
//    buffers and V arrays are the ones given at capture time (the arrays are copied then).
//  - Begin: the stream must be a created stream (not the default one) that is not capturing
//    (else ACL_ERROR_RT_STREAM_CAPTURED); the model's handle exists from Begin on
//    (aclmdlRICaptureGetInfo). End on a stream that is not capturing:
//    ACL_ERROR_RT_STREAM_NOT_CAPTURED. A capture that was invalidated (a synchronize of the
//    capturing stream, event work on it) ends with
//    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED and no model.
//  - Unsafe calls (synchronous aclrtMemcpy/aclrtMemset, aclrtSynchronizeDevice) while a capture
//    is active fail with ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT by the calling thread's mode
//    (aclmdlRICaptureThreadExchangeMode; default GLOBAL): GLOBAL - any GLOBAL capture of the
//    process or a non-RELAXED capture of this thread forbids them; THREAD_LOCAL - a non-RELAXED
//    capture begun by this thread; RELAXED - nothing.
//  - ExecuteAsync of a model that is still capturing: ACL_ERROR_RT_MODEL_CAPTURED; of a destroyed
//    (or never created) handle: ACL_ERROR_INVALID_PARAM. Executing a model on a capturing stream
//    records the execution (a model inside a model). Destroy frees the handle; executions already
//    issued keep what they need.
//  - Destroying a capturing stream drops its capture (and the model handle).
//  - Thread-safe; AscendCL codes.
#pragma once

#include <cstdint>

namespace hostccl::rt {

inline constexpr int kCaptureModeGlobal = 0;
inline constexpr int kCaptureModeThreadLocal = 1;
inline constexpr int kCaptureModeRelaxed = 2;
inline constexpr int kCaptureStatusNone = 0;
inline constexpr int kCaptureStatusActive = 1;
inline constexpr int kCaptureStatusInvalidated = 2;

int CaptureBegin(void* stream, int mode);
int CaptureEnd(void* stream, void** model);
int CaptureGetInfo(void* stream, int* status, void** model);
int CaptureThreadExchangeMode(int* mode);
int ModelExecuteAsync(void* model, void* stream);
int ModelDestroy(void* model);
int ModelDebugPrint(void* model);

// Checks before a call that is unsafe during a capture (see the contract); kAclSuccess or the
// failure (logged, recent error set).
int CheckCaptureSafe(const char* func);
// A synchronize (or event wait on the host) of `stream` while it captures invalidates the
// capture and fails with ACL_ERROR_RT_STREAM_CAPTURED; kAclSuccess when it does not capture.
int CheckNotCapturing(void* stream, const char* func);
// Event record/wait/reset on a capturing stream: not supported here; invalidates the capture and
// fails with ACL_ERROR_RT_FEATURE_NOT_SUPPORT. kAclSuccess when the stream does not capture.
int CheckNoEventWork(void* stream, const char* func);
// aclrtDestroyStream of a capturing stream: the capture is invalidated first.
void AbandonCapture(void* stream);

}  // namespace hostccl::rt
