// Point-to-point faults (docs/semantics.md "Point-to-point"): a Send whose Recv disagrees on count
// or dtype fails both ranks naming both, within 2 s; two ranks that both Send first deadlock and
// both fail with HCCL_E_TIMEOUT at the exec timeout naming both ("rank 0 and rank 1 are both in
// HcclSend to each other"); a Send with no Recv times out naming the peer; a peer that dies during
// an exchange fails the survivor naming the dead rank. Threads, processes over shared memory,
// processes over TCP.
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>
#include <signal.h>

#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"
#include "harness/run_ranks.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

struct Place {
  const char* name;
  Mode mode;
  const char* transport;  // HOSTCCL_TRANSPORT
};
const Place kPlaces[] = {{"threads", Mode::kThreadsInitAll, "auto"},
                         {"shm", Mode::kProcesses, "auto"},
                         {"tcp", Mode::kProcesses, "tcp"},
                         {"nodes", Mode::kProcesses, "auto"},
                         // thread ranks on the in-process plans only (no shared segment)
                         {"threads_local", Mode::kThreadsInitAll, "local"}};

// "nodes": two emulated hosts (HOSTCCL_NODE_ID: ranks 0 and 1 on one, the others on the other), so
// a collective takes its plans for several hosts while ranks 0 and 1 share memory.
RunOptions Options(const Place& p, const char* exec_timeout_ms) {
  RunOptions o;
  o.env = {{"HOSTCCL_TRANSPORT", p.transport},
           {"HOSTCCL_EXEC_TIMEOUT_MS", exec_timeout_ms},
           {"HOSTCCL_CONNECT_TIMEOUT_MS", "10000"}};
  if (std::string(p.name) == "nodes")
    o.rank_env = [](int rank) {
      return std::vector<std::pair<std::string, std::string>>{{"HOSTCCL_NODE_ID", rank < 2 ? "srf-host-a" : "srf-host-b"}};
    };
  o.timeout_s = 60;
  return o;
}

bool Contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

