// Tests of RunRanks itself: every mode forms a communicator of the right size with the right rank
// ids, passes RunOptions::env to the ranks, reports which rank failed, and (processes) kills a
// straggler at the timeout instead of hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "harness/run_ranks.h"

namespace hostccl::test {
namespace {

class RunRanksTest : public ::testing::TestWithParam<Mode> {};

TEST_P(RunRanksTest, RanksSizesAndEnv) {
  RunOptions opts;
  opts.env.push_back({"HOSTCCL_TEST_PROBE", "42"});
  RunResult res = RunRanks(3, GetParam(), [](RankContext& ctx) {
    uint32_t size = 0, id = 99;
    if (HcclGetRankSize(ctx.comm, &size) != HCCL_SUCCESS || size != 3) return ctx.Fail("rank size " + std::to_string(size));
    if (HcclGetRankId(ctx.comm, &id) != HCCL_SUCCESS || id != static_cast<uint32_t>(ctx.rank))
      return ctx.Fail("rank id " + std::to_string(id));
    const char* probe = std::getenv("HOSTCCL_TEST_PROBE");
    if (probe == nullptr || std::string(probe) != "42") return ctx.Fail("RunOptions::env not visible");
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << res.message;
}

TEST_P(RunRanksTest, ReportsTheFailingRank) {
  RunResult res = RunRanks(3, GetParam(), [](RankContext& ctx) {
    if (ctx.rank == 2) return ctx.Fail("deliberate failure");
    return true;
  });
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.message.find("rank 2"), std::string::npos) << res.message;
  EXPECT_NE(res.message.find("deliberate failure"), std::string::npos) << res.message;
  EXPECT_EQ(res.message.find("rank 0"), std::string::npos) << res.message;
}

INSTANTIATE_TEST_SUITE_P(Modes, RunRanksTest,
                         ::testing::Values(Mode::kThreadsInitAll, Mode::kThreadsRootInfo, Mode::kProcesses),
                         [](const auto& info) {
                           std::string n = ModeName(info.param);
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(RunRanksProcesses, StragglerIsKilledAtTheTimeout) {
  RunOptions opts;
  opts.timeout_s = 3;
  const auto start = std::chrono::steady_clock::now();
  RunResult res = RunRanks(2, Mode::kProcesses, [](RankContext& ctx) {
    if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::seconds(60));
    return true;
  }, opts);
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.message.find("rank 1: still running"), std::string::npos) << res.message;
  EXPECT_LT(secs, 20) << "the parent must not wait for the straggler";
}

}  // namespace
}  // namespace hostccl::test
