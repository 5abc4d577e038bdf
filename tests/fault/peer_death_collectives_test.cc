// A rank killed with SIGKILL in the middle of a large HcclAllReduce, HcclBroadcast, HcclAllGather,
// HcclAllGatherV, HcclScatter, HcclReduceScatter or HcclAlltoAllV (issues 15-17; reliability.md
// row 2 for the new operators): 4 ranks as processes over shared memory, over TCP and on two
// emulated hosts; for the rooted operators the victim is once a non-root and once the root.
// AllGather(V), Scatter, ReduceScatter and AlltoAllV move 16 MiB blocks (64 MiB per rank in all).
// Every survivor's call must fail within 2 s of the death (the exec timeout is 20 s,
// so waiting for it shows) with a message that names the dead rank, the next call must fail too,
// HcclCommDestroy must return (the harness checks), nothing may hang (the harness kills and
// reports stragglers) and /dev/shm must hold no new object afterwards. The victim writes its time
// of death to the scratch directory and kills itself 20 ms into the call (peer_death_test.cc's
// method).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "fault/fault_util.h"
#include "harness/collective_check.h"

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 4;
constexpr int kVictim = 2;
constexpr int64_t kFailWithinMs = 2000 * hostccl::faulttest::kHeavySlowdown;  // 64 MiB calls
constexpr uint64_t kLarge = (64u << 20) / sizeof(float);  // 64 MiB per buffer
constexpr uint64_t kSmall = 1024;

enum class Kind { kAllReduce, kBroadcast, kAllGather, kScatter, kAllGatherV, kReduceScatter, kAlltoAllV };

struct Scenario {
  const char* name;
  Kind op;
  uint32_t root;  // Broadcast and Scatter
  const char* placement;  // shm, tcp, nodes
};

std::string ScenarioName(const Scenario& s) { return std::string(s.name) + "_" + s.placement; }
void PrintTo(const Scenario& s, std::ostream* os) { *os << ScenarioName(s); }

RunOptions Options(const std::string& placement) {
  return hostccl::faulttest::PlacementOptions(placement, "pd", 20000, 10000, 60);
}

// "rank 2" followed by something other than a digit.
bool NamesVictim(const std::string& msg) {
  const std::string key = "rank " + std::to_string(kVictim);
  for (size_t p = msg.find(key); p != std::string::npos; p = msg.find(key, p + 1)) {
    const size_t e = p + key.size();
    if (e >= msg.size() || msg[e] < '0' || msg[e] > '9') return true;
  }
  return false;
}

// New /dev/shm entries, leaving out other MPI libraries' segments (benchmarks of other jobs on this
// host create and remove Open MPI's vader_segment.* and MPICH's files at any time).
std::string NewOwnShm(const std::set<std::string>& before) {
  std::set<std::string> after;
  for (const auto& n : hostccl::faulttest::ListDevShm())
    if (n.rfind("vader_segment", 0) != 0 && n.rfind("mpich", 0) != 0) after.insert(n);
  return hostccl::faulttest::NewEntries(before, after);
}

void Die() {
  hostccl::faulttest::WriteMark("death", NowMs());
  raise(SIGKILL);
}

aclError CallAndSync(RankContext& ctx, const Scenario& s, DevBuf& send, DevBuf& recv, uint64_t count, HcclResult* enq) {
  const uint64_t block = count / kRanks;  // AllGather, Scatter: n blocks fill the 64 MiB buffer
  switch (s.op) {
    case Kind::kAllReduce:
      *enq = HcclAllReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
      break;
    case Kind::kBroadcast: *enq = HcclBroadcast(send.ptr, count, HCCL_DATA_TYPE_FP32, s.root, ctx.comm, ctx.stream); break;
    case Kind::kAllGather: *enq = HcclAllGather(send.ptr, recv.ptr, block, HCCL_DATA_TYPE_FP32, ctx.comm, ctx.stream); break;
    case Kind::kScatter:
      *enq = HcclScatter(send.ptr, recv.ptr, block, HCCL_DATA_TYPE_FP32, s.root, ctx.comm, ctx.stream);
      break;
    case Kind::kAllGatherV: {  // packed in reverse rank order
      uint64_t counts[kRanks], displs[kRanks];
      for (int r = 0; r < kRanks; ++r) {
        counts[r] = block;
        displs[r] = static_cast<uint64_t>(kRanks - 1 - r) * block;
      }
      *enq = HcclAllGatherV(send.ptr, block, recv.ptr, counts, displs, HCCL_DATA_TYPE_FP32, ctx.comm, ctx.stream);
      break;
    }
    case Kind::kReduceScatter:  // sendBuf holds n blocks
      *enq = HcclReduceScatter(send.ptr, recv.ptr, block, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, ctx.comm, ctx.stream);
      break;
    case Kind::kAlltoAllV: {  // n packed blocks each way
      uint64_t counts[kRanks], displs[kRanks];
      for (int r = 0; r < kRanks; ++r) {
        counts[r] = block;
        displs[r] = static_cast<uint64_t>(r) * block;
      }
      *enq = HcclAlltoAllV(send.ptr, counts, displs, HCCL_DATA_TYPE_FP32, recv.ptr, counts, displs, HCCL_DATA_TYPE_FP32,
                           ctx.comm, ctx.stream);
      break;
    }
  }
  if (*enq != HCCL_SUCCESS) return ACL_SUCCESS;
  return aclrtSynchronizeStream(ctx.stream);
}

class PeerDeathCollectivesTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(PeerDeathCollectivesTest, SurvivorsFailNamingTheDeadRank) {
  const Scenario s = GetParam();
  if (s.op == Kind::kAllReduce ? !hostccl::test::AllReduceImplemented() : !hostccl::test::BroadcastImplemented())
    GTEST_SKIP() << "the operator is not implemented in this build";  // probes fail the process instead
  const std::string dir = hostccl::faulttest::MakeScratchDir();
  const auto shm_before = hostccl::faulttest::ListDevShm();
  auto body = [&s](RankContext& ctx) -> bool {
    DevBuf send, recv;
    if (!send.Alloc(kLarge * 4, 1.0f, false) || !recv.Alloc(kLarge * 4, 1.0f, false)) return ctx.Fail("aclrtMalloc failed");
    HcclResult enq = HCCL_SUCCESS;
    if (CallAndSync(ctx, s, send, recv, kSmall, &enq) != ACL_SUCCESS || enq != HCCL_SUCCESS)
      return ctx.Fail(std::string("warm-up call failed: ") + aclGetRecentErrMsg());
    // A rank may finish its part of the warm-up while another (e.g. a Broadcast root waiting for
    // the last hop) is still in it: the victim dies only once every rank is past the warm-up.
    hostccl::faulttest::WriteMark("warm." + std::to_string(ctx.rank), 1);
    if (ctx.rank == kVictim) {
      for (int r = 0; r < kRanks; ++r)
        if (hostccl::faulttest::ReadMark("warm." + std::to_string(r), 10000) < 0)
          return ctx.Fail("rank " + std::to_string(r) + " never finished the warm-up");
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        Die();
      }).detach();
      (void)CallAndSync(ctx, s, send, recv, kLarge, &enq);
      std::this_thread::sleep_for(std::chrono::seconds(10));  // the timer kills us first
      return ctx.Fail("the victim survived its own SIGKILL");
    }
    // The survivor's verdict; then it stays (bounded) until every survivor has one, so the only
    // rank gone is the victim (a survivor that exits after its failure is another fault: set
    // FAULTTEST_SURVIVORS_LEAVE=1 to let them leave at once; FINDINGS F4).
    auto verdict = [&]() -> bool {
    const int64_t t0 = NowMs();
    aclError st = CallAndSync(ctx, s, send, recv, kLarge, &enq);
    const int64_t death = hostccl::faulttest::ReadMark("death", 5000);
    const int64_t took = NowMs() - std::max(t0, death);
    std::string msg = aclGetRecentErrMsg();
    std::fprintf(stderr, "rank %d: the 64 MiB %s ended %lld ms after rank 2 died: %s\n", ctx.rank, s.name,
                 static_cast<long long>(took), msg.c_str());
    if (took > kFailWithinMs) return ctx.Fail("the call during which rank 2 died took " + std::to_string(took) + " ms: " + msg);
    if (enq == HCCL_SUCCESS && st == ACL_SUCCESS) {
      // This rank had its data before the death (e.g. a Broadcast receiver done early): the next
      // call must fail, naming the dead rank.
      const int64_t t1 = NowMs();
      st = CallAndSync(ctx, s, send, recv, kSmall, &enq);
      msg = aclGetRecentErrMsg();
      if (enq == HCCL_SUCCESS && st == ACL_SUCCESS) return ctx.Fail("a call after rank 2 died succeeded");
      if (NowMs() - t1 > kFailWithinMs) return ctx.Fail("the call after rank 2 died took " + std::to_string(NowMs() - t1) + " ms");
    }
    if (!NamesVictim(msg)) return ctx.Fail("the error does not name rank 2: " + msg);
    HcclResult async = HCCL_SUCCESS;
    (void)HcclGetCommAsyncError(ctx.comm, &async);
    if (enq == HCCL_SUCCESS && async == HCCL_SUCCESS)
      return ctx.Fail("HcclGetCommAsyncError reports no error after the failure");
    return true;
    };
    const bool ok = verdict();
    hostccl::faulttest::WriteMark("verdict." + std::to_string(ctx.rank), 1);
    if (std::getenv("FAULTTEST_SURVIVORS_LEAVE") == nullptr)  // test switch, not a library knob
      for (int r = 0; r < kRanks; ++r)
        if (r != kVictim) (void)hostccl::faulttest::ReadMark("verdict." + std::to_string(r), 10000);
    return ok;
  };
  RunOptions opts = Options(s.placement);
  opts.env.push_back({hostccl::faulttest::kDirVar, dir});
  auto res = RunRanks(kRanks, Mode::kProcesses, body, opts);
  hostccl::faulttest::RemoveScratchDir(dir);
  std::string why;
  EXPECT_TRUE(hostccl::faulttest::OnlyRankKilled(res.message, kVictim, &why)) << why << "full report:\n" << res.message;
  EXPECT_EQ(NewOwnShm(shm_before), "") << "new /dev/shm objects";
}

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> out;
  for (const char* p : {"shm", "tcp", "nodes"}) {
    out.push_back({"allreduce", Kind::kAllReduce, 0, p});
    out.push_back({"broadcast_nonroot_dies", Kind::kBroadcast, 0, p});
    out.push_back({"broadcast_root_dies", Kind::kBroadcast, kVictim, p});
    out.push_back({"allgather", Kind::kAllGather, 0, p});
    out.push_back({"scatter_nonroot_dies", Kind::kScatter, 0, p});
    out.push_back({"scatter_root_dies", Kind::kScatter, kVictim, p});
    out.push_back({"allgatherv", Kind::kAllGatherV, 0, p});
    out.push_back({"reducescatter", Kind::kReduceScatter, 0, p});
    out.push_back({"alltoallv", Kind::kAlltoAllV, 0, p});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, PeerDeathCollectivesTest, ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& i) { return ScenarioName(i.param); });

}  // namespace