template <typename... T>
std::string StrCat(const T&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

using hostccl::faulttest::Verdict;
Verdict Finish(RankContext& c, int64_t start) { return hostccl::faulttest::SynchronizeVerdict(c, start); }

// "" when the call failed with HCCL_E_PARA well before the exec timeout (20 s), else what went
// wrong.
std::string NotAFastPara(const Verdict& v) {
  if (v.sync == ACL_SUCCESS) return "the call succeeded";
  if (v.async != HCCL_E_PARA) return "async error " + std::to_string(v.async) + ", expected HCCL_E_PARA: " + v.msg;
  if (v.ms > 2000 * hostccl::faulttest::kSlowdown) return "took " + std::to_string(v.ms) + " ms";
  return "";
}

// "" when the verdict is such a fast HCCL_E_PARA and its message says "mismatch" and names each
// of `names`, else what is wrong.
std::string FastMismatchNaming(const Verdict& v, std::initializer_list<std::string> names) {
  if (std::string bad = NotAFastPara(v); !bad.empty()) return bad;
  if (!Contains(v.msg, "mismatch")) return "no mismatch reported: " + v.msg;
  for (const std::string& n : names)
    if (!Contains(v.msg, n)) return "the message does not name '" + n + "': " + v.msg;
  return "";
}

// "" when the verdict came at the exec timeout of `timeout_ms` (not much before, and within the
// margin a slow machine needs after it), else what is wrong.
std::string NotAtTheTimeout(const Verdict& v, int64_t timeout_ms) {
  if (v.ms >= timeout_ms * 2 / 3 && v.ms <= timeout_ms + 3000 * hostccl::faulttest::kSlowdown) return "";
  return "failed after " + std::to_string(v.ms) + " ms (exec timeout " + std::to_string(timeout_ms) + " ms)";
}

class SendRecvFault : public ::testing::TestWithParam<Place> {};

// count (or dtype) disagreement: both ranks fail with HCCL_E_PARA naming both, well before the
// exec timeout (20 s).
void Mismatch(const Place& p, bool by_dtype) {
  auto res = RunRanks(2, p.mode, [&](RankContext& c) {
    DevBuf buf;
    if (!buf.Alloc(64 * 4)) return c.Fail("aclrtMalloc");
    const int64_t start = NowMs();
    HcclResult r = c.rank == 0 ? HcclSend(buf.ptr, 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                               : HcclRecv(buf.ptr, by_dtype ? 8 : 16, by_dtype ? HCCL_DATA_TYPE_INT32 : HCCL_DATA_TYPE_FP32,
                                          0, c.comm, c.stream);
    if (r != HCCL_SUCCESS) return c.Fail("call rejected: " + std::to_string(r));
    Verdict v = Finish(c, start);
    if (const std::string bad = NotAFastPara(v); !bad.empty()) return c.Fail("mismatched Send/Recv: " + bad);
    if (!Contains(v.msg, "mismatch") || !Contains(v.msg, "rank 0") || !Contains(v.msg, "rank 1"))
      return c.Fail("message does not name both ranks: " + v.msg);
    if (!Contains(v.msg, by_dtype ? "int32" : "count=16")) return c.Fail("message does not show the difference: " + v.msg);
    return true;
  }, Options(p, "20000"));
  EXPECT_TRUE(res.ok) << res.message;
}

// One rank in HcclSend to rank 1 (the sender waits for its receiver; a small one, eager over shared
// memory, in its synchronize or in a batch), in HcclRecv from rank 1 (also after a small Send to
// it) or in HcclBatchSendRecv receiving from ranks 1 and 2, the others in
// HcclAllReduce: different operations (reliability matrix row 1); every rank fails
// with HCCL_E_PARA naming rank 0 and both operations, well before the exec timeout (20 s). 4 KiB
// (over TCP the payload leaves at once) and 1 MiB (it waits for the receiver's notice). Shared
// memory and threads: the ranks of the collective find rank 0 waiting for them. TCP: the receiver
// of an early payload finds another operation's, the sender finds the receiver's collective DATA
// where the notice would have come first (src/transport/tcp/tcp_transport.cc, CheckUnexpected),
// and a receiver finds it in place of the message it posted.
TEST_P(SendRecvFault, SendOrRecvAgainstCollectiveFailsEveryRank) {
  const Place p = GetParam();
  // 0: HcclSend to rank 1; 1: HcclRecv from rank 1; 2: HcclBatchSendRecv {recv from 1, recv from
  // 2}; 3: a small HcclSend to rank 1 (eager over shared memory: it completes) then HcclRecv; 4:
  // the small HcclSend alone (its synchronize waits for the answer); 5: HcclBatchSendRecv {small
  // send to 1}; 6: 20 small HcclSend to rank 1, more than its 16 mailbox slots (the 17th waits
  // for a slot); 7: 16 small HcclSend, then a group of two more (one batch, waiting for a slot).
  for (const int form : {0, 1, 2, 3, 4, 5, 6, 7}) {
    for (const uint64_t count : {uint64_t{1024}, uint64_t{262144}}) {
      // The transfer rank 0 is stuck in, as every message must name it (form 2: either receive;
      // form 3: over shared memory the Recv, elsewhere the Send, which waits for its receiver).
      const std::string send = "HcclSend to rank 1", recv = "HcclRecv from rank 1";
      SCOPED_TRACE("form " + std::to_string(form) + ", count " + std::to_string(count));
      auto res = RunRanks(3, p.mode, [&](RankContext& c) {
        DevBuf a, b;
        if (!a.Alloc(count * 4) || !b.Alloc(count * 4)) return c.Fail("aclrtMalloc");
        const int64_t start = NowMs();
        HcclResult r = HCCL_SUCCESS;
        HcclSendRecvItem items[2] = {{HCCL_RECV, a.ptr, count, HCCL_DATA_TYPE_FP32, 1},
                                     {HCCL_RECV, b.ptr, count, HCCL_DATA_TYPE_FP32, 2}};
        if (c.rank == 0 && form == 0) r = HcclSend(a.ptr, count, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        if (c.rank == 0 && form == 1) r = HcclRecv(a.ptr, count, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        if (c.rank == 0 && form == 2) r = HcclBatchSendRecv(items, 2, c.comm, c.stream);
        if (c.rank == 0 && form == 3) {
          r = HcclSend(b.ptr, 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
          if (r == HCCL_SUCCESS) r = HcclRecv(a.ptr, count, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        }
        HcclSendRecvItem small[1] = {{HCCL_SEND, b.ptr, 8, HCCL_DATA_TYPE_FP32, 1}};
        if (c.rank == 0 && form == 4) r = HcclSend(b.ptr, 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        if (c.rank == 0 && form == 5) r = HcclBatchSendRecv(small, 1, c.comm, c.stream);
        for (int i = 0; c.rank == 0 && form >= 6 && i < (form == 6 ? 20 : 16) && r == HCCL_SUCCESS; ++i)
          r = HcclSend(b.ptr, 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        if (c.rank == 0 && form == 7 && r == HCCL_SUCCESS) {  // runs as one batch of two items
          r = HcclGroupStart();
          for (int i = 0; i < 2 && r == HCCL_SUCCESS; ++i) r = HcclSend(b.ptr, 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
          if (r == HCCL_SUCCESS) r = HcclGroupEnd();
        }
        if (c.rank != 0)
          r = HcclAllReduce(a.ptr, b.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
        if (r != HCCL_SUCCESS) return c.Fail("call rejected: " + std::to_string(r));
        Verdict v = Finish(c, start);
        if (const std::string bad = NotAFastPara(v); !bad.empty()) return c.Fail("against HcclAllReduce: " + bad);
        const bool names = form == 0 || form >= 4 ? Contains(v.msg, send)
                           : form == 1            ? Contains(v.msg, recv)
                           : form == 2            ? Contains(v.msg, recv) || Contains(v.msg, "HcclRecv from rank 2")
                                                  : Contains(v.msg, send) || Contains(v.msg, recv);
        if (!Contains(v.msg, "mismatch") || !Contains(v.msg, "rank 0") || !names || !Contains(v.msg, "HcclAllReduce"))
          return c.Fail("message does not name rank 0's transfer and the collective: " + v.msg);
        return true;
      }, Options(p, "20000"));
      EXPECT_TRUE(res.ok) << res.message;
    }
  }
}

// The legitimate neighbour of the case above: rank 0 HcclSend to rank 1 then HcclAllReduce, rank 1
// HcclRecv from rank 0 then HcclAllReduce, rank 2 HcclAllReduce only, 4 KiB and 1 MiB, 12 rounds
// with one of ranks 0 and 1 late by 3 ms in turn. Rank 1 runs ahead into the collective while
// rank 0 is still in its Send (or has not issued it yet): its answer came first, so this is never
// a mismatch. 32 bytes too (eager over shared memory): in odd rounds rank 0 synchronizes between
// its Send and the collective, so it waits for rank 1's answer while rank 2 waits for it in the
// collective. Every round's received message and sum are checked.
TEST_P(SendRecvFault, SendThenCollectiveWithAPeerAheadCompletes) {
  const Place p = GetParam();
  for (const uint64_t count : {uint64_t{8}, uint64_t{1024}, uint64_t{262144}}) {
    SCOPED_TRACE("count " + std::to_string(count));
    auto res = RunRanks(3, p.mode, [&](RankContext& c) {
      DevBuf msg, a, b;
      if (!msg.Alloc(count * 4, c.rank == 0 ? 0.0f : -1.0f) || !a.Alloc(count * 4, 1.0f + c.rank) || !b.Alloc(count * 4))
        return c.Fail("aclrtMalloc");
      for (int round = 0; round < 12; ++round) {
        if (round % 2 == c.rank && c.rank < 2) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        if (c.rank == 0) {
          const float v = static_cast<float>(round);
          if (aclrtMemcpy(msg.ptr, 4, &v, 4, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return c.Fail("memcpy");
        }
        HcclResult r = HCCL_SUCCESS;
        if (c.rank == 0) r = HcclSend(msg.ptr, count, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
        if (c.rank == 0 && r == HCCL_SUCCESS && round % 2 == 1 && aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
          return c.Fail("round " + std::to_string(round) + ", the Send: " + aclGetRecentErrMsg());
        if (c.rank == 1) r = HcclRecv(msg.ptr, count, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
        if (r == HCCL_SUCCESS)
          r = HcclAllReduce(a.ptr, b.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
        if (r != HCCL_SUCCESS) return c.Fail("call rejected: " + std::to_string(r));
        if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
          return c.Fail("round " + std::to_string(round) + ": " + aclGetRecentErrMsg());
        if (c.rank == 1 && (msg.At(0) != static_cast<float>(round) || msg.At(count - 1) != 0.0f))
          return c.Fail("round " + std::to_string(round) + ": wrong message");
        if (b.At(0) != 6.0f || b.At(count - 1) != 6.0f) return c.Fail("round " + std::to_string(round) + ": wrong sum");
      }
      return true;
    }, Options(p, "20000"));
    EXPECT_TRUE(res.ok) << res.message;
  }
}

// The legitimate neighbours of the full waits below, with rank 1 late by 300 ms each time: 40
// small HcclSend from rank 0 to rank 1 (more than the pair's 16 mailbox slots: rank 0 waits for a
// slot) then HcclAllReduce, rank 2 in the collective meanwhile; then 100 small HcclReduce to root 1
// (more than the 64 a non-root may run ahead: ranks 0 and 2 wait for room) then a HcclSend from
// rank 0 to rank 1. Nobody waits in a transfer against a collective, so nothing fails; the
// messages and the sums are checked.
TEST_P(SendRecvFault, FullMailboxAndFullRingWithALatePeerComplete) {
  const Place p = GetParam();
  auto res = RunRanks(3, p.mode, [&](RankContext& c) {
    constexpr int kMessages = 40, kReduces = 100;
    DevBuf msgs, a, b;
    if (!msgs.Alloc(kMessages * 8, -1.0f) || !a.Alloc(8, 1.0f + c.rank) || !b.Alloc(8, 0.0f)) return c.Fail("aclrtMalloc");
    if (c.rank == 0) {
      std::vector<float> v(kMessages * 2);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
      if (aclrtMemcpy(msgs.ptr, msgs.bytes, v.data(), msgs.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        return c.Fail("memcpy");
    }
    auto msg = [&](int i) { return static_cast<void*>(static_cast<char*>(msgs.ptr) + 8 * i); };
    HcclResult r = HCCL_SUCCESS;
    for (const int part : {1, 2}) {
      if (c.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      for (int i = 0; part == 1 && c.rank < 2 && i < kMessages && r == HCCL_SUCCESS; ++i)
        r = c.rank == 0 ? HcclSend(msg(i), 2, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                        : HcclRecv(msg(i), 2, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
      if (part == 1 && r == HCCL_SUCCESS)
        r = HcclAllReduce(a.ptr, b.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
      for (int i = 0; part == 2 && i < kReduces && r == HCCL_SUCCESS; ++i)
        r = HcclReduce(a.ptr, b.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, c.comm, c.stream);
      if (part == 2 && r == HCCL_SUCCESS && c.rank < 2)
        r = c.rank == 0 ? HcclSend(msg(0), 2, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                        : HcclRecv(msg(kMessages - 1), 2, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
      if (r != HCCL_SUCCESS) return c.Fail("part " + std::to_string(part) + ": call rejected: " + std::to_string(r));
      if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
        return c.Fail("part " + std::to_string(part) + ": " + aclGetRecentErrMsg());
      if ((part == 1 || c.rank == 1) && (b.At(0) != 6.0f || b.At(1) != 6.0f))
        return c.Fail("part " + std::to_string(part) + ": wrong sum");
    }
    // Rank 1 took message i into its slot i, then message 0 again into the last slot.
    for (int i = 0; c.rank == 1 && i < kMessages; ++i) {
      const float want = static_cast<float>(i == kMessages - 1 ? 0 : 2 * i);
      if (msgs.At(2 * i) != want || msgs.At(2 * i + 1) != want + 1.0f)
        return c.Fail("message " + std::to_string(i) + " is wrong");
    }
    return true;
  }, Options(p, "20000"));
  EXPECT_TRUE(res.ok) << res.message;
}

// The case above from the other side: rank 0 runs two small HcclReduce to root 1 back to back
// (over shared memory a non-root's Reduce then completes once its data is out, and its
// synchronize waits for the root) while rank 1 waits in HcclRecv from rank 0 or in HcclSend to it
// (a small one, in its synchronize). Also with 100 calls, more than the 64 a rank may run ahead:
// rank 0 then waits in its 65th call. Every rank fails with HCCL_E_PARA within 2 s naming rank 1's
// transfer and rank 0's first call, the one rank 1 never joined.
TEST_P(SendRecvFault, TransferAgainstACollectiveThatRanAheadFailsEveryRank) {
  const Place p = GetParam();
  for (const int calls : {2, 100})
  for (const bool recv : {true, false}) {
    SCOPED_TRACE(std::to_string(calls) + (recv ? " calls, HcclRecv" : " calls, HcclSend"));
    auto res = RunRanks(2, p.mode, [&](RankContext& c) {
      DevBuf a, b;
      if (!a.Alloc(64) || !b.Alloc(64)) return c.Fail("aclrtMalloc");
      const int64_t start = NowMs();
      HcclResult r = HCCL_SUCCESS;
      if (c.rank == 0) {
        for (int i = 0; i < calls && r == HCCL_SUCCESS; ++i) {
          r = HcclReduce(a.ptr, b.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, c.comm, c.stream);
          // Once a call (the 65th, queued; over threads an earlier one) has found the mismatch,
          // later calls return it at once.
          if (i > 0 && r == HCCL_E_PARA) {
            r = HCCL_SUCCESS;
            break;
          }
        }
      } else {
        r = recv ? HcclRecv(a.ptr, 2, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream)
                 : HcclSend(a.ptr, 2, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
      }
      if (r != HCCL_SUCCESS) return c.Fail("call rejected: " + std::to_string(r));
      const std::string bad = FastMismatchNaming(Finish(c, start),
                                                 {recv ? "HcclRecv from rank 0" : "HcclSend to rank 0", "HcclReduce #1 "});
      return bad.empty() || c.Fail("against HcclReduce: " + bad);
    }, Options(p, "20000"));
    EXPECT_TRUE(res.ok) << res.message;
  }
}

// A reader that runs ahead: after a matching HcclAllReduce with no synchronize in between, rank 0
// calls HcclBroadcast or HcclScatter with root 1 (it waits for the root's slot alone), while rank 1
// waits in HcclSend to rank 0 (4 KiB, above the mailbox's inline size) or in HcclRecv from it.
// Every rank fails with HCCL_E_PARA within 2 s naming rank 1's transfer and rank 0's call.
TEST_P(SendRecvFault, ReaderThatRanAheadAgainstARootInATransferFailsEveryRank) {
  const Place p = GetParam();
  for (const bool scatter : {false, true})
  for (const bool recv : {true, false}) {
    SCOPED_TRACE(std::string(scatter ? "HcclScatter" : "HcclBroadcast") + (recv ? ", HcclRecv" : ", HcclSend"));
    auto res = RunRanks(2, p.mode, [&](RankContext& c) {
      DevBuf a, b;
      if (!a.Alloc(4096) || !b.Alloc(4096)) return c.Fail("aclrtMalloc");
      const int64_t start = NowMs();
      HcclResult r = HcclAllReduce(a.ptr, b.ptr, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
      if (r == HCCL_SUCCESS && c.rank == 0)
        r = scatter ? HcclScatter(a.ptr, b.ptr, 2, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                    : HcclBroadcast(a.ptr, 2, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
      if (r == HCCL_SUCCESS && c.rank == 1)
        r = recv ? HcclRecv(a.ptr, 1024, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream)
                 : HcclSend(a.ptr, 1024, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
      if (r != HCCL_SUCCESS) return c.Fail("call rejected: " + std::to_string(r));
      const std::string bad = FastMismatchNaming(Finish(c, start), {recv ? "HcclRecv from rank 0" : "HcclSend to rank 0",
                                                                    scatter ? "HcclScatter #2" : "HcclBroadcast #2"});
      return bad.empty() || c.Fail("against the transfer: " + bad);
    }, Options(p, "20000"));
    EXPECT_TRUE(res.ok) << res.message;
  }
}

TEST_P(SendRecvFault, CountMismatchFailsBothNamingBoth) { Mismatch(GetParam(), false); }
TEST_P(SendRecvFault, DtypeMismatchFailsBothNamingBoth) { Mismatch(GetParam(), true); }

// Both ranks Send first: a deadlock under the rendezvous rule, reported at the exec timeout
// (1.5 s here) as HCCL_E_TIMEOUT naming both ranks. 4 KiB: above the mailbox's eager limit (472
// bytes; smaller sends over shared memory complete eagerly, runahead_rooted_test.cc).
TEST_P(SendRecvFault, BothSendFirstTimesOutNamingBoth) {
  const Place p = GetParam();
  auto res = RunRanks(2, p.mode, [&](RankContext& c) {
    DevBuf out, in;
    if (!out.Alloc(1024 * 4) || !in.Alloc(1024 * 4)) return c.Fail("aclrtMalloc");
    const uint32_t peer = 1 - c.rank;
    const int64_t start = NowMs();
    if (HcclSend(out.ptr, 1024, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream) != HCCL_SUCCESS ||
        HcclRecv(in.ptr, 1024, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream) != HCCL_SUCCESS)
      return c.Fail("call rejected");
    Verdict v = Finish(c, start);
    if (v.sync != ACL_ERROR_RT_TASK_TIMEOUT) return c.Fail("synchronize " + std::to_string(v.sync) + ": " + v.msg);
    if (v.async != HCCL_E_TIMEOUT) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
    if (!Contains(v.msg, "rank 0 and rank 1 are both in HcclSend to each other") &&
        !Contains(v.msg, "rank 1 and rank 0 are both in HcclSend to each other"))
      return c.Fail("message does not name the deadlock: " + v.msg);
    if (const std::string bad = NotAtTheTimeout(v, 1500); !bad.empty()) return c.Fail(bad);
    return true;
  }, Options(p, "1500"));
  EXPECT_TRUE(res.ok) << res.message;
}

// Ranks 0 and 2 both Send first (a deadlock, as above), 300 ms after rank 1 entered an
// HcclAllReduce that waits for them: rank 1 times out first (1.5 s here), and its message says
// what the ranks it waits for wait in; so every rank's message names the deadlocked pair (on
// threads_local rank 1's failure ends the others' transfers with its message, elsewhere they time
// out with their own). Thread ranks and processes of one host: their groups see the members'
// transfers (LateTransfers in src/transport/local/local_group.cc, ShmGroup::Missing from the
// published transfer waits); over TCP the message names the late ranks.
TEST_P(SendRecvFault, ACollectiveTimeoutNamesWhatItsLateRanksWaitIn) {
  const Place p = GetParam();
  if (std::string(p.name) == "tcp" || std::string(p.name) == "nodes") GTEST_SKIP() << "transfers over TCP";
  auto res = RunRanks(3, p.mode, [&](RankContext& c) {
    DevBuf out, in;
    if (!out.Alloc(1024 * 4) || !in.Alloc(1024 * 4)) return c.Fail("aclrtMalloc");
    const int64_t start = NowMs();
    HcclResult r = HCCL_SUCCESS;
    if (c.rank == 1) {
      r = HcclAllReduce(out.ptr, in.ptr, 1024, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const uint32_t peer = 2 - c.rank;
      r = HcclSend(out.ptr, 1024, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream);
      if (r == HCCL_SUCCESS) r = HcclRecv(in.ptr, 1024, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream);
    }
    if (r != HCCL_SUCCESS) return c.Fail("call rejected");
    Verdict v = Finish(c, start);
    if (v.async != HCCL_E_TIMEOUT) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
    const bool rank1 = Contains(v.msg, "HcclAllReduce #1 (rank 1): timed out waiting for ") &&
                       Contains(v.msg, "rank(s) 0, 2 of 3: rank 0 and rank 2 both send to each other before receiving");
    const bool own = c.rank != 1 && Contains(v.msg, StrCat("rank ", c.rank, " and rank ", 2 - c.rank,
                                                             " are both in HcclSend to each other"));
    if (!rank1 && !own) return c.Fail("message does not name the deadlocked pair: " + v.msg);
    if (const std::string bad = NotAtTheTimeout(v, 1500); !bad.empty()) return c.Fail(bad);
    return true;
  }, Options(p, "1500"));
  EXPECT_TRUE(res.ok) << res.message;
}

// A Send whose peer never receives: HCCL_E_TIMEOUT at the exec timeout naming the peer (over
// shared memory this 256-byte send completes eagerly and the synchronize's settle times out).
TEST_P(SendRecvFault, UnmatchedSendTimesOutNamingThePeer) {
  const Place p = GetParam();
  auto res = RunRanks(2, p.mode, [&](RankContext& c) {
    DevBuf out;
    if (!out.Alloc(64 * 4)) return c.Fail("aclrtMalloc");
    if (c.rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      return true;
    }
    const int64_t start = NowMs();
    if (HcclSend(out.ptr, 64, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream) != HCCL_SUCCESS) return c.Fail("rejected");
    Verdict v = Finish(c, start);
    if (v.async != HCCL_E_TIMEOUT) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
    if (!Contains(v.msg, "rank 1 did not post the HcclRecv")) return c.Fail("message: " + v.msg);
    return true;
  }, Options(p, "1000"));
  EXPECT_TRUE(res.ok) << res.message;
}

// A Send, or a Recv, whose peer destroys its communicator while the transfer waits for it (300 ms
// in): HCCL_E_REMOTE naming the peer, long before the exec timeout (20 s).
TEST_P(SendRecvFault, TransferWithAPeerThatLeavesFailsAtOnce) {
  const Place p = GetParam();
  for (const bool send : {true, false}) {
    SCOPED_TRACE(send ? "HcclSend" : "HcclRecv");
    auto res = RunRanks(2, p.mode, [&](RankContext& c) {
      DevBuf buf;
      if (!buf.Alloc(1024 * 4)) return c.Fail("aclrtMalloc");
      if (c.rank == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return true;  // destroys its communicator
      }
      const int64_t start = NowMs();
      const HcclResult r = send ? HcclSend(buf.ptr, 1024, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                                : HcclRecv(buf.ptr, 1024, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
      if (r != HCCL_SUCCESS) return c.Fail("rejected");
      Verdict v = Finish(c, start);
      if (v.sync == ACL_SUCCESS) return c.Fail("the transfer succeeded");
      if (v.async != HCCL_E_REMOTE) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
      if (v.ms > 5000 * hostccl::faulttest::kSlowdown) return c.Fail("took " + std::to_string(v.ms) + " ms: " + v.msg);
      if (!Contains(v.msg, "rank 1")) return c.Fail("message does not name rank 1: " + v.msg);
      return true;
    }, Options(p, "20000"));
    EXPECT_TRUE(res.ok) << res.message;
  }
}

// A rank that has nothing more to exchange may destroy its communicator while two others still
// exchange: their transfers complete (the departure fails only transfers with the departed rank).
TEST_P(SendRecvFault, EarlyDestroyDoesNotBreakOtherPairs) {
  const Place p = GetParam();
  auto res = RunRanks(3, p.mode, [&](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: this test is about destroy, not memory
    if (c.rank == 2) return true;  // destroys at once
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<float> out(256, static_cast<float>(c.rank + 1)), in(256, 0.0f);
    HcclSendRecvItem items[2] = {{HCCL_SEND, out.data(), 256, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(1 - c.rank)},
                                 {HCCL_RECV, in.data(), 256, HCCL_DATA_TYPE_FP32, static_cast<uint32_t>(1 - c.rank)}};
    if (HcclBatchSendRecv(items, 2, c.comm, c.stream) != HCCL_SUCCESS) return c.Fail("rejected");
    if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) return c.Fail(std::string("failed: ") + aclGetRecentErrMsg());
    if (in[255] != static_cast<float>(2 - c.rank)) return c.Fail("wrong data");
    return true;
  }, Options(p, "20000"));
  EXPECT_TRUE(res.ok) << res.message;
}

INSTANTIATE_TEST_SUITE_P(P, SendRecvFault, ::testing::ValuesIn(kPlaces),
                         [](const ::testing::TestParamInfo<Place>& i) { return std::string(i.param.name); });

class SendRecvPeerDeath : public ::testing::TestWithParam<Place> {};

// The victim kills itself 5 ms from now, in the middle of the transfers it issues next.
void KillSelfIn5Ms() {
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    raise(SIGKILL);
  }).detach();
}

// A receiver killed in the middle of a stream of 16 MiB messages: the sender fails with
// HCCL_E_REMOTE naming rank 1, long before the exec timeout (20 s).
TEST_P(SendRecvPeerDeath, SenderFailsNamingTheDeadRank) {
  const Place p = GetParam();
  constexpr size_t kBytes = 16 << 20;
  auto res = RunRanks(2, p.mode, [&](RankContext& c) {
    DevBuf buf;
    if (!buf.Alloc(kBytes, 1.0f, false)) return c.Fail("aclrtMalloc");
    if (c.rank == 1) {
      if (HcclRecv(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream) != HCCL_SUCCESS ||
          aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
        return c.Fail("first receive failed");
      KillSelfIn5Ms();
      (void)HcclRecv(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream);
      (void)aclrtSynchronizeStream(c.stream);
      std::this_thread::sleep_for(std::chrono::seconds(10));
      return c.Fail("the victim survived");
    }
    const int64_t start = NowMs();
    for (int i = 0; i < 50; ++i)
      if (HcclSend(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream) != HCCL_SUCCESS) break;
    Verdict v = Finish(c, start);
    if (v.sync == ACL_SUCCESS) return c.Fail("50 sends to a dead rank succeeded");
    if (v.async != HCCL_E_REMOTE) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
    if (!Contains(v.msg, "rank 1")) return c.Fail("message does not name rank 1: " + v.msg);
    if (v.ms > 10000) return c.Fail("took " + std::to_string(v.ms) + " ms");
    return true;
  }, Options(p, "20000"));
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, 1, &why)) << why << "full report:\n" << res.message;
}

// A sender killed in the middle of a stream of 64 MiB messages (on one host: split copies, the
// receiver waits for the sender's chunks): the receiver fails with HCCL_E_REMOTE naming rank 0,
// long before the exec timeout (20 s).
TEST_P(SendRecvPeerDeath, ReceiverFailsNamingTheDeadSender) {
  const Place p = GetParam();
  constexpr size_t kBytes = 64 << 20;
  auto res = RunRanks(2, p.mode, [&](RankContext& c) {
    DevBuf buf;
    if (!buf.Alloc(kBytes, 1.0f, false)) return c.Fail("aclrtMalloc");
    if (c.rank == 0) {
      if (HcclSend(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream) != HCCL_SUCCESS ||
          aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
        return c.Fail("first send failed");
      KillSelfIn5Ms();
      for (int i = 0; i < 50; ++i) (void)HcclSend(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream);
      (void)aclrtSynchronizeStream(c.stream);
      std::this_thread::sleep_for(std::chrono::seconds(10));
      return c.Fail("the victim survived");
    }
    const int64_t start = NowMs();
    for (int i = 0; i < 51; ++i)
      if (HcclRecv(buf.ptr, kBytes / 4, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream) != HCCL_SUCCESS) break;
    Verdict v = Finish(c, start);
    if (v.sync == ACL_SUCCESS) return c.Fail("51 receives from a dead rank succeeded");
    if (v.async != HCCL_E_REMOTE) return c.Fail("async error " + std::to_string(v.async) + ": " + v.msg);
    if (!Contains(v.msg, "rank 0")) return c.Fail("message does not name rank 0: " + v.msg);
    if (v.ms > 10000) return c.Fail("took " + std::to_string(v.ms) + " ms");
    return true;
  }, Options(p, "20000"));
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, 0, &why)) << why << "full report:\n" << res.message;
}

INSTANTIATE_TEST_SUITE_P(P, SendRecvPeerDeath, ::testing::ValuesIn(kPlaces + 1, kPlaces + 3),
                         [](const ::testing::TestParamInfo<Place>& i) { return std::string(i.param.name); });

}  // namespace

// Program-order mistakes, generated: a program of 2-8 steps for 3 ranks (HcclAllReduce, HcclReduce,
// HcclBroadcast, HcclScatter, HcclAllGather, HcclBarrier; HcclSend/HcclRecv from one rank to
// another; a two-item HcclBatchSendRecv exchange between two ranks; 8 B, 4 KiB or 1 MiB), in which
// one rank drops one step or swaps it with the next. Every rank's synchronize must end within 4 s
// (a mismatch found, a departed peer reported, or the program completed), unless the mistake made
// two ranks wait in transfers for each other: a deadlock, reported at the exec timeout (8 s here)
// as docs/semantics.md §8 promises. Seeds 1-12 by default; FAULTTEST_ORDER_TRIALS and
// FAULTTEST_ORDER_SEED choose others (the long-labelled sendrecv_order_fuzz_long runs 300).
namespace {
struct Step {
  int kind;  // 0 AllReduce, 1 Reduce, 2 Broadcast, 3 Send/Recv, 4 Scatter, 5 AllGather, 6 Barrier, 7 batch
  int a, b;  // the root (a); the sender a and the receiver b; the two ranks of the batch
  uint64_t count;
};

HcclResult RunStep(const RankContext& c, const Step& s, void* x, void* y) {
  const uint32_t other = static_cast<uint32_t>(c.rank == s.a ? s.b : s.a);
  HcclSendRecvItem items[2] = {{HCCL_SEND, x, s.count, HCCL_DATA_TYPE_FP32, other},
                               {HCCL_RECV, y, s.count, HCCL_DATA_TYPE_FP32, other}};
  const bool pair = c.rank == s.a || c.rank == s.b;
  switch (s.kind) {
    case 0: return HcclAllReduce(x, y, s.count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
    case 1: return HcclReduce(x, y, s.count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, s.a, c.comm, c.stream);
    case 2: return HcclBroadcast(x, s.count, HCCL_DATA_TYPE_FP32, s.a, c.comm, c.stream);
    case 3:
      if (!pair) return HCCL_SUCCESS;
      return c.rank == s.a ? HcclSend(x, s.count, HCCL_DATA_TYPE_FP32, s.b, c.comm, c.stream)
                           : HcclRecv(y, s.count, HCCL_DATA_TYPE_FP32, s.a, c.comm, c.stream);
    case 4: return HcclScatter(x, y, s.count / 4, HCCL_DATA_TYPE_FP32, s.a, c.comm, c.stream);
    case 5: return HcclAllGather(x, y, s.count / 4, HCCL_DATA_TYPE_FP32, c.comm, c.stream);
    case 6: return HcclBarrier(c.comm, c.stream);
    default: return pair ? HcclBatchSendRecv(items, 2, c.comm, c.stream) : HCCL_SUCCESS;
  }
}
}  // namespace

TEST_P(SendRecvFault, ProgramOrderMistakesNeverWaitForTheTimeout) {
  const Place p = GetParam();
  const char* trials_env = getenv("FAULTTEST_ORDER_TRIALS");
  const char* seed_env = getenv("FAULTTEST_ORDER_SEED");
  const int trials = trials_env != nullptr ? atoi(trials_env) : 12;
  const unsigned seed0 = seed_env != nullptr ? static_cast<unsigned>(atoi(seed_env)) : 1;
  const int64_t bound_ms = 4000 * hostccl::faulttest::kSlowdown;
  for (int trial = 0; trial < trials; ++trial) {
    const unsigned seed = seed0 + static_cast<unsigned>(trial);
    std::mt19937 g(seed);
    std::vector<Step> steps(2 + g() % 7);
    const uint64_t counts[] = {2, 1024, 262144};
    for (auto& s : steps) {
      s.kind = static_cast<int>(g() % 8);
      s.a = static_cast<int>(g() % 3);
      s.b = (s.a + 1 + static_cast<int>(g() % 2)) % 3;
      s.count = counts[g() % 3];
    }
    const int j = static_cast<int>(g() % steps.size());
    const bool pair_step = steps[j].kind == 3 || steps[j].kind == 7;
    const int d = pair_step ? (g() % 2 ? steps[j].a : steps[j].b) : static_cast<int>(g() % 3);
    const bool swap = g() % 2 == 1 && j + 1 < static_cast<int>(steps.size());
    std::string program;
    for (size_t i = 0; i < steps.size(); ++i)
      program += StrCat(steps[i].kind, ":", steps[i].a, ">", steps[i].b, "/", steps[i].count, static_cast<int>(i) == j ? "* " : " ");
    program += StrCat(swap ? "swapped with the next" : "dropped", " by rank ", d);
    auto res = RunRanks(3, p.mode, [&](RankContext& c) {
      DevBuf x, y;
      if (!x.Alloc(262144 * 4, 1.0f, false) || !y.Alloc(262144 * 4, 1.0f, false)) return c.Fail("aclrtMalloc");
      std::vector<Step> mine = steps;
      if (c.rank == d && swap) std::swap(mine[static_cast<size_t>(j)], mine[static_cast<size_t>(j) + 1]);
      else if (c.rank == d) mine.erase(mine.begin() + j);
      const int64_t start = NowMs();
      HcclResult r = HCCL_SUCCESS;
      for (size_t i = 0; i < mine.size() && r == HCCL_SUCCESS; ++i) r = RunStep(c, mine[i], x.ptr, y.ptr);
      Verdict v = Finish(c, start);
      if (v.ms <= bound_ms) return true;
      const bool deadlock = Contains(v.msg, "to each other") || Contains(v.msg, "did not send the message") ||
                            Contains(v.msg, "did not post the HcclRecv");
      return c.Fail(StrCat(deadlock ? "SLOW in a transfer deadlock" : "SLOW", " (", v.ms, " ms): ", v.msg));
    }, Options(p, "8000"));
    if (res.ok) continue;
    // A deadlock of two transfers may leave the other ranks waiting for the exec timeout too.
    bool every_failure_slow = true;
    std::istringstream lines(res.message);
    for (std::string line; std::getline(lines, line);)
      if (Contains(line, "exit status") && !Contains(line, "SLOW")) every_failure_slow = false;
    EXPECT_TRUE(every_failure_slow && Contains(res.message, "SLOW in a transfer deadlock"))
        << "seed " << seed << ": " << program << "\n" << res.message;
  }
}
