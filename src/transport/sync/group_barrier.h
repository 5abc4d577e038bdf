// A barrier over plain words that may live in ordinary memory (ranks that are threads) or in a
// shared mapping (ranks that are processes of one host). Waiting is adaptive: spin briefly when
// the group fits on the cores, then yield, then sleep on a futex (non-private when shared); the
// last arriver issues FUTEX_WAKE only when someone sleeps. Waits are sliced so that `check`
// (peer liveness, abort flags) runs at least every `check_every_ms`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace hostccl::net {

struct alignas(64) BarrierWords {
  std::atomic<uint64_t> count;     // total arrivals
  std::atomic<uint32_t> wake;      // futex word, bumped when a round completes or on abort
  std::atomic<uint32_t> sleepers;
  std::atomic<uint32_t> aborted;
};

struct alignas(64) ArrivalWord {
  std::atomic<uint64_t> arrived;   // barriers entered by this rank
};

// How a rank's futex sleeps ended. `missed` counts those that ended by time (RecheckBy's bound)
// with the wait already over and the wake word unchanged: the condition came true and nobody
// woke the sleeper, i.e. a missed wake-up (wake_fence.h). ShmGroup logs both at teardown.
struct SleepStats {
  std::atomic<uint64_t> sleeps{0};
  std::atomic<uint64_t> missed{0};
  void Note(bool missed_wake) {
    sleeps.fetch_add(1, std::memory_order_relaxed);
    if (missed_wake) missed.fetch_add(1, std::memory_order_relaxed);
  }
};

struct BarrierOptions {
  bool shared = false;         // words are in memory shared between processes
  bool spin = true;            // allowed to spin (ranks on this host <= cores)
  int check_every_ms = 100;    // how often `check` runs while sleeping
  std::function<Status()> check;  // optional: non-ok stops the wait with that status
  const char* what = "rank(s)";   // wording for the timeout message
  bool asymmetric_wake = false;   // the wakers run no fence: the sleeper pays (wake_fence.h)
  SleepStats* stats = nullptr;    // optional: counts this wait's sleeps
};

// Enters the barrier as `rank` of `size`; returns when all arrived (Ok), the deadline passed
// (kTimeout naming the missing ranks), `aborted` became non-zero (kRemote; the caller reads the
// reason), or check() failed.
Status BarrierEnter(BarrierWords* b, ArrivalWord* arrivals, int size, int rank, Deadline deadline,
                    const BarrierOptions& opt);

// Waits until done() holds, with the same adaptive policy and bounds as BarrierEnter, sleeping
// on b->wake (whoever makes done() true must bump b->wake and wake sleepers: see WakeAll).
// `missing` describes who is late, for the timeout message.
Status WaitUntil(const std::function<bool()>& done, BarrierWords* b, Deadline deadline,
                 const BarrierOptions& opt, const std::function<std::string()>& missing);
// Bumps the wake word and wakes sleepers (no system call when nobody sleeps).
void WakeAll(BarrierWords* b, bool shared);

// Marks the barrier aborted and wakes every sleeper.
void BarrierAbort(BarrierWords* b, bool shared);

// The host's online CPUs (std::thread::hardware_concurrency, at least 1).
int OnlineCores();
// Whether the process should avoid spinning for a group of `ranks` local ranks (ranks > cores).
bool Oversubscribed(int ranks);

}  // namespace hostccl::net
