// Inline attempts (docs/runtime.md "Inline attempts", HOSTCCL_INLINE_CALLS): a small collective
// between processes of one host, issued on an idle stream, runs at once on the calling thread; if
// a peer is late it gives up after a short spin and finishes from the stream. What must hold:
//  - LatePeerNeverBlocksTheCall: with the peer absent (it waits for a mark this rank writes after
//    its call returned), the call returns and the marker queued after it is not set yet: the call
//    is pending, not done (a Reduce non-root, a Broadcast root with the marker behind it and a
//    small HcclSend may complete: they run ahead). When the peer comes, both results are right
//    and both synchronizes pass. For AllReduce, Reduce and Broadcast (root and non-root early),
//    Barrier, HcclSend/HcclRecv (sender or receiver early) and AllGatherV (whose caller overwrites
//    its arrays as soon as the call returns: the call keeps its own copies). Had the call waited for its peer,
//    the peer's mark would never be written and the test would end at the exec timeout.
//  - MismatchIsStillFoundOnEveryRank: a count that differs on one rank (both within the inline
//    size; for Barrier, rank 1 calls AllReduce) fails every rank's synchronize naming both ranks,
//    whether the calls ran at once or not.
//  - SwitchedOffEverythingQueues: HOSTCCL_INLINE_CALLS=off gives the same results (the queue path).
//  - InlineAttemptOn.ManyRanksBackToBackAndIsolated: HOSTCCL_INLINE_CALLS=on with more ranks
//    than cores (one look instead of the spin): back-to-back and isolated results stay right.
//  - The ThreadRanks variants: the same with every rank a thread of one process over shared
//    memory (HOSTCCL_TRANSPORT=shm), which attempts as processes do. One thread driving every
//    rank: communicator_test's OneThreadTest.
// Where a deferred attempt is resumed ahead of its peers (the root of a back-to-back Broadcast):
// runahead_rooted_test's BoundedRunAhead (its first call is such an attempt).
//  - InlineAttemptV.BackToBackWithALatePeerRetriesOnItsCopies: V calls back to back while the
//    peer is late; a queued attempt is retried by each later call, on its own array copies.
//  - InlineAttemptReader.BackToBackNonRootWithALateRootNeverBlocks: a Broadcast non-root issued
//    back to back runs ahead inside its attempt (posts, then waits for the root only briefly): with
//    the root late it returns at once, stays pending, and gets the data once the root comes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"
#include "fault/runahead_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::PeekByte;
using hostccl::faulttest::NamesRank;
using hostccl::faulttest::RunAheadShmOptions;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunRanks;

enum class Op { kAllReduce, kReduce, kBroadcast, kBarrier, kSendRecv, kAllGatherV };

const char* Name(Op op) {
  switch (op) {
    case Op::kAllReduce: return "AllReduce";
    case Op::kReduce: return "Reduce";
    case Op::kBroadcast: return "Broadcast";
    case Op::kBarrier: return "Barrier";
    case Op::kSendRecv: return "SendRecv";
    case Op::kAllGatherV: return "AllGatherV";
  }
  return "?";
}

// AllGatherV of 2 ranks into recv: rank r's block of `count` fp32 at element 2r (the other
// rank's count as 2). The arrays are the caller's and are overwritten with garbage as soon as the
// call returns (a caller may reuse them), so the call must work from its own copies whether it
// ran at once or was queued (thread_local: stores the compiler keeps).
thread_local uint64_t t_counts[2], t_displs[2];
HcclResult AllGatherVReusingArrays(RankContext& ctx, void* send, void* recv, uint64_t count) {
  t_counts[0] = t_counts[1] = 2;
  t_counts[ctx.rank] = count;
  t_displs[0] = 0;
  t_displs[1] = 2;
  const HcclResult rc = HcclAllGatherV(send, count, recv, t_counts, t_displs, HCCL_DATA_TYPE_FP32, ctx.comm, ctx.stream);
  t_counts[0] = t_counts[1] = t_displs[0] = t_displs[1] = uint64_t{1} << 40;
  return rc;
}

