// Pipelined completion beyond the small Reduce (issue 18, docs/semantics.md "When errors surface"):
// over shared memory (processes of one host) the root of a small HcclBroadcast or HcclScatter
// (shm_inline, <= 4 KiB) completes once its data is in its arrival slot, and a small HcclSend
// (mailbox, payload <= 472 bytes) completes once its message is published (eager). Their errors
// surface at the stream's synchronize at the latest, on every rank.
// Rooted (Broadcast and Scatter, root 0):
//  - BoundedRunAhead: with rank 1 absent the root completes exactly kRing calls (the ring of
//    arrival slots, net::ShmGroup::RingSlots: 64 at 2 ranks) and no more; when rank 1 comes, every
//    call's result is bit-exact and both synchronizes pass.
//  - MismatchMidQueue: 4 ranks queue 200 calls, rank 3's call 100 (then 190) has another count:
//    every rank's synchronize fails within 2 s naming ranks 3 and 0 and saying "mismatch".
//  - RootDisagreementMidQueue: 2 ranks; at call 100 (then 190) each names itself the root, so
//    nobody reads the other's slot: the fingerprint history still fails both synchronizes.
//  - NonRootDiesMidQueue: 3 ranks; rank 2 kills itself after 50 of 200 calls; the root's and rank
//    1's synchronizes fail within 2 s of the death naming rank 2.
// Eager sends (2 ranks):
//  - BoundedEagerSends: with the receiver absent, exactly kMailSlots (16) 8-byte sends complete;
//    then the receiver takes all 48, bit-exact; both synchronizes pass. Both ranks sending 8 bytes
//    to each other first (a deadlock under rendezvous) completes.
//  - CountMismatchMidQueue: message 100 (then 198) of 200 is received with another count: both
//    ranks' synchronizes fail within 2 s with HCCL_E_PARA naming both ranks.
//  - ReceiverDiesMidQueue: the receiver kills itself after 50 messages; the sender's synchronize
//    fails within 2 s of the death naming rank 1.
// (A send with no receive at all: sendrecv_fault_test's UnmatchedSendTimesOutNamingThePeer, shm,
// now fails at the synchronize's settle with the same message.)
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

constexpr int kRing = 64;      // net::ShmGroup::RingSlots(2)
constexpr int kMailSlots = 16;  // net::ShmGroup::MailSlots(2)
constexpr int64_t kFailWithinMs = hostccl::faulttest::kRunAheadFailWithinMs;
constexpr int kStride = 8;  // floats per call and block in the data checks

float Input(int i, int k) { return static_cast<float>(i * 100 + k + 1); }

enum class Op { kBroadcast, kScatter };
std::string OpName(Op op) { return op == Op::kBroadcast ? "broadcast" : "scatter"; }

// Call i of `op` with `count` elements: Broadcast in place on recv's region i; Scatter from send's
// region i (n x kStride floats; the n blocks of `count` packed at its start) into recv's region i.
HcclResult Call(Op op, RankContext& ctx, void* send, void* recv, int i, uint64_t count, uint32_t root) {
  float* r = static_cast<float*>(recv) + i * kStride;
  if (op == Op::kBroadcast) return HcclBroadcast(r, count, HCCL_DATA_TYPE_FP32, root, ctx.comm, ctx.stream);
  float* s = static_cast<float*>(send) + i * kStride * ctx.nranks;
  return HcclScatter(s, r, count, HCCL_DATA_TYPE_FP32, root, ctx.comm, ctx.stream);
}

