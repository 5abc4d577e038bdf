// Profiler entry points (acl/acl_prof.h, libmsprofiler.so): successful no-ops. hostccl has no
// device profiler; configs are real heap objects so create/destroy pairs balance.
#include <mutex>
#include <set>

#include "acl/acl_prof.h"
#include "api/export.h"
#include "runtime/error.h"

namespace rt = hostccl::rt;

// Opaque to clients; remembers what was asked for (not used further).
struct aclprofConfig {
  uint32_t device_count;
  uint64_t data_types;
};

namespace {
std::mutex g_mu;
std::set<const aclprofConfig*>& Configs() {
  static auto* s = new std::set<const aclprofConfig*>();
  return *s;
}
bool IsConfig(const aclprofConfig* c) {
  std::lock_guard lk(g_mu);
  return Configs().count(c) != 0;
}
}  // namespace

HOSTCCL_API aclError aclprofInit(const char* profilerResultPath, size_t length) { return ACL_SUCCESS; }
HOSTCCL_API aclError aclprofFinalize(void) { return ACL_SUCCESS; }

HOSTCCL_API aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                               aclprofAicoreMetrics aicoreMetrics,
                                               const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) {
  auto* c = new aclprofConfig{deviceNums, dataTypeConfig};
  std::lock_guard lk(g_mu);
  Configs().insert(c);
  return c;
}

HOSTCCL_API aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  {
    std::lock_guard lk(g_mu);
    if (profilerConfig == nullptr || Configs().erase(profilerConfig) == 0)
      return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig: %p is not a live profiler config",
                      static_cast<const void*>(profilerConfig));
  }
  delete profilerConfig;
  return ACL_SUCCESS;
}

HOSTCCL_API aclError aclprofStart(const aclprofConfig* profilerConfig) {
  if (!IsConfig(profilerConfig))
    return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclprofStart: %p is not a live profiler config",
                    static_cast<const void*>(profilerConfig));
  return ACL_SUCCESS;
}

HOSTCCL_API aclError aclprofStop(const aclprofConfig* profilerConfig) {
  if (!IsConfig(profilerConfig))
    return rt::Fail(ACL_ERROR_INVALID_PARAM, "aclprofStop: %p is not a live profiler config",
                    static_cast<const void*>(profilerConfig));
  return ACL_SUCCESS;
}
