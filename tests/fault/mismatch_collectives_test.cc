// Mismatched collectives with HcclAllReduce, HcclBroadcast, HcclAllGather(V), HcclScatter,
// HcclReduceScatter(V) and the AlltoAll family (issues 15-17; V arrays that differ between ranks):
// one rank calls another operator than the others (AllReduce against Reduce or Broadcast,
// AllGather against AllReduce or Scatter, Scatter against Broadcast, and back), or
// the same operator with a count, dtype, op or root that puts its size on the other side of one
// of the operator's selection thresholds (so the ranks would run different algorithms). Every
// rank must fail within 2 s (the exec timeout is 20 s, so waiting for it shows) with a message
// that says "mismatch", names rank 3 and another rank, and shows both sides' differing field.
//
// The thresholds are the byte bounds of the library's default selection rules for the operator
// (core::DefaultRuleText, read when this build has the registry; the coverage test below checks
// every bound is straddled) plus the shared-memory sizes the Reduce matrix straddles (4 KiB inline,
// 256 KiB, 1 MiB). One launch per placement (processes over shared memory, over TCP, on two
// emulated hosts, threads); each case on its own sub-communicator, as mismatch_matrix_test does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "fault/fault_util.h"
#include "harness/collective_check.h"

// Defined by tests/fault/CMakeLists.txt when the library has the registry and per-operator
// default rules (src/algo/registry.h); see tests/collective/grid_common.h for why not __has_include.
#if defined(HOSTCCL_TEST_HAS_REGISTRY) && HOSTCCL_TEST_HAS_REGISTRY
#include "core/selector.h"
#define HOSTCCL_MX_HAS_RULES 1
#else
#define HOSTCCL_MX_HAS_RULES 0
#endif

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr int kRanks = 4;
constexpr int kOdd = 3;  // the rank that misbehaves
constexpr int64_t kFailWithinMs = 2000 * hostccl::faulttest::kSlowdown;
// Bounds above this are not straddled (buffers of 4 ranks x 2 x 2 x bound); none is today.
constexpr uint64_t kMaxBoundBytes = 64ull << 20;

enum class Op {
  kAllReduce, kReduce, kBroadcast, kAlltoAll, kAlltoAllV, kAlltoAllVC, kReduceScatter, kReduceScatterV,
  kAllGather, kScatter, kAllGatherV
};

struct Call {
  Op op;
  uint64_t count;  // the AlltoAll family: every block's count
  HcclDataType dtype = HCCL_DATA_TYPE_FP32;
  HcclReduceOp red = HCCL_REDUCE_SUM;
  uint32_t root = 2;
  // The AlltoAll family: one entry one larger than `count` (-1: none): AlltoAllV sendCounts[j] or
  // recvCounts[i]; AlltoAllVC the matrix entry at this flat index.
  int bump_send = -1, bump_recv = -1, bump_matrix = -1;
  // ReduceScatterV: equal blocks of `count`, except that `skew` elements move from block 1 to
  // block 0 (the same sum and the same own count on ranks 2 and 3: only the arrays differ).
  uint64_t skew = 0;
  // AllGatherV: the arrays this rank passes (VArrays): 0 count each, packed; 1 the same sum, but
  // rank 0 count+1 and rank 1 count-1; 2 count each with 1-element gaps; 3 only rank 3 has a block.
  int v = 0;
};
bool AlltoAllFamily(Op op) { return op == Op::kAlltoAll || op == Op::kAlltoAllV || op == Op::kAlltoAllVC; }

// AllGatherV arrays of variant v for 4 ranks around `count`.
void VArrays(int v, uint64_t count, uint64_t* counts, uint64_t* displs) {
  uint64_t at = 0;
  for (int r = 0; r < kRanks; ++r) {
    counts[r] = v == 1 && r == 0 ? count + 1 : v == 1 && r == 1 ? count - 1 : v == 3 && r != kOdd ? 0 : count;
    at += v == 2 ? 1 : 0;
    displs[r] = at;
    at += counts[r];
  }
}

struct Case {
  std::string name;
  Call normal;
  Call odd;
  std::string normal_text;
  std::string odd_text;
  // Also in the message when the ranks are threads of one process (both sides' arrays at hand).
  std::string threads_text = "";
};

