// Algorithm selection table and HOSTCCL_ALGO parsing; hardware profile rules.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/profiles.h"
#include "core/selector.h"

namespace hostccl::core {
namespace {

Placement Threads(int n) { Placement p; p.nranks = n; p.all_local = true; p.has_transport = true; return p; }
Placement OneHost(int n) {  // processes: their segment has staging
  Placement p;
  p.nranks = n;
  p.shm = p.staging = p.has_transport = true;
  return p;
}
// Thread ranks on their in-process segment: shared memory without staging.
Placement ThreadSegment(int n) { Placement p = Threads(n); p.shm = true; return p; }
Placement Tcp(int n) { Placement p; p.nranks = n; p.has_transport = true; return p; }
Placement Hosts(int n) { Placement p = Tcp(n); p.node_groups = true; return p; }

const algo::Algorithm* SelectReduce(const std::vector<AlgoRule>& rules, uint64_t bytes, const Placement& where,
                                    std::string* why) {
  const char* w = "";
  const algo::Algorithm* a = Select(CollKind::kReduce, rules, bytes, where, &w);
  *why = w;
  return a;
}

TEST(Selector, DefaultTable) {
  std::vector<AlgoRule> none;
  std::string why;
  EXPECT_STREQ(SelectReduce(none, 1 << 30, Threads(8), &why)->name, "direct");
  EXPECT_STREQ(SelectReduce(none, 8, OneHost(8), &why)->name, "shm");
  EXPECT_STREQ(SelectReduce(none, 1 << 30, OneHost(2), &why)->name, "shm");
  EXPECT_STREQ(SelectReduce(none, 8, Tcp(8), &why)->name, "gather");
  EXPECT_STREQ(SelectReduce(none, 256 << 10, Tcp(4), &why)->name, "gather");
  EXPECT_STREQ(SelectReduce(none, (256 << 10) + 4, Tcp(4), &why)->name, "chain");
  EXPECT_STREQ(SelectReduce(none, 8, Hosts(4), &why)->name, "gather");
  EXPECT_STREQ(SelectReduce(none, 64 << 20, Hosts(4), &why)->name, "node_chain");
  EXPECT_EQ(why, "default rule 'reduce=node_chain'");
}

TEST(Selector, EveryImplementedOperatorHasFeasibleDefaults) {
  std::vector<AlgoRule> none;
  const char* why = "";
  for (const auto& o : kOps) {
    if (!o.implemented) continue;
    for (Placement p : {Threads(4), OneHost(4), Tcp(4), Hosts(4)})
      for (uint64_t bytes : {uint64_t{0}, uint64_t{8}, uint64_t{1} << 30})
        EXPECT_NE(Select(o.kind, none, bytes, p, &why), nullptr) << o.api << " " << bytes;
  }
  EXPECT_STREQ(Select(CollKind::kBarrier, none, 0, Threads(4), &why)->name, "local");
  EXPECT_STREQ(Select(CollKind::kBarrier, none, 0, OneHost(4), &why)->name, "shm");
  EXPECT_STREQ(Select(CollKind::kBarrier, none, 0, Tcp(4), &why)->name, "tcp");
}

// The AlltoAll family: threads pull in place; one host sends blocks up to 4 KiB inline in the
// arrival (AlltoAllV, whose selection size is always 0, always starts there); hosts with
// contiguous ranks run node; other TCP placements pairwise.
TEST(Selector, AlltoAllFamilyDefaults) {
  std::vector<AlgoRule> none;
  const char* why = "";
  for (CollKind k : {CollKind::kAlltoAll, CollKind::kAlltoAllVC}) {
    EXPECT_STREQ(Select(k, none, 8, Threads(4), &why)->name, "direct");
    EXPECT_STREQ(Select(k, none, 8, OneHost(4), &why)->name, "shm_inline");
    EXPECT_STREQ(Select(k, none, 4096, OneHost(8), &why)->name, "shm_inline");
    EXPECT_STREQ(Select(k, none, 4097, OneHost(8), &why)->name, "shm");
    EXPECT_STREQ(Select(k, none, 8, Hosts(4), &why)->name, "node");
    EXPECT_STREQ(Select(k, none, uint64_t{1} << 30, Hosts(4), &why)->name, "node");
    EXPECT_STREQ(Select(k, none, 8, Tcp(4), &why)->name, "pairwise");
  }
  EXPECT_STREQ(Select(CollKind::kAlltoAllV, none, 0, OneHost(4), &why)->name, "shm_inline");
  EXPECT_STREQ(Select(CollKind::kAlltoAllV, none, 0, Hosts(4), &why)->name, "node");
  EXPECT_STREQ(Select(CollKind::kAlltoAllV, none, 0, Tcp(4), &why)->name, "pairwise");
}

TEST(Selector, ForcedRulesAndRanges) {
  std::vector<AlgoRule> rules;
  ASSERT_TRUE(ParseAlgoRules("reduce:0-64K:gather#reduce:64K-inf:chain", &rules).ok());
  ASSERT_EQ(rules.size(), 2u);
  std::string why;
  EXPECT_STREQ(SelectReduce(rules, 65535, Threads(4), &why)->name, "gather");
  EXPECT_EQ(why, "HOSTCCL_ALGO");
  EXPECT_STREQ(SelectReduce(rules, 65536, Threads(4), &why)->name, "chain");
  ASSERT_TRUE(ParseAlgoRules("reduce=direct", &rules).ok());
  // direct needs thread ranks: falls back to the table for processes.
  EXPECT_STREQ(SelectReduce(rules, 8, Tcp(4), &why)->name, "gather");
  EXPECT_EQ(why, "default rule 'reduce:0-262145:gather'");
  ASSERT_TRUE(ParseAlgoRules("reduce=shm", &rules).ok());
  EXPECT_STREQ(SelectReduce(rules, 8, OneHost(4), &why)->name, "shm");
  EXPECT_STREQ(SelectReduce(rules, 8, Threads(4), &why)->name, "direct");  // not feasible: table
  ASSERT_TRUE(ParseAlgoRules("reduce=node_chain", &rules).ok());
  EXPECT_STREQ(SelectReduce(rules, 8, Hosts(4), &why)->name, "node_chain");
}

// A forced algorithm with a size limit (registry max_bytes) takes the calls up to it; a larger
// call falls back to the default rules instead of failing in the algorithm (F2: forced
// shm_inline on 8184 bytes failed the communicator with HCCL_E_INTERNAL).
TEST(Selector, ForcedAlgorithmBeyondItsSizeLimitFallsBack) {
  for (CollKind op : {CollKind::kAllReduce, CollKind::kBroadcast}) {
    const auto* inl = algo::FindAlgorithm(op, "shm_inline");
    ASSERT_NE(inl, nullptr);
    ASSERT_EQ(inl->max_bytes, uint64_t{4096});
    std::vector<AlgoRule> rules;
    ASSERT_TRUE(ParseAlgoRules(std::string(op == CollKind::kAllReduce ? "allreduce" : "broadcast") + "=shm_inline",
                               &rules).ok());
    const char* why = "";
    EXPECT_EQ(Select(op, rules, 4096, OneHost(4), &why), inl);
    EXPECT_STREQ(why, "HOSTCCL_ALGO");
    const auto* big = Select(op, rules, 8184, OneHost(4), &why);
    ASSERT_NE(big, nullptr);
    EXPECT_STREQ(big->name, "shm");
    EXPECT_STRNE(why, "HOSTCCL_ALGO");
  }
  // Every limited algorithm is skipped by the default rules above its limit too.
  std::vector<AlgoRule> none;
  const char* why = "";
  for (const auto& a : algo::Algorithms()) {
    if (a.max_bytes == 0) continue;
    for (Placement p : {Threads(4), OneHost(4), Tcp(4), Hosts(4)})
      EXPECT_NE(Select(a.op, none, a.max_bytes + 1, p, &why), &a) << a.name;
  }
}

// shm_staging stages chunks through the segment's staging, which thread ranks' in-process segment
// does not have: forced there it is skipped (with a warning) for the default rules, as any forced
// algorithm whose placement is not met, instead of failing every call.
TEST(Selector, ForcedStagingNeedsASegmentWithStaging) {
  std::vector<AlgoRule> rules;
  ASSERT_TRUE(ParseAlgoRules("reduce=shm_staging", &rules).ok());
  std::string why;
  const algo::Algorithm* a = SelectReduce(rules, 1 << 20, OneHost(4), &why);
  ASSERT_NE(a, nullptr);
  EXPECT_STREQ(a->name, "shm_staging");
  EXPECT_EQ(why, "HOSTCCL_ALGO");
  a = SelectReduce(rules, 1 << 20, ThreadSegment(4), &why);
  ASSERT_NE(a, nullptr);
  EXPECT_STRNE(a->name, "shm_staging");
  EXPECT_NE(why, "HOSTCCL_ALGO");
}

TEST(Selector, BadRulesAreRejected) {
  std::vector<AlgoRule> rules;
  EXPECT_EQ(ParseAlgoRules("reduce=nosuch", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("allgather=nosuch", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("send=ring", &rules).code(), Code::kPara);  // no algorithms yet
  EXPECT_EQ(ParseAlgoRules("nosuchop=ring", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("reduce:x-1:chain", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("reduce", &rules).code(), Code::kPara);
}

TEST(Profiles, Rules) {
  setenv("HOSTCCL_SOC", "atlas310p", 1);
  EXPECT_STREQ(ActiveProfile(), "Atlas310P");
  EXPECT_EQ(CheckReduceProfile(DataType::kFp32, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "Atlas910", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kInt64, RedOp::kProd, false).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kInt16, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kBf16, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "AtlasA2", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kBf16, RedOp::kMax, false).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kBf16, RedOp::kProd, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kUint8, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp64, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "Ascend950", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kUint64, RedOp::kProd, true).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kUint32, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kInt16, RedOp::kProd, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_PROFILE_OLD_RULES", "1", 1);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp32, RedOp::kProd, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp64, RedOp::kSum, true).code(), Code::kNotSupport);
  EXPECT_TRUE(CheckReduceProfile(DataType::kFp64, RedOp::kSum, false).ok());
  unsetenv("HOSTCCL_PROFILE_OLD_RULES");
  unsetenv("HOSTCCL_SOC");
  EXPECT_EQ(ActiveProfile(), nullptr);
  EXPECT_TRUE(CheckReduceProfile(DataType::kUint16, RedOp::kProd, false).ok());
}

// AllGather, AllGatherV and Scatter: the default rules pick by one block's size (AllGatherV: the
// mean block) and placement.
TEST(Selector, AllGatherAndScatterDefaults) {
  std::vector<AlgoRule> none;
  const char* why = "";
  auto pick = [&](CollKind k, uint64_t bytes, const Placement& p) { return std::string(Select(k, none, bytes, p, &why)->name); };
  for (CollKind k : {CollKind::kAllGather, CollKind::kAllGatherV}) {
    EXPECT_EQ(pick(k, 1 << 30, Threads(8)), "direct");
    EXPECT_EQ(pick(k, 4096, OneHost(4)), "shm_inline");
    EXPECT_EQ(pick(k, 4097, OneHost(4)), "shm");
    EXPECT_EQ(pick(k, 16384, Tcp(4)), "flat");
    EXPECT_EQ(pick(k, 16385, Tcp(4)), "ring");
    EXPECT_EQ(pick(k, 8, Hosts(4)), "flat");
  }
  EXPECT_EQ(pick(CollKind::kAllGather, 64 << 20, Hosts(4)), "node");
  EXPECT_EQ(pick(CollKind::kAllGatherV, 64 << 20, Hosts(4)), "node");
  EXPECT_EQ(pick(CollKind::kScatter, 8, Threads(4)), "direct");
  EXPECT_EQ(pick(CollKind::kScatter, 1024, OneHost(4)), "shm_inline");
  EXPECT_EQ(pick(CollKind::kScatter, 1025, OneHost(4)), "shm");
  EXPECT_EQ(pick(CollKind::kScatter, 64 << 20, Hosts(4)), "node");
  EXPECT_EQ(pick(CollKind::kScatter, 8, Hosts(4)), "node");
  EXPECT_EQ(pick(CollKind::kScatter, 8, Tcp(4)), "flat");
}

// Data movement per chip (collectives.md 5.1, 5.2): AllGather everywhere but on one server only on
// Atlas310P, no Scatter on Atlas310P, no bf16 moved on Atlas910/310P, no 8-bit floats but on 950.
TEST(Profiles, MovementRulesOfAllGatherAndScatter) {
  auto code = [](const char* p, CollKind k, DataType t, bool multi) {
    return CheckProfile(p, k, t, RedOp::kSum, SimpleTopology(multi)).code();
  };
  EXPECT_EQ(code("Atlas310P", CollKind::kAllGather, DataType::kFp32, false), Code::kSuccess);
  EXPECT_EQ(code("Atlas310P", CollKind::kAllGather, DataType::kFp32, true), Code::kNotSupport);
  EXPECT_EQ(code("AtlasA3", CollKind::kAllGather, DataType::kFp32, true), Code::kSuccess);
  EXPECT_EQ(code("Atlas310P", CollKind::kScatter, DataType::kFp32, false), Code::kNotSupport);
  EXPECT_EQ(code("Atlas910", CollKind::kScatter, DataType::kBf16, false), Code::kNotSupport);
  EXPECT_EQ(code("Atlas910", CollKind::kAllGatherV, DataType::kFp32, false), Code::kNotSupport);
  EXPECT_EQ(code("AtlasA2", CollKind::kAllGather, DataType::kFp8E4M3, false), Code::kNotSupport);
  EXPECT_EQ(code("Ascend950", CollKind::kAllGather, DataType::kFp8E4M3, false), Code::kSuccess);
  EXPECT_EQ(code(nullptr, CollKind::kScatter, DataType::kInt128, true), Code::kSuccess);
}

// A communicator's shape from its ranks' hosts and devices.
TEST(Profiles, TopologyOfRanks) {
  Topology t = MakeTopology({"a", "a", "b", "b"}, {0, 1, 0, 1});
  EXPECT_EQ(t.ranks, 4);
  EXPECT_EQ(t.hosts, 2);
  EXPECT_TRUE(t.symmetric);
  EXPECT_FALSE(t.whole_quads);
  EXPECT_EQ(t.devices, "host 0: 0,1; host 1: 0,1");
  t = MakeTopology({"a", "a", "b"}, {0, 1, 0});
  EXPECT_FALSE(t.symmetric);
  // Whole clusters of four, in any rank order, one rank per device.
  EXPECT_TRUE(MakeTopology({"a", "a", "a", "a"}, {3, 1, 2, 0}).whole_quads);
  EXPECT_TRUE(MakeTopology(std::vector<std::string>(8, "a"), {4, 5, 6, 7, 0, 1, 2, 3}).whole_quads);
  EXPECT_TRUE(MakeTopology({"a", "a", "a", "a", "b", "b", "b", "b"}, {4, 5, 6, 7, 0, 1, 2, 3}).whole_quads);
  EXPECT_FALSE(MakeTopology({"a", "a", "a", "a"}, {1, 2, 3, 4}).whole_quads);
  EXPECT_FALSE(MakeTopology({"a", "a", "a", "a"}, {0, 1, 2, 2}).whole_quads);
  EXPECT_FALSE(MakeTopology({"a", "a", "a", "a"}, {0, 1, 2, -1}).whole_quads);
  EXPECT_FALSE(MakeTopology({"a", "a", "a", "a", "a", "a", "a", "a"}, {0, 1, 2, 3, 0, 1, 2, 3}).whole_quads);
  EXPECT_EQ(MakeTopology({"a", "a"}, {0, 1}).devices, "0,1");
}

// The chips' topology limits: servers, NPU count, symmetric servers, whole 4-device clusters.
TEST(Profiles, TopologyRules) {
  auto code = [](const char* p, CollKind k, const Topology& topo) {
    return CheckProfile(p, k, DataType::kFp32, RedOp::kSum, topo).code();
  };
  auto one_host = [](int n) {
    std::vector<int> dev(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) dev[static_cast<size_t>(i)] = i;
    return MakeTopology(std::vector<std::string>(static_cast<size_t>(n), "a"), dev);
  };
  const Topology two_by_two = MakeTopology({"a", "a", "b", "b"}, {0, 1, 0, 1});
  const Topology two_plus_one = MakeTopology({"a", "a", "b"}, {0, 1, 0});
  using K = CollKind;
  // Atlas310P: AllGather and ReduceScatter on one server, at most 32 NPUs; the V forms and
  // AlltoAll(V) at most 4.
  for (K k : {K::kAllGather, K::kReduceScatter}) {
    EXPECT_EQ(code("Atlas310P", k, one_host(32)), Code::kSuccess);
    EXPECT_EQ(code("Atlas310P", k, one_host(33)), Code::kNotSupport);
    EXPECT_EQ(code("Atlas310P", k, two_by_two), Code::kNotSupport);
  }
  for (K k : {K::kAllGatherV, K::kReduceScatterV, K::kAlltoAll, K::kAlltoAllV}) {
    EXPECT_EQ(code("Atlas310P", k, one_host(4)), Code::kSuccess);
    EXPECT_EQ(code("Atlas310P", k, one_host(5)), Code::kNotSupport);
    EXPECT_EQ(code("Atlas310P", k, two_by_two), Code::kNotSupport);
  }
  EXPECT_EQ(code("Atlas310P", K::kAllReduce, two_by_two), Code::kSuccess);
  // AtlasA3: the V forms on one server; AtlasA2: on servers of equal size.
  for (K k : {K::kAllGatherV, K::kReduceScatterV}) {
    EXPECT_EQ(code("AtlasA3", k, one_host(16)), Code::kSuccess);
    EXPECT_EQ(code("AtlasA3", k, two_by_two), Code::kNotSupport);
    EXPECT_EQ(code("AtlasA2", k, two_by_two), Code::kSuccess);
    EXPECT_EQ(code("AtlasA2", k, two_plus_one), Code::kNotSupport);
  }
  EXPECT_EQ(code("AtlasA3", K::kAllGather, two_by_two), Code::kSuccess);
  EXPECT_EQ(code("AtlasA2", K::kAllGather, two_plus_one), Code::kSuccess);
  // Atlas910: AlltoAll(V) on whole clusters 0-3 / 4-7.
  for (K k : {K::kAlltoAll, K::kAlltoAllV}) {
    EXPECT_EQ(code("Atlas910", k, one_host(4)), Code::kSuccess);
    EXPECT_EQ(code("Atlas910", k, one_host(8)), Code::kSuccess);
    EXPECT_EQ(code("Atlas910", k, one_host(2)), Code::kNotSupport);
    EXPECT_EQ(code("Atlas910", k, two_by_two), Code::kNotSupport);
  }
  EXPECT_EQ(code("Atlas910", K::kAllGather, one_host(2)), Code::kSuccess);
  // No chip limits without a profile or on the 950.
  for (const char* p : {static_cast<const char*>(nullptr), "Ascend950"})
    for (K k : {K::kAllGatherV, K::kReduceScatterV, K::kAlltoAll, K::kAlltoAllV})
      EXPECT_EQ(code(p, k, two_plus_one), Code::kSuccess);
  // The message names the rule and the shape.
  const Status st = CheckProfile("Atlas910", K::kAlltoAll, DataType::kFp32, RedOp::kSum, one_host(2));
  EXPECT_NE(st.message().find("whole 4-device clusters"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("devices: 0,1"), std::string::npos) << st.message();
  // Barrier exists everywhere but on the 310P.
  EXPECT_EQ(code("Atlas310P", K::kBarrier, one_host(2)), Code::kNotSupport);
  EXPECT_EQ(code("Atlas910", K::kBarrier, one_host(2)), Code::kSuccess);
}

}  // namespace
}  // namespace hostccl::core
