// The flight recorder end to end (docs/flight_recorder.md): a stopped rank's timeout and a
// mismatch are dumped by every failing rank and the merge tool (tools/hccl_fr/hccl_fr.py) names
// the stopped rank / the mismatching call; SIGUSR1 dumps a live job without disturbing it;
// HOSTCCL_TRACE writes one well-formed Chrome trace per rank, which the tool merges.
#include <glob.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "fault/fault_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

std::string Sh(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (pclose(p) != 0) out += "\n[exit status non-zero]";
  }
  return out;
}

std::string Tool(const std::string& args) { return Sh(std::string("/usr/bin/python3 ") + HOSTCCL_FR_TOOL + " " + args); }

int CountFiles(const std::string& pattern) {
  glob_t g{};
  const int n = glob(pattern.c_str(), 0, nullptr, &g) == 0 ? static_cast<int>(g.gl_pathc) : 0;
  globfree(&g);
  return n;
}

// Waits up to `ms` for a dump of `rank` in `dir`.
bool WaitForDump(const std::string& dir, int rank, int ms) {
  const std::string pat = dir + "/hostccl_fr_*_rank" + std::to_string(rank) + "_pid" + std::to_string(getpid()) + ".json";
  for (int64_t end = NowMs() + ms; NowMs() < end; usleep(5000))
    if (CountFiles(pat) > 0) return true;
  return false;
}

aclError AllReduceAndSync(RankContext& ctx, DevBuf& send, DevBuf& recv, uint64_t count, HcclResult* rc) {
  *rc = HcclAllReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
  return *rc == HCCL_SUCCESS ? aclrtSynchronizeStream(ctx.stream) : ACL_SUCCESS;
}

class StoppedRankDump : public ::testing::TestWithParam<std::string> {};

// Rank 2 stops itself (SIGSTOP) before call #2; ranks 0, 1, 3 time out and dump; rank 0 then sends
// rank 2 SIGUSR1 and SIGCONT, so the stopped rank's dump shows it never entered #2.
TEST_P(StoppedRankDump, EveryRankDumpsAndTheToolNamesTheStoppedRank) {
  constexpr int kRanks = 4, kVictim = 2;
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o;
  o.env = hostccl::faulttest::TransportEnv(GetParam());
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "1500"});
  o.env.push_back({"HOSTCCL_CONNECT_TIMEOUT_MS", "10000"});
  o.env.push_back({"HOSTCCL_FR_DIR", dir});
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  o.timeout_s = 40;
  auto body = [dir](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(4096) || !recv.Alloc(4096)) return ctx.Fail("aclrtMalloc failed");
    hostccl::faulttest::PublishPid(ctx.rank);
    HcclResult rc = HCCL_SUCCESS;
    if (hostccl::faulttest::ReduceAndSync(ctx, send, recv, 1024, &rc) != ACL_SUCCESS || rc != HCCL_SUCCESS)
      return ctx.Fail(std::string("warm-up call failed: ") + aclGetRecentErrMsg());
    if (ctx.rank == kVictim) {
      raise(SIGSTOP);
      if (!WaitForDump(dir, ctx.rank, 10000)) return ctx.Fail("no SIGUSR1 dump of the resumed rank");
      return true;
    }
    if (hostccl::faulttest::ReduceAndSync(ctx, send, recv, 1024, &rc) == ACL_SUCCESS && rc == HCCL_SUCCESS)
      return ctx.Fail("the call succeeded while rank 2 was stopped");
    if (!WaitForDump(dir, ctx.rank, 5000)) return ctx.Fail("no dump after the timeout");
    if (ctx.rank == 0) {
      // Let ranks 1 and 3 fail (and dump) first: their waits name rank 2 only while it is stopped.
      for (int r : {1, 3})
        if (hostccl::faulttest::ReadMark("failed." + std::to_string(r), 10000) < 0) return ctx.Fail("a rank did not fail");
      const pid_t victim = hostccl::faulttest::PeerPid(kVictim);
      if (victim <= 0) return ctx.Fail("rank 2 published no pid");
      kill(victim, SIGUSR1);
      kill(victim, SIGCONT);
    } else {
      hostccl::faulttest::WriteMark("failed." + std::to_string(ctx.rank), 1);
    }
    return true;
  };
  auto res = RunRanks(kRanks, Mode::kProcesses, body, o);
  EXPECT_TRUE(res.ok) << res.message;
  EXPECT_EQ(CountFiles(dir + "/hostccl_fr_*.json"), kRanks);
  const std::string report = Tool(dir);
  EXPECT_NE(report.find("BEHIND: rank 2 entered only #1"), std::string::npos) << report;
  EXPECT_NE(report.find("for rank 2, which never entered their call: rank 2 is stopped"), std::string::npos) << report;
  EXPECT_EQ(report.find("MISMATCH"), std::string::npos) << report;
  if (::testing::Test::HasFailure()) Sh("cat " + dir + "/hostccl_fr_*.json >&2");
  // FRTEST_KEEP=1 keeps the dumps (docs/flight_recorder.md's example comes from such a run).
  if (std::getenv("FRTEST_KEEP") != nullptr) std::printf("dumps kept in %s\n", dir.c_str());
  else hostccl::faulttest::RemoveScratchDir(dir);
}

