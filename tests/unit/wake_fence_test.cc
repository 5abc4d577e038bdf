// The sleeper/waker handshake of src/transport/sync/wake_fence.h, as a store-buffering litmus
// test between two threads (the same registered process, which membarrier(GLOBAL_EXPEDITED)
// covers as it covers the other processes of a group).
//  - the waker stores `cond` and loads `sleepers` with only WakerFence(true) between them (a
//    compiler barrier); the sleeper increments `sleepers` (seq_cst) and loads `cond`;
//  - "both missed" (the waker saw no sleeper and the sleeper saw no condition) is the lost
//    wake-up. Without SleeperFence the x86 store buffer produces it now and then (the control
//    run counts how often on this machine); with SleeperFence(true) it must never happen while
//    no thread of the process has exited on the waker's core (the kernel then skips that core:
//    wake_fence.h), so one waker thread serves both runs.
//  - WakerFence(false) (the symmetric fallback) makes the control run clean as well.
//  - RecheckBy's bound, and WaitUntil finding a condition nobody woke it for within that bound:
//    what a missed wake-up costs.
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <thread>

#include "common/clock.h"
#include "transport/sync/group_barrier.h"
#include "transport/sync/wake_fence.h"

namespace {

using hostccl::Deadline;
using hostccl::NowNs;
using hostccl::net::AsymmetricWakeAvailable;
using hostccl::net::RecheckBy;
using hostccl::net::SleeperFence;
using hostccl::net::WakerFence;

// `go` and `sleepers` share a line, so the waker, spinning on `go`, holds `sleepers` in its cache
// and its load of it returns at once, while its store to `cond` (a line the sleeper read last)
// still waits in the store buffer for the line: the window in which the sleeper's increment and
// look can fall. Round i: the waker writes cond = i, the sleeper writes sleepers = i (no resets).
struct alignas(64) GoLine {
  std::atomic<int64_t> go{0};
  std::atomic<int64_t> sleepers{0};
};
struct alignas(64) Line {
  std::atomic<int64_t> v{0};
};

// The waits below spin on one load and yield every 65,536 looks (~0.1 ms), so the two threads
// still take turns when a loaded machine gives them one core between them (ctest -j2). The spin
// itself stays one load and a branch: how fast the waker reacts to `go` sets the window the
// litmus needs (a slower loop, tried, showed no reordering at all in 1.5 million rounds).

// One waker thread for all the runs of a test: the kernel's membarrier may skip the CPU where a
// thread of this process exited (wake_fence.h), so the checked run must not follow the exit of
// the control run's waker. Run() goes on until `iterations` more rounds are done,
// `stop_after_lost` lost wake-ups were seen or `budget` has passed; it returns the lost wake-ups
// and sets *done to the rounds it ran. `sleeper_fence` picks the sleeper's side; the waker's side
// (WakerFence(waker_asym)) is fixed for the thread's life.
class Litmus {
 public:
  explicit Litmus(bool waker_asym) : waker_([this, waker_asym] { Wake(waker_asym); }) {}
  ~Litmus() {
    gl_.go.store(-1, std::memory_order_release);
    waker_.join();
  }

  int64_t Run(int64_t iterations, std::chrono::milliseconds budget, bool sleeper_fence, int64_t* done,
              int64_t stop_after_lost = INT64_MAX) {
    int64_t lost = 0, n = 0;
    const auto end = std::chrono::steady_clock::now() + budget;
    while (n < iterations && lost < stop_after_lost) {
      ++n;
      const int64_t i = ++round_;
      gl_.go.store(i, std::memory_order_release);
      for (int k = static_cast<int>(rng_() % 16); k > 0; --k) __builtin_ia32_pause();  // vary the overlap
      gl_.sleepers.exchange(i, std::memory_order_seq_cst);  // the locked count, as in WaitUntil
      const bool fenced = SleeperFence(sleeper_fence);
      EXPECT_TRUE(fenced) << "membarrier failed";
      const int64_t sleeper_saw = cond_.v.load(std::memory_order_relaxed);
      for (uint32_t k = 0; ack_.v.load(std::memory_order_acquire) != i;)
        if (++k == 0x10000) {
          k = 0;
          std::this_thread::yield();
        }
      if (saw_.v.load(std::memory_order_relaxed) < i && sleeper_saw < i) ++lost;
      if ((n & 255) == 0 && std::chrono::steady_clock::now() > end) break;
    }
    *done = n;
    return lost;
  }

 private:
  void Wake(bool waker_asym) {
    for (int64_t i = 1;; ++i) {
      int64_t g;
      uint32_t k = 0;
      while ((g = gl_.go.load(std::memory_order_acquire)) != i) {
        if (g < 0) return;
        if (++k == 0x10000) {
          k = 0;
          std::this_thread::yield();
        }
      }
      cond_.v.store(i, std::memory_order_relaxed);
      WakerFence(waker_asym);
      saw_.v.store(gl_.sleepers.load(std::memory_order_relaxed), std::memory_order_relaxed);
      ack_.v.store(i, std::memory_order_release);
    }
  }

