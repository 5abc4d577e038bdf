#include "transport/sync/wake_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::net {
namespace {

long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0u, 0); }

bool Register() {
#if defined(__SANITIZE_THREAD__)
  return false;
#else
  if (EnvString(Knob::kWakeFence, "auto") != "auto") return false;  // validated: auto|fence
  const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) {
    HLOG_INFO(kShm, "membarrier(GLOBAL_EXPEDITED) not offered (%s): wakers fence on every call",
              cmds < 0 ? strerror(errno) : "not in the query");
    return false;
  }
  if (Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0) {
    HLOG_INFO(kShm, "membarrier registration failed (%s): wakers fence on every call", strerror(errno));
    return false;
  }
  return true;
#endif
}

}  // namespace

bool AsymmetricWakeAvailable() {
  static const bool registered = Register();
  return registered;
}

bool SleeperFence(bool asymmetric) {
  if (!asymmetric) return true;  // the caller's seq_cst count is the barrier
  if (Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return true;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    HLOG_WARN(kShm, "membarrier(GLOBAL_EXPEDITED) failed (%s): sleeps are cut into 1 ms slices", strerror(errno));
  return false;
}

Deadline RecheckBy(Deadline slice, bool asymmetric, bool fenced, uint64_t asleep_since_ns, uint64_t now_ns) {
  if (!asymmetric) return slice;
  constexpr uint64_t kMinNs = 1000000;
  const uint64_t slept = now_ns > asleep_since_ns ? now_ns - asleep_since_ns : 0;
  const uint64_t bound = fenced && slept > kMinNs ? slept : kMinNs;
  return slice.Earlier(Deadline::AtNs(now_ns + bound));
}

}  // namespace hostccl::net
