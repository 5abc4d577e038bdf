// Posted receives over the shared-memory mailboxes (docs/semantics.md "Point-to-point"; the
// `mailbox` algorithm, src/algo/sendrecv/sendrecv_mailbox.cc): a small HcclSend whose HcclRecv was
// posted before it decides the match itself, without waiting for the receiver to take the message.
// 2 processes over shared memory, exec timeout 10 s. Rank 1 posts its HcclRecv, then stops itself
// (SIGSTOP) before it can take anything; rank 0 sends once rank 1 is stopped:
//  - AgreeingPostCompletesTheSend: the Send and its synchronize succeed within 2 s; rank 0 then
//    resumes rank 1, whose synchronize succeeds with rank 0's payload, bit-exact. (Without the post
//    the sender's synchronize waits for the answer: 10 s, then HCCL_E_TIMEOUT.)
//  - DisagreeingPostFailsTheSendAtOnce: rank 1's count is 3 against rank 0's 2: rank 0's
//    synchronize fails with HCCL_E_PARA naming both ranks and the difference within 2 s; resumed,
//    rank 1 fails the same way.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "fault/fault_util.h"
#include "fault/runahead_util.h"

namespace {

using hostccl::faulttest::Contains;
using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NamesRank;
using hostccl::faulttest::NowMs;
using hostccl::faulttest::SynchronizeVerdict;
using hostccl::faulttest::Verdict;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int64_t kWithinMs = 2000 * hostccl::faulttest::kSlowdown;

// Whether process `pid` is stopped (state T in /proc/<pid>/stat), waiting up to `wait_ms`.
bool WaitStopped(pid_t pid, int wait_ms) {
  for (int64_t end = NowMs() + wait_ms; NowMs() < end;) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// "" when the outcome is HCCL_E_PARA with a mismatch naming both ranks and "count=3", else why not.
std::string NotTheMismatch(const Verdict& o) {
  if (o.sync == ACL_SUCCESS) return "the synchronize succeeded";
  if (o.async != HCCL_E_PARA) return "async error " + std::to_string(o.async) + ": " + o.msg;
  if (!Contains(o.msg, "mismatch") || !NamesRank(o.msg, 0) || !NamesRank(o.msg, 1) ||
      !Contains(o.msg, "count=3"))
    return "the message does not name both ranks and the difference: " + o.msg;
  return "";
}

// Rank 1 receives `recv_count` floats after stopping itself; rank 0 sends 2 floats once rank 1 is
// stopped, then resumes it. `sender` and `receiver` judge each side's outcome ("" = as expected).
void SendToStoppedReceiver(uint64_t recv_count, std::string (*sender)(const Verdict&),
                           std::string (*receiver)(const Verdict&, const float*)) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o = hostccl::faulttest::RunAheadShmOptions(dir);
  for (auto& e : o.env)
    if (e.first == "HOSTCCL_EXEC_TIMEOUT_MS") e.second = "10000";
  auto res = RunRanks(
      2, Mode::kProcesses,
      [&](RankContext& ctx) {
        DevBuf buf;
        if (!buf.Alloc(64 * 4, ctx.rank == 0 ? 7.5f : 0.0f)) return ctx.Fail("aclrtMalloc failed");
        if (ctx.rank == 1) {
          hostccl::faulttest::PublishPid(1);
          if (HcclRecv(buf.ptr, recv_count, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream) !=
              HCCL_SUCCESS)
            return ctx.Fail("HcclRecv rejected");
          // The receive is posted by the call itself (an inline attempt) or by the stream right
          // after.
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          raise(SIGSTOP);
          const Verdict got = SynchronizeVerdict(ctx, NowMs());
          float host[64];
          std::memcpy(host, buf.ptr, sizeof(host));
          if (const std::string bad = receiver(got, host); !bad.empty())
            return ctx.Fail("receiver: " + bad);
          return true;
        }
        const pid_t peer = hostccl::faulttest::PeerPid(1);
        if (peer <= 0) return ctx.Fail("rank 1 published no pid");
        if (!WaitStopped(peer, 5000)) return ctx.Fail("rank 1 did not stop");
        const int64_t start = NowMs();
        const HcclResult r = HcclSend(buf.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream);
        const Verdict got = SynchronizeVerdict(ctx, start);
        kill(peer, SIGCONT);
        if (r != HCCL_SUCCESS && r != HCCL_E_PARA)
          return ctx.Fail("HcclSend returned " + std::to_string(r));
        if (got.ms > kWithinMs)
          return ctx.Fail("the send took " + std::to_string(got.ms) + " ms: " + got.msg);
        if (const std::string bad = sender(got); !bad.empty()) return ctx.Fail("sender: " + bad);
        return true;
      },
      o);
  hostccl::faulttest::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

TEST(PostedRecv, AgreeingPostCompletesTheSend) {
  SendToStoppedReceiver(
      2,
      [](const Verdict& o) { return o.sync == ACL_SUCCESS ? std::string() : "failed: " + o.msg; },
      [](const Verdict& o, const float* got) -> std::string {
        if (o.sync != ACL_SUCCESS) return "failed: " + o.msg;
        if (got[0] != 7.5f || got[1] != 7.5f || got[2] != 0.0f) return "wrong data";
        return "";
      });
}

TEST(PostedRecv, DisagreeingPostFailsTheSendAtOnce) {
  SendToStoppedReceiver(3, &NotTheMismatch,
                        [](const Verdict& o, const float*) { return NotTheMismatch(o); });
}

}  // namespace