// Buffers for `calls` calls; the root's inputs: Broadcast's region i holds Input(i, e), Scatter's
// send region i holds Input(i, k) for k over the n blocks.
bool Prepare(Op op, RankContext& ctx, int calls, DevBuf* send, DevBuf* recv) {
  const size_t per = static_cast<size_t>(kStride * ctx.nranks);
  if (!send->Alloc(calls * per * sizeof(float), 0) || !recv->Alloc(calls * kStride * sizeof(float), 0)) return false;
  if (ctx.rank != 0) return true;
  DevBuf* dst = op == Op::kBroadcast ? recv : send;
  const size_t stride = op == Op::kBroadcast ? kStride : per;
  std::vector<float> host(calls * stride);
  for (int i = 0; i < calls; ++i)
    for (size_t k = 0; k < stride; ++k) host[i * stride + k] = Input(i, static_cast<int>(k));
  return aclrtMemcpy(dst->ptr, dst->bytes, host.data(), dst->bytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
}

// Every rank's result of every call, bit-exact (2 elements per call; the rest of each region untouched).
bool CheckResults(Op op, RankContext& ctx, int calls, const DevBuf& recv) {
  std::vector<float> out(recv.bytes / sizeof(float));
  (void)aclrtMemcpy(out.data(), recv.bytes, recv.ptr, recv.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  for (int i = 0; i < calls; ++i)
    for (int e = 0; e < kStride; ++e) {
      float want = 0;
      if (op == Op::kBroadcast) want = e < 2 ? Input(i, e) : ctx.rank == 0 ? Input(i, e) : 0.0f;
      else if (e < 2) want = Input(i, ctx.rank * 2 + e);  // blocks of 2 packed at the start of region i
      const float got = out[static_cast<size_t>(i * kStride + e)];
      if (got != want)
        return ctx.Fail("call " + std::to_string(i) + " element " + std::to_string(e) + ": " + std::to_string(got) +
                        ", expected " + std::to_string(want));
    }
  return true;
}

// Counts the 1-byte markers set after each queued call.
int Completed(const DevBuf& marks, int n) {
  return hostccl::faulttest::MarkersSet(marks.ptr, n);
}

// `ahead` queues `calls` with a marker after each and must complete exactly `limit` of them while
// its peer is absent; then it reports, and the peer (which waited for the report) runs.
bool ExpectStopsAt(RankContext& ctx, int calls, int limit, const std::function<HcclResult(int)>& call) {
  DevBuf marks;
  if (!marks.Alloc(calls, 0)) return ctx.Fail("aclrtMalloc failed");
  for (int i = 0; i < calls; ++i) {
    if (call(i) != HCCL_SUCCESS) return ctx.Fail("enqueue failed");
    if (aclrtMemsetAsync(static_cast<char*>(marks.ptr) + i, 1, 1, 1, ctx.stream) != ACL_SUCCESS)
      return ctx.Fail("aclrtMemsetAsync failed");
  }
  int done = 0;
  // Up to 3 s (x3 under the sanitizers) for the worker to get there.
  for (int round = 0; round < 30 * hostccl::faulttest::kSlowdown && done < limit; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    done = Completed(marks, calls);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // stays there
  const int again = Completed(marks, calls);
  hostccl::faulttest::WriteMark("ahead", again);  // lets the peer start
  // Synchronize before judging: the queued calls read the caller's buffers and the markers write
  // into `marks`, all freed on a failed check's return (the worker then read freed memory).
  const aclError rc = aclrtSynchronizeStream(ctx.stream);
  if (done != limit || again != limit)
    return ctx.Fail("completed " + std::to_string(done) + " then " + std::to_string(again) +
                    " calls with the peer absent; expected exactly " + std::to_string(limit));
  if (rc != ACL_SUCCESS) return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
  return true;
}

class RunAheadRooted : public ::testing::TestWithParam<Op> {};

TEST_P(RunAheadRooted, BoundedRunAhead) {
  const Op op = GetParam();
  constexpr int kCalls = 3 * kRing;
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kProcesses, [op](RankContext& ctx) {
    DevBuf send, recv;
    if (!Prepare(op, ctx, kCalls, &send, &recv)) return ctx.Fail("buffers");
    auto call = [&](int i) { return Call(op, ctx, send.ptr, recv.ptr, i, 2, 0); };
    if (ctx.rank == 0) return ExpectStopsAt(ctx, kCalls, kRing, call) && CheckResults(op, ctx, kCalls, recv);
    if (hostccl::faulttest::ReadMark("ahead", 10000) < 0) return ctx.Fail("rank 0 never reported");
    for (int i = 0; i < kCalls; ++i)
      if (call(i) != HCCL_SUCCESS) return ctx.Fail("enqueue failed");
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    return CheckResults(op, ctx, kCalls, recv);
  }, RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}


constexpr int kCalls = hostccl::faulttest::kQueueCalls;  // the long queues below
constexpr int kMidCall = 100, kLateCall = 190;

TEST_P(RunAheadRooted, MismatchMidQueueFailsEveryRanksSynchronize) {
  const Op op = GetParam();
  for (int odd_call : {kMidCall, kLateCall}) {
    SCOPED_TRACE("odd call " + std::to_string(odd_call));
    ExpectQueueFails(4, 3, 0, 64 * 4, [op, odd_call](RankContext& ctx, void* s, void* r, int i) {
      return Call(op, ctx, s, r, 0, ctx.rank == 3 && i == odd_call ? 3 : 2, 0);
    });
  }
}

TEST_P(RunAheadRooted, RootDisagreementMidQueueIsCaughtWithoutAReader) {
  const Op op = GetParam();
  for (int odd_call : {kMidCall, kLateCall}) {
    SCOPED_TRACE("odd call " + std::to_string(odd_call));
    ExpectQueueFails(2, 1, 0, 64 * 4, [op, odd_call](RankContext& ctx, void* s, void* r, int i) {
      return Call(op, ctx, s, r, 0, 2, i == odd_call ? static_cast<uint32_t>(ctx.rank) : 0);
    });
  }
}

// Survivors' verdicts: fail within kFailWithinMs of `victim`'s death, naming it; the run's only
// failure line is the victim's own.
void ExpectSurvivorsName(int nranks, int victim, const std::function<void(RankContext&, void*, void*)>& body) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(nranks, Mode::kProcesses, [&](RankContext& ctx) {
    DevBuf send, recv;  // alive until the synchronize below
    if (!send.Alloc(64 * 4, 1.0f) || !recv.Alloc(64 * 4, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    body(ctx, send.ptr, recv.ptr);  // the victim never returns
    const aclError rc = aclrtSynchronizeStream(ctx.stream);
    const int64_t end = NowMs();
    const std::string msg = aclGetRecentErrMsg();
    bool ok = true;
    const int64_t death = hostccl::faulttest::ReadMark("death", 5000);
    if (rc == ACL_SUCCESS) ok = ctx.Fail("synchronize succeeded although rank " + std::to_string(victim) + " died");
    else if (death < 0) ok = ctx.Fail("no time of death recorded");
    else if (end - death > kFailWithinMs) ok = ctx.Fail("failed " + std::to_string(end - death) + " ms after the death");
    else if (!NamesRank(msg, victim)) ok = ctx.Fail("message does not name rank " + std::to_string(victim) + ": " + msg);
    // Stay (bounded) until every survivor has a verdict: the only rank gone is the victim.
    hostccl::faulttest::WriteMark("verdict." + std::to_string(ctx.rank), 1);
    for (int r = 0; r < nranks; ++r)
      if (r != victim) (void)hostccl::faulttest::ReadMark("verdict." + std::to_string(r), 10000);
    return ok;
  }, RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, victim, &why)) << why << "full report:\n" << res.message;
}

void Die(RankContext& ctx) {
  (void)aclrtSynchronizeStream(ctx.stream);
  hostccl::faulttest::WriteMark("death", NowMs());
  raise(SIGKILL);
}

TEST_P(RunAheadRooted, NonRootDiesMidQueue) {
  const Op op = GetParam();
  ExpectSurvivorsName(3, 2, [op](RankContext& ctx, void* send, void* recv) {
    for (int i = 0; i < kCalls; ++i) {
      if (ctx.rank == 2 && i == 50) Die(ctx);
      if (Call(op, ctx, send, recv, 0, 2, 0) != HCCL_SUCCESS) break;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(P, RunAheadRooted, ::testing::Values(Op::kBroadcast, Op::kScatter),
                         [](const ::testing::TestParamInfo<Op>& i) { return OpName(i.param); });

// ---- eager sends ----

TEST(RunAheadEager, BoundedEagerSends) {
  constexpr int kMsgs = 3 * kMailSlots;
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf buf;
    if (!buf.Alloc(kMsgs * 2 * sizeof(float), 0)) return ctx.Fail("aclrtMalloc failed");
    float* p = static_cast<float*>(buf.ptr);
    if (ctx.rank == 0) {
      std::vector<float> host(kMsgs * 2);
      for (int i = 0; i < kMsgs * 2; ++i) host[static_cast<size_t>(i)] = Input(i, 7);
      if (aclrtMemcpy(buf.ptr, buf.bytes, host.data(), buf.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        return ctx.Fail("aclrtMemcpy failed");
      if (!ExpectStopsAt(ctx, kMsgs, kMailSlots, [&](int i) {
            return HcclSend(p + i * 2, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream);
          }))
        return false;
    } else {
      if (hostccl::faulttest::ReadMark("ahead", 10000) < 0) return ctx.Fail("rank 0 never reported");
      for (int i = 0; i < kMsgs; ++i)
        if (HcclRecv(p + i * 2, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream) != HCCL_SUCCESS)
          return ctx.Fail("enqueue failed");
      if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
        return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
      std::vector<float> out(kMsgs * 2);
      (void)aclrtMemcpy(out.data(), buf.bytes, buf.ptr, buf.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
      for (int i = 0; i < kMsgs * 2; ++i)
        if (out[static_cast<size_t>(i)] != Input(i, 7)) return ctx.Fail("element " + std::to_string(i) + " differs");
    }
    // Both send 8 bytes first, then receive: eager sends let both complete.
    const uint32_t peer = 1 - ctx.rank;
    if (HcclSend(p, 2, HCCL_DATA_TYPE_FP32, peer, ctx.comm, ctx.stream) != HCCL_SUCCESS ||
        HcclRecv(p + 2, 2, HCCL_DATA_TYPE_FP32, peer, ctx.comm, ctx.stream) != HCCL_SUCCESS ||
        aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("send-first exchange failed: ") + aclGetRecentErrMsg());
    return true;
  }, RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

TEST(RunAheadEager, CountMismatchMidQueueFailsBothNamingBoth) {
  for (int odd : {100, 198}) {
    SCOPED_TRACE("odd message " + std::to_string(odd));
    auto res = RunRanks(2, Mode::kProcesses, [odd](RankContext& ctx) {
      DevBuf buf;
      if (!buf.Alloc(64 * 4, 1.0f)) return ctx.Fail("aclrtMalloc failed");
      for (int i = 0; i < kCalls; ++i) {
        const HcclResult r = ctx.rank == 0 ? HcclSend(buf.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream)
                                           : HcclRecv(buf.ptr, i == odd ? 3 : 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream);
        if (r != HCCL_SUCCESS) break;
      }
      const int64_t t0 = NowMs();
      const aclError rc = aclrtSynchronizeStream(ctx.stream);
      const int64_t took = NowMs() - t0;
      const std::string msg = aclGetRecentErrMsg();
      HcclResult async = HCCL_SUCCESS;
      (void)HcclGetCommAsyncError(ctx.comm, &async);
      if (rc == ACL_SUCCESS) return ctx.Fail("synchronize succeeded despite the mismatch");
      if (took > kFailWithinMs) return ctx.Fail("synchronize took " + std::to_string(took) + " ms");
      if (async != HCCL_E_PARA) return ctx.Fail("async error " + std::to_string(async) + ": " + msg);
      if (!Contains(msg, "mismatch") || !NamesRank(msg, 0) || !NamesRank(msg, 1) || !Contains(msg, "count=3"))
        return ctx.Fail("message does not name both ranks and the difference: " + msg);
      return true;
    }, RunAheadShmOptions());
    EXPECT_TRUE(res.ok) << res.message;
  }
}

TEST(RunAheadEager, ReceiverDiesMidQueue) {
  ExpectSurvivorsName(2, 1, [](RankContext& ctx, void* send, void* recv) {
    for (int i = 0; i < kCalls; ++i) {
      if (ctx.rank == 1 && i == 50) Die(ctx);
      const HcclResult r = ctx.rank == 0 ? HcclSend(send, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream)
                                         : HcclRecv(recv, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream);
      if (r != HCCL_SUCCESS) break;
    }
  });
}


// An eager send nobody receives, then both ranks destroy their communicators without a
// synchronize: the sender's HcclCommDestroy must not wait for the exec timeout (20 s here).
TEST(RunAheadEager, UnreceivedSendThenDestroyIsPrompt) {
  auto res = RunRanks(2, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf buf;
    if (!buf.Alloc(64, 1.0f)) return ctx.Fail("aclrtMalloc failed");
    if (ctx.rank == 0 && HcclSend(buf.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream) != HCCL_SUCCESS)
      return ctx.Fail("HcclSend failed");
    if (aclrtDestroyStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail("aclrtDestroyStream failed");
    const int64_t t0 = NowMs();
    const HcclResult r = HcclCommDestroy(ctx.comm);
    const int64_t took = NowMs() - t0;
    ctx.comm = nullptr;
    if (aclrtCreateStream(&ctx.stream) != ACL_SUCCESS) return ctx.Fail("aclrtCreateStream failed");
    if (r != HCCL_SUCCESS) return ctx.Fail("HcclCommDestroy returned " + std::to_string(r));
    if (took > hostccl::faulttest::kRunAheadFailWithinMs) return ctx.Fail("HcclCommDestroy took " + std::to_string(took) + " ms");
    return true;
  }, RunAheadShmOptions());
  EXPECT_TRUE(res.ok) << res.message;
}

}  // namespace
