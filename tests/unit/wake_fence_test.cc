// The sleeper/waker handshake of src/transport/sync/wake_fence.h, as a store-buffering litmus
// test between two threads (the same registered process, which membarrier(GLOBAL_EXPEDITED)
// covers as it covers the other processes of a group).
//  - the waker stores `cond` and loads `sleepers` with only WakerFence(true) between them (a
//    compiler barrier); the sleeper increments `sleepers` (seq_cst) and loads `cond`;
//  - "both missed" (the waker saw no sleeper and the sleeper saw no condition) is the lost
//    wake-up. Without SleeperFence the x86 store buffer produces it now and then (the control
//    run counts how often on this machine); with SleeperFence(true) it must never happen.
//  - WakerFence(false) (the symmetric fallback) makes the control run clean as well.
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <thread>

#include "transport/sync/wake_fence.h"

namespace {

using hostccl::net::AsymmetricWakeAvailable;
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

// Runs the litmus until `iterations` are done, `stop_after_lost` lost wake-ups were seen or
// `budget` has passed; returns the lost wake-ups seen and sets *done to the iterations run.
// sleeper_fence / waker_asym pick the two sides.
int64_t RunLitmus(int64_t iterations, std::chrono::milliseconds budget, bool sleeper_fence, bool waker_asym,
                  int64_t* done, int64_t stop_after_lost = INT64_MAX) {
  GoLine gl;
  Line cond, ack, saw;
  std::thread waker([&] {
    for (int64_t i = 1;; ++i) {
      int64_t g;
      uint32_t k = 0;
      while ((g = gl.go.load(std::memory_order_acquire)) != i) {
        if (g < 0) return;
        if (++k == 0x10000) {
          k = 0;
          std::this_thread::yield();
        }
      }
      cond.v.store(i, std::memory_order_relaxed);
      WakerFence(waker_asym);
      saw.v.store(gl.sleepers.load(std::memory_order_relaxed), std::memory_order_relaxed);
      ack.v.store(i, std::memory_order_release);
    }
  });
  std::minstd_rand rng(7);
  int64_t lost = 0, i = 0;
  const auto end = std::chrono::steady_clock::now() + budget;
  while (i < iterations && lost < stop_after_lost) {
    ++i;
    gl.go.store(i, std::memory_order_release);
    for (int k = static_cast<int>(rng() % 16); k > 0; --k) __builtin_ia32_pause();  // vary the overlap
    gl.sleepers.exchange(i, std::memory_order_seq_cst);  // the locked count, as in WaitUntil
    const bool fenced = SleeperFence(sleeper_fence);
    EXPECT_TRUE(fenced) << "membarrier failed";
    const int64_t sleeper_saw = cond.v.load(std::memory_order_relaxed);
    for (uint32_t k = 0; ack.v.load(std::memory_order_acquire) != i;)
      if (++k == 0x10000) {
        k = 0;
        std::this_thread::yield();
      }
    if (saw.v.load(std::memory_order_relaxed) < i && sleeper_saw < i) ++lost;
    if ((i & 255) == 0 && std::chrono::steady_clock::now() > end) break;
  }
  gl.go.store(-1, std::memory_order_release);
  waker.join();
  *done = i;
  return lost;
}

TEST(WakeFence, TheSleepersMembarrierOrdersAWakerWithoutAFence) {
  if (!AsymmetricWakeAvailable())
    GTEST_SKIP() << "membarrier(GLOBAL_EXPEDITED) is not available here: groups use the symmetric fence";
  // Control: no barrier on the sleeper's side beyond its locked count. Run until 20 lost wake-ups
  // show (or 3 s), to learn how many iterations the checked run below needs.
  int64_t control_runs = 0;
  const int64_t control_lost = RunLitmus(INT64_MAX, std::chrono::milliseconds(3000), false, true, &control_runs, 20);
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
  const int64_t lost = RunLitmus(want, std::chrono::milliseconds(6000), true, true, &runs);
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
  int64_t runs = 0;
  const int64_t lost = RunLitmus(INT64_MAX, std::chrono::milliseconds(1500), false, false, &runs);
  EXPECT_EQ(lost, 0) << "in " << runs << " iterations";
  if (runs < 1000)
    GTEST_SKIP() << "only " << runs << " rounds in 1.5 s: the two threads did not run side by side, so the "
                 << "store buffer had no chance to reorder";
}

TEST(WakeFence, NoMembarrierWhenTheGroupIsSymmetric) {
  // SleeperFence(false) is a no-op that reports success (the caller's seq_cst count is the barrier).
  EXPECT_TRUE(SleeperFence(false));
}

}  // namespace
