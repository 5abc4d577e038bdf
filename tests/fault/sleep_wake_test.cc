// Ranks that go to sleep are woken (the sleeper/waker handshake, src/transport/sync/wake_fence.h),
// between processes over shared memory, with the sleeper's membarrier (HOSTCCL_WAKE_FENCE=auto,
// where the host offers it) and with the waker's fence (=fence).
//  - 3 process ranks run 40 synchronized AllReduces and 40 Reduces; before call i, rank i % 3
//    sleeps 2 ms, so the other two pass their spin and yield phases (~90 us) and sleep on the
//    segment's futex until that rank's arrival wakes them.
//  - Every result is the rank-order fold, and the run takes less than the injected sleeps plus 2 s.
//  - Every rank logs its sleeps and its missed wake-ups (sleeps that ran out with the wait over)
//    when its communicator goes; with the waker's fence none may be missed, and with the sleeper's
//    membarrier at most one in ten (the kernel's membarrier can skip a CPU: wake_fence.h). A
//    sleeper does not rely on the wake-up alone (RecheckBy), so a wake-up that never comes shows
//    in those counts (checked by hand: every one counted), not in the time.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"
#include "fault/runahead_util.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::RunAheadShmOptions;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 3;
constexpr int kCalls = 40;
constexpr int kSleepMs = 2;
constexpr int kCount = 4;

float Input(int r, int i, int e) { return static_cast<float>(r * 100 + i * 4 + e); }

class SleepWake : public ::testing::TestWithParam<const char*> {};

// The teardown lines of every rank's log in `dir`: the sleeps and the missed wake-ups, summed;
// *lines says how many ranks wrote one.
void ReadSleepLines(const std::string& dir, unsigned long long* sleeps, unsigned long long* missed, int* lines) {
  *sleeps = *missed = 0;
  *lines = 0;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind("log.", 0) != 0) continue;
    std::ifstream in(dir + "/" + e->d_name);
    for (std::string line; std::getline(in, line);) {
      const size_t at = line.find(": ", line.find("of a shared memory group of"));
      unsigned long long s = 0, m = 0;
      if (at == std::string::npos ||
          std::sscanf(line.c_str() + at, ": %llu sleeps on its futex, %llu missed wake-ups", &s, &m) != 2)
        continue;
      *sleeps += s;
      *missed += m;
      ++*lines;
    }
  }
  closedir(d);
}

TEST_P(SleepWake, SleepingRanksAreWokenByTheLastArrival) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  RunOptions opts = RunAheadShmOptions(dir);
  opts.env.push_back({"HOSTCCL_WAKE_FENCE", GetParam()});
  opts.env.push_back({"HOSTCCL_LOG_FILE", dir + "/log.%p"});
  opts.env.push_back({"HOSTCCL_LOG_LEVEL", "INFO"});
  opts.env.push_back({"HOSTCCL_LOG_SUBSYS", "SHM"});
  auto res = RunRanks(kRanks, Mode::kProcesses, [](RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(kCount * sizeof(float), 0) || !recv.Alloc(kCount * sizeof(float), -1))
      return ctx.Fail("aclrtMalloc failed");
    const auto start = std::chrono::steady_clock::now();
    for (int op = 0; op < 2; ++op) {
      for (int i = 0; i < kCalls; ++i) {
        float in[kCount], out[kCount];
        for (int e = 0; e < kCount; ++e) in[e] = Input(ctx.rank, i, e);
        if (aclrtMemcpy(send.ptr, sizeof(in), in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
          return ctx.Fail("aclrtMemcpy failed");
        if (i % kRanks == ctx.rank) std::this_thread::sleep_for(std::chrono::milliseconds(kSleepMs));
        const HcclResult r = op == 0 ? HcclAllReduce(send.ptr, recv.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                                                     ctx.comm, ctx.stream)
                                     : HcclReduce(send.ptr, recv.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0,
                                                  ctx.comm, ctx.stream);
        if (r != HCCL_SUCCESS) return ctx.Fail("enqueue failed at call " + std::to_string(i));
        if (aclrtSynchronizeStream(ctx.stream) != ACL_SUCCESS) return ctx.Fail("synchronize failed at call " + std::to_string(i));
        if (op == 1 && ctx.rank != 0) continue;
        if (aclrtMemcpy(out, sizeof(out), recv.ptr, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
          return ctx.Fail("aclrtMemcpy failed");
        for (int e = 0; e < kCount; ++e) {
          float want = 0;
          for (int r = 0; r < kRanks; ++r) want += Input(r, i, e);
          if (out[e] != want)
            return ctx.Fail("call " + std::to_string(i) + " element " + std::to_string(e) + ": " +
                            std::to_string(out[e]) + " != " + std::to_string(want));
        }
      }
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    const int64_t slept = 2 * kCalls * kSleepMs / kRanks;  // this rank's own sleeps, at most
    if (ms > 2 * kCalls * kSleepMs + 2000)
      return ctx.Fail("80 calls took " + std::to_string(ms) + " ms (own sleeps ~" + std::to_string(slept) +
                      " ms): wake-ups were missed");
    return true;
  }, opts);
  EXPECT_TRUE(res.ok) << res.message;
  unsigned long long sleeps = 0, missed = 0;
  int lines = 0;
  ReadSleepLines(dir, &sleeps, &missed, &lines);
  hostccl::faulttest::RemoveScratchDir(dir);
  ASSERT_GT(lines, 0) << "no rank logged its sleeps (each sleeps while a peer's 2 ms delay runs)";
  RecordProperty("sleeps", std::to_string(sleeps));
  RecordProperty("missed", std::to_string(missed));
  if (std::string(GetParam()) == "fence")
    EXPECT_EQ(missed, 0u) << "of " << sleeps << " sleeps";
  else
    EXPECT_LE(missed * 10, sleeps) << "missed wake-ups of " << sleeps << " sleeps";
}

INSTANTIATE_TEST_SUITE_P(Handshake, SleepWake, ::testing::Values("auto", "fence"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
