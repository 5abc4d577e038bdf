// Repeated calls with the same arguments. From its second call on, such a call has a prepared
// record in its thread's argument memo (Communicator::Prepare), and when it is a small call of ranks
// on one host's shared segment its inline attempt skips the selection and the info log
// (Communicator::RunPreparedAttempt; docs/performance.md "A prepared call's short path"). These
// pin what every such call must still do, on that segment with process ranks and with thread ranks
// (whose attempts more often give up, their peer thread late, and then run Run from the stream):
//   - with the info log on, each call writes its line (the log sends every call through Run);
//   - results stay exact, round after round;
//   - a mismatch met by a repeated call fails it on both ranks, naming both and the field;
//   - the flight recorder holds each repeated call with its algorithm, start and end.
#include <dirent.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ostream>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "fault/fault_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRounds = 6;
constexpr uint64_t kCount = 2;  // 8 B of fp32: every call an inline attempt

#define PC_OK(call)                                                                        \
  do {                                                                                     \
    const HcclResult r_ = (call);                                                          \
    if (r_ != HCCL_SUCCESS) return ctx.Fail(hostccl::faulttest::Errno(#call, r_));         \
  } while (0)
#define PC_SYNC()                                                                          \
  do {                                                                                     \
    if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS)                                 \
      return ctx.Fail(std::string("synchronize failed: ") + aclGetRecentErrMsg());          \
  } while (0)

struct Placement {
  const char* name;
  Mode mode;
  const char* transport;  // HOSTCCL_TRANSPORT, or nullptr (threads: their shared segment)
};
const Placement kPlacements[] = {{"shm", Mode::kProcesses, "shm"}, {"threads", Mode::kThreadsRootInfo, nullptr}};
void PrintTo(const Placement& p, std::ostream* os) { *os << p.name; }

RunOptions OptionsFor(const Placement& p, const std::string& dir) {
  RunOptions o;
  if (p.transport != nullptr) o.env = hostccl::faulttest::TransportEnv(p.transport);
  o.env.push_back({hostccl::faulttest::kDirVar, dir});
  o.env.push_back({"HOSTCCL_FR_DIR", dir});  // the dumps of a failure or of SIGUSR1
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
  o.timeout_s = static_cast<int>(60 * hostccl::faulttest::kSlowdown);
  return o;
}

// kRounds rounds of HcclReduce (root alternating) and HcclAllReduce, fp32 sum, the two issued
// back to back; rank r contributes r + 1 + m in round m, written into the same send buffer before
// the round (so from round 2 on every call repeats one of the first two rounds'), and each round's
// results are checked.
bool ReduceRounds(RankContext& ctx) {
  DevBuf send, reduced, summed;
  if (!send.Alloc(kCount * sizeof(float)) || !reduced.Alloc(kCount * sizeof(float)) ||
      !summed.Alloc(kCount * sizeof(float)))
    return ctx.Fail("aclrtMalloc failed");
  for (int m = 0; m < kRounds; ++m) {
    const std::vector<float> in(kCount, static_cast<float>(ctx.rank + 1 + m));
    if (aclrtMemcpy(send.ptr, send.bytes, in.data(), send.bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
      return ctx.Fail("aclrtMemcpy failed");
    const uint32_t root = static_cast<uint32_t>(m % 2);
    PC_OK(HcclReduce(send.ptr, reduced.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, root, ctx.comm, ctx.stream));
    PC_OK(HcclAllReduce(send.ptr, summed.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream));
    PC_SYNC();
    const float want = static_cast<float>(3 + 2 * m);  // (1 + m) + (2 + m)
    for (uint64_t i = 0; i < kCount; ++i) {
      if (summed.At(i) != want)
        return ctx.Fail("round " + std::to_string(m) + ": AllReduce gave " + std::to_string(summed.At(i)));
      if (static_cast<uint32_t>(ctx.rank) == root && reduced.At(i) != want)
        return ctx.Fail("round " + std::to_string(m) + ": Reduce gave " + std::to_string(reduced.At(i)));
    }
  }
  return true;
}

// The lines of this rank's flight-recorder dump in `dir` (written on SIGUSR1) that are entries of
// `op` (e.g. "HcclReduce"); waits up to 10 s for the dump.
std::vector<std::string> DumpedEntries(const std::string& dir, int rank, const std::string& op) {
  const std::string pat =
      dir + "/hostccl_fr_*_rank" + std::to_string(rank) + "_pid" + std::to_string(getpid()) + ".json";
  std::vector<std::string> out;
  for (int64_t end = NowMs() + 10000; NowMs() < end; usleep(5000)) {
    glob_t g{};
    const bool found = glob(pat.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
    const std::string path = found ? g.gl_pathv[0] : "";
    globfree(&g);
    if (!found) continue;
    usleep(50000);  // written through a temporary file and a rename: complete once it is there
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (line.find("\"op\": \"" + op + "\"") != std::string::npos) out.push_back(line);
    break;
  }
  return out;
}

class PreparedCalls : public ::testing::TestWithParam<Placement> {};

// The info log on: every HcclReduce and HcclAllReduce of the rounds has its own line on each rank
// ("[rank r] [COLL] HcclReduce #k ..."), a seq of its own per call.
TEST_P(PreparedCalls, EveryRepeatedCollectiveWritesItsInfoLine) {
  const Placement p = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions o = OptionsFor(p, dir);
  o.env.push_back({"HOSTCCL_LOG_FILE", dir + "/log.%p"});
  o.env.push_back({"HOSTCCL_LOG_LEVEL", "INFO"});
  o.env.push_back({"HOSTCCL_LOG_SUBSYS", "COLL"});
  const auto res = RunRanks(2, p.mode, [](RankContext& ctx) { return ReduceRounds(ctx); }, o);
  EXPECT_TRUE(res.ok) << res.message;
  std::set<std::string> seen[2][2];  // [rank][reduce, allreduce]: the "#k" of each line
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind("log.", 0) != 0) continue;
    std::ifstream in(dir + "/" + e->d_name);
    for (std::string line; std::getline(in, line);)
      for (int r = 0; r < 2; ++r)
        for (int k = 0; k < 2; ++k) {
          const std::string tag = "[rank " + std::to_string(r) + "] [COLL] " + (k == 0 ? "HcclReduce #" : "HcclAllReduce #");
          const size_t at = line.find(tag);
          if (at != std::string::npos) seen[r][k].insert(line.substr(at + tag.size(), line.find(' ', at + tag.size()) - at - tag.size()));
        }
  }
  closedir(d);
  hostccl::faulttest::RemoveScratchDir(dir);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(seen[r][k].size(), static_cast<size_t>(kRounds))
          << "rank " << r << (k == 0 ? " HcclReduce" : " HcclAllReduce") << ": lines for " << seen[r][k].size()
          << " of " << kRounds << " calls";
}

// The rounds without the log (the short path wherever the attempt finds its peers): every round exact.
TEST_P(PreparedCalls, RepeatedCollectivesStayExact) {
  const Placement p = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const auto res = RunRanks(2, p.mode, [](RankContext& ctx) { return ReduceRounds(ctx); }, OptionsFor(p, dir));
  EXPECT_TRUE(res.ok) << res.message;
  hostccl::faulttest::RemoveScratchDir(dir);
}

// Rank 0 repeats one HcclReduce (count 2) four times; rank 1 issues it three times, then with
// count 3. The fourth call, rank 0's on the short path, fails on both ranks within a bound, naming
// both ranks and both counts, and leaves the communicator's asynchronous error set.
TEST_P(PreparedCalls, AMismatchMetByARepeatedCallFailsBothRanks) {
  const Placement p = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const auto res = RunRanks(2, p.mode, [](RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(64, 1.0f) || !recv.Alloc(64, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    for (int m = 0; m < 3; ++m) {
      PC_OK(HcclReduce(send.ptr, recv.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream));
      PC_SYNC();
    }
    const uint64_t count = ctx.rank == 1 ? kCount + 1 : kCount;
    const int64_t t0 = NowMs();
    PC_OK(HcclReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream));
    const hostccl::faulttest::Verdict v = hostccl::faulttest::SynchronizeVerdict(ctx, t0);
    if (v.sync == ACL_SUCCESS) return ctx.Fail("the mismatched fourth call succeeded");
    if (v.ms > 10000) return ctx.Fail("the mismatch took " + std::to_string(v.ms) + " ms: " + v.msg);
    for (const char* want : {"mismatch", "rank 0 ", "rank 1 ", "count=2", "count=3"})
      if (v.msg.find(want) == std::string::npos) return ctx.Fail(std::string("no '") + want + "' in: " + v.msg);
    if (v.async != HCCL_E_PARA) return ctx.Fail("HcclGetCommAsyncError reported " + std::to_string(v.async));
    return true;
  }, OptionsFor(p, dir));
  EXPECT_TRUE(res.ok) << res.message;
  hostccl::faulttest::RemoveScratchDir(dir);
}

// The flight recorder: each round's HcclReduce and HcclAllReduce has its entry on each rank, with
// its algorithm, its start time, and done (every round was synchronized).
TEST_P(PreparedCalls, TheFlightRecorderHoldsEveryRepeatedCall) {
  const Placement p = GetParam();
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const RunOptions o = OptionsFor(p, dir);
  const bool processes = p.mode == Mode::kProcesses;
  const auto res = RunRanks(2, p.mode, [dir, processes](RankContext& ctx) {
    if (!ReduceRounds(ctx)) return false;
    if (processes || ctx.rank == 0) kill(getpid(), SIGUSR1);  // dumps every communicator of the process
    for (const char* op : {"HcclReduce", "HcclAllReduce"}) {
      const std::vector<std::string> entries = DumpedEntries(dir, ctx.rank, op);
      if (entries.size() != static_cast<size_t>(kRounds))
        return ctx.Fail(std::string(op) + ": " + std::to_string(entries.size()) + " entries in the dump");
      for (const std::string& e : entries)
        if (e.find("\"algo\": null") != std::string::npos || e.find("\"state\": \"done\"") == std::string::npos ||
            e.find("\"t_start_us\": null") != std::string::npos)
          return ctx.Fail("entry without its algorithm, start or end: " + e);
    }
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
  hostccl::faulttest::RemoveScratchDir(dir);
}

INSTANTIATE_TEST_SUITE_P(Placements, PreparedCalls, ::testing::ValuesIn(kPlacements),
                         [](const ::testing::TestParamInfo<Placement>& i) { return std::string(i.param.name); });

}  // namespace
