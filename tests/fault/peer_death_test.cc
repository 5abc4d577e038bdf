// A rank killed with SIGKILL (reliability.md row 2): before its first call, during a large (64 MiB)
// call, and between two calls; 4 ranks as processes, over shared memory and over TCP. Every other
// rank's operation must fail within 2 s (the exec timeout is 20 s, so waiting for it shows), its
// HcclCommDestroy must return (the harness checks), no process may hang (the harness kills and
// reports stragglers) and /dev/shm must hold no new object afterwards.
// The victim kills itself (raise / a timer thread) after writing its time of death to the scratch
// directory, so survivors measure "within 2 s" from the death, not from their own (unsynchronised)
// call start. Between calls, the victim first waits until every rank finished the first call.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>

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
constexpr int64_t kFailWithinMs = 2000 * hostccl::faulttest::kSlowdown;
constexpr uint64_t kSmall = 1024;
// fp32 elements of the "during" call: 64 MiB per buffer in the default run; FAULTTEST_LARGE_MIB=256
// gives issue #7's "during a 256 MiB call" (ctest peer_death_256mib, label long, run alone).
const uint64_t kLarge = [] {
  const char* v = std::getenv("FAULTTEST_LARGE_MIB");
  const uint64_t mib = v != nullptr && std::atoll(v) > 0 ? static_cast<uint64_t>(std::atoll(v)) : 64;
  return mib << 18;
}();

enum class When { kBefore, kDuring, kBetween };

RunOptions Options(const std::string& transport) {
  RunOptions o;
  o.env = hostccl::faulttest::TransportEnv(transport);
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
  o.env.push_back({"HOSTCCL_CONNECT_TIMEOUT_MS", "10000"});
  o.timeout_s = 45;
  return o;
}

void Die() {
  hostccl::faulttest::WriteMark("death", NowMs());
  raise(SIGKILL);
}

// Milliseconds from the later of `t0` and the victim's death until now.
int64_t SinceDeath(int64_t t0) {
  const int64_t death = hostccl::faulttest::ReadMark("death", 1000);
  return NowMs() - std::max(t0, death);
}

bool SurvivorCall(RankContext& ctx, DevBuf& send, DevBuf& recv, uint64_t count, const char* what) {
  const int64_t t0 = NowMs();
  HcclResult enq = HCCL_SUCCESS;
  aclError s = hostccl::faulttest::ReduceAndSync(ctx, send, recv, count, &enq);
  const int64_t took = SinceDeath(t0);
  const std::string msg = aclGetRecentErrMsg();
  if (enq == HCCL_SUCCESS && s == ACL_SUCCESS) return ctx.Fail(std::string(what) + ": succeeded without rank 2");
  if (took > kFailWithinMs)
    return ctx.Fail(std::string(what) + ": failure took " + std::to_string(took) + " ms: " + msg);
  HcclResult async = HCCL_SUCCESS;
  (void)HcclGetCommAsyncError(ctx.comm, &async);
  if (async == HCCL_SUCCESS) return ctx.Fail(std::string(what) + ": HcclGetCommAsyncError reports no error after the failure");
  return true;
}

void RunPeerDeath(const std::string& transport, When when) {
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const auto shm_before = hostccl::faulttest::ListDevShm();
  auto body = [when](RankContext& ctx) -> bool {
    DevBuf send, recv;
    const uint64_t count = when == When::kDuring ? kLarge : kSmall;
    if (!send.Alloc(count * 4, 1.0f, count == kSmall) || !recv.Alloc(count * 4, 1.0f, count == kSmall))
      return ctx.Fail("aclrtMalloc failed");
    HcclResult enq = HCCL_SUCCESS;
    if (when == When::kBefore) {
      // Every rank's init must be complete first: a death during a peer's init fails that init.
      hostccl::faulttest::WriteMark("ready." + std::to_string(ctx.rank), 1);
      if (ctx.rank == kVictim) {
        for (int r = 0; r < kRanks; ++r)
          if (hostccl::faulttest::ReadMark("ready." + std::to_string(r), 10000) < 0)
            return ctx.Fail("rank " + std::to_string(r) + " never finished init");
        Die();
      }
      return SurvivorCall(ctx, send, recv, count, "first call after rank 2 died");
    }
    if (hostccl::faulttest::ReduceAndSync(ctx, send, recv, kSmall, &enq) != ACL_SUCCESS || enq != HCCL_SUCCESS)
      return ctx.Fail(std::string("warm-up call failed: ") + aclGetRecentErrMsg());
    if (when == When::kBetween) {
      hostccl::faulttest::WriteMark("done1." + std::to_string(ctx.rank), 1);
      if (ctx.rank == kVictim) {
        for (int r = 0; r < kRanks; ++r)
          if (hostccl::faulttest::ReadMark("done1." + std::to_string(r), 10000) < 0)
            return ctx.Fail("rank " + std::to_string(r) + " never finished the first call");
        Die();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others are idle when it dies
      return SurvivorCall(ctx, send, recv, count, "call after rank 2 died between calls");
    }
    // During: the victim's timer thread kills the process 20 ms into the large call.
    if (ctx.rank == kVictim) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        Die();
      }).detach();
      (void)hostccl::faulttest::ReduceAndSync(ctx, send, recv, count, &enq);
      std::this_thread::sleep_for(std::chrono::seconds(10));  // not reached in practice
      return ctx.Fail("the victim survived its own SIGKILL");
    }
    const int64_t t0 = NowMs();
    aclError s = hostccl::faulttest::ReduceAndSync(ctx, send, recv, count, &enq);
    const int64_t took = SinceDeath(t0);
    std::fprintf(stderr, "rank %d: the %llu MiB call ended %lld ms after rank 2 died\n", ctx.rank,
                 static_cast<unsigned long long>(count >> 18), static_cast<long long>(took));
    if (took > kFailWithinMs)
      return ctx.Fail("the " + std::to_string(count >> 18) + " MiB call during which rank 2 died took " +
                      std::to_string(took) + " ms: " +
                      aclGetRecentErrMsg());
    if (enq == HCCL_SUCCESS && s == ACL_SUCCESS)  // the victim had done its part: the next call must fail
      return SurvivorCall(ctx, send, recv, kSmall, "call after rank 2 died during the previous one");
    return true;
  };
  RunOptions opts = Options(transport);
  opts.env.push_back({hostccl::faulttest::kDirVar, dir});
  auto res = RunRanks(kRanks, Mode::kProcesses, body, opts);
  hostccl::faulttest::RemoveScratchDir(dir);
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, kVictim, &why)) << why << "full report:\n" << res.message;
  const auto shm_after = hostccl::faulttest::ListDevShm();
  EXPECT_EQ(hostccl::faulttest::NewEntries(shm_before, shm_after), "") << "new /dev/shm objects";
}

class PeerDeathTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PeerDeathTest, BeforeFirstCall) { RunPeerDeath(GetParam(), When::kBefore); }
TEST_P(PeerDeathTest, DuringLargeCall) { RunPeerDeath(GetParam(), When::kDuring); }
TEST_P(PeerDeathTest, BetweenCalls) { RunPeerDeath(GetParam(), When::kBetween); }

INSTANTIATE_TEST_SUITE_P(Transports, PeerDeathTest, ::testing::Values("shm", "tcp"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