// 2 fp32 elements; rank r contributes r + 1 (Broadcast: the root's 7).
HcclResult Call(Op op, RankContext& ctx, DevBuf& send, DevBuf& recv, uint64_t count, uint32_t root) {
  switch (op) {
    case Op::kAllReduce:
      return HcclAllReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
    case Op::kReduce:
      return HcclReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, root, ctx.comm, ctx.stream);
    case Op::kBroadcast:
      return HcclBroadcast(ctx.rank == static_cast<int>(root) ? send.ptr : recv.ptr, count, HCCL_DATA_TYPE_FP32, root,
                           ctx.comm, ctx.stream);
    case Op::kBarrier:
      return HcclBarrier(ctx.comm, ctx.stream);
    case Op::kSendRecv:  // rank 0 sends to rank 1
      return ctx.rank == 0 ? HcclSend(send.ptr, count, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream)
                           : HcclRecv(recv.ptr, count, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream);
    case Op::kAllGatherV:
      return AllGatherVReusingArrays(ctx, send.ptr, recv.ptr, count);
  }
  return HCCL_E_INTERNAL;
}

bool CheckResult(Op op, RankContext& ctx, const DevBuf& recv, uint32_t root) {
  float want = 0;
  switch (op) {
    case Op::kAllReduce: want = 1 + 2; break;
    case Op::kReduce:
      if (ctx.rank != static_cast<int>(root)) return true;
      want = 1 + 2;
      break;
    case Op::kBroadcast: want = 7; break;
    case Op::kBarrier: return true;
    case Op::kSendRecv:
      if (ctx.rank == 0) return true;
      want = 1;
      break;
    case Op::kAllGatherV:
      for (size_t i = 0; i < 4; ++i)
        if (recv.At(i) != static_cast<float>(i / 2 + 1))
          return ctx.Fail("AllGatherV: element " + std::to_string(i) + " is " + std::to_string(recv.At(i)));
      return true;
  }
  for (size_t i = 0; i < 2; ++i)
    if (recv.At(i) != want)
      return ctx.Fail(std::string(Name(op)) + ": element " + std::to_string(i) + " is " +
                      std::to_string(recv.At(i)) + ", expected " + std::to_string(want));
  return true;
}

struct Case {
  Op op;
  int early;      // the rank that calls first, alone
  uint32_t root;  // rooted operators
};

class InlineAttempt : public ::testing::TestWithParam<Case> {};

bool RunLatePeer(const Case& c, RankContext& ctx) {
  DevBuf send, recv, marker;
  const bool is_root = ctx.rank == static_cast<int>(c.root);
  const float in = c.op == Op::kBroadcast ? (is_root ? 7.0f : 0.0f) : static_cast<float>(ctx.rank + 1);
  if (!send.Alloc(64, in) || !recv.Alloc(64, c.op == Op::kBroadcast && is_root ? 7.0f : 0.0f) || !marker.Alloc(64, 0))
    return ctx.Fail("aclrtMalloc failed");
  if (ctx.rank == c.early) {
    if (Call(c.op, ctx, send, recv, 2, c.root) != HCCL_SUCCESS) return ctx.Fail("call failed at enqueue");
    if (aclrtMemsetAsync(marker.ptr, 1, 1, 1, ctx.stream) != ACL_SUCCESS) return ctx.Fail("aclrtMemsetAsync failed");
    // The call returned with the peer absent; it must not be done yet (the marker behind it).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const char m = PeekByte(marker.ptr);
    hostccl::faulttest::WriteMark("go", 1);
    // (A small Reduce's non-root may complete: its input is out once posted, docs/semantics.md.)
    // (Nor is a Broadcast root held back once the marker is queued behind it: it runs ahead.)
    // (Nor a small HcclSend: eager, it completes once its message is out.)
    const bool may_complete = (c.op == Op::kReduce && !is_root) || (c.op == Op::kBroadcast && is_root) ||
                              (c.op == Op::kSendRecv && ctx.rank == 0);
    if (m != 0 && !may_complete) return ctx.Fail("the call completed with its peer absent");
  } else {
    if (hostccl::faulttest::ReadMark("go", 20000) < 0) return ctx.Fail("the early rank never returned from its call");
    if (Call(c.op, ctx, send, recv, 2, c.root) != HCCL_SUCCESS) return ctx.Fail("call failed at enqueue");
  }
  if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
    return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
  return CheckResult(c.op, ctx, recv, c.root);
}

