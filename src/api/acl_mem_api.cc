// AscendCL memory entry points: aclrtMalloc/Free, host memory, copies, memsets, memory info and
// the virtual-memory calls. Thin wrappers over src/runtime/{memory,vmm}.cc.
#include "acl/acl.h"
#include "api/enum_bits.h"
#include "api/export.h"
#include "runtime/capture.h"
#include "runtime/error.h"
#include "runtime/memory.h"
#include "runtime/vmm.h"

namespace rt = hostccl::rt;

HOSTCCL_API aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return rt::Malloc(devPtr, size, static_cast<uint32_t>(hostccl::api::EnumBits(policy)));
}
HOSTCCL_API aclError aclrtFree(void* devPtr) { return rt::Free(devPtr); }
HOSTCCL_API aclError aclrtMallocHost(void** hostPtr, size_t size) { return rt::MallocHost(hostPtr, size); }
HOSTCCL_API aclError aclrtFreeHost(void* hostPtr) { return rt::FreeHost(hostPtr); }

HOSTCCL_API aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  if (int rc = rt::CheckCaptureSafe("aclrtMemcpy"); rc != 0) return rc;
  return rt::Memcpy(dst, destMax, src, count, static_cast<int>(kind));
}
HOSTCCL_API aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                                      aclrtMemcpyKind kind, aclrtStream stream) {
  return rt::MemcpyAsync(dst, destMax, src, count, static_cast<int>(kind), stream);
}
HOSTCCL_API aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  if (int rc = rt::CheckCaptureSafe("aclrtMemset"); rc != 0) return rc;
  return rt::Memset(devPtr, maxCount, value, count);
}
HOSTCCL_API aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count,
                                      aclrtStream stream) {
  return rt::MemsetAsync(devPtr, maxCount, value, count, stream);
}
HOSTCCL_API aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* freeBytes, size_t* totalBytes) {
  return rt::GetMemInfo(hostccl::api::EnumBits(attr), freeBytes, totalBytes);
}

HOSTCCL_API aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr,
                                            uint64_t flags) {
  return rt::ReserveMemAddress(virPtr, size, alignment, expectPtr, flags);
}
HOSTCCL_API aclError aclrtReleaseMemAddress(void* virPtr) { return rt::ReleaseMemAddress(virPtr); }
HOSTCCL_API aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                                         uint64_t flags) {
  if (prop == nullptr) return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocPhysical: prop is null");
  return rt::MallocPhysical(handle, size, static_cast<int>(prop->location.id), flags);
}
HOSTCCL_API aclError aclrtFreePhysical(aclrtDrvMemHandle handle) { return rt::FreePhysical(handle); }
HOSTCCL_API aclError aclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                                 uint64_t flags) {
  return rt::MapMem(virPtr, size, offset, handle, flags);
}
HOSTCCL_API aclError aclrtUnmapMem(void* virPtr) { return rt::UnmapMem(virPtr); }
HOSTCCL_API aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop, aclrtMemGranularityOptions option,
                                                      size_t* granularity) {
  if (prop == nullptr) return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationGranularity: prop is null");
  return rt::MemGetAllocationGranularity(hostccl::api::EnumBits(option), granularity);
}