size_t Size(HcclDataType t) { return t == HCCL_DATA_TYPE_FP16 ? 2 : t == HCCL_DATA_TYPE_INT8 ? 1 : 4; }

// The byte bounds of `op`'s default rules (each rule's start and exclusive end, 0 and inf left
// out), below kMaxBoundBytes.
std::vector<uint64_t> RuleBounds(const char* op) {
  std::set<uint64_t> out;
#if HOSTCCL_MX_HAS_RULES
  const hostccl::OpInfo* info = hostccl::FindOpByAlgoName(op);
  std::vector<hostccl::core::AlgoRule> rules;
  if (info != nullptr && hostccl::core::ParseAlgoRules(hostccl::core::DefaultRuleText(info->kind), &rules).ok())
    for (const auto& r : rules)
      for (uint64_t b : {r.min_bytes, r.max_bytes})
        if (b > 1 && b != UINT64_MAX && b <= kMaxBoundBytes) out.insert(b);
#else
  (void)op;
#endif
  return {out.begin(), out.end()};
}

// Bounds to straddle for one operator: its rules' and the shared-memory sizes.
std::vector<uint64_t> Bounds(const char* op) {
  std::vector<uint64_t> b = RuleBounds(op);
  for (uint64_t s : {uint64_t{4096} + 1, uint64_t{256} << 10, uint64_t{1} << 20}) b.push_back(s);
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

std::string CountText(uint64_t c) { return "count=" + std::to_string(c) + " "; }

// Straddling cases of one operator at bound B (the first byte size of the next rule): fp32 counts
// whose sizes lie on either side, both ways round; fp16 against fp32 at a count whose fp16 size is
// below and fp32 size at or above; the op (AllReduce) or root (Broadcast) on either side.
void AddStraddles(std::vector<Case>* out, Op op, const char* opname, uint64_t bound) {
  const uint64_t below = (bound - 1) / 4;    // fp32 bytes < bound
  const uint64_t above = (bound + 3) / 4;    // fp32 bytes >= bound
  const uint64_t mixed = (bound - 1) / 2;    // fp16 bytes < bound <= fp32 bytes
  const std::string at = std::string(opname) + " bound " + std::to_string(bound) + ": ";
  out->push_back({at + "count below vs above", {op, below}, {op, above}, CountText(below), CountText(above)});
  out->push_back({at + "count above vs below", {op, above}, {op, below}, CountText(above), CountText(below)});
  out->push_back({at + "dtype fp16 vs fp32", {op, mixed, HCCL_DATA_TYPE_FP16}, {op, mixed}, "fp16", "fp32"});
  out->push_back({at + "dtype fp32 vs fp16", {op, mixed}, {op, mixed, HCCL_DATA_TYPE_FP16}, "fp32", "fp16"});
  if (op == Op::kAllReduce || op == Op::kReduceScatter) {
    out->push_back({at + "op below", {op, below}, {op, below, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX}, "sum", "max"});
    out->push_back({at + "op above", {op, above}, {op, above, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN}, "sum", "min"});
  } else if (op != Op::kAllGather) {  // AllGather has no root
    out->push_back({at + "root below", {op, below}, {op, below, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1}, "root=2", "root=1"});
    out->push_back({at + "root above, odd is the root", {op, above}, {op, above, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 3},
                    "root=2", "root=3"});
  }
}

// Cases of the operators this build implements (the same list in the parent and every child).
std::vector<Case> Cases() {
  const bool ar = hostccl::test::AllReduceImplemented(), bc = hostccl::test::BroadcastImplemented();
  std::vector<Case> c;
  const uint64_t small = 8, large = 1 << 20;
  if (ar) {
    for (uint64_t n : {small, large}) {
      const std::string sz = n == small ? " small" : " large";
      c.push_back({"allreduce vs reduce" + sz, {Op::kAllReduce, n}, {Op::kReduce, n}, "HcclAllReduce", "HcclReduce "});
      c.push_back({"reduce vs allreduce" + sz, {Op::kReduce, n}, {Op::kAllReduce, n}, "HcclReduce ", "HcclAllReduce"});
    }
    c.push_back({"allreduce small vs reduce large", {Op::kAllReduce, small}, {Op::kReduce, large}, "HcclAllReduce",
                 "HcclReduce "});
  }
  if (ar && bc) {
    for (uint64_t n : {small, large}) {
      const std::string sz = n == small ? " small" : " large";
      c.push_back({"allreduce vs broadcast" + sz, {Op::kAllReduce, n}, {Op::kBroadcast, n}, "HcclAllReduce", "HcclBroadcast"});
      c.push_back({"broadcast vs allreduce" + sz, {Op::kBroadcast, n}, {Op::kAllReduce, n}, "HcclBroadcast", "HcclAllReduce"});
    }
  }
  // ReduceScatter against AllReduce at the same count, its rule bounds; ReduceScatterV against
  // ReduceScatter, and ReduceScatterV arrays that differ with the same sum (only the hash shows).
  for (uint64_t n : {small, large}) {
    const std::string sz = n == small ? " small" : " large";
    if (ar)
      c.push_back({"reducescatter vs allreduce" + sz, {Op::kReduceScatter, n}, {Op::kAllReduce, n}, "HcclReduceScatter",
                   "HcclAllReduce"});
    c.push_back({"reducescatterv vs reducescatter" + sz, {Op::kReduceScatterV, n}, {Op::kReduceScatter, n},
                 "HcclReduceScatterV", "HcclReduceScatter "});
    Call skewed{Op::kReduceScatterV, n};
    skewed.skew = n / 2;
    c.push_back({"reducescatterv arrays differ" + sz, {Op::kReduceScatterV, n}, skewed, "arrays=", "arrays="});
  }
  for (uint64_t b : Bounds("reducescatter")) AddStraddles(&c, Op::kReduceScatter, "reducescatter", b);
  if (bc) {
    c.push_back({"broadcast vs reduce", {Op::kBroadcast, large}, {Op::kReduce, large}, "HcclBroadcast", "HcclReduce "});
    c.push_back({"broadcast small vs large", {Op::kBroadcast, small}, {Op::kBroadcast, large}, CountText(small),
                 CountText(large)});
  }
  // The AlltoAll family (issue 17): counts, element sizes, AlltoAllV count pairs that disagree
  // (every rank checks every pair from the exchanged arrays: the same message everywhere, never a
  // length error on one side or an overrun), AlltoAllVC matrices that differ, other operators.
  {
    const Op a = Op::kAlltoAll, v = Op::kAlltoAllV, vc = Op::kAlltoAllVC;
    const HcclDataType f16 = HCCL_DATA_TYPE_FP16, f32 = HCCL_DATA_TYPE_FP32;
    const HcclReduceOp sum = HCCL_REDUCE_SUM;
    c.push_back({"alltoall count", {a, 8}, {a, 16}, CountText(8), CountText(16)});
    c.push_back({"alltoall dtype", {a, 8}, {a, 8, f16}, "fp32", "fp16"});
    c.push_back({"alltoall vs allreduce", {a, 8}, {Op::kAllReduce, 8}, "HcclAlltoAll ", "HcclAllReduce"});
    c.push_back({"alltoallv recv count", {v, 4}, {v, 4, f32, sum, 2, -1, 1}, "sendCounts[3] = 4", "recvCounts[1] = 5"});
    c.push_back({"alltoallv send count", {v, 4}, {v, 4, f32, sum, 2, 0}, "sendCounts[0] = 5", "recvCounts[3] = 4"});
    c.push_back({"alltoallv recv count large", {v, 1 << 16}, {v, 1 << 16, f32, sum, 2, -1, 2}, "sendCounts[3] = 65536",
                 "recvCounts[2] = 65537"});
    // shm_inline's arrivals take different forms: rank 3's blocks do not fit its slot and the
    // others' do, or the other way round (rank 3's counts packed, one recvCount bumped).
    c.push_back({"alltoallv mixed forms", {v, 4}, {v, 2000}, "sendCounts[3] = 4", "recvCounts[0] = 2000"});
    c.push_back({"alltoallv mixed forms packed", {v, 2000}, {v, 4, f32, sum, 2, -1, 0}, "sendCounts[3] = 2000",
                 "recvCounts[0] = 5"});
    c.push_back({"alltoallv elem size", {v, 4}, {v, 4, f16}, "elem=4B", "elem=2B"});
    c.push_back({"alltoallvc matrix", {vc, 4}, {vc, 4, f32, sum, 2, -1, -1, 6}, CountText(64), CountText(65),
                 "first difference: sendCountMatrix[6] (rank 0: 4, rank 3: 5)"});
    c.push_back({"alltoallvc elem size", {vc, 4}, {vc, 4, f16}, "elem=4B", "elem=2B"});
    c.push_back({"alltoallv vs alltoallvc", {v, 4}, {vc, 4}, "HcclAlltoAllV ", "HcclAlltoAllVC"});
  }
  // AllGather and Scatter (implemented with this test's rows; a stub would fail the harness probe).
  for (uint64_t n : {small, large}) {
    const std::string sz = n == small ? " small" : " large";
    c.push_back({"allgather vs allreduce" + sz, {Op::kAllGather, n}, {Op::kAllReduce, n}, "HcclAllGather", "HcclAllReduce"});
    c.push_back({"allreduce vs allgather" + sz, {Op::kAllReduce, n}, {Op::kAllGather, n}, "HcclAllReduce", "HcclAllGather"});
    c.push_back({"scatter vs broadcast" + sz, {Op::kScatter, n}, {Op::kBroadcast, n}, "HcclScatter", "HcclBroadcast"});
    c.push_back({"broadcast vs scatter" + sz, {Op::kBroadcast, n}, {Op::kScatter, n}, "HcclBroadcast", "HcclScatter"});
  }
  c.push_back({"allgather vs scatter", {Op::kAllGather, large}, {Op::kScatter, large}, "HcclAllGather", "HcclScatter"});
  c.push_back({"scatter small vs large", {Op::kScatter, small}, {Op::kScatter, large}, CountText(small), CountText(large)});
  // AllGatherV: arrays that disagree between ranks (same sum, other displacements, a rank that
  // thinks the others send nothing) and against AllGather, small and large.
  for (uint64_t n : {small, large}) {
    const std::string sz = n == small ? " small" : " large";
    Call v0{Op::kAllGatherV, n};
    for (int v : {1, 2, 3}) {
      Call odd = v0;
      odd.v = v;
      c.push_back({"allgatherv arrays " + std::to_string(v) + sz, v0, odd, "arrays=", "arrays="});
      c.push_back({"allgatherv arrays " + std::to_string(v) + " on the others" + sz, odd, v0, "arrays=", "arrays="});
    }
    c.push_back({"allgatherv vs allgather" + sz, v0, {Op::kAllGather, n}, "HcclAllGatherV", "HcclAllGather "});
  }
  for (uint64_t b : Bounds("allgather")) AddStraddles(&c, Op::kAllGather, "allgather", b);
  for (uint64_t b : Bounds("scatter")) AddStraddles(&c, Op::kScatter, "scatter", b);
  if (ar)
    for (uint64_t b : Bounds("allreduce")) AddStraddles(&c, Op::kAllReduce, "allreduce", b);
  if (bc)
    for (uint64_t b : Bounds("broadcast")) AddStraddles(&c, Op::kBroadcast, "broadcast", b);
  return c;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

HcclResult Issue(const Call& a, HcclComm comm, aclrtStream stream, void* send, void* recv) {
  switch (a.op) {
    case Op::kAllReduce: return HcclAllReduce(send, recv, a.count, a.dtype, a.red, comm, stream);
    case Op::kReduce: return HcclReduce(send, recv, a.count, a.dtype, a.red, a.root, comm, stream);
    case Op::kBroadcast: return HcclBroadcast(send, a.count, a.dtype, a.root, comm, stream);
    case Op::kAlltoAll: return HcclAlltoAll(send, a.count, a.dtype, recv, a.count, a.dtype, comm, stream);
    case Op::kAlltoAllV:
    case Op::kAlltoAllVC: {
      // Packed with room for one bumped entry per block.
      uint64_t sc[kRanks], sd[kRanks], rc[kRanks], rd[kRanks], m[kRanks * kRanks];
      for (int i = 0; i < kRanks; ++i) {
        sc[i] = a.count + (i == a.bump_send);
        rc[i] = a.count + (i == a.bump_recv);
        sd[i] = rd[i] = static_cast<uint64_t>(i) * (a.count + 1);
      }
      for (int k = 0; k < kRanks * kRanks; ++k) m[k] = a.count + (k == a.bump_matrix);
      if (a.op == Op::kAlltoAllVC) return HcclAlltoAllVC(send, m, a.dtype, recv, a.dtype, comm, stream);
      return HcclAlltoAllV(send, sc, sd, a.dtype, recv, rc, rd, a.dtype, comm, stream);
    }
    case Op::kReduceScatter: return HcclReduceScatter(send, recv, a.count, a.dtype, a.red, comm, stream);
    case Op::kReduceScatterV: {
      uint64_t counts[kRanks], displs[kRanks];
      for (int j = 0; j < kRanks; ++j) counts[j] = a.count;
      counts[0] += a.skew;
      counts[1] -= a.skew;
      for (int j = 0, at = 0; j < kRanks; at += static_cast<int>(counts[j]), ++j) displs[j] = static_cast<uint64_t>(at);
      int me = 0;
      (void)HcclGetRankId(comm, reinterpret_cast<uint32_t*>(&me));
      return HcclReduceScatterV(send, counts, displs, recv, counts[me], a.dtype, a.red, comm, stream);
    }
    case Op::kAllGather: return HcclAllGather(send, recv, a.count, a.dtype, comm, stream);
    case Op::kScatter: return HcclScatter(send, recv, a.count, a.dtype, a.root, comm, stream);
    case Op::kAllGatherV: {
      uint64_t counts[kRanks], displs[kRanks];
      VArrays(a.v, a.count, counts, displs);
      int rank = 0;
      (void)HcclGetRankId(comm, reinterpret_cast<uint32_t*>(&rank));
      return HcclAllGatherV(send, counts[rank], recv, counts, displs, a.dtype, comm, stream);
    }
  }
  return HCCL_E_INTERNAL;
}

bool RunCase(RankContext& ctx, HcclComm comm, aclrtStream stream, const Case& c, void* send, void* recv,
             bool threads) {
  const std::string where = "case '" + c.name + "': ";
  const int64_t t0 = NowMs();
  const HcclResult r = Issue(ctx.rank == kOdd ? c.odd : c.normal, comm, stream, send, recv);
  if (r != HCCL_SUCCESS) return ctx.Fail(where + hostccl::faulttest::Errno("enqueue", r));
  const aclError s = aclrtSynchronizeStream(stream);
  const int64_t took = NowMs() - t0;
  const std::string msg = aclGetRecentErrMsg();
  if (s == ACL_SUCCESS) return ctx.Fail(where + "the mismatched call succeeded");
  if (took > kFailWithinMs) return ctx.Fail(where + "failure took " + std::to_string(took) + " ms: " + msg);
  if (!Contains(msg, "mismatch")) return ctx.Fail(where + "message does not say mismatch: " + msg);
  bool names_other = false;
  for (int q = 0; q < kRanks; ++q)
    if (q != kOdd && Contains(msg, "rank " + std::to_string(q) + " ")) names_other = true;
  if (!Contains(msg, "rank " + std::to_string(kOdd) + " ") || !names_other)
    return ctx.Fail(where + "message does not name rank 3 and another rank: " + msg);
  if (!Contains(msg, c.normal_text) || !Contains(msg, c.odd_text))
    return ctx.Fail(where + "message does not show '" + c.normal_text + "' and '" + c.odd_text + "': " + msg);
  if (threads && !c.threads_text.empty() && !Contains(msg, c.threads_text))
    return ctx.Fail(where + "message does not show '" + c.threads_text + "': " + msg);
  HcclResult async = HCCL_SUCCESS;
  (void)HcclGetCommAsyncError(comm, &async);
  if (async != HCCL_E_PARA) return ctx.Fail(where + "HcclGetCommAsyncError reported " + std::to_string(async));
  return true;
}

uint64_t MaxBytes(const std::vector<Case>& cases) {
  uint64_t m = 64;
  for (const Case& c : cases)
    for (const Call* a : {&c.normal, &c.odd})  // n blocks: AllGather's recvBuf, Scatter's sendBuf, ...
      m = std::max<uint64_t>(m, (a->count + 8) * Size(a->dtype) *
                                    (AlltoAllFamily(a->op) ? kRanks + 1
                                     : a->op == Op::kReduceScatter || a->op == Op::kReduceScatterV ||
                                               a->op == Op::kAllGather || a->op == Op::kScatter ||
                                               a->op == Op::kAllGatherV
                                         ? kRanks
                                         : 1));
  return m + 64;
}

bool RunMatrix(RankContext& ctx, const std::vector<Case>& cases, bool host_buffers, bool threads) {
  const size_t bytes = MaxBytes(cases);
  DevBuf dsend, drecv;
  std::vector<char> hsend, hrecv;
  void* send = nullptr;
  void* recv = nullptr;
  if (host_buffers) {
    if (!hostccl::test::AllowHostBuffers(ctx)) return false;  // NPU fidelity would reject them
    hsend.assign(bytes, 0);
    hrecv.assign(bytes, 0);
    send = hsend.data();
    recv = hrecv.data();
  } else {
    if (!dsend.Alloc(bytes, 1.0f, false) || !drecv.Alloc(bytes, 1.0f, false)) return ctx.Fail("aclrtMalloc failed");
    send = dsend.ptr;
    recv = drecv.ptr;
  }
  uint32_t all[kRanks];
  for (int q = 0; q < kRanks; ++q) all[q] = static_cast<uint32_t>(q);
  bool ok = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    HcclComm sub = nullptr;
    HcclResult r = HcclCreateSubCommConfig(&ctx.comm, kRanks, all, static_cast<uint64_t>(i + 1),
                                           static_cast<uint32_t>(ctx.rank), nullptr, &sub);
    if (r != HCCL_SUCCESS)
      return ctx.Fail("case '" + cases[i].name + "': " + hostccl::faulttest::Errno("HcclCreateSubCommConfig", r));
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return ctx.Fail("aclrtCreateStream failed");
    ok = RunCase(ctx, sub, stream, cases[i], send, recv, threads) && ok;
    (void)aclrtDestroyStream(stream);
    (void)HcclCommDestroy(sub);
  }
  return ok;
}

RunOptions Options(const std::string& placement) {
  return hostccl::faulttest::PlacementOptions(placement, "mc", 20000, 20000, 110);
}

class MismatchCollectivesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MismatchCollectivesTest, EveryRankFailsFastNamingBoth) {
  const std::vector<Case> cases = Cases();
  if (cases.empty()) GTEST_SKIP() << "neither HcclAllReduce nor HcclBroadcast is implemented in this build";
  if (!hostccl::test::IsRankChild()) std::fprintf(stderr, "%zu mismatch cases\n", cases.size());
  const std::string placement = GetParam();
  const Mode mode = placement.rfind("threads", 0) == 0 ? Mode::kThreadsInitAll : Mode::kProcesses;
  const bool host_buffers = placement == "shm_host_buffers";
  auto res = RunRanks(kRanks, mode, [&](RankContext& ctx) { return RunMatrix(ctx, cases, host_buffers, mode != Mode::kProcesses); },
                      Options(placement));
  EXPECT_TRUE(res.ok) << res.message;
}

