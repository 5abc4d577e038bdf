// Pipelined completion of small calls (issue 18): a non-root of a small HcclReduce over shared
// memory (processes of one host) completes once its input is in its arrival slot, so its stream
// moves on to the next queued call; aclrtSynchronizeStream then waits until the peers are done
// with those calls and reports their errors (docs/semantics.md "When errors surface").
//  - BoundedRunAhead: with the root absent, a non-root completes exactly kRing calls (the ring of
//    arrival slots, net::ShmGroup::RingSlots: 64 at 2 ranks) and no more; when the root comes,
//    every call's result is the rank-order fold of that call's inputs and both synchronizes pass.
//  - AttemptsStopAtAFullRing: the same bound when every call is an inline attempt (no other
//    task on the stream, so each call runs on the calling thread): the attempt that finds the
//    ring full waits (ShmGroup::AwaitRingAttempt) and then gives up, never reusing a slot the
//    absent root has not read; the root's results and both synchronizes are exact.
//  - MismatchMidQueue: 4 ranks queue 200 calls; rank 3's call 100 (then 190) differs (count).
//    Every rank's synchronize fails within 2 s, naming rank 3 and another rank and saying
//    "mismatch"; the communicator then fails later calls. The same with 3000 calls, more than
//    the stream holds (HOSTCCL_STREAM_DEPTH), and rank 3's call 2500 differing.
//  - RootDisagreementMidQueue: 2 ranks; at call 100 (then 190) each names the other as root, so
//    both only post (nobody folds): the fingerprint history still catches it on both ranks.
//  - RootDiesMidQueue: 3 ranks; the root kills itself after 50 of 200 calls; the non-roots'
//    synchronizes fail within 2 s naming rank 0 (bounded: flow control plus peer-death checks).
//  - AnIdlePlainNonRootDoesNotHoldTheSettle: a non-root that ran ahead settles although the other
//    non-root, a plain arrival, issues nothing more for a while (a correct program).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"
#include "fault/runahead_util.h"

