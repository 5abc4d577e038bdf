// Devices, contexts and library initialisation (aclInit/aclFinalize, aclrtSetDevice & co).
//
// Contract:
//  - The device count is HOSTCCL_DEVICE_COUNT (default 8) filtered and renumbered by
//    ASCEND_RT_VISIBLE_DEVICES; it is read live, so it works before aclInit.
//  - The current device and context are per thread. aclrtSetDevice increments a process-wide
//    reference count per device; aclrtResetDevice decrements it (and clears the calling thread's
//    current device when it was that device); at zero the device's default stream is drained and
//    destroyed. aclrtResetDeviceForce drops the count to zero at once.
//  - Every function is thread-safe and returns an AscendCL code (runtime/acl_codes.h); failures
//    set the calling thread's recent error message.
#pragma once

#include <cstdint>

namespace hostccl::rt {

int AclInit(const char* config_path);
int AclFinalize();
bool AclInitialized();

int SetDevice(int32_t device);
int ResetDevice(int32_t device);
int ResetDeviceForce(int32_t device);
int GetDevice(int32_t* device);
int GetDeviceCount(uint32_t* count);
// NPU fidelity (HOSTCCL_FIDELITY, default on), read live; SetFidelityOverride(0 or 1) replaces
// the variable for the whole process (HostcclSetFidelity), -1 follows it again.
bool FidelityOn();
void SetFidelityOverride(int mode);
// The device a runtime call `func` works on: the thread's current device. A thread that never set
// one fails, as CANN's runtime does, with kAclRtContextNull ("<func>: no current context ...",
// logged and kept as the recent error) under fidelity; without fidelity it gets device 0 (one info
// line per process). Returns an AscendCL code; *device is set on success.
int RequireDevice(const char* func, int* device);
// Checks 0 <= device < DeviceCount(); returns kAclRtInvalidDeviceId (with message) otherwise.
int CheckDevice(int32_t device, const char* func);
// Process-wide aclrtSetDevice reference count of a device (tests, diagnostics).
int DeviceRefCount(int32_t device);
// The id before ASCEND_RT_VISIBLE_DEVICES renumbering (logs); -1 for an invalid device.
int PhysicalDeviceId(int32_t device);

int CreateContext(void** context, int32_t device);
int DestroyContext(void* context);
int SetCurrentContext(void* context);
int GetCurrentContext(void** context);

}  // namespace hostccl::rt
