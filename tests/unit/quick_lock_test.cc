// QuickLock (src/common/quick_lock.h): a lock released by a plain store, whose waiters poll.
// Mutual exclusion under contention from more threads than cores, try_lock, and a waiter behind a
// holder that keeps the lock for a while gets it soon after the release (polls at most ~200 µs
// apart), never missing it.
#include "common/quick_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace hostccl {
namespace {

TEST(QuickLock, ExcludesUnderContention) {
  QuickLock lock;
  uint64_t counter = 0;  // plain: only ever touched under the lock
  int inside = 0;
  bool overlapped = false;
  constexpr int kThreads = 6, kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<QuickLock> lk(lock);
        if (++inside != 1) overlapped = true;
        ++counter;
        --inside;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(counter, uint64_t{kThreads} * kRounds);
}

TEST(QuickLock, TryLockFailsWhileHeldAndSucceedsAfter) {
  QuickLock lock;
  ASSERT_TRUE(lock.try_lock());
  bool other = true;
  std::thread([&] { other = lock.try_lock(); }).join();
  EXPECT_FALSE(other);
  lock.unlock();
  std::thread([&] {
    std::unique_lock<QuickLock> lk(lock, std::try_to_lock);
    other = lk.owns_lock();
  }).join();
  EXPECT_TRUE(other);
}

TEST(QuickLock, AWaiterBehindALongHolderGetsItAfterTheRelease) {
  QuickLock lock;
  std::atomic<bool> released{false};
  lock.lock();
  std::chrono::steady_clock::time_point got;
  std::thread waiter([&] {
    lock.lock();
    got = std::chrono::steady_clock::now();
    EXPECT_TRUE(released.load()) << "entered while the holder still held the lock";
    lock.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the waiter is in its sleeping polls
  released.store(true);
  const auto at = std::chrono::steady_clock::now();
  lock.unlock();
  waiter.join();
  // Generous for a loaded machine: the polls are 200 µs apart at most.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(got - at).count(), 1000);
}

}  // namespace
}  // namespace hostccl
