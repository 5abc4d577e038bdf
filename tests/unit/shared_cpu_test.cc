// src/transport/sync/shared_cpu.h: what a rank does when a peer's last arrival ran on its CPU, and
// how it moves off that CPU.
//  - ShareAction: kMove when a lower rank published this CPU, kYield when only higher ones did,
//    kNone otherwise (other CPUs, nothing published yet, or the CPU unknown).
//  - MoveOffCpu: a thread on CPU c that may run on c and another CPU ends up elsewhere, with its
//    affinity as it was; a thread that may run on c alone is left alone (false).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "transport/sync/shared_cpu.h"

namespace {

using hostccl::net::CpuShare;
using hostccl::net::CurrentCpu;
using hostccl::net::MoveOffCpu;
using hostccl::net::ShareAction;

CpuShare Act(int self, int cpu, const std::vector<int32_t>& published) {
  return ShareAction(self, cpu, static_cast<int>(published.size()), [&](int r) { return published[r]; });
}

TEST(SharedCpu, ShareActionMovesTheHigherRankAndYieldsTheLower) {
  // Published values are 1 + CPU; 0 = not published yet.
  EXPECT_EQ(Act(1, 3, {4, 0}), CpuShare::kMove);         // rank 0 last ran on CPU 3, as rank 1 does
  EXPECT_EQ(Act(0, 3, {0, 4}), CpuShare::kYield);          // only rank 1 is on rank 0's CPU
  EXPECT_EQ(Act(1, 3, {5, 0}), CpuShare::kNone);           // rank 0 on CPU 4
  EXPECT_EQ(Act(1, 0, {0, 1}), CpuShare::kNone);           // rank 0 has not published
  EXPECT_EQ(Act(2, 1, {1, 2, 2, 2}), CpuShare::kMove);     // rank 1 shares CPU 1 with ranks 2 and 3
  EXPECT_EQ(Act(1, 1, {1, 2, 2, 2}), CpuShare::kYield);    // rank 1: only higher ranks share it
  EXPECT_EQ(Act(0, -1, {0, 0}), CpuShare::kNone);          // the CPU is unknown
  EXPECT_EQ(Act(0, 2, {3}), CpuShare::kNone);              // alone
}

// Runs f on a new thread whose affinity is `mask` (false when it cannot be set).
template <typename F>
bool OnThreadWithMask(const cpu_set_t& mask, F f) {
  bool set = false;
  std::thread t([&] {
    set = pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) == 0;
    if (set) f();
  });
  t.join();
  return set;
}

// The process's affinity, its first CPU, and a mask of that CPU alone.
struct Masks {
  cpu_set_t all;
  cpu_set_t one;
  int first = -1;
  Masks() {
    CPU_ZERO(&all);
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof all, &all) != 0) return;
    for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
      if (CPU_ISSET(c, &all)) first = c;
    if (first >= 0) CPU_SET(first, &one);
  }
};

TEST(SharedCpu, MoveOffCpuMovesTheThreadAndKeepsItsAffinity) {
  const Masks m;
  ASSERT_GE(m.first, 0);
  if (CPU_COUNT(&m.all) < 2) GTEST_SKIP() << "this process may run on one CPU only";
  const cpu_set_t& all = m.all;
  const int first = m.first;
  int before = -1, after = -1;
  bool moved = false;
  cpu_set_t kept;
  CPU_ZERO(&kept);
  ASSERT_TRUE(OnThreadWithMask(m.one, [&] {
    before = CurrentCpu();  // on `first`, its only CPU
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);  // may run anywhere now
    moved = MoveOffCpu(before);
    after = CurrentCpu();
    (void)pthread_getaffinity_np(pthread_self(), sizeof kept, &kept);
  }));
  EXPECT_EQ(before, first);
  EXPECT_TRUE(moved);
  EXPECT_NE(after, before);
  EXPECT_TRUE(CPU_EQUAL(&kept, &all)) << "the thread's affinity was not restored";
}

TEST(SharedCpu, MoveOffCpuLeavesAThreadBoundToThatCpu) {
  const Masks m;
  ASSERT_GE(m.first, 0);
  const cpu_set_t& one = m.one;
  const int first = m.first;
  bool moved = true;
  int after = -1;
  cpu_set_t kept;
  CPU_ZERO(&kept);
  ASSERT_TRUE(OnThreadWithMask(one, [&] {
    moved = MoveOffCpu(first);
    after = CurrentCpu();
    (void)pthread_getaffinity_np(pthread_self(), sizeof kept, &kept);
  }));
  EXPECT_FALSE(moved);
  EXPECT_EQ(after, first);
  EXPECT_TRUE(CPU_EQUAL(&kept, &one));
}

}  // namespace