namespace {

using hostccl::faulttest::Contains;
using hostccl::faulttest::DevBuf;
using hostccl::faulttest::ExpectQueueFails;
using hostccl::faulttest::NamesRank;
using hostccl::faulttest::RunAheadShmOptions;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRing = 64;  // net::ShmGroup::RingSlots(2)
constexpr int64_t kFailWithinMs = hostccl::faulttest::kRunAheadFailWithinMs;

// Input of rank r for call i, element e (small integers: exact in fp32).
float Input(int r, int i, int e) { return static_cast<float>(r * 1000 + i * 2 + e); }

// A queue of `calls` 2-element fp32 Reduces to root 0: call i reads elements 2i, 2i+1 of this
// rank's sendBuf (filled with Input) and writes the same of the root's recvBuf.
class ReduceQueue {
 public:
  ReduceQueue(RankContext& ctx, int calls) : ctx_(ctx), calls_(calls) {}
  bool Prepare() {
    if (!send_.Alloc(static_cast<size_t>(calls_) * 2 * sizeof(float), 0) ||
        !recv_.Alloc(static_cast<size_t>(calls_) * 2 * sizeof(float), -1))
      return ctx_.Fail("aclrtMalloc failed");
    std::vector<float> host(static_cast<size_t>(calls_) * 2);
    for (int i = 0; i < calls_; ++i)
      for (int e = 0; e < 2; ++e) host[static_cast<size_t>(i * 2 + e)] = Input(ctx_.rank, i, e);
    if (aclrtMemcpy(send_.ptr, send_.bytes, host.data(), send_.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
      return ctx_.Fail("aclrtMemcpy failed");
    return true;
  }
  HcclResult Call(int i) {
    return HcclReduce(static_cast<float*>(send_.ptr) + i * 2, static_cast<float*>(recv_.ptr) + i * 2, 2,
                      HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx_.comm, ctx_.stream);
  }
  // The root: calls [from, calls), synchronize, then every call's result is the sum of both inputs.
  bool RunAndCheckRoot(int from) {
    for (int i = from; i < calls_; ++i)
      if (Call(i) != HCCL_SUCCESS) return ctx_.Fail("HcclReduce enqueue failed");
    if (aclrtSynchronizeStream(ctx_.stream) != ACL_SUCCESS)
      return ctx_.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    std::vector<float> out(static_cast<size_t>(calls_) * 2);
    (void)aclrtMemcpy(out.data(), recv_.bytes, recv_.ptr, recv_.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < calls_; ++i)
      for (int e = 0; e < 2; ++e) {
        const float want = Input(0, i, e) + Input(1, i, e);
        const float got = out[static_cast<size_t>(i * 2 + e)];
        if (got != want)
          return ctx_.Fail("call " + std::to_string(i) + " element " + std::to_string(e) + ": " +
                           std::to_string(got) + ", expected " + std::to_string(want));
      }
    return true;
  }

 private:
  RankContext& ctx_;
  const int calls_;
  DevBuf send_, recv_;
};

// Runs body(ctx, queue) on 2 process ranks over shared memory, each with its prepared queue of
// `calls` Reduces and the scratch directory for marks (WriteMark/ReadMark); `run_ahead`: the
// HOSTCCL_RUN_AHEAD value (empty: the default, auto).
template <typename Body>
void RunQueueOnTwoRanks(int calls, const Body& body, const char* run_ahead = "") {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions opts = RunAheadShmOptions();
  opts.env.push_back({hostccl::faulttest::kDirVar, dir});
  if (*run_ahead != '\0') opts.env.push_back({"HOSTCCL_RUN_AHEAD", run_ahead});
  auto res = RunRanks(2, Mode::kProcesses, [&](RankContext& ctx) {
    ReduceQueue q(ctx, calls);
    return q.Prepare() && body(ctx, q);
  }, opts);
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

// HOSTCCL_RUN_AHEAD=on: under auto the stream's first call runs ahead only when the marker
// behind it is already queued as it starts, and under TSan the worker sometimes started it first
// (it then waited for the absent root: 0 calls completed). The bound is what this test checks.
TEST(RunAhead, BoundedRunAhead) {
  constexpr int kCalls = 3 * kRing;
  RunQueueOnTwoRanks(kCalls, [](RankContext& ctx, ReduceQueue& q) {
    auto call = [&](int i) { return q.Call(i); };
    if (ctx.rank == 1) {
      // Root absent: queue every call with a 1-byte marker set after it (aclrtMemsetAsync on the
      // same stream) and count the markers set.
      DevBuf marks;
      if (!marks.Alloc(kCalls, 0)) return ctx.Fail("aclrtMalloc failed");
      for (int i = 0; i < kCalls; ++i) {
        if (call(i) != HCCL_SUCCESS) return ctx.Fail("HcclReduce enqueue failed");
        if (aclrtMemsetAsync(static_cast<char*>(marks.ptr) + i, 1, 1, 1, ctx.stream) != ACL_SUCCESS)
          return ctx.Fail("aclrtMemsetAsync failed");
      }
      auto completed = [&] { return hostccl::faulttest::MarkersSet(marks.ptr, kCalls); };
      int done = 0;
      // Up to 3 s (x3 under the sanitizers) for the worker to get there.
      for (int round = 0; round < 30 * hostccl::faulttest::kSlowdown && done < kRing; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        done = completed();
      }
      // Stays there: the next call needs the root to release a slot.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int again = completed();
      hostccl::faulttest::WriteMark("ahead", again);  // lets the root start
      // Synchronize before judging: the queued markers write into `marks`, which is freed on
      // return (a failed check used to return first, and the stream's teardown then ran them).
      const aclError rc = aclrtSynchronizeStream(ctx.stream);
      if (done != kRing || again != kRing)
        return ctx.Fail("the non-root completed " + std::to_string(done) + " then " + std::to_string(again) +
                        " calls with the root absent; expected exactly " + std::to_string(kRing));
      if (rc != ACL_SUCCESS) return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
      return true;
    }
    // The root waits for the non-root to report how far it got (bounded).
    if (hostccl::faulttest::ReadMark("ahead", 10000) < 0) return ctx.Fail("rank 1 never reported");
    return q.RunAndCheckRoot(0);
  }, "on");
}

TEST(RunAhead, AttemptsStopAtAFullRing) {
  constexpr int kCalls = 2 * kRing + 2;  // call 0 together, then the non-root runs ahead alone
  RunQueueOnTwoRanks(kCalls, [](RankContext& ctx, ReduceQueue& q) {
    auto call = [&](int i) { return q.Call(i); };
    // Call 0 with both ranks present and no synchronize after it on the non-root, so its next
    // calls follow it (back to back: they post and run ahead).
    if (call(0) != HCCL_SUCCESS) return ctx.Fail("HcclReduce enqueue failed");
    if (ctx.rank == 1) {
      // Every call an attempt on an idle stream; from call ring + 1 on the ring is full.
      for (int i = 1; i < kCalls; ++i)
        if (call(i) != HCCL_SUCCESS) return ctx.Fail("HcclReduce enqueue failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      hostccl::faulttest::WriteMark("ahead", 1);  // lets the root go on
      const aclError rc = aclrtSynchronizeStream(ctx.stream);
      if (rc != ACL_SUCCESS) return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
      return true;
    }
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("first synchronize failed: ") + aclGetRecentErrMsg());
    if (hostccl::faulttest::ReadMark("ahead", 10000) < 0) return ctx.Fail("rank 1 never reported");
    return q.RunAndCheckRoot(1);
  });
}

// The queues below: kQueueCalls small Reduces (root 0, 64-byte buffers), one of them differing.

// Call 100 of 200: the non-roots then meet the failure in a later call (flow control: they cannot
// get more than a ring past the root, which stopped at call 100). Call 190: they have queued
// everything before the root stops, and only the synchronize (the settle) can report it.
constexpr int kMidCall = 100, kLateCall = 190;

TEST(RunAhead, MismatchMidQueueFailsEveryRanksSynchronize) {
  for (int odd_call : {kMidCall, kLateCall}) {
    SCOPED_TRACE("odd call " + std::to_string(odd_call));
    ExpectQueueFails(4, 3, 0, 64, [odd_call](RankContext& ctx, void* s, void* r, int i) {
      const uint64_t count = ctx.rank == 3 && i == odd_call ? 3 : 2;
      return HcclReduce(s, r, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream);
    });
  }
}

// A queue longer than the stream's depth (HOSTCCL_STREAM_DEPTH, 1024): the enqueues of calls past
// it run the front calls themselves, so the mismatch at call 2500 of 3000 may surface while the
// ranks are still enqueueing (a later enqueue returns the failure) or at the synchronize; either
// way every rank's synchronize fails naming both ranks.
TEST(RunAhead, MismatchDeepInAQueueLongerThanTheStreamDepth) {
  ExpectQueueFails(4, 3, 0, 64, [](RankContext& ctx, void* s, void* r, int i) {
    const uint64_t count = ctx.rank == 3 && i == 2500 ? 3 : 2;
    return HcclReduce(s, r, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream);
  }, 3000);
}

// Nobody folds call kOddCall (each rank only posts), so only the compared fingerprint histories
// can find it: at a later post (call 100) or at the synchronize (call 190).
TEST(RunAhead, RootDisagreementMidQueueIsCaughtWithoutAFolder) {
  for (int odd_call : {kMidCall, kLateCall}) {
    SCOPED_TRACE("odd call " + std::to_string(odd_call));
    ExpectQueueFails(2, 1, 0, 64, [odd_call](RankContext& ctx, void* s, void* r, int i) {
      const uint32_t root = i == odd_call ? static_cast<uint32_t>(1 - ctx.rank) : 0;
      return HcclReduce(s, r, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, root, ctx.comm, ctx.stream);
    });
  }
}

TEST(RunAhead, RootDiesMidQueue) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o = RunAheadShmOptions();
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  auto res = RunRanks(3, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(64, 1.0f) || !recv.Alloc(64, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    constexpr int kCalls = 200;
    for (int i = 0; i < kCalls; ++i) {
      if (ctx.rank == 0 && i == 50) {
        (void)aclrtSynchronizeStream(ctx.stream);
        hostccl::faulttest::WriteMark("death", NowMs());
        raise(SIGKILL);
      }
      if (HcclReduce(send.ptr, recv.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream) !=
          HCCL_SUCCESS)
        break;
    }
    auto verdict = [&]() -> bool {
      const aclError rc = aclrtSynchronizeStream(ctx.stream);
      const int64_t end = NowMs();
      const std::string msg = aclGetRecentErrMsg();
      if (rc == ACL_SUCCESS) return ctx.Fail("synchronize succeeded although the root died");
      const int64_t death = hostccl::faulttest::ReadMark("death", 5000);
      if (death < 0) return ctx.Fail("no time of death recorded");
      if (end - death > kFailWithinMs) return ctx.Fail("failed " + std::to_string(end - death) + " ms after the death");
      if (!NamesRank(msg, 0)) return ctx.Fail("message does not name rank 0: " + msg);
      return true;
    };
    const bool ok = verdict();
    // Stay (bounded) until both survivors have a verdict: the only rank gone is the root.
    hostccl::faulttest::WriteMark("verdict." + std::to_string(ctx.rank), 1);
    for (int r = 1; r < 3; ++r) (void)hostccl::faulttest::ReadMark("verdict." + std::to_string(r), 10000);
    return ok;
  }, o);
  hostccl::faulttest::RemoveScratchDir(dir);
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, 0, &why)) << why << "full report:\n" << res.message;
}

// A correct program in which one non-root of a small Reduce runs ahead and the other arrives
// plainly and then stays idle (3 processes, root 1, exec timeout 2 s): rank 2 runs ahead
// (HOSTCCL_RUN_AHEAD=on) and then sends to the root; rank 0 takes part as a plain arrival (=off),
// synchronizes and issues nothing for 3 s. Rank 2's synchronize must pass well before rank 0
// comes back: the plain non-root is done with the call once it has checked it (it marks it done),
// so the settle does not wait for rank 0's next call. (Found by sendrecv_fault_test's generated
// programs with thread ranks, seed 77951, where rank 0 dropped its receive.)
TEST(RunAhead, AnIdlePlainNonRootDoesNotHoldTheSettle) {
  RunOptions o = RunAheadShmOptions();
  for (auto& e : o.env)
    if (e.first == "HOSTCCL_EXEC_TIMEOUT_MS") e.second = "2000";
  o.rank_env = [](int rank) {
    return std::vector<std::pair<std::string, std::string>>{{"HOSTCCL_RUN_AHEAD", rank == 2 ? "on" : "off"}};
  };
  auto res = RunRanks(3, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(64, 1.0f) || !recv.Alloc(64, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    const int64_t start = NowMs();
    if (HcclReduce(send.ptr, recv.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, ctx.comm, ctx.stream) !=
        HCCL_SUCCESS)
      return ctx.Fail("HcclReduce rejected");
    HcclResult r = HCCL_SUCCESS;
    if (ctx.rank == 2) r = HcclSend(send.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream);
    if (ctx.rank == 1) r = HcclRecv(static_cast<float*>(recv.ptr) + 4, 2, HCCL_DATA_TYPE_FP32, 2, ctx.comm, ctx.stream);
    if (r != HCCL_SUCCESS) return ctx.Fail("transfer rejected");
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail(aclGetRecentErrMsg());
    const int64_t took = NowMs() - start;
    if (ctx.rank != 0 && took > 1000 * hostccl::faulttest::kSlowdown)
      return ctx.Fail("the calls took " + std::to_string(took) + " ms");
    if (ctx.rank == 0) std::this_thread::sleep_for(std::chrono::seconds(3));
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
}

// HOSTCCL_RUN_AHEAD=auto (default): a small Broadcast's root completes ahead of the others only
// when the caller is not waiting between calls: its stream already holds the next task, or the
// call was issued with no synchronize since the stream's previous task. With rank 1 absent:
//  1. a Broadcast enqueued with a marker behind it completes ahead (the marker is set);
//  2. after a synchronize (rank 1 took part in 1), a lone Broadcast stays running (it waits for
//     rank 1), so a marker queued 300 ms later is not set;
//  3. once rank 1 took part in 2, a Broadcast issued with no synchronize since (nothing queued
//     behind it) completes ahead: a marker queued 300 ms later is set.
// Under HOSTCCL_RUN_AHEAD=on the lone call of 2 completes ahead too. Every synchronize passes.
// The same rule holds for the small Reduce's non-roots.
TEST(RunAhead, OnlyACallIssuedBackToBackRunsAhead) {
  for (const char* mode : {"auto", "on"}) {
    SCOPED_TRACE(std::string("HOSTCCL_RUN_AHEAD=") + mode);
    const std::string dir = hostccl::faulttest::MakeScratchDir();
    RunOptions opts = RunAheadShmOptions();
    opts.env.push_back({hostccl::faulttest::kDirVar, dir});
    opts.env.push_back({"HOSTCCL_RUN_AHEAD", mode});
    const bool always = std::string(mode) == "on";
    auto res = RunRanks(2, Mode::kProcesses, [always](RankContext& ctx) {
      DevBuf send, recv;
      if (!send.Alloc(64, 1.0f) || !recv.Alloc(64, 0.0f)) return ctx.Fail("aclrtMalloc failed");
      auto bcast = [&] {  // a small Broadcast, root 0
        return HcclBroadcast(send.ptr, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream);
      };
      if (ctx.rank == 1) {  // takes part in call k once the root says so
        for (int k = 1; k <= 3; ++k) {
          if (hostccl::faulttest::ReadMark("phase" + std::to_string(k), 20000) < 0)
            return ctx.Fail("the root never reached phase " + std::to_string(k));
          if (bcast() != HCCL_SUCCESS) return ctx.Fail("HcclBroadcast enqueue failed");
        }
        if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail(aclGetRecentErrMsg());
        return true;
      }
      // Markers (aclrtMemsetAsync on the stream, 1 byte each), looked at without synchronizing.
      DevBuf marks;
      if (!marks.Alloc(64, 0)) return ctx.Fail("aclrtMalloc failed");
      auto mark = [&](int i) { return aclrtMemsetAsync(static_cast<char*>(marks.ptr) + i, 1, 1, 1, ctx.stream); };
      auto done = [&](int i) { return hostccl::faulttest::PeekByte(static_cast<const char*>(marks.ptr) + i) == 1; };
      auto settle = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); };
      // A lone call (nothing queued behind it); 300 ms later a marker; whether the marker ran
      // 300 ms after that, i.e. whether the call completed without rank 1.
      auto lone_call_completes = [&](int i) {
        if (bcast() != HCCL_SUCCESS) return ctx.Fail("HcclBroadcast enqueue failed");
        settle();
        if (mark(i) != ACL_SUCCESS) return ctx.Fail("aclrtMemsetAsync failed");
        settle();
        return done(i);
      };
      // 1. A call with a marker queued right behind it.
      if (bcast() != HCCL_SUCCESS || mark(0) != ACL_SUCCESS) return ctx.Fail("enqueue failed");
      settle();
      const bool queued_done = done(0);
      hostccl::faulttest::WriteMark("phase1", 1);
      if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail(aclGetRecentErrMsg());
      // 2. A lone call right after a synchronize.
      const bool lone_done = lone_call_completes(1);
      if (!ctx.error.empty()) return false;
      hostccl::faulttest::WriteMark("phase2", 1);
      for (int64_t end = NowMs() + 10000; !done(1) && NowMs() < end;) settle();  // rank 1 took part
      if (!done(1)) return ctx.Fail("call 2 never completed");
      // 3. The next call, issued with no synchronize since the stream's last task (the marker)
      // and nothing behind it.
      const bool next_done = lone_call_completes(2);
      if (!ctx.error.empty()) return false;
      hostccl::faulttest::WriteMark("phase3", 1);
      const aclError rc = aclrtSynchronizeStream(ctx.stream);
      if (rc != ACL_SUCCESS) return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
      if (!queued_done) return ctx.Fail("a call with work queued behind it did not complete ahead of rank 1");
      if (always && !lone_done) return ctx.Fail("HOSTCCL_RUN_AHEAD=on: a lone call did not complete ahead of rank 1");
      if (!always && lone_done) return ctx.Fail("HOSTCCL_RUN_AHEAD=auto: a lone call after a synchronize completed ahead");
      if (!next_done) return ctx.Fail("a call issued back to back did not complete ahead of rank 1");
      return true;
    }, opts);
    hostccl::faulttest::RemoveScratchDir(dir);
    EXPECT_TRUE(res.ok) << res.message;
  }
}

}  // namespace