TEST_P(InlineAttempt, LatePeerNeverBlocksTheCall) {
  const Case c = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kProcesses, [c](RankContext& ctx) { return RunLatePeer(c, ctx); },
                      RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

TEST_P(InlineAttempt, SwitchedOffEverythingQueues) {
  const Case c = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto opt = RunAheadShmOptions(dir);
  opt.env.push_back({"HOSTCCL_INLINE_CALLS", "off"});
  auto res = RunRanks(2, Mode::kProcesses, [c](RankContext& ctx) { return RunLatePeer(c, ctx); }, opt);
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

// Thread ranks over shared memory (HOSTCCL_TRANSPORT=shm) attempt too: the same late peer, each
// rank its own thread.
TEST_P(InlineAttempt, ThreadRanksLatePeerNeverBlocksTheCall) {
  const Case c = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kThreadsRootInfo, [c](RankContext& ctx) { return RunLatePeer(c, ctx); },
                      RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

void ExpectMismatchFoundOnEveryRank(const Case& c, Mode mode) {
  auto res = RunRanks(2, mode, [c](RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(64, 1.0f) || !recv.Alloc(64, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    // Rank `early` calls first, so one side's attempt gives up and one completes at once.
    if (ctx.rank != c.early) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // A barrier has no count: rank 1 calls an AllReduce instead.
    const Op mine = c.op == Op::kBarrier && ctx.rank == 1 ? Op::kAllReduce : c.op;
    (void)Call(mine, ctx, send, recv, ctx.rank == 1 ? 3 : 2, c.root);
    const aclError rc = aclrtSynchronizeStream(ctx.stream);
    const std::string msg = aclGetRecentErrMsg();
    if (rc == ACL_SUCCESS) return ctx.Fail("synchronize passed despite the count mismatch");
    if (msg.find("mismatch") == std::string::npos || !NamesRank(msg, 0) || !NamesRank(msg, 1))
      return ctx.Fail("message does not name the mismatch of ranks 0 and 1: " + msg);
    return true;
  }, RunAheadShmOptions());
  EXPECT_TRUE(res.ok) << res.message;
}

TEST_P(InlineAttempt, MismatchIsStillFoundOnEveryRank) { ExpectMismatchFoundOnEveryRank(GetParam(), Mode::kProcesses); }

TEST_P(InlineAttempt, ThreadRanksMismatchIsStillFoundOnEveryRank) {
  ExpectMismatchFoundOnEveryRank(GetParam(), Mode::kThreadsRootInfo);
}

// HOSTCCL_INLINE_CALLS=on with more ranks than this machine has cores (auto would not attempt):
// attempts take one look instead of spinning; 4 ranks x 200 calls back to back, then every
// result and the synchronize are right, and calls isolated by a synchronize too.
// A reader that runs ahead inside an attempt: the non-root of a small Broadcast issued back to
// back (no synchronize since its previous call, which completed) posts and waits for the root's
// slot only briefly. With the root late, the call still returns at once, stays pending (the
// marker behind it is not set), and completes with the right data once the root comes.
TEST(InlineAttemptReader, BackToBackNonRootWithALateRootNeverBlocks) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf buf, marker;
    if (!buf.Alloc(64, ctx.rank == 0 ? 7.0f : 0.0f) || !marker.Alloc(64, 0)) return ctx.Fail("aclrtMalloc failed");
    auto bcast = [&] { return HcclBroadcast(buf.ptr, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream); };
    auto mark_set = [&](int i) { return PeekByte(static_cast<const char*>(marker.ptr) + i) == 1; };
    if (bcast() != HCCL_SUCCESS) return ctx.Fail("call 1 failed at enqueue");
    if (ctx.rank == 0) {
      if (hostccl::faulttest::ReadMark("go", 20000) < 0) return ctx.Fail("rank 1 never returned from call 2");
      const float nine[2] = {9.0f, 9.0f};  // call 2 broadcasts 9 (call 1: 7)
      if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS ||
          aclrtMemcpy(buf.ptr, 8, nine, 8, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        return ctx.Fail("setting call 2's input failed");
      if (bcast() != HCCL_SUCCESS) return ctx.Fail("call 2 failed at enqueue");
    } else {
      // Call 1 completes (no synchronize: the marker behind it is polled), then call 2 comes.
      if (aclrtMemsetAsync(marker.ptr, 1, 1, 1, ctx.stream) != ACL_SUCCESS) return ctx.Fail("aclrtMemsetAsync failed");
      for (int64_t end = hostccl::faulttest::NowMs() + 10000; !mark_set(0) && hostccl::faulttest::NowMs() < end;)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!mark_set(0)) return ctx.Fail("call 1 never completed");
      if (bcast() != HCCL_SUCCESS) return ctx.Fail("call 2 failed at enqueue");
      if (aclrtMemsetAsync(static_cast<char*>(marker.ptr) + 1, 1, 1, 1, ctx.stream) != ACL_SUCCESS)
        return ctx.Fail("aclrtMemsetAsync failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const bool done_early = mark_set(1);
      hostccl::faulttest::WriteMark("go", 1);
      if (done_early) return ctx.Fail("call 2 completed before the root came");
    }
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    for (size_t i = 0; i < 2; ++i)
      if (buf.At(i) != 9.0f) return ctx.Fail("element " + std::to_string(i) + " is " + std::to_string(buf.At(i)));
    return true;
  }, RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

// V calls back to back with the peer late: rank 0's first AllGatherV gives up its attempt and is
// queued; each later call first retries the queued ones (EnqueueAttempt), so the same task runs
// again and again on its copies of the arrays (which the caller overwrites after every call)
// before rank 1 comes. Seen crashing when a task that gave up had already handed its copies back.
TEST(InlineAttemptV, BackToBackWithALatePeerRetriesOnItsCopies) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  auto res = RunRanks(2, Mode::kProcesses, [](RankContext& ctx) {
    constexpr int kCalls = 20;
    DevBuf send, recv;
    if (!send.Alloc(64, static_cast<float>(ctx.rank + 1)) || !recv.Alloc(kCalls * 16, 0.0f))
      return ctx.Fail("aclrtMalloc failed");
    if (ctx.rank == 1 && hostccl::faulttest::ReadMark("go", 20000) < 0)
      return ctx.Fail("rank 0 never returned from its calls");
    for (int i = 0; i < kCalls; ++i)
      if (AllGatherVReusingArrays(ctx, send.ptr, static_cast<char*>(recv.ptr) + i * 16, 2) != HCCL_SUCCESS)
        return ctx.Fail("enqueue failed");
    if (ctx.rank == 0) hostccl::faulttest::WriteMark("go", 1);
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    for (size_t i = 0; i < 4 * kCalls; ++i)
      if (recv.At(i) != static_cast<float>(i % 4 / 2 + 1))
        return ctx.Fail("element " + std::to_string(i) + " is " + std::to_string(recv.At(i)));
    return true;
  }, RunAheadShmOptions(dir));
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

void ManyRanksBackToBackAndIsolated(Mode mode) {
  const int n = std::max(4, static_cast<int>(std::thread::hardware_concurrency()) + 2);
  auto opt = RunAheadShmOptions();
  opt.env.push_back({"HOSTCCL_INLINE_CALLS", "on"});
  auto res = RunRanks(n, mode, [n](RankContext& ctx) {
    constexpr int kCalls = 200;
    DevBuf send, recv;
    if (!send.Alloc(64, static_cast<float>(ctx.rank + 1)) || !recv.Alloc(kCalls * 8, 0.0f))
      return ctx.Fail("aclrtMalloc failed");
    for (int i = 0; i < kCalls; ++i) {
      if (HcclAllReduce(send.ptr, static_cast<char*>(recv.ptr) + i * 8, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                        ctx.comm, ctx.stream) != HCCL_SUCCESS)
        return ctx.Fail("enqueue failed");
      if (i % 50 == 49 && aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
        return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    }
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)
      return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (size_t i = 0; i < 2 * kCalls; ++i)
      if (recv.At(i) != want) return ctx.Fail("element " + std::to_string(i) + " is " + std::to_string(recv.At(i)));
    return true;
  }, opt);
  EXPECT_TRUE(res.ok) << res.message;
}

TEST(InlineAttemptOn, ManyRanksBackToBackAndIsolated) { ManyRanksBackToBackAndIsolated(Mode::kProcesses); }

TEST(InlineAttemptOn, ManyThreadRanksBackToBackAndIsolated) { ManyRanksBackToBackAndIsolated(Mode::kThreadsRootInfo); }

INSTANTIATE_TEST_SUITE_P(Ops, InlineAttempt,
                         ::testing::Values(Case{Op::kAllReduce, 0, 0}, Case{Op::kAllReduce, 1, 0},
                                           Case{Op::kReduce, 0, 0}, Case{Op::kReduce, 1, 0},
                                           Case{Op::kBroadcast, 0, 0}, Case{Op::kBroadcast, 1, 0},
                                           Case{Op::kBarrier, 0, 0}, Case{Op::kSendRecv, 0, 0},
                                           Case{Op::kSendRecv, 1, 0}, Case{Op::kAllGatherV, 0, 0},
                                           Case{Op::kAllGatherV, 1, 0}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(Name(i.param.op)) + "_early" + std::to_string(i.param.early) +
                                  "_root" + std::to_string(i.param.root);
                         });

}  // namespace
