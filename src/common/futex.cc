#include "common/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace hostccl {

bool FutexWait(std::atomic<uint32_t>* word, uint32_t expected, Deadline deadline, bool shared) {
  int op = shared ? FUTEX_WAIT_BITSET : (FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG);
  timespec abs{};
  timespec* tsp = nullptr;
  if (!deadline.infinite()) {
    if (deadline.Expired()) return false;
    abs.tv_sec = static_cast<time_t>(deadline.at_ns() / 1000000000ull);
    abs.tv_nsec = static_cast<long>(deadline.at_ns() % 1000000000ull);
    tsp = &abs;  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time
  }
  long rc = syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, expected, tsp, nullptr,
                    FUTEX_BITSET_MATCH_ANY);
  if (rc == -1 && errno == ETIMEDOUT) return false;
  return true;
}

void FutexWake(std::atomic<uint32_t>* word, int n, bool shared) {
  int op = shared ? FUTEX_WAKE : (FUTEX_WAKE | FUTEX_PRIVATE_FLAG);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, n, nullptr, nullptr, 0);
}

}  // namespace hostccl
