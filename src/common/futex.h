// Futex wait/wake on a 32-bit word, with a deadline. `shared` selects non-private futexes for
// words in memory shared between processes (shared memory fast path); private otherwise.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/clock.h"

namespace hostccl {

// Sleeps while *word == expected, until woken, the deadline, or a spurious wake-up.
// Returns false when the deadline has passed.
bool FutexWait(std::atomic<uint32_t>* word, uint32_t expected, Deadline deadline, bool shared);
// Wakes up to n waiters (INT32_MAX = all).
void FutexWake(std::atomic<uint32_t>* word, int n, bool shared);

}  // namespace hostccl
