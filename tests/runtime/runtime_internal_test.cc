// Internal runtime tests: allocation registry, the stream executor's caller-thread path,
// device bookkeeping, VMM registration and the fp16 conversions (against F16C).
#include <immintrin.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/huge_pages.h"
#include "runtime/acl_codes.h"
#include "runtime/device.h"
#include "runtime/event.h"
#include "runtime/fp16.h"
#include "runtime/memory.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"
#include "runtime/vmm.h"

namespace hostccl::rt {
namespace {

TEST(Memory, AlignedMemfdBackedAndFindAllocation) {
  void* p = nullptr;
  ASSERT_EQ(Malloc(&p, 1000, 1), kAclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  auto a = FindAllocation(p);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->base, p);
  EXPECT_EQ(a->requested, 1000u);
  EXPECT_GE(a->mapped, 1000u);
  EXPECT_GE(a->memfd, 0);
  // Inside, last byte of the mapping, one past the end.
  auto in = FindAllocation(static_cast<char*>(p) + 999);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->base, p);
  EXPECT_TRUE(FindAllocation(static_cast<char*>(p) + a->mapped - 1).has_value());
  EXPECT_FALSE(FindAllocation(static_cast<char*>(p) + a->mapped).has_value());
  int on_stack = 0;
  EXPECT_FALSE(FindAllocation(&on_stack).has_value());
  // The memory is usable and shared through the memfd.
  std::memset(p, 0x5a, 1000);
  unsigned char byte = 0;
  ASSERT_EQ(pread(a->memfd, &byte, 1, 10), 1);
  EXPECT_EQ(byte, 0x5a);
  EXPECT_EQ(Free(static_cast<char*>(p) + 8), kAclInvalidParam);  // not the base
  EXPECT_EQ(Free(p), kAclSuccess);
  EXPECT_FALSE(FindAllocation(p).has_value());
  EXPECT_EQ(Free(p), kAclInvalidParam);  // double free
}

TEST(Memory, EveryPolicyAndNoPrefault) {
  for (uint32_t policy : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 0x100u, 0x1000u, 0x100000u}) {
    void* p = nullptr;
    ASSERT_EQ(Malloc(&p, 3 << 20, policy), kAclSuccess) << policy;
    static_cast<char*>(p)[(3 << 20) - 1] = 1;
    EXPECT_EQ(Free(p), kAclSuccess);
  }
  // Policy 2 (NORMAL_ONLY) is not a huge-page policy: prefaulted unless the knob says no, in
  // any of the boolean spellings. mincore reports which pages are backed.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto resident_pages = [page](void* q, size_t len) {
    std::vector<unsigned char> vec((len + page - 1) / page);
    EXPECT_EQ(mincore(q, len, vec.data()), 0);
    size_t n = 0;
    for (unsigned char v : vec) n += v & 1;
    return n;
  };
  for (const char* value : {"", "1", "0", "off", "FALSE", "no"}) {
    const bool off = value[0] != '\0' && value[0] != '1';
    if (value[0] == '\0') unsetenv("HOSTCCL_MALLOC_PREFAULT");
    else setenv("HOSTCCL_MALLOC_PREFAULT", value, 1);
    void* p = nullptr;
    ASSERT_EQ(Malloc(&p, 1 << 20, 2), kAclSuccess) << value;
    static_cast<char*>(p)[0] = 1;
    const size_t resident = resident_pages(p, 1 << 20);
    if (off) EXPECT_LT(resident, (1u << 20) / page / 2) << "HOSTCCL_MALLOC_PREFAULT=" << value;
    else EXPECT_EQ(resident, (1u << 20) / page) << "HOSTCCL_MALLOC_PREFAULT=" << value;
    EXPECT_EQ(Free(p), kAclSuccess);
  }
  unsetenv("HOSTCCL_MALLOC_PREFAULT");
}

