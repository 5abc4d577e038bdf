// Devices, contexts, aclInit/aclFinalize and the SoC name (see device.h for the contract).
#include "runtime/device.h"

#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/log.h"
#include "runtime/acl_codes.h"
#include "runtime/error.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"

namespace hostccl::rt {
namespace {

// A context only remembers its device: hostccl has no per-context resources.
struct Context {
  int device;
};

struct DeviceTable {
  std::mutex mu;
  std::map<int, int> refcount;                        // device -> aclrtSetDevice count
  std::map<int, std::unique_ptr<Context>> defaults;   // device -> default context
  std::set<Context*> created;                         // aclrtCreateContext results
  // aclInit state: 0 never initialised, 1 initialised, 2 finalized.
  int init_state = 0;
};

DeviceTable& Table() {
  static DeviceTable* t = new DeviceTable();  // leaked: usable from atexit handlers
  return *t;
}

thread_local int tl_device = -1;
thread_local Context* tl_context = nullptr;

// Physical ids of the visible devices, in logical order.
std::vector<int> VisibleDevices() {
  int64_t physical = EnvInt(Knob::kDeviceCount, 8);
  if (physical < 0) physical = 0;
  if (physical > 4096) physical = 4096;
  std::vector<int> ids;
  auto raw = EnvRaw(Knob::kAscendRtVisibleDevices);
  if (!raw) {
    for (int i = 0; i < physical; ++i) ids.push_back(i);
    return ids;
  }
  // Like CUDA_VISIBLE_DEVICES: the list stops at the first invalid or repeated entry.
  std::string list = *raw;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    auto v = ParseInt(item);
    bool dup = false;
    for (int id : ids) dup |= v && id == *v;
    if (!v || *v < 0 || *v >= physical || dup) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        HLOG_WARN(kRuntime, "ASCEND_RT_VISIBLE_DEVICES=%s: entry '%s' is not a new device id in [0, %lld); "
                  "using the %zu entries before it", list.c_str(), item.c_str(),
                  static_cast<long long>(physical), ids.size());
      break;
    }
    ids.push_back(static_cast<int>(*v));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return ids;
}

Context* DefaultContextLocked(DeviceTable& t, int device) {
  auto& slot = t.defaults[device];
  if (!slot) slot = std::make_unique<Context>(Context{device});
  return slot.get();
}

bool ContextValidLocked(DeviceTable& t, Context* c) {
  if (t.created.count(c)) return true;
  for (auto& [dev, ctx] : t.defaults)
    if (ctx.get() == c) return true;
  return false;
}

}  // namespace

uint32_t DeviceCount() { return static_cast<uint32_t>(VisibleDevices().size()); }

int PhysicalDeviceId(int32_t device) {
  auto ids = VisibleDevices();
  if (device < 0 || static_cast<size_t>(device) >= ids.size()) return -1;
  return ids[device];
}

int CheckDevice(int32_t device, const char* func) {
  uint32_t n = DeviceCount();
  if (device < 0 || static_cast<uint32_t>(device) >= n)
    return Fail(kAclRtInvalidDeviceId, "%s: deviceId %d is not in [0, %u) (HOSTCCL_DEVICE_COUNT / "
                "ASCEND_RT_VISIBLE_DEVICES)", func, device, n);
  return kAclSuccess;
}

int CurrentDevice() { return tl_device; }

namespace {
std::atomic<int> g_fidelity_override{-1};  // -1: HOSTCCL_FIDELITY decides
}  // namespace

bool FidelityOn() {
  const int o = g_fidelity_override.load(std::memory_order_relaxed);
  return o >= 0 ? o != 0 : EnvBool(Knob::kFidelity, true);
}

void SetFidelityOverride(int mode) { g_fidelity_override.store(mode < 0 ? -1 : mode != 0 ? 1 : 0); }

int RequireDevice(const char* func, int* device) {
  if (tl_device >= 0) {
    *device = tl_device;
    return kAclSuccess;
  }
  if (FidelityOn())
    return Fail(kAclRtContextNull, "%s: no current context on this thread: call aclrtSetDevice first (an NPU "
                "runtime fails here too; HOSTCCL_FIDELITY=0 uses device 0 instead)", func);
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true))
    HLOG_INFO(kRuntime, "%s: a thread used the runtime without aclrtSetDevice; using device 0 (HOSTCCL_FIDELITY=0)",
              func);
  *device = 0;
  return kAclSuccess;
}

int AclInit(const char* config_path) {
  if (config_path != nullptr && config_path[0] != '\0' && access(config_path, R_OK) != 0)
    return Fail(kAclInvalidFile, "aclInit: configPath '%s' cannot be read", config_path);
  auto& t = Table();
  std::lock_guard lk(t.mu);
  if (t.init_state == 1) {
    HLOG_INFO(kRuntime, "aclInit called again; returning ACL_ERROR_REPEAT_INITIALIZE (harmless)");
    return kAclRepeatInitialize;
  }
  t.init_state = 1;
  return kAclSuccess;
}

int AclFinalize() {
  auto& t = Table();
  std::lock_guard lk(t.mu);
  if (t.init_state == 2) {
    HLOG_INFO(kRuntime, "aclFinalize called twice; returning ACL_ERROR_REPEAT_FINALIZE");
    return kAclRepeatFinalize;
  }
  // Without aclInit this is a successful no-op (hccl_test calls it on its error paths).
  if (t.init_state == 1) t.init_state = 2;
  return kAclSuccess;
}

