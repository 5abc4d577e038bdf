// HcclGroupStart / HcclGroupEnd / HcclGroupStatusGet (collectives.md 1.1; docs/semantics.md §8
// "Group calls"; rules in src/api/group.h):
// - a ring exchange (every rank sends to r+1 before it receives from r-1), which deadlocks as plain
//   Send/Recv, completes as one group, in-process, over shared memory and over TCP; a group's
//   sends match the peer's plain HcclRecv calls in issue order;
// - inside a group only count 0, the NULL checks and (Send/Recv) the count range run at the call
//   (the V family: the leading zero-count and NULL steps of its order); the rest runs at
//   HcclGroupEnd, whose failure enqueues nothing of the group;
// - HcclBatchSendRecv, HcclBarrier and mixing collectives with Send/Recv fail at the call;
// - collectives of a group run in call order at the end (V arrays copied at the call);
// - nesting, per-thread state, HcclGroupStatusGet, HcclGroupEnd without a start.
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness/run_ranks.h"

namespace {

using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr uint64_t kTooMany = 0x800000000ull;
const auto kBadType = static_cast<HcclDataType>(255);

#define EXPECT_CODE(want, call)                                                                      \
  do {                                                                                               \
    HcclResult got_ = (call);                                                                        \
    if (got_ != (want)) return c.Fail(std::string(#call) + " returned " + std::to_string(got_) + ", expected " #want); \
  } while (0)

bool Sync(RankContext& c) {
  if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) return c.Fail(std::string("sync: ") + aclGetRecentErrMsg());
  return true;
}

bool InGroup() {
  bool on = true;
  return HcclGroupStatusGet(&on) == HCCL_SUCCESS && on;
}

struct Place {
  const char* name;
  Mode mode;
  const char* transport;
};
const Place kPlaces[] = {{"threads", Mode::kThreadsInitAll, "auto"},
                         {"shm", Mode::kProcesses, "auto"},
                         {"tcp", Mode::kProcesses, "tcp"},
                         {"threads_local", Mode::kThreadsInitAll, "local"}};  // the in-process plans

class GroupRing : public ::testing::TestWithParam<Place> {};

// Each rank of 3 sends two messages (8 and 5000 floats) to r+1 before it receives them from r-1,
// and ranks 0 and 1 exchange six more messages sends first: as plain calls every rank would wait
// in its first HcclSend; in one group they all complete.
// Then rank 0 sends two messages in a group that rank 1 takes with plain HcclRecv calls.
TEST_P(GroupRing, SendsBeforeReceivesComplete) {
  RunOptions o;
  o.env = {{"HOSTCCL_TRANSPORT", GetParam().transport}, {"HOSTCCL_EXEC_TIMEOUT_MS", "20000"}};
  o.timeout_s = 90;
  auto res = RunRanks(3, GetParam().mode, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: this test is about groups, not memory
    const uint32_t next = static_cast<uint32_t>((c.rank + 1) % c.nranks);
    const uint32_t prev = static_cast<uint32_t>((c.rank + c.nranks - 1) % c.nranks);
    std::vector<float> s1(8), s2(5000), r1(8, -1), r2(5000, -1);
    for (size_t i = 0; i < s1.size(); ++i) s1[i] = static_cast<float>(c.rank * 1000 + static_cast<int>(i));
    for (size_t i = 0; i < s2.size(); ++i) s2[i] = static_cast<float>(c.rank * 100000 + static_cast<int>(i));
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclSend(s1.data(), 8, HCCL_DATA_TYPE_FP32, next, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclSend(s2.data(), 5000, HCCL_DATA_TYPE_FP32, next, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclRecv(r1.data(), 8, HCCL_DATA_TYPE_FP32, prev, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclRecv(r2.data(), 5000, HCCL_DATA_TYPE_FP32, prev, c.comm, c.stream));
    // Six more one-element messages each way between ranks 0 and 1, sends first on both: more
    // messages per pair than a shared-memory mailbox ring holds (4).
    std::vector<int32_t> out6(6), in6(6, -1);
    for (int k = 0; k < 6; ++k) out6[static_cast<size_t>(k)] = c.rank * 10 + k;
    if (c.rank < 2) {
      const uint32_t other = static_cast<uint32_t>(1 - c.rank);
      for (int k = 0; k < 6; ++k)
        EXPECT_CODE(HCCL_SUCCESS, HcclSend(&out6[static_cast<size_t>(k)], 1, HCCL_DATA_TYPE_INT32, other, c.comm, c.stream));
      for (int k = 0; k < 6; ++k)
        EXPECT_CODE(HCCL_SUCCESS, HcclRecv(&in6[static_cast<size_t>(k)], 1, HCCL_DATA_TYPE_INT32, other, c.comm, c.stream));
    }
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    if (!Sync(c)) return false;
    for (int k = 0; k < 6 && c.rank < 2; ++k)
      if (in6[static_cast<size_t>(k)] != (1 - c.rank) * 10 + k) return c.Fail("six messages: wrong order or data");
    for (size_t i = 0; i < r1.size(); ++i)
      if (r1[i] != static_cast<float>(static_cast<int>(prev) * 1000 + static_cast<int>(i)))
        return c.Fail("first message from rank " + std::to_string(prev) + ": wrong element " + std::to_string(i));
    for (size_t i = 0; i < r2.size(); ++i)
      if (r2[i] != static_cast<float>(static_cast<int>(prev) * 100000 + static_cast<int>(i)))
        return c.Fail("second message from rank " + std::to_string(prev) + ": wrong element " + std::to_string(i));
    // A group's sends against the peer's plain receives: matched in issue order.
    if (c.rank == 0) {
      EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
      EXPECT_CODE(HCCL_SUCCESS, HcclSend(s1.data(), 8, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream));
      EXPECT_CODE(HCCL_SUCCESS, HcclSend(s2.data(), 5000, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream));
      EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    } else if (c.rank == 1) {
      EXPECT_CODE(HCCL_SUCCESS, HcclRecv(r1.data(), 8, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream));
      EXPECT_CODE(HCCL_SUCCESS, HcclRecv(r2.data(), 5000, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream));
    }
    if (!Sync(c)) return false;
    if (c.rank == 1 && (r1[7] != 7.0f || r2[4999] != 4999.0f)) return c.Fail("group sends to plain receives: wrong data");
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
}

INSTANTIATE_TEST_SUITE_P(Places, GroupRing, ::testing::ValuesIn(kPlaces),
                         [](const ::testing::TestParamInfo<Place>& i) { return std::string(i.param.name); });

// Which checks run at the call and which at HcclGroupEnd; a failing end enqueues nothing.
TEST(Group, CheckOrderInsideGroup) {
  auto res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: this test is about groups, not memory
    std::vector<float> buf(64, static_cast<float>(c.rank)), out(64, -1);
    float* p = buf.data();
    const uint32_t peer = static_cast<uint32_t>(1 - c.rank), self = static_cast<uint32_t>(c.rank);
    // At the call: count 0 first, NULL pointers, count range (Send/Recv).
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclSend(nullptr, 0, kBadType, 99, nullptr, nullptr));
    EXPECT_CODE(HCCL_E_PTR, HcclSend(p, 8, HCCL_DATA_TYPE_FP32, peer, nullptr, c.stream));
    EXPECT_CODE(HCCL_E_PTR, HcclRecv(nullptr, 8, kBadType, 99, c.comm, c.stream));
    EXPECT_CODE(HCCL_E_PTR, HcclSend(p, 8, HCCL_DATA_TYPE_FP32, peer, c.comm, nullptr));
    EXPECT_CODE(HCCL_E_PARA, HcclRecv(p, kTooMany, kBadType, 99, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());  // nothing was appended
    // Deferred to the end: dtype, peer range, self, alignment.
    struct Late {
      HcclResult want;
      void* buf;
      HcclDataType type;
      uint32_t peer;
    };
    const Late late[] = {{HCCL_E_NOT_SUPPORT, p, kBadType, 99},
                         {HCCL_E_PARA, p, HCCL_DATA_TYPE_FP32, 2},
                         {HCCL_E_NOT_SUPPORT, p, HCCL_DATA_TYPE_FP32, self},
                         {HCCL_E_PARA, reinterpret_cast<char*>(p) + 1, HCCL_DATA_TYPE_FP32, peer}};
    for (const Late& l : late) {
      EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
      // A valid send first: the end's failure must not enqueue it either.
      EXPECT_CODE(HCCL_SUCCESS, HcclSend(p, 64, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream));
      EXPECT_CODE(HCCL_SUCCESS, HcclSend(l.buf, 8, l.type, l.peer, c.comm, c.stream));
      const HcclResult got = HcclGroupEnd();
      if (got != l.want) return c.Fail("late check: HcclGroupEnd returned " + std::to_string(got));
      if (InGroup()) return c.Fail("the group survived a failed HcclGroupEnd");
    }
    // Collectives: only count 0 and NULL pointers at the call (no count range, dtype or op).
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_E_PTR, HcclAllReduce(p, nullptr, 8, kBadType, HCCL_REDUCE_SUM, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(p, out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(p, out.data(), kTooMany, kBadType, HCCL_REDUCE_SUM, c.comm, c.stream));
    EXPECT_CODE(HCCL_E_PARA, HcclGroupEnd());  // count range first, and the valid AllReduce did not run
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(p, out.data(), 8, HCCL_DATA_TYPE_FP32, static_cast<HcclReduceOp>(9),
                                            c.comm, c.stream));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, HcclGroupEnd());
    // The V family (AllGatherV, ReduceScatterV, AlltoAll, AlltoAllV, AlltoAllVC): the leading
    // zero-count and NULL steps of its own order at the call; dtype, count equality and the
    // arrays' ranges at the end.
    const uint64_t counts[2] = {8, 8}, displs[2] = {0, 8}, big[2] = {kTooMany, 8};
    const uint64_t matrix[4] = {4, 4, 4, kTooMany};
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_E_PTR, HcclAllGatherV(p, 8, out.data(), nullptr, displs, kBadType, c.comm, c.stream));
    EXPECT_CODE(HCCL_E_PTR, HcclAlltoAllVC(p, nullptr, kBadType, out.data(), kBadType, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclAlltoAll(p, 0, kBadType, out.data(), 0, kBadType, c.comm, c.stream));  // not added
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    struct LateV {
      HcclResult want;
      std::function<HcclResult()> call;
    };
    const LateV late_v[] = {
        {HCCL_E_NOT_SUPPORT, [&] { return HcclAllGatherV(p, 8, out.data(), counts, displs, kBadType, c.comm, c.stream); }},
        {HCCL_E_PARA, [&] { return HcclAllGatherV(p, 7, out.data(), counts, displs, HCCL_DATA_TYPE_FP32, c.comm, c.stream); }},
        {HCCL_E_PARA, [&] {
           return HcclReduceScatterV(p, big, displs, out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream);
         }},
        {HCCL_E_PARA, [&] { return HcclAlltoAll(p, 4, HCCL_DATA_TYPE_FP32, out.data(), 5, HCCL_DATA_TYPE_FP32, c.comm, c.stream); }},
        {HCCL_E_PARA, [&] {
           return HcclAlltoAllV(p, big, displs, HCCL_DATA_TYPE_FP32, out.data(), counts, displs, HCCL_DATA_TYPE_FP32,
                                c.comm, c.stream);
         }},
        {HCCL_E_PARA, [&] { return HcclAlltoAllVC(p, matrix, HCCL_DATA_TYPE_FP32, out.data(), HCCL_DATA_TYPE_FP32, c.comm, c.stream); }}};
    for (const LateV& l : late_v) {
      EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
      EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(p, out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream));
      EXPECT_CODE(HCCL_SUCCESS, l.call());
      const HcclResult got = HcclGroupEnd();
      if (got != l.want) return c.Fail("late V check: HcclGroupEnd returned " + std::to_string(got));
    }
    if (!Sync(c)) return false;
    if (out[0] != -1.0f) return c.Fail("a collective of a failed group ran");
    // Nothing was enqueued: the first plain pair is message #1 of the pair and carries 64 floats.
    std::vector<float> got(64, -1);
    EXPECT_CODE(HCCL_SUCCESS, c.rank == 0 ? HcclSend(p, 64, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                                          : HcclRecv(got.data(), 64, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream));
    if (!Sync(c)) return false;
    if (c.rank == 1 && got[63] != 0.0f) return c.Fail("wrong data after the failed groups");
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

// HcclBatchSendRecv, HcclBarrier and a collective in a Send/Recv group (and the reverse) fail at
// the call; the group goes on and its Send/Recv complete.
TEST(Group, MixingFailsAtTheCall) {
  auto res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: this test is about groups, not memory
    std::vector<float> a(16, static_cast<float>(c.rank + 1)), b(16, -1), r(16, -1);
    const uint32_t peer = static_cast<uint32_t>(1 - c.rank);
    HcclSendRecvItem item{HCCL_SEND, a.data(), 16, HCCL_DATA_TYPE_FP32, peer};
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclSend(a.data(), 16, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, HcclBatchSendRecv(&item, 1, c.comm, c.stream));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, HcclBarrier(c.comm, c.stream));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, HcclAllReduce(a.data(), r.data(), 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                                                  c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclRecv(b.data(), 16, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    if (!Sync(c)) return false;
    if (b[0] != static_cast<float>(peer + 1)) return c.Fail("the group's exchange moved the wrong data");
    if (r[0] != -1.0f) return c.Fail("the rejected AllReduce ran");
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(a.data(), r.data(), 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm,
                                            c.stream));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, HcclSend(a.data(), 16, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    if (!Sync(c)) return false;
    if (r[0] != 3.0f) return c.Fail("the group's AllReduce did not run");
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

// Collectives of a group run in call order at the end; a V call's arrays are copied at the call.
TEST(Group, CollectivesRunInOrderAtTheEnd) {
  auto res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: this test is about groups, not memory
    std::vector<float> x(4, static_cast<float>(c.rank + 1)), sum(4, -1), gathered(8, -1);
    auto* counts = new std::vector<uint64_t>{2, 3};
    auto* displs = new std::vector<uint64_t>{0, 4};
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStart());
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(x.data(), sum.data(), 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm,
                                            c.stream));
    // In place on the first one's result: 3 + 3 = 6 in call order (reversed: -1 + -1, then 3).
    EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(sum.data(), sum.data(), 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm,
                                            c.stream));
    EXPECT_CODE(HCCL_SUCCESS, HcclAllGatherV(x.data(), c.rank == 0 ? 2 : 3, gathered.data(), counts->data(),
                                             displs->data(), HCCL_DATA_TYPE_FP32, c.comm, c.stream));
    // The caller's arrays are gone before the end.
    (*counts)[0] = (*counts)[1] = 99;
    delete counts;
    delete displs;
    bool on = false;
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupStatusGet(&on));
    if (!on) return c.Fail("HcclGroupStatusGet: no group inside a group");
    if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) return c.Fail("sync inside the group");
    if (sum[0] != -1.0f) return c.Fail("a collective ran before HcclGroupEnd");
    EXPECT_CODE(HCCL_SUCCESS, HcclGroupEnd());
    if (!Sync(c)) return false;
    for (int i = 0; i < 4; ++i)
      if (sum[static_cast<size_t>(i)] != 6.0f) return c.Fail("two AllReduces out of call order");
    const float want[8] = {1, 1, -1, -1, 2, 2, 2, -1};
    for (int i = 0; i < 8; ++i)
      if (gathered[static_cast<size_t>(i)] != want[i]) return c.Fail("AllGatherV: wrong element " + std::to_string(i));
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

// Nesting, per-thread state, HcclGroupStatusGet, an end without a start.
TEST(Group, NestingAndStatus) {
  bool on = true;
  ASSERT_EQ(HcclGroupStatusGet(nullptr), HCCL_E_PTR);
  ASSERT_EQ(HcclGroupStatusGet(&on), HCCL_SUCCESS);
  EXPECT_FALSE(on);
  EXPECT_EQ(HcclGroupEnd(), HCCL_E_PARA);
  ASSERT_EQ(HcclGroupStart(), HCCL_SUCCESS);
  ASSERT_EQ(HcclGroupStart(), HCCL_SUCCESS);
  EXPECT_TRUE(InGroup());
  bool other = true;
  std::thread([&] { (void)HcclGroupStatusGet(&other); }).join();
  EXPECT_FALSE(other) << "group state leaked to another thread";
  ASSERT_EQ(HcclGroupEnd(), HCCL_SUCCESS);
  EXPECT_TRUE(InGroup()) << "the inner HcclGroupEnd ended the outer group";
  ASSERT_EQ(HcclGroupEnd(), HCCL_SUCCESS);
  EXPECT_FALSE(InGroup());
  EXPECT_EQ(HcclGroupEnd(), HCCL_E_PARA);
}

}  // namespace