TEST(Memory, HugePoliciesMapWholeTwoMegabytePagesInEveryMapping) {
  if (!ShmemCollapses()) GTEST_SKIP() << "this kernel does not collapse shmem into 2 MiB pages (MADV_COLLAPSE)";
  const size_t size = (5 << 20) + 100;  // two whole 2 MiB pages, then 4 KiB pages
  void* p = nullptr;
  ASSERT_EQ(Malloc(&p, size, 0), kAclSuccess);  // ACL_MEM_MALLOC_HUGE_FIRST
  const auto a = FindAllocation(p);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  EXPECT_EQ(PmdMappedBytes(p, a->mapped), 4u << 20);
  // Fresh memory reads zero, also where the collapse touched it.
  const std::vector<char> zero(size, 0);
  EXPECT_EQ(std::memcmp(p, zero.data(), size), 0);
  for (size_t i = 0; i < size; ++i) static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(i * 7 + 1);
  // A second mapping of the memfd, as a peer process makes it: placed to map the pages whole.
  void* q = MapSharedAligned(a->memfd, a->mapped, 0, MAP_POPULATE);
  ASSERT_NE(q, MAP_FAILED);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % kHugePageBytes, 0u);
  EXPECT_EQ(PmdMappedBytes(q, a->mapped), 4u << 20);
  EXPECT_EQ(std::memcmp(p, q, size), 0);
  munmap(q, a->mapped);
  EXPECT_EQ(Free(p), kAclSuccess);
  // A mapping at a file offset is congruent to it modulo 2 MiB.
  const int fd = memfd_create("offset", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8 << 20), 0);
  const size_t off = (2 << 20) + 4096 * 3;
  void* m = MapSharedAligned(fd, 4 << 20, off, 0);
  close(fd);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ((reinterpret_cast<uintptr_t>(m) - off) % kHugePageBytes, 0u);
  munmap(m, 4 << 20);
  // The host's own setting may give even NORMAL_ONLY memory 2 MiB pages ("always" and the like).
  const std::string host = ShmemHugeSetting();
  if (host != "never" && host != "advise" && host != "deny") return;
  // NORMAL_ONLY, and a huge policy with the prefault off (memory backed on first touch), stay
  // in 4 KiB pages.
  for (const bool prefault_off : {false, true}) {
    if (prefault_off) setenv("HOSTCCL_MALLOC_PREFAULT", "0", 1);
    ASSERT_EQ(Malloc(&p, 4 << 20, prefault_off ? 0 : 2), kAclSuccess);
    std::memset(p, 1, 4 << 20);
    EXPECT_EQ(PmdMappedBytes(p, 4 << 20), 0u) << "prefault off: " << prefault_off;
    EXPECT_EQ(Free(p), kAclSuccess);
  }
  unsetenv("HOSTCCL_MALLOC_PREFAULT");
}

TEST(Memory, ConcurrentAllocationsStayConsistent) {
  size_t before = LiveAllocationCount();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        size_t size = 64 + static_cast<size_t>((t * 977 + i * 131) % 20000);
        if (Malloc(&p, size, 2) != kAclSuccess) { ++bad; continue; }
        auto a = FindAllocation(static_cast<char*>(p) + size / 2);
        if (!a || a->base != p || a->requested != size) ++bad;
        if (Free(p) != kAclSuccess) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(LiveAllocationCount(), before);
}

TEST(Stream, EnqueueThenSyncRunsOnCallerThread) {
  StreamImpl s(0, 0, 0);
  int on_caller = 0;
  constexpr int kRounds = 100;
  for (int i = 0; i < kRounds; ++i) {
    std::thread::id ran;
    ASSERT_TRUE(s.Enqueue([&ran] { ran = std::this_thread::get_id(); return Status::Ok(); }).ok());
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
    on_caller += ran == std::this_thread::get_id();
  }
  // The worker's grace period leaves fresh tasks to the synchronizer; only a preemption of more
  // than 100 us between the two calls lets the worker take one.
  EXPECT_GE(on_caller, kRounds * 9 / 10);
}

