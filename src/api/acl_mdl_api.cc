// AscendCL stream capture into models (aclmdlRI*): thin wrappers over src/runtime/capture.cc.
#include "acl/acl.h"
#include "api/enum_bits.h"
#include "api/export.h"
#include "runtime/capture.h"

namespace rt = hostccl::rt;

static_assert(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL == rt::kCaptureModeGlobal &&
                  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL == rt::kCaptureModeThreadLocal &&
                  ACL_MODEL_RI_CAPTURE_MODE_RELAXED == rt::kCaptureModeRelaxed,
              "aclmdlRICaptureMode values");
static_assert(ACL_MODEL_RI_CAPTURE_STATUS_NONE == rt::kCaptureStatusNone &&
                  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE == rt::kCaptureStatusActive &&
                  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED == rt::kCaptureStatusInvalidated,
              "aclmdlRICaptureStatus values");
static_assert(sizeof(aclmdlRICaptureMode) == sizeof(int) && sizeof(aclmdlRICaptureStatus) == sizeof(int),
              "C enums are int-sized");

HOSTCCL_API aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  return rt::CaptureBegin(stream, hostccl::api::EnumBits(mode));
}
HOSTCCL_API aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI) {
  int st = 0;
  aclError rc = rt::CaptureGetInfo(stream, status == nullptr ? nullptr : &st, modelRI);
  if (rc == ACL_SUCCESS) *status = static_cast<aclmdlRICaptureStatus>(st);
  return rc;
}
HOSTCCL_API aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI) { return rt::CaptureEnd(stream, modelRI); }
HOSTCCL_API aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode* mode) {
  if (mode == nullptr) return rt::CaptureThreadExchangeMode(nullptr);
  int m = hostccl::api::EnumBits(*mode);
  aclError rc = rt::CaptureThreadExchangeMode(&m);
  if (rc == ACL_SUCCESS) *mode = static_cast<aclmdlRICaptureMode>(m);
  return rc;
}
HOSTCCL_API aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  return rt::ModelExecuteAsync(modelRI, stream);
}
HOSTCCL_API aclError aclmdlRIDestroy(aclmdlRI modelRI) { return rt::ModelDestroy(modelRI); }
HOSTCCL_API aclError aclmdlRIDebugPrint(aclmdlRI modelRI) { return rt::ModelDebugPrint(modelRI); }