INSTANTIATE_TEST_SUITE_P(Transports, StoppedRankDump, ::testing::Values("shm", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Call #2 has count 8 on rank 0 and 16 on rank 1: both fail, both dump, the tool names the call.
TEST(FlightRecorderDump, MismatchIsDumpedAndNamed) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o;
  o.env.push_back({"HOSTCCL_FR_DIR", dir});
  o.timeout_s = 30;
  auto body = [](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(64) || !recv.Alloc(64)) return ctx.Fail("aclrtMalloc failed");
    HcclResult rc = HCCL_SUCCESS;
    if (AllReduceAndSync(ctx, send, recv, 8, &rc) != ACL_SUCCESS || rc != HCCL_SUCCESS)
      return ctx.Fail(std::string("warm-up call failed: ") + aclGetRecentErrMsg());
    if (AllReduceAndSync(ctx, send, recv, ctx.rank == 0 ? 8 : 16, &rc) == ACL_SUCCESS && rc == HCCL_SUCCESS)
      return ctx.Fail("the mismatching call succeeded");
    return true;
  };
  auto res = RunRanks(2, Mode::kThreadsInitAll, body, o);
  EXPECT_TRUE(res.ok) << res.message;
  EXPECT_EQ(CountFiles(dir + "/hostccl_fr_*.json"), 2);
  const std::string report = Tool(dir);
  EXPECT_NE(report.find("MISMATCH at #2: rank 0 HcclAllReduce count=8 fp32 sum; rank 1 HcclAllReduce count=16 fp32 sum"),
            std::string::npos) << report;
  hostccl::faulttest::RemoveScratchDir(dir);
}