TEST(Stream, WorkerRunsWithoutSynchronize) {
  StreamImpl s(0, 0, 0);
  std::atomic<bool> ran{false};
  std::thread::id where;
  ASSERT_TRUE(s.Enqueue([&] { where = std::this_thread::get_id(); ran = true; return Status::Ok(); }).ok());
  for (int i = 0; i < 5000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(ran.load());
  EXPECT_NE(where, std::this_thread::get_id());
  EXPECT_EQ(where, s.worker_id());
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
}

// While synchronizers run every task, the idle worker looks at the queue less and less often
// (each look is a wake-up that takes a CPU from some rank when ranks outnumber cores).
TEST(Stream, WorkerBacksOffWhileSynchronizersRunEverything) {
  StreamImpl s(0, 0, 0);
  EXPECT_EQ(s.poll_period_ns(), StreamImpl::kWorkerPollNs);
  uint64_t t0 = NowNs();
  while (s.poll_period_ns() < StreamImpl::kWorkerPollMaxNs && NowNs() - t0 < 5'000'000'000ull) {
    ASSERT_TRUE(s.Enqueue([] { return Status::Ok(); }).ok());
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_EQ(s.poll_period_ns(), StreamImpl::kWorkerPollMaxNs);
  // A task left to the worker still runs (within a poll period plus the grace).
  std::atomic<bool> ran{false};
  ASSERT_TRUE(s.Enqueue([&] { ran = true; return Status::Ok(); }).ok());
  for (int i = 0; i < 5000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(ran.load());
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
}

// A stream whose tasks its worker runs (nobody synchronizes them, e.g. one thread driving several
// thread ranks) keeps the short poll period.
TEST(Stream, WorkerKeepsItsPeriodWhenTasksAreLeftToIt) {
  StreamImpl s(0, 0, 0);
  for (int i = 0; i < 20; ++i) {
    const uint64_t target = s.enqueued() + 1;
    ASSERT_TRUE(s.Enqueue([] { return Status::Ok(); }).ok());
    for (int k = 0; k < 5000 && s.completed() < target; ++k) std::this_thread::sleep_for(std::chrono::microseconds(500));
    ASSERT_EQ(s.completed(), target);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // several polls with nothing to do
  }
  EXPECT_EQ(s.poll_period_ns(), StreamImpl::kWorkerPollNs);
}

// Waiting for an event does not run tasks: it urges the stream that records it.
TEST(Stream, EventWaitsUrgeTheRecordingStream) {
  void* h = nullptr;
  void* ev = nullptr;
  ASSERT_EQ(CreateStream(&h, 0, 0), kAclSuccess);
  ASSERT_EQ(CreateEvent(&ev, 0), kAclSuccess);
  auto* s = dynamic_cast<StreamImpl*>(LookupStream(h));
  ASSERT_NE(s, nullptr);
  std::atomic<bool> release{false};
  ASSERT_TRUE(s->Enqueue([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  }).ok());
  ASSERT_EQ(RecordEvent(ev, h), kAclSuccess);
  const uint64_t before = s->urge_count();
  EXPECT_EQ(QueryEventComplete(ev), 0);
  EXPECT_EQ(s->urge_count(), before + 1);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release = true;
  });
  EXPECT_EQ(SynchronizeEvent(ev), kAclSuccess);
  releaser.join();
  EXPECT_EQ(s->urge_count(), before + 2);
  EXPECT_EQ(QueryEventComplete(ev), 1);
  EXPECT_EQ(s->urge_count(), before + 2);  // a complete event urges nobody
  EXPECT_EQ(DestroyEvent(ev), kAclSuccess);
  EXPECT_EQ(DestroyStream(h), kAclSuccess);
}

TEST(Stream, FirstErrorIsStickyUntilReportedAndLaterTasksRun) {
  StreamImpl s(0, 0, 0);
  int after = 0;
  ASSERT_TRUE(s.Enqueue([] { return MakeStatus(Code::kTimeout, "peer 3 silent"); }).ok());
  ASSERT_TRUE(s.Enqueue([] { return MakeStatus(Code::kRemote, "second"); }).ok());
  ASSERT_TRUE(s.Enqueue([&] { ++after; return Status::Ok(); }).ok());
  Status st = s.Synchronize(Deadline::Infinite());
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_EQ(st.message(), "peer 3 silent");
  EXPECT_EQ(after, 1);
  EXPECT_EQ(TaskErrorToAcl(st), kAclRtTaskTimeout);
  EXPECT_EQ(TaskErrorToAcl(MakeStatus(Code::kRemote, "x")), kAclRtInternalError);
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());  // reported once
}

