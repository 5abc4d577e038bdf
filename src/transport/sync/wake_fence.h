// Who pays for the handshake between a rank that goes to sleep on a futex and the rank that makes
// its wait condition true.
//
// The handshake is Dekker's: the sleeper counts itself in `sleepers` and then looks at its
// condition once more; the waker stores the condition and then looks at `sleepers`. Both sides
// need a full barrier between their store and their load, or each may miss the other's store
// and the sleeper sleeps through the wake-up.
//
// Symmetric (the fallback): the sleeper's count is a locked read-modify-write and the waker runs
// a seq_cst fence on every call. On x86 that fence waits until every earlier store of the waker
// owns its cache line, i.e. for a cross-core transfer of each line the peers just read (the
// slot, history and done lines): ~20 % of an 8 B Reduce back to back at 2 ranks.
//
// Asymmetric: every process of the group registered for membarrier(GLOBAL_EXPEDITED). The waker
// only keeps the compiler from reordering its store and load, and the sleeper, after counting
// itself, runs membarrier, which puts a full barrier into every running thread of every
// registered process (a thread not running has passed one in its context switch). Wherever that
// barrier falls in the waker's instruction stream, either its load of `sleepers` comes after it
// (and sees the count) or its store comes before it (and the sleeper's next look sees the store).
// The sleeper pays ~1 us, or ~50 us when a peer runs on another core of this VM (an IPI), once
// per sleep, after 90-200 us of spinning and yielding.
//
// The kernel's membarrier can skip a CPU, though: it interrupts only CPUs whose run queue is
// marked as running a registered process, a thread's exit clears that mark on its CPU, and a
// switch between two threads of one process (or to the idle thread and back) does not set it
// again. A waker thread that then runs on that CPU gets no barrier, and a wake-up may be missed
// (measured: docs/performance.md "Wakers without a fence"). So an asymmetric sleeper never trusts
// a sleep to end by a wake-up alone: RecheckBy bounds each sleep by the time it has slept so far.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace hostccl::net {

// Whether this process may be a waker without a fence: registered for membarrier(GLOBAL_EXPEDITED)
// (once per process) and HOSTCCL_WAKE_FENCE is auto. A group takes the asymmetric handshake only
// when every member's process answers true. False under ThreadSanitizer.
bool AsymmetricWakeAvailable();

// Waker side: between the store that makes a condition true and the load of `sleepers`.
inline void WakerFence(bool asymmetric) {
#if defined(__SANITIZE_THREAD__)
  (void)asymmetric;  // GCC's TSan rejects fences: the stores involved are seq_cst there
#else
  if (asymmetric)
    asm volatile("" ::: "memory");
  else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// Sleeper side: after counting itself in `sleepers`, before it looks at its condition again.
// Returns false when membarrier failed (a wake-up may then be missed: sleep in short slices).
bool SleeperFence(bool asymmetric);

// The latest end of a sleep that starts at `now_ns` when the rank went to sleep first at
// `asleep_since_ns` of this wait: `slice` itself where the wakers fence (no wake-up is missed);
// otherwise at most max(1 ms, now_ns - asleep_since_ns) from now, 1 ms where the membarrier
// failed (`fenced` false). A missed wake-up then costs at most as long as the rank had already
// slept, plus 1 ms, and a long wait looks again only about once per doubling of its length.
Deadline RecheckBy(Deadline slice, bool asymmetric, bool fenced, uint64_t asleep_since_ns, uint64_t now_ns);

}  // namespace hostccl::net
