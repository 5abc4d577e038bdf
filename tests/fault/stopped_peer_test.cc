// A rank stopped with SIGSTOP (reliability.md row 3), HCCL_EXEC_TIMEOUT=3: 4 ranks as processes,
// over shared memory and over TCP. The others' call must fail with HCCL_E_TIMEOUT within 4 s
// (synchronize non-zero, HcclGetCommAsyncError == HCCL_E_TIMEOUT) with a message naming the stopped
// rank; then rank 0 sends SIGCONT, and the resumed rank's next call must fail rather than hang.
// Ranks publish their pids in the scratch directory (FAULTTEST_DIR) so rank 0 can wake the victim.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "fault/fault_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 4;
constexpr int kVictim = 2;
constexpr uint64_t kCount = 1024;

class StoppedPeerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StoppedPeerTest, OthersTimeOutNamingTheStoppedRank) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const auto shm_before = hostccl::faulttest::ListDevShm();
  RunOptions o;
  o.env = hostccl::faulttest::TransportEnv(GetParam());
  o.env.push_back({"HCCL_EXEC_TIMEOUT", "3"});
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", ""});  // empty = unset: HCCL_EXEC_TIMEOUT decides
  o.env.push_back({"HOSTCCL_CONNECT_TIMEOUT_MS", "10000"});
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  o.timeout_s = 40;
  auto body = [](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(kCount * 4) || !recv.Alloc(kCount * 4)) return ctx.Fail("aclrtMalloc failed");
    hostccl::faulttest::PublishPid(ctx.rank);
    HcclResult enq = HCCL_SUCCESS;
    if (hostccl::faulttest::ReduceAndSync(ctx, send, recv, kCount, &enq) != ACL_SUCCESS || enq != HCCL_SUCCESS)
      return ctx.Fail(std::string("warm-up call failed: ") + aclGetRecentErrMsg());
    if (ctx.rank == kVictim) {
      raise(SIGSTOP);
      // Resumed by rank 0 after the others failed: the communicator must be failed, not hang.
      const int64_t t0 = NowMs();
      aclError s = hostccl::faulttest::ReduceAndSync(ctx, send, recv, kCount, &enq);
      const int64_t took = NowMs() - t0;
      if (enq == HCCL_SUCCESS && s == ACL_SUCCESS) return ctx.Fail("the resumed rank's call succeeded");
      if (took > 4000) return ctx.Fail("the resumed rank's call took " + std::to_string(took) + " ms to fail");
      return true;
    }
    const int64_t t0 = NowMs();
    aclError s = hostccl::faulttest::ReduceAndSync(ctx, send, recv, kCount, &enq);
    const int64_t took = NowMs() - t0;
    const std::string msg = aclGetRecentErrMsg();
    bool ok = true;
    if (enq != HCCL_SUCCESS) ok = ctx.Fail(hostccl::faulttest::Errno("HcclReduce (enqueue)", enq));
    else if (s == ACL_SUCCESS) ok = ctx.Fail("the call succeeded while rank 2 was stopped");
    else if (took > 4000) ok = ctx.Fail("failure took " + std::to_string(took) + " ms (limit 4000): " + msg);
    HcclResult async = HCCL_SUCCESS;
    (void)HcclGetCommAsyncError(ctx.comm, &async);
    if (ok && async != HCCL_E_TIMEOUT)
      ok = ctx.Fail("HcclGetCommAsyncError reported " + std::to_string(async) + ", expected HCCL_E_TIMEOUT (9): " + msg);
    // Either "rank 2 ..." or the barrier's "waiting for rank(s) 2 of 4".
    const bool names_victim = msg.find("rank 2") != std::string::npos || msg.find("rank(s) 2") != std::string::npos;
    if (ok && !names_victim) ok = ctx.Fail("message does not name rank 2: " + msg);
    if (ctx.rank == 0) {
      pid_t victim = hostccl::faulttest::PeerPid(kVictim);
      if (victim <= 0) return ctx.Fail("rank 2 published no pid");
      kill(victim, SIGCONT);
    }
    return ok;
  };
  auto res = RunRanks(kRanks, Mode::kProcesses, body, o);
  EXPECT_TRUE(res.ok) << res.message;
  EXPECT_EQ(hostccl::faulttest::NewEntries(shm_before, hostccl::faulttest::ListDevShm()), "");
  hostccl::faulttest::RemoveScratchDir(dir);
}

INSTANTIATE_TEST_SUITE_P(Transports, StoppedPeerTest, ::testing::Values("shm", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
