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
#pragma once

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

}  // namespace hostccl::net