// Pipelined completion: the root of three small Broadcasts completes them before rank 1 comes
// (HOSTCCL_RUN_AHEAD=on, shared memory); a SIGUSR1 dump then says "ahead" for each, not "done".
// Once rank 1 took part and the root's synchronize settled them, a second dump says "done".
TEST(FlightRecorderDump, RanAheadCallsStayAheadUntilSettled) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o;
  o.env = hostccl::faulttest::TransportEnv("shm");
  o.env.push_back({"HOSTCCL_FR_DIR", dir});
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  o.env.push_back({"HOSTCCL_RUN_AHEAD", "on"});
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
  o.timeout_s = 60;
  auto res = RunRanks(2, Mode::kProcesses, [dir](RankContext& ctx) -> bool {
    DevBuf buf;
    if (!buf.Alloc(64, 1.0f)) return ctx.Fail("aclrtMalloc failed");
    auto bcasts = [&] {
      for (int i = 0; i < 3; ++i)
        if (HcclBroadcast(buf.ptr, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream) != HCCL_SUCCESS) return false;
      return true;
    };
    if (ctx.rank == 1) {
      if (hostccl::faulttest::ReadMark("go", 20000) < 0) return ctx.Fail("the root never said go");
      if (!bcasts() || aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail(aclGetRecentErrMsg());
      return true;
    }
    const std::string mine = dir + "/hostccl_fr_*_rank0_pid" + std::to_string(getpid()) + ".json";
    auto states = [&](const char* when) -> std::string {
      Sh("rm -f " + mine);
      kill(getpid(), SIGUSR1);
      if (!WaitForDump(dir, 0, 10000)) return std::string("no SIGUSR1 dump ") + when;
      return Sh("/usr/bin/python3 -c 'import glob,json,sys; d=json.load(open(glob.glob(sys.argv[1])[0])); "
                "print(\" \".join(e[\"state\"] for e in d[\"entries\"]))' '" + mine + "'");
    };
    if (!bcasts()) return ctx.Fail("HcclBroadcast enqueue failed");
    std::string before;
    for (int64_t end = NowMs() + 10000; NowMs() < end; usleep(50000))  // until the worker ran all three
      if ((before = states("before")).find("ahead ahead ahead") == 0) break;
    hostccl::faulttest::WriteMark("go", 1);
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail(aclGetRecentErrMsg());
    const std::string after = states("after");
    if (before != "ahead ahead ahead\n") return ctx.Fail("before rank 1 came: " + before);
    if (after != "done done done\n") return ctx.Fail("after the synchronize: " + after);
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
  hostccl::faulttest::RemoveScratchDir(dir);
}

// A healthy job: rank 0 sends SIGUSR1 to both ranks' processes between calls; each dumps (reason
// SIGUSR1), keeps running, and the tool finds nothing wrong.
TEST(FlightRecorderDump, Sigusr1DumpsALiveJob) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o;
  o.env.push_back({"HOSTCCL_FR_DIR", dir});
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  o.timeout_s = 30;
  auto body = [dir](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(64) || !recv.Alloc(64)) return ctx.Fail("aclrtMalloc failed");
    hostccl::faulttest::PublishPid(ctx.rank);
    HcclResult rc = HCCL_SUCCESS;
    for (int i = 0; i < 3; ++i)
      if (AllReduceAndSync(ctx, send, recv, 8, &rc) != ACL_SUCCESS || rc != HCCL_SUCCESS)
        return ctx.Fail(std::string("call failed: ") + aclGetRecentErrMsg());
    if (ctx.rank == 0)
      for (int r = 0; r < 2; ++r) kill(hostccl::faulttest::PeerPid(r), SIGUSR1);
    if (!WaitForDump(dir, ctx.rank, 10000)) return ctx.Fail("no SIGUSR1 dump");
    if (AllReduceAndSync(ctx, send, recv, 8, &rc) != ACL_SUCCESS || rc != HCCL_SUCCESS)
      return ctx.Fail(std::string("call after the dump failed: ") + aclGetRecentErrMsg());
    return true;
  };
  auto res = RunRanks(2, Mode::kProcesses, body, o);
  EXPECT_TRUE(res.ok) << res.message;
  const std::string report = Tool(dir);
  EXPECT_NE(report.find("rank 0 (pid"), std::string::npos) << report;
  EXPECT_NE(report.find("dump on SIGUSR1): entered #3, completed #3"), std::string::npos) << report;
  EXPECT_NE(report.find("no hang or mismatch visible"), std::string::npos) << report;
  hostccl::faulttest::RemoveScratchDir(dir);
}

// HOSTCCL_TRACE: one trace per rank when the communicator is freed, one slice per operation; the
// tool merges them into one well-formed file.
TEST(FlightRecorderDump, TraceFilesAreWellFormedAndMerge) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o;
  o.env.push_back({"HOSTCCL_TRACE", dir});
  o.timeout_s = 30;
  auto body = [](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(64) || !recv.Alloc(64)) return ctx.Fail("aclrtMalloc failed");
    HcclResult rc = HCCL_SUCCESS;
    for (int i = 0; i < 3; ++i)
      if (AllReduceAndSync(ctx, send, recv, 8, &rc) != ACL_SUCCESS || rc != HCCL_SUCCESS)
        return ctx.Fail(std::string("call failed: ") + aclGetRecentErrMsg());
    return true;
  };
  auto res = RunRanks(2, Mode::kThreadsInitAll, body, o);
  EXPECT_TRUE(res.ok) << res.message;
  EXPECT_EQ(CountFiles(dir + "/hostccl_trace_*.json"), 2);
  const std::string merged = dir + "/merged.json";
  EXPECT_NE(Tool("trace -o " + merged + " " + dir).find("2 trace files"), std::string::npos);
  const std::string check = Sh("/usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[\"traceEvents\"]; "
                               "print(sorted(set(x[\"pid\"] for x in e)), sum(1 for x in e if x[\"ph\"] == \"X\" and "
                               "x[\"name\"] == \"HcclAllReduce\" and x[\"dur\"] >= 0))' " + merged);
  EXPECT_EQ(check, "[0, 1] 6\n");
  hostccl::faulttest::RemoveScratchDir(dir);
}

}  // namespace