  GoLine gl_;
  Line cond_, ack_, saw_;
  std::minstd_rand rng_{7};
  int64_t round_ = 0;
  std::thread waker_;  // last: it starts once the lines above exist
};

TEST(WakeFence, TheSleepersMembarrierOrdersAWakerWithoutAFence) {
  if (!AsymmetricWakeAvailable())
    GTEST_SKIP() << "membarrier(GLOBAL_EXPEDITED) is not available here: groups use the symmetric fence";
  // Control: no barrier on the sleeper's side beyond its locked count. Run until 20 lost wake-ups
  // show (or 3 s), to learn how many iterations the checked run below needs.
  Litmus litmus(true);
  int64_t control_runs = 0;
  const int64_t control_lost = litmus.Run(INT64_MAX, std::chrono::milliseconds(3000), false, &control_runs, 20);
  RecordProperty("control_iterations", std::to_string(control_runs));
  RecordProperty("control_lost", std::to_string(control_lost));
  if (control_lost == 0)
    GTEST_SKIP() << "this machine showed no store-buffer reordering in " << control_runs
                 << " iterations: nothing to check the membarrier against";
  // Checked: with the membarrier, as many iterations as would produce ~8 lost wake-ups at the
  // control's rate (a membarrier that did nothing passes with probability ~e^-8), at most 6 s (a
  // membarrier that interrupts the other core costs ~50 us in this VM).
  const int64_t want = std::max<int64_t>(control_runs * 8 / control_lost, 2000);
  int64_t runs = 0;
  const int64_t lost = litmus.Run(want, std::chrono::milliseconds(6000), true, &runs);
  EXPECT_EQ(lost, 0) << "lost wake-ups with SleeperFence in " << runs << " iterations (control: " << control_lost
                     << " in " << control_runs << ")";
  // A loaded machine may not give the two threads two cores for long (then the run is shorter and
  // checks less, but what it saw still counts): say so rather than fail.
  RecordProperty("checked_iterations", std::to_string(runs));
  if (runs < want) std::printf("note: %lld of %lld checked iterations within the budget\n", static_cast<long long>(runs),
                               static_cast<long long>(want));
}

TEST(WakeFence, TheWakersFenceAloneOrdersTheHandshake) {
  // The symmetric fallback: a full fence on the waker's side, nothing extra on the sleeper's.
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "under TSan WakerFence is no fence: the library's stores are seq_cst there instead";
#endif
  Litmus litmus(false);
  int64_t runs = 0;
  const int64_t lost = litmus.Run(INT64_MAX, std::chrono::milliseconds(1500), false, &runs);
  EXPECT_EQ(lost, 0) << "in " << runs << " iterations";
  if (runs < 1000)
    GTEST_SKIP() << "only " << runs << " rounds in 1.5 s: the two threads did not run side by side, so the "
                 << "store buffer had no chance to reorder";
}

TEST(WakeFence, AnAsymmetricSleeperLooksAgainOncePerDoublingOfItsWait) {
  constexpr uint64_t kMs = 1000000;
  const uint64_t t0 = 5000 * kMs;  // when the rank first slept
  const Deadline far = Deadline::AtNs(t0 + 3600000 * kMs);
  // The wakers fence: no wake-up is missed, the slice stays.
  EXPECT_EQ(RecheckBy(far, false, true, t0, t0 + 7 * kMs).at_ns(), far.at_ns());
  // Asymmetric: 1 ms at first, then as long as the rank has slept.
  EXPECT_EQ(RecheckBy(far, true, true, t0, t0).at_ns(), t0 + kMs);
  EXPECT_EQ(RecheckBy(far, true, true, t0, t0 + kMs / 2).at_ns(), t0 + kMs / 2 + kMs);
  EXPECT_EQ(RecheckBy(far, true, true, t0, t0 + 7 * kMs).at_ns(), t0 + 14 * kMs);
  EXPECT_EQ(RecheckBy(far, true, true, t0, t0 + 900 * kMs).at_ns(), t0 + 1800 * kMs);
  // The membarrier failed: 1 ms slices however long the wait.
  EXPECT_EQ(RecheckBy(far, true, false, t0, t0 + 900 * kMs).at_ns(), t0 + 901 * kMs);
  // Never past the caller's slice (its check interval or the deadline).
  const Deadline soon = Deadline::AtNs(t0 + 1000 * kMs);
  EXPECT_EQ(RecheckBy(soon, true, true, t0, t0 + 900 * kMs).at_ns(), soon.at_ns());
  // A clock read before the first sleep's (the caller's order) counts as no time slept.
  EXPECT_EQ(RecheckBy(far, true, true, t0, t0 - 1).at_ns(), t0 - 1 + kMs);
}

TEST(WakeFence, AMissedWakeUpCostsAtMostTheTimeAlreadySlept) {
  // A waker that makes the condition true and never wakes anyone: what a waker on a CPU the
  // membarrier skipped can amount to. With asymmetric wakers the sleeper finds the condition
  // anyway, long before its check interval (60 s here) or the deadline (20 s) would end the sleep.
  (void)AsymmetricWakeAvailable();  // registers, so the sleeper's membarrier succeeds where offered
  hostccl::net::BarrierWords words{};
  std::atomic<bool> cond{false};
  hostccl::net::BarrierOptions opt;
  opt.asymmetric_wake = true;
  opt.check_every_ms = 60000;
  opt.check = [] { return hostccl::Status::Ok(); };
  const uint64_t start = NowNs();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the spin and yield phases
    cond.store(true, std::memory_order_seq_cst);                 // no WakeAll
  });
  const hostccl::Status st = hostccl::net::WaitUntil([&] { return cond.load(std::memory_order_seq_cst); }, &words,
                                                     Deadline::AfterMs(20000), opt, [] { return std::string("1"); });
  const double waited_ms = static_cast<double>(NowNs() - start) / 1e6;
  setter.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  // ~30-60 ms (the condition at 30 ms, found by the next look); 10 s leaves room for a loaded host.
  EXPECT_LT(waited_ms, 10000.0);
  RecordProperty("waited_ms", std::to_string(waited_ms));
}

TEST(WakeFence, NoMembarrierWhenTheGroupIsSymmetric) {
  // SleeperFence(false) is a no-op that reports success (the caller's seq_cst count is the barrier).
  EXPECT_TRUE(SleeperFence(false));
}

}  // namespace