bool AclInitialized() {
  auto& t = Table();
  std::lock_guard lk(t.mu);
  return t.init_state == 1;
}

int SetDevice(int32_t device) {
  if (int rc = CheckDevice(device, "aclrtSetDevice"); rc != kAclSuccess) return rc;
  auto& t = Table();
  std::lock_guard lk(t.mu);
  ++t.refcount[device];
  tl_device = device;
  tl_context = DefaultContextLocked(t, device);
  return kAclSuccess;
}

namespace {
int ReleaseDevice(int32_t device, bool force, const char* func) {
  if (int rc = CheckDevice(device, func); rc != kAclSuccess) return rc;
  auto& t = Table();
  bool release = false;
  {
    std::lock_guard lk(t.mu);
    int& count = t.refcount[device];
    if (count > 0) {
      count = force ? 0 : count - 1;
      release = count == 0;
    } else {
      HLOG_DEBUG(kRuntime, "%s(%d): device was not set; nothing to release", func, device);
    }
  }
  if (tl_device == device) {
    tl_device = -1;
    tl_context = nullptr;
  }
  // The default stream goes away with the last reference (drained first).
  if (release) ReleaseDefaultStream(device);
  return kAclSuccess;
}
}  // namespace

int ResetDevice(int32_t device) { return ReleaseDevice(device, false, "aclrtResetDevice"); }
int ResetDeviceForce(int32_t device) { return ReleaseDevice(device, true, "aclrtResetDeviceForce"); }

int GetDevice(int32_t* device) {
  if (device == nullptr) return Fail(kAclInvalidParam, "aclrtGetDevice: deviceId is null");
  if (tl_device < 0)
    return Fail(kAclRtContextNull, "aclrtGetDevice: no current device on this thread (call aclrtSetDevice)");
  *device = tl_device;
  return kAclSuccess;
}

int GetDeviceCount(uint32_t* count) {
  if (count == nullptr) return Fail(kAclInvalidParam, "aclrtGetDeviceCount: count is null");
  *count = DeviceCount();
  return kAclSuccess;
}

int DeviceRefCount(int32_t device) {
  auto& t = Table();
  std::lock_guard lk(t.mu);
  auto it = t.refcount.find(device);
  return it == t.refcount.end() ? 0 : it->second;
}

int CreateContext(void** context, int32_t device) {
  if (context == nullptr) return Fail(kAclInvalidParam, "aclrtCreateContext: context is null");
  if (int rc = CheckDevice(device, "aclrtCreateContext"); rc != kAclSuccess) return rc;
  auto* c = new Context{device};
  auto& t = Table();
  {
    std::lock_guard lk(t.mu);
    t.created.insert(c);
  }
  // As in ACL, the new context becomes the calling thread's current context.
  tl_context = c;
  tl_device = device;
  *context = c;
  return kAclSuccess;
}

int DestroyContext(void* context) {
  auto* c = static_cast<Context*>(context);
  auto& t = Table();
  {
    std::lock_guard lk(t.mu);
    if (c == nullptr || !t.created.erase(c))
      return Fail(kAclInvalidParam, "aclrtDestroyContext: %p is not a context from aclrtCreateContext", context);
  }
  if (tl_context == c) {
    tl_context = nullptr;
    tl_device = -1;
  }
  delete c;
  return kAclSuccess;
}

int SetCurrentContext(void* context) {
  auto* c = static_cast<Context*>(context);
  auto& t = Table();
  std::lock_guard lk(t.mu);
  if (c == nullptr || !ContextValidLocked(t, c))
    return Fail(kAclInvalidParam, "aclrtSetCurrentContext: %p is not a live context", context);
  tl_context = c;
  tl_device = c->device;
  return kAclSuccess;
}

int GetCurrentContext(void** context) {
  if (context == nullptr) return Fail(kAclInvalidParam, "aclrtGetCurrentContext: context is null");
  auto& t = Table();
  std::lock_guard lk(t.mu);
  if (tl_context != nullptr && ContextValidLocked(t, tl_context)) {
    *context = tl_context;
    return kAclSuccess;
  }
  if (tl_device >= 0) {
    *context = DefaultContextLocked(t, tl_device);
    return kAclSuccess;
  }
  return Fail(kAclRtContextNull, "aclrtGetCurrentContext: no current context on this thread (call aclrtSetDevice)");
}

namespace {
constexpr const char* kProfiles[] = {"Ascend950", "AtlasA3", "AtlasA2", "Atlas910", "Atlas310P"};
}  // namespace

const char* SocName() {
  auto raw = EnvRaw(Knob::kSoc);
  if (!raw) return "HostCPU";
  for (const char* p : kProfiles)
    if (strcasecmp(raw->c_str(), p) == 0) return p;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    HLOG_WARN(kRuntime, "HOSTCCL_SOC=%s names no hardware profile (Ascend950, AtlasA3, AtlasA2, Atlas910, "
              "Atlas310P); reporting SoC 'HostCPU'", raw->c_str());
  return "HostCPU";
}

}  // namespace hostccl::rt
