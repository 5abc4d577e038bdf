// AscendCL stream and event entry points. Thin wrappers over src/runtime/{stream,event}.cc.
#include "acl/acl.h"
#include "api/export.h"
#include "runtime/capture.h"
#include "runtime/event.h"
#include "runtime/stream.h"

namespace rt = hostccl::rt;

HOSTCCL_API aclError aclrtCreateStream(aclrtStream* stream) { return rt::CreateStream(stream, 0, 0); }
HOSTCCL_API aclError aclrtCreateStreamWithConfig(aclrtStream* stream, uint32_t priority, uint32_t flag) {
  return rt::CreateStream(stream, priority, flag);
}
HOSTCCL_API aclError aclrtDestroyStream(aclrtStream stream) {
  rt::AbandonCapture(stream);
  return rt::DestroyStream(stream);
}
HOSTCCL_API aclError aclrtSynchronizeStream(aclrtStream stream) {
  if (int rc = rt::CheckNotCapturing(stream, "aclrtSynchronizeStream"); rc != 0) return rc;
  return rt::SynchronizeStream(stream, -1, "aclrtSynchronizeStream");
}
HOSTCCL_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  if (int rc = rt::CheckNotCapturing(stream, "aclrtSynchronizeStreamWithTimeout"); rc != 0) return rc;
  return rt::SynchronizeStream(stream, timeout, "aclrtSynchronizeStreamWithTimeout");
}
HOSTCCL_API aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
  return rt::SetStreamFailureMode(stream, mode);
}
HOSTCCL_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  if (int rc = rt::CheckNoEventWork(stream, "aclrtStreamWaitEvent"); rc != 0) return rc;
  return rt::StreamWaitEvent(stream, event);
}

HOSTCCL_API aclError aclrtCreateEvent(aclrtEvent* event) { return rt::CreateEvent(event, ACL_EVENT_SYNC); }
HOSTCCL_API aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  return rt::CreateEvent(event, flag);
}
HOSTCCL_API aclError aclrtDestroyEvent(aclrtEvent event) { return rt::DestroyEvent(event); }
HOSTCCL_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  if (int rc = rt::CheckNoEventWork(stream, "aclrtRecordEvent"); rc != 0) return rc;
  return rt::RecordEvent(event, stream);
}
HOSTCCL_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  if (int rc = rt::CheckNoEventWork(stream, "aclrtResetEvent"); rc != 0) return rc;
  return rt::ResetEvent(event, stream);
}
HOSTCCL_API aclError aclrtSynchronizeEvent(aclrtEvent event) {
  if (int rc = rt::CheckCaptureSafe("aclrtSynchronizeEvent"); rc != 0) return rc;
  return rt::SynchronizeEvent(event);
}
HOSTCCL_API aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  return rt::EventElapsedTime(ms, startEvent, endEvent);
}