TEST(Stream, FiniteDeadlineTimesOutOnBlockedTaskAndKeepsOrder) {
  StreamImpl s(0, 0, 0);
  std::atomic<bool> release{false};
  std::vector<int> order;
  ASSERT_TRUE(s.Enqueue([&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    order.push_back(1);
    return Status::Ok();
  }).ok());
  ASSERT_TRUE(s.Enqueue([&] { order.push_back(2); return Status::Ok(); }).ok());
  uint64_t t0 = NowNs();
  Status st = s.Synchronize(Deadline::AfterMs(50));
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_LT(NowNs() - t0, 5'000'000'000ull);
  release = true;
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

// A synchronize with a finite deadline never runs tasks itself: it waits for the worker, and a
// task's end must wake it at once (the end notifies only counted waiters), not at its deadline.
TEST(Stream, TimedSynchronizeWakesWhenTheWorkersTaskEnds) {
  StreamImpl s(0, 0, 0, /*depth=*/-1, /*worker_grace_ns=*/0);
  std::atomic<bool> started{false};
  ASSERT_TRUE(s.Enqueue([&] {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return Status::Ok();
  }).ok());
  for (int i = 0; i < 10000 && !started; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(started) << "the worker did not start the task";
  const uint64_t t0 = NowNs();
  EXPECT_TRUE(s.Synchronize(Deadline::AfterMs(30000)).ok());
  EXPECT_LT(NowNs() - t0, 10'000'000'000ull) << "woken by its deadline, not by the task's end";
  EXPECT_EQ(s.completed(), 1u);
}

// A task keeps a callable of up to Task::kInline bytes inside itself (a collective's record) and
// a larger one on the heap; both run, copy (a capture replays tasks), move, and release what they
// captured when they are destroyed or emptied.
TEST(Task, InlineAndHeapCallablesRunCopyMoveAndRelease) {
  auto token = std::make_shared<int>(5);
  struct Big {
    char pad[Task::kInline + 8];
  };
  {
    auto small_fn = [t = token]() { return Status::Ok(); };
    static_assert(Task::Fits<decltype(small_fn)>());
  }
  static_assert(!Task::Fits<Big>());
  int ran = 0;
  Big big{};
  big.pad[Task::kInline] = 3;
  Task small([t = token, &ran] { ran += *t; return Status::Ok(); });
  Task large([t = token, big, &ran] { ran += big.pad[Task::kInline]; return Status(Code::kRemote, "large"); });
  EXPECT_EQ(token.use_count(), 3);
  ASSERT_TRUE(small().ok());
  EXPECT_EQ(large().code(), Code::kRemote);
  EXPECT_EQ(ran, 8);
  Task small_copy = small, large_copy = large;  // copies share nothing but the captures
  EXPECT_EQ(token.use_count(), 5);
  Task moved = std::move(small);
  EXPECT_FALSE(static_cast<bool>(small));  // NOLINT: moved-from is empty
  EXPECT_EQ(token.use_count(), 5);
  ASSERT_TRUE(moved().ok());
  EXPECT_EQ(large_copy().message(), "large");
  EXPECT_EQ(ran, 16);
  moved = nullptr;
  large = std::move(large_copy);
  EXPECT_EQ(token.use_count(), 3);
  small_copy = Task();
  large = nullptr;
  EXPECT_EQ(token.use_count(), 1);
}

// Inline attempts: on an idle stream the task runs at once on the enqueuing thread with
// Attempting() set; one that returns kAgain goes back into the queue at its place (tasks enqueued
// after it run after it) and runs again, not as an attempt, when the stream runs it; the next
// attempt of the enqueuing thread first retries the queued attempts, front first.
TEST(Stream, AttemptRunsAtOnceOrKeepsItsPlace) {
  // The worker leaves queued tasks alone for a minute: the checks between the enqueues count on
  // nothing else running them (with the usual 100 µs a loaded TSan run saw the worker take the
  // given-up attempt before the count was read). The synchronizes run them on this thread.
  StreamImpl s(0, 0, 0, /*depth=*/-1, /*worker_grace_ns=*/60ull * 1000 * 1000 * 1000);
  std::vector<std::string> log;
  // Runs at once, on this thread, as an attempt.
  std::thread::id where;
  ASSERT_TRUE(s.EnqueueAttempt([&] {
    where = std::this_thread::get_id();
    log.push_back(Attempting() ? "a1" : "q1");
    return Status::Ok();
  }, false).ok());
  EXPECT_EQ(where, std::this_thread::get_id());
  EXPECT_EQ(s.completed(), 1u);
  EXPECT_FALSE(Attempting());
  // Gives up twice as an attempt; a plain task enqueued after it must wait for it.
  int tries = 0;
  ASSERT_TRUE(s.EnqueueAttempt([&] {
    ++tries;
    log.push_back(Attempting() ? "a2" : "q2");
    return Attempting() && tries < 3 ? Status(Code::kAgain, "later") : Status::Ok();
  }, false).ok());
  EXPECT_EQ(s.completed(), 1u);
  EXPECT_EQ(s.attempts_queued(), 1u);
  // Another attempt retries the queued one first (it gives up again), then queues itself.
  ASSERT_TRUE(s.EnqueueAttempt([&] { log.push_back(Attempting() ? "a3" : "q3"); return Status::Ok(); }, false).ok());
  ASSERT_TRUE(s.Enqueue([&] { log.push_back(Attempting() ? "a4" : "q4"); return Status::Ok(); }).ok());
  EXPECT_EQ(s.enqueued(), 4u);
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(s.completed(), 4u);
  const std::vector<std::string> want = {"a1", "a2", "a2", "q2", "q3", "q4"};
  EXPECT_EQ(log, want);
  // An attempt's error is the task's: reported by the next synchronize, later tasks still run.
  ASSERT_TRUE(s.EnqueueAttempt([] { return Status(Code::kPara, "bad call"); }, false).ok());
  bool later = false;
  ASSERT_TRUE(s.EnqueueAttempt([&] { later = true; return Status::Ok(); }, false).ok());
  Status st = s.Synchronize(Deadline::Infinite());
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_TRUE(later);
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
}

// The attempt without a task object: BeginAttempt hands out the next number only when nothing is
// queued or running (and never inside another attempt), and keeps the stream until the attempt's
// end: another thread's enqueue meanwhile waits for it. EndAttempt records the result (an error
// is reported by the next synchronize); RequeueAttempt puts the given-up call at its place, ahead
// of that enqueue, to run again from the stream (not as an attempt).
TEST(Stream, TasklessAttemptTakesItsNumberAndKeepsItsPlace) {
  // The worker leaves fresh tasks alone for a minute (its grace), so the queued ones are still
  // there below, however late the other thread's enqueue gets the lock.
  StreamImpl s(0, 0, 0, -1, 60ull * 1000 * 1000 * 1000);
  const uint64_t a = s.BeginAttempt(ThisThread());
  ASSERT_EQ(a, 1u);
  EXPECT_TRUE(Attempting());
  EXPECT_EQ(s.BeginAttempt(ThisThread()), 0u);  // attempts never nest
  std::vector<std::string> log;
  std::atomic<bool> enqueued{false};
  std::thread other([&] {
    EXPECT_TRUE(s.Enqueue([&] { log.push_back(Attempting() ? "a2" : "q2"); return Status::Ok(); }).ok());
    enqueued.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(enqueued.load());  // the attempt holds the stream
  s.RequeueAttempt(a, [&] { log.push_back(Attempting() ? "a1" : "q1"); return Status::Ok(); }, ThisThread(), false);
  other.join();
  EXPECT_TRUE(enqueued.load());
  EXPECT_FALSE(Attempting());
  const uint64_t queued = s.BeginAttempt(ThisThread());
  EXPECT_EQ(queued, 0u);  // tasks are queued: take the queue's way
  if (queued != 0) s.EndAttempt(queued, Status::Ok(), ThisThread());  // it holds the stream
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"q1", "q2"}));
  EXPECT_EQ(s.attempts_queued(), 1u);
  const uint64_t b = s.BeginAttempt(ThisThread());
  ASSERT_EQ(b, 3u);
  s.EndAttempt(b, Status(Code::kPara, "bad call"), ThisThread());
  EXPECT_EQ(s.completed(), 3u);
  EXPECT_EQ(s.Synchronize(Deadline::Infinite()).code(), Code::kPara);
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  const uint64_t c = s.BeginAttempt(ThisThread());
  ASSERT_EQ(c, 4u);
  s.EndAttempt(c, Status::Ok(), ThisThread());
  EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(s.attempt_count(), 3u);
}

// A busy stream (a task runs on another thread) never runs an attempt beside it: the attempt is
// queued and runs after the running task, in order.
TEST(Stream, AttemptOnABusyStreamIsQueued) {
  StreamImpl s(0, 0, 0);
  std::atomic<bool> release{false}, started{false};
  std::vector<int> order;
  ASSERT_TRUE(s.Enqueue([&] {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    order.push_back(1);
    return Status::Ok();
  }).ok());
  std::thread sync([&] { EXPECT_TRUE(s.Synchronize(Deadline::Infinite()).ok()); });  // runs task 1
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool attempted = false;
  ASSERT_TRUE(
      s.EnqueueAttempt([&] { attempted = Attempting(); order.push_back(2); return Status::Ok(); }, false).ok());
  EXPECT_TRUE(order.empty());
  release = true;
  sync.join();
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_FALSE(attempted);
}

// The queue is a ring that grows by doubling: tasks enqueued while it wraps around its end and
// grows still run in enqueue order, and a task's captures are released once it ran.
TEST(Stream, QueueKeepsOrderWhileItWrapsAndGrows) {
  StreamImpl s(0, 0, 0);
  auto token = std::make_shared<int>(0);
  std::vector<int> order;
  int next = 0;
  for (int round : {5, 13, 40, 3, 200, 3000, 7, 2500}) {
    for (int i = 0; i < round; ++i, ++next)
      ASSERT_TRUE(s.Enqueue([&order, n = next, t = token] { order.push_back(n); return Status::Ok(); }).ok());
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
    EXPECT_EQ(token.use_count(), 1) << "round " << round;
  }
  ASSERT_EQ(static_cast<int>(order.size()), next);
  for (int i = 0; i < next; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
}

// Task storage comes from a slab mapped when the stream is created (depth blocks, 1024 without a
// bound), so the first burst of queued calls faults nothing in; a deeper queue takes the rest
// from the heap and gives it back once drained, and a short one reuses the slab's blocks.
// (An unbounded stream: with a depth, the enqueue of task 1024 would run the gate itself.)
TEST(Stream, QueueTakesItsStorageFromASlabMappedAtCreation) {
  StreamImpl s(0, 0, 0, /*depth=*/0);
  EXPECT_EQ(s.queue_free_blocks(), StreamImpl::kSlabBlocks);  // before any task
  auto fill = [&](int n) {  // n tasks queued at once: a gate holds them until the synchronize
    std::atomic<bool> open{false};
    ASSERT_TRUE(s.Enqueue([&open] {
      while (!open.load()) std::this_thread::yield();
      return Status::Ok();
    }).ok());
    for (int i = 1; i < n; ++i) ASSERT_TRUE(s.Enqueue([] { return Status::Ok(); }).ok());
    open = true;
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  };
  fill(5);
  EXPECT_EQ(s.queue_free_blocks(), StreamImpl::kSlabBlocks);
  fill(3000);  // 1976 blocks from the heap, freed as the queue drained
  EXPECT_EQ(s.queue_free_blocks(), StreamImpl::kSlabBlocks);
  fill(7);
  EXPECT_EQ(s.queue_free_blocks(), StreamImpl::kSlabBlocks);
  EXPECT_EQ(StreamImpl(0, 0, 0, /*depth=*/64).queue_free_blocks(), 64u);
}

// A stream holds at most `depth` tasks not started: the enqueue that finds it full runs the front
// tasks on its own thread (the worker stands back) until half are left. Order is kept, the storage
// stays within the free list, and tasks left behind still run.
TEST(Stream, DepthBoundsTheQueueAndTheEnqueuerRunsTheFront) {
  EXPECT_EQ(StreamImpl(0, 0, 0).depth(), 1024u);  // HOSTCCL_STREAM_DEPTH unset
  constexpr size_t kDepth = 64;
  StreamImpl s(0, 0, 0, kDepth);
  std::vector<int> order;
  std::atomic<int> on_caller{0};
  const auto me = std::this_thread::get_id();
  constexpr int kTasks = 5000;
  for (int i = 0; i < kTasks; ++i)
    ASSERT_TRUE(s.Enqueue([&, i] {
      order.push_back(i);
      if (std::this_thread::get_id() == me) ++on_caller;
      return Status::Ok();
    }).ok());
  EXPECT_LE(s.max_queued(), kDepth);
  EXPECT_GE(s.backpressures(), 1u);
  EXPECT_LE(s.queue_free_blocks(), kDepth);
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  ASSERT_EQ(order.size(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
  // All but the last few hundred ran before the synchronize, most on this thread (the worker
  // may take some while the enqueuer is preempted).
  EXPECT_GE(on_caller.load(), kTasks / 2);
}

// The enqueuer never runs a task that waits for something outside the stream (an event wait):
// that something may be what the enqueuing thread does next. The queue then grows past the depth
// instead of waiting; once the wait is released everything runs. A task that enqueues onto its
// own stream is not held back either (it would wait for itself).
TEST(Stream, DepthNeverRunsAHostWaitNorHoldsATaskBack) {
  StreamImpl s(0, 0, 0, /*depth=*/8);
  // The gate waits in front of the queue, or (started) runs on the worker: either way the 100
  // enqueues behind it return without waiting for it.
  for (bool started_first : {false, true}) {
    SCOPED_TRACE(started_first ? "gate running on the worker" : "gate queued in front");
    std::atomic<bool> open{false}, started{false};
    std::vector<int> order;
    ASSERT_TRUE(s.EnqueueHostWait([&] {
      started = true;
      while (!open.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
      order.push_back(-1);
      return Status::Ok();
    }).ok());
    for (int i = 0; started_first && i < 5000 && !started; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (started_first) ASSERT_TRUE(started.load());  // (queued in front: the worker may start it meanwhile)
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(s.Enqueue([&, i] { order.push_back(i); return Status::Ok(); }).ok());
    EXPECT_GE(s.max_queued(), 99u);  // not held back
    open = true;
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
    ASSERT_EQ(order.size(), 101u);
    EXPECT_EQ(order[0], -1);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(order[static_cast<size_t>(i) + 1], i);
  }

  // From inside a task: 50 enqueues onto the same stream, well past its depth.
  int inner = 0;
  ASSERT_TRUE(s.Enqueue([&] {
    for (int i = 0; i < 50; ++i)
      if (!s.Enqueue([&] { ++inner; return Status::Ok(); }).ok()) return Status(Code::kInternal, "enqueue failed");
    return Status::Ok();
  }).ok());
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());  // the outer task (and what it enqueued)
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());  // whatever of the inner ones was left
  EXPECT_EQ(inner, 50);
}

// Attempts of ranks that share this process (Communicator::Submit) queue as host waits: one thread
// may drive every rank, so a given-up attempt waits for calls that thread issues only later. An
// enqueuer that finds the queue full must neither run such a task nor wait for it, whether it came
// through EnqueueAttempt or was handed over by RequeueAttempt; the queue grows past its depth
// instead. Each task waits for the gate, which opens only after the enqueues returned: a task run
// before that waits 2 s at most and is counted (the ones after it do not wait), not a hang.
TEST(Stream, DepthNeverRunsAHostWaitAttempt) {
  for (bool taskless : {false, true}) {
    SCOPED_TRACE(taskless ? "first handed over by RequeueAttempt" : "all through EnqueueAttempt");
    StreamImpl s(0, 0, 0, /*depth=*/8, /*worker_grace_ns=*/60ull * 1000 * 1000 * 1000);
    std::atomic<bool> open{false};
    std::atomic<int> early{0}, ran{0};
    const auto gated = [&] {
      if (Attempting()) return Status(Code::kAgain, "the peers have not arrived");
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!open.load() && early.load() == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (!open.load()) ++early;
      ++ran;
      return Status::Ok();
    };
    if (taskless) {
      const uint64_t a = s.BeginAttempt(ThisThread());
      ASSERT_EQ(a, 1u);
      s.RequeueAttempt(a, gated, ThisThread(), true);
    }
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(s.EnqueueAttempt(gated, true).ok());
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(s.Enqueue([&] { ++ran; return Status::Ok(); }).ok());
    EXPECT_GE(s.max_queued(), 100u);  // not held back
    open = true;
    ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
    EXPECT_EQ(ran.load(), taskless ? 101 : 100);
    EXPECT_EQ(early.load(), 0) << "tasks ran while the thread that would open their gate was held in an enqueue";
  }
}

// While the worker runs a task, a full queue's enqueue waits for it to end and then runs the rest
// itself: the tasks keep their order and nobody runs two at once.
TEST(Stream, DepthWaitsForTheWorkersTask) {
  StreamImpl s(0, 0, 0, /*depth=*/16);
  std::atomic<int> running{0}, overlap{0};
  std::vector<int> order;
  std::atomic<bool> started{false};
  ASSERT_TRUE(s.Enqueue([&] {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    order.push_back(0);
    return Status::Ok();
  }).ok());
  for (int i = 0; i < 5000 && !started; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(started.load());  // the worker runs task 0
  for (int i = 1; i <= 200; ++i)
    ASSERT_TRUE(s.Enqueue([&, i] {
      if (running.fetch_add(1) != 0) ++overlap;
      order.push_back(i);
      running.fetch_sub(1);
      return Status::Ok();
    }).ok());
  EXPECT_LE(s.max_queued(), 16u);
  ASSERT_TRUE(s.Synchronize(Deadline::Infinite()).ok());
  EXPECT_EQ(overlap.load(), 0);
  ASSERT_EQ(order.size(), 201u);
  for (int i = 0; i <= 200; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(Stream, LookupOnlyLiveHandles) {
  EXPECT_EQ(LookupStream(nullptr), nullptr);
  int junk;
  EXPECT_EQ(LookupStream(&junk), nullptr);
  void* h = nullptr;
  ASSERT_EQ(CreateStream(&h, 0, 0), kAclSuccess);
  Stream* s = LookupStream(h);
  ASSERT_NE(s, nullptr);
  int x = 0;
  ASSERT_TRUE(s->Enqueue([&] { x = 7; return Status::Ok(); }).ok());
  EXPECT_EQ(SynchronizeStream(h, -1, "test"), kAclSuccess);
  EXPECT_EQ(x, 7);
  EXPECT_EQ(DestroyStream(h), kAclSuccess);
  EXPECT_EQ(LookupStream(h), nullptr);
  EXPECT_EQ(SynchronizeStream(h, -1, "test"), kAclInvalidParam);
}

TEST(Devices, CountVisibleDevicesAndSocName) {
  EXPECT_EQ(DeviceCount(), 8u);
  setenv("HOSTCCL_DEVICE_COUNT", "4", 1);
  EXPECT_EQ(DeviceCount(), 4u);
  setenv("ASCEND_RT_VISIBLE_DEVICES", "3,1", 1);
  EXPECT_EQ(DeviceCount(), 2u);
  EXPECT_EQ(PhysicalDeviceId(0), 3);
  EXPECT_EQ(PhysicalDeviceId(1), 1);
  EXPECT_EQ(CheckDevice(2, "test"), kAclRtInvalidDeviceId);
  setenv("ASCEND_RT_VISIBLE_DEVICES", "2,9,1", 1);  // stops at the invalid entry
  EXPECT_EQ(DeviceCount(), 1u);
  unsetenv("ASCEND_RT_VISIBLE_DEVICES");
  unsetenv("HOSTCCL_DEVICE_COUNT");

  EXPECT_STREQ(SocName(), "HostCPU");
  setenv("HOSTCCL_SOC", "atlasa2", 1);
  EXPECT_STREQ(SocName(), "AtlasA2");
  setenv("HOSTCCL_SOC", "ASCEND950", 1);
  EXPECT_STREQ(SocName(), "Ascend950");
  setenv("HOSTCCL_SOC", "Ascend910B3", 1);
  EXPECT_STREQ(SocName(), "HostCPU");
  unsetenv("HOSTCCL_SOC");
}

TEST(Devices, ThreadLocalAndReferenceCounted) {
  ASSERT_EQ(SetDevice(5), kAclSuccess);
  EXPECT_EQ(CurrentDevice(), 5);
  std::thread([] {
    EXPECT_EQ(CurrentDevice(), -1);
    int32_t d = 0;
    EXPECT_EQ(GetDevice(&d), kAclRtContextNull);
    EXPECT_EQ(SetDevice(5), kAclSuccess);
    EXPECT_EQ(SetDevice(6), kAclSuccess);
    EXPECT_EQ(GetDevice(&d), kAclSuccess);
    EXPECT_EQ(d, 6);
  }).join();
  EXPECT_EQ(CurrentDevice(), 5);
  EXPECT_EQ(DeviceRefCount(5), 2);
  EXPECT_EQ(ResetDevice(5), kAclSuccess);
  EXPECT_EQ(DeviceRefCount(5), 1);
  EXPECT_EQ(CurrentDevice(), -1);
  EXPECT_EQ(ResetDeviceForce(5), kAclSuccess);
  EXPECT_EQ(DeviceRefCount(5), 0);
  EXPECT_EQ(ResetDeviceForce(6), kAclSuccess);
  EXPECT_EQ(SetDevice(8), kAclRtInvalidDeviceId);
  EXPECT_EQ(SetDevice(-1), kAclRtInvalidDeviceId);
}

TEST(Vmm, ReserveMapUnmapRelease) {
  size_t gran = 0;
  ASSERT_EQ(MemGetAllocationGranularity(1, &gran), kAclSuccess);
  EXPECT_EQ(gran, 2u << 20);
  void* va = nullptr;
  ASSERT_EQ(ReserveMemAddress(&va, 4 * gran, 0, nullptr, 1), kAclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(va) % gran, 0u);
  void* h = nullptr;
  ASSERT_EQ(MallocPhysical(&h, 2 * gran, 3, 0), kAclSuccess);
  char* second = static_cast<char*>(va) + gran;
  ASSERT_EQ(MapMem(second, gran, gran, h, 0), kAclSuccess);
  EXPECT_EQ(MapMem(second, gran, 0, h, 0), kAclInvalidParam);  // overlap
  std::memset(second, 7, gran);
  auto a = FindAllocation(second + 100);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->base, second);
  EXPECT_EQ(a->memfd_offset, gran);
  EXPECT_EQ(a->device, 3);
  EXPECT_EQ(FreePhysical(h), kAclSuccess);  // the map keeps its own reference
  EXPECT_EQ(second[gran - 1], 7);
  EXPECT_EQ(UnmapMem(second), kAclSuccess);
  EXPECT_FALSE(FindAllocation(second).has_value());
  EXPECT_EQ(UnmapMem(second), kAclInvalidParam);
  EXPECT_EQ(ReleaseMemAddress(va), kAclSuccess);
  EXPECT_EQ(ReleaseMemAddress(va), kAclInvalidParam);
}

uint16_t RefHalf(float f) { return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }
float RefFloat(uint16_t h) { return _cvtsh_ss(h); }

TEST(Fp16, MatchesF16cEverywhere) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C reference on this CPU";
  // Every half converts to float exactly; NaNs stay NaN.
  for (uint32_t h = 0; h < 65536; ++h) {
    float got = HalfToFloat(static_cast<uint16_t>(h));
    float want = RefFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << std::hex << h;
    }
    if (!std::isnan(want)) ASSERT_EQ(FloatToHalf(got), h) << std::hex << h;
  }
  // A stride through all float bit patterns (covers ties, subnormals, overflow) plus edges.
  auto check = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    uint16_t got = FloatToHalf(f), want = RefHalf(f);
    if (std::isnan(f)) {
      ASSERT_EQ(got & 0x7c00, 0x7c00) << std::hex << bits;
      ASSERT_NE(got & 0x3ff, 0) << std::hex << bits;
      ASSERT_EQ(got & 0x8000, want & 0x8000) << std::hex << bits;
    } else {
      ASSERT_EQ(got, want) << std::hex << bits;
    }
  };
  for (uint64_t b = 0; b < (1ull << 32); b += 4099) check(static_cast<uint32_t>(b));
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x33000000u, 0x33000001u, 0x33800000u, 0x387fe000u, 0x387ff000u,
                     0x38800000u, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                     0x7f800001u, 0x3f800000u, 0x3f801000u, 0x3f803000u})
    check(b);
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604645e-8f);
}

}  // namespace
}  // namespace hostccl::rt
