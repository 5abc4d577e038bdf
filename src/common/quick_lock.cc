#include "common/quick_lock.h"

#include <sched.h>

#include <ctime>

#include "common/clock.h"

namespace hostccl {

void QuickLock::LockSlow() {
  // Spin ~1 µs (a holder on another core usually lets go within it), then yield while the
  // holder may need this core, then sleep 20 µs doubling to 200 µs between looks.
  const uint64_t start = NowNs();
  long sleep_ns = 20000;
  for (uint32_t looks = 0;; ++looks) {
    if (try_lock()) return;
    const uint64_t waited = looks < 64 ? 0 : NowNs() - start;
    if (waited < 1000) {
      __builtin_ia32_pause();
    } else if (waited < 100000) {
      sched_yield();
    } else {
      timespec ts{0, sleep_ns};
      nanosleep(&ts, nullptr);
      if (sleep_ns < 200000) sleep_ns *= 2;
    }
  }
}

}  // namespace hostccl