INSTANTIATE_TEST_SUITE_P(Placements, MismatchCollectivesTest,
                         ::testing::Values("shm", "shm_host_buffers", "tcp", "nodes", "threads", "threads_local"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Every bound of the operators' default rules is straddled by the case list (the list is built
// from the rules; this guards against a rule text the parser here reads differently).
TEST(MismatchCollectivesCoverage, EveryRuleBoundIsStraddled) {
  const std::vector<Case> cases = Cases();
  for (const char* op : {"allreduce", "broadcast", "reducescatter", "allgather", "scatter"}) {
    const std::string o = op;
    const Op kind = o == "allreduce"       ? Op::kAllReduce
                    : o == "broadcast"     ? Op::kBroadcast
                    : o == "reducescatter" ? Op::kReduceScatter
                    : o == "allgather"     ? Op::kAllGather
                                           : Op::kScatter;
    for (uint64_t b : RuleBounds(op)) {
      bool count_straddled = false, dtype_straddled = false;
      for (const Case& c : cases) {
        if (c.normal.op != kind || c.odd.op != kind) continue;
        const uint64_t x = c.normal.count * Size(c.normal.dtype), y = c.odd.count * Size(c.odd.dtype);
        const bool straddles = (x < b) != (y < b);
        (c.normal.dtype == c.odd.dtype ? count_straddled : dtype_straddled) |= straddles;
      }
      EXPECT_TRUE(count_straddled && dtype_straddled) << op << " bound " << b << " bytes is not straddled";
    }
  }
}

}  // namespace
