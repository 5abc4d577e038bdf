// HcclAllReduce, HcclBroadcast, HcclReduceScatter, HcclAllGather and HcclScatter argument checks
// (issues 15 and 16; the operators' check lists in HCCL's legacy order, as argcheck_test.cc does
// for HcclReduce):
//   AllReduce: 1 count 0 -> SUCCESS before anything else; 2 NULL comm / sendBuf / recvBuf /
//              stream -> E_PTR; 3 count > 0x7FFFFFFFF -> E_PARA; 4 dtype not reducible (int128,
//              13, the 8-bit floats, garbage) -> E_NOT_SUPPORT; 5 op not SUM/PROD/MAX/MIN ->
//              E_NOT_SUPPORT; 6 the profile's dtype x op table -> E_NOT_SUPPORT; 8 misaligned,
//              too small for count, or partially overlapping buffers -> E_PARA (sendBuf == recvBuf
//              is in place and fine).
//   Broadcast: count 0 -> SUCCESS; NULL comm / buf / stream -> E_PTR; count -> E_PARA; dtype not
//              one of the 17 movable types -> E_NOT_SUPPORT; root >= n -> E_PARA (after dtype);
//              misaligned or too small buffer -> E_PARA; per profile its move table, and no
//              Broadcast at all on Atlas310P.
//   AllGather: as Broadcast without the root, two buffers: recvBuf holds n x count; in place is
//              sendBuf == recvBuf + rank x count or sendBuf == recvBuf, any other overlap E_PARA.
//   Scatter:   count 0; NULL comm / recvBuf / stream, then the root's NULL sendBuf -> E_PTR (the
//              others' sendBuf is ignored); count; dtype; root; the root's sendBuf holds n x count,
//              in place only as recvBuf == sendBuf + root x count; no Scatter on Atlas310P.
// Every rejected call enqueues nothing: the stream synchronizes, buffers keep their guard bytes,
// no async error, and a valid call still works. Public API only.
#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "harness/collective_check.h"

#include "fault/argcheck_util.h"


namespace {

using hostccl::argtest::AsDtype;
using hostccl::argtest::AsOp;
using hostccl::argtest::GuardedBuf;
using hostccl::argtest::RunCaseInChild;

constexpr uint64_t kMaxCount = 0x7FFFFFFFFull;
constexpr size_t kBufBytes = 4096;

size_t ElemSize(int t) {
  switch (t) {
    case 0: case 7: case 14: case 15: case 16: case 17: return 1;
    case 1: case 8: case 3: case 11: return 2;
    case 2: case 9: case 4: return 4;
    case 5: case 6: case 10: return 8;
    case 12: return 16;
    default: return 0;
  }
}


const int kReducible[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
const int kMovable[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17};

// GTEST_SKIP returns from the function it is in, so these are macros used in the test bodies.
#define REQUIRE_ALLREDUCE()                                                                         \
  if (!hostccl::test::AllReduceImplemented()) GTEST_SKIP() << "HcclAllReduce is not implemented in this build"
#define REQUIRE_BROADCAST()                                                                         \
  if (!hostccl::test::BroadcastImplemented()) GTEST_SKIP() << "HcclBroadcast is not implemented in this build"

class CollArgCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)aclInit(nullptr);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    int32_t one[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, one, &comm_), HCCL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    send_.Alloc(kBufBytes, 0x21);
    recv_.Alloc(kBufBytes, 0x6b);
    small_.Alloc(32, 0x35);
  }
  void TearDown() override {
    if (comm2_[0]) {
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(HcclCommDestroy(comm2_[i]), HCCL_SUCCESS);
        EXPECT_EQ(aclrtDestroyStream(stream2_[i]), ACL_SUCCESS);
      }
      (void)aclrtSetDevice(0);
    }
    if (comm_) {
      EXPECT_EQ(HcclCommDestroy(comm_), HCCL_SUCCESS);
    }
    if (stream_) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
  }

  // A 2-rank communicator driven from this thread, for calls that must be rejected synchronously.
  void MakeTwoRankComm() {
    int32_t devs[2] = {0, 1};
    ASSERT_EQ(HcclCommInitAll(2, devs, comm2_), HCCL_SUCCESS);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(aclrtSetDevice(i), ACL_SUCCESS);
      ASSERT_EQ(aclrtCreateStream(&stream2_[i]), ACL_SUCCESS);
    }
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  }

  void ExpectRejected(HcclResult code, const std::function<HcclResult()>& call, const std::string& what,
                      aclrtStream stream = nullptr, HcclComm comm = nullptr) {
    HcclResult got = call();
    EXPECT_EQ(got, code) << what;
    EXPECT_EQ(aclrtSynchronizeStream(stream ? stream : stream_), ACL_SUCCESS) << what;
    EXPECT_TRUE(send_.Unchanged()) << what << ": sendBuf written";
    EXPECT_TRUE(recv_.Unchanged()) << what << ": recvBuf written";
    EXPECT_TRUE(small_.Unchanged()) << what << ": small buffer written";
    HcclResult async = HCCL_E_INTERNAL;
    EXPECT_EQ(HcclGetCommAsyncError(comm ? comm : comm_, &async), HCCL_SUCCESS);
    EXPECT_EQ(async, HCCL_SUCCESS) << what << ": a rejected call left an async error";
  }

  // A valid 1-rank AllReduce / Broadcast still works (and AllReduce on one rank is a copy).
  void ExpectStillWorks() {
    if (hostccl::test::AllReduceImplemented()) {
      ASSERT_EQ(HcclAllReduce(send_.ptr, recv_.ptr, 16, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm_, stream_), HCCL_SUCCESS);
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
      std::vector<unsigned char> got(64);
      ASSERT_EQ(aclrtMemcpy(got.data(), 64, recv_.ptr, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), send_.guard.begin())) << "1-rank allreduce is not a copy";
      recv_.Reset();
    }
    if (hostccl::test::BroadcastImplemented()) {
      ASSERT_EQ(HcclBroadcast(send_.ptr, 16, HCCL_DATA_TYPE_INT32, 0, comm_, stream_), HCCL_SUCCESS);
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
      EXPECT_TRUE(send_.Unchanged()) << "1-rank broadcast changed the root's buffer";
    }
  }

  HcclComm comm_ = nullptr;
  aclrtStream stream_ = nullptr;
  HcclComm comm2_[2] = {nullptr, nullptr};
  aclrtStream stream2_[2] = {nullptr, nullptr};
  GuardedBuf send_, recv_, small_;
};

// ---- HcclAllReduce ----

TEST_F(CollArgCheck, AllReduceCountZeroSucceedsBeforeAnyOtherCheck) {
  REQUIRE_ALLREDUCE();
  ExpectRejected(HCCL_SUCCESS, [] { return HcclAllReduce(nullptr, nullptr, 0, AsDtype(255), AsOp(255), nullptr, nullptr); },
                 "count 0, everything null/invalid");
  ExpectRejected(HCCL_SUCCESS, [&] {
    return HcclAllReduce(send_.ptr, recv_.ptr, 0, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_, stream_);
  }, "count 0, valid arguments");
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceNullPointersArePtrErrors) {
  REQUIRE_ALLREDUCE();
  auto R = [&](void* s, void* r, HcclComm c, aclrtStream st) {
    return [=] { return HcclAllReduce(s, r, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, st); };
  };
  ExpectRejected(HCCL_E_PTR, R(send_.ptr, recv_.ptr, nullptr, stream_), "null comm");
  ExpectRejected(HCCL_E_PTR, R(nullptr, recv_.ptr, comm_, stream_), "null sendBuf");
  ExpectRejected(HCCL_E_PTR, R(send_.ptr, nullptr, comm_, stream_), "null recvBuf");
  ExpectRejected(HCCL_E_PTR, R(send_.ptr, recv_.ptr, comm_, nullptr), "null stream");
  ExpectRejected(HCCL_E_PTR, R(nullptr, nullptr, comm_, stream_), "null sendBuf == recvBuf");
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceCountAboveMaximumIsParaError) {
  REQUIRE_ALLREDUCE();
  for (uint64_t count : {kMaxCount + 1, uint64_t{1} << 40, UINT64_MAX}) {
    ExpectRejected(HCCL_E_PARA, [&] {
      return HcclAllReduce(send_.ptr, recv_.ptr, count, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, comm_, stream_);
    }, "count " + std::to_string(count));
  }
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceNonReducibleDtypesAreNotSupported) {
  REQUIRE_ALLREDUCE();
  for (int dt : {12, 13, 14, 15, 16, 17, 18, 255, -1, 1000}) {
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] {
      return HcclAllReduce(send_.ptr, recv_.ptr, 4, AsDtype(dt), HCCL_REDUCE_SUM, comm_, stream_);
    }, "dataType " + std::to_string(dt));
  }
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceUnknownOpsAreNotSupported) {
  REQUIRE_ALLREDUCE();
  for (int op : {4, 5, 255, -1}) {
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] {
      return HcclAllReduce(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, AsOp(op), comm_, stream_);
    }, "op " + std::to_string(op));
  }
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceBufferRulesAreParaErrors) {
  REQUIRE_ALLREDUCE();
  for (int t : kReducible) {
    const size_t es = ElemSize(t);
    for (size_t off = 1; off < es; off *= 2) {
      ExpectRejected(HCCL_E_PARA, [&] {
        return HcclAllReduce(send_.at(off), recv_.ptr, 8, AsDtype(t), HCCL_REDUCE_MAX, comm_, stream_);
      }, "sendBuf misaligned by " + std::to_string(off) + ", dtype " + std::to_string(t));
      ExpectRejected(HCCL_E_PARA, [&] {
        return HcclAllReduce(send_.ptr, recv_.at(off), 8, AsDtype(t), HCCL_REDUCE_MAX, comm_, stream_);
      }, "recvBuf misaligned by " + std::to_string(off) + ", dtype " + std::to_string(t));
    }
    ExpectRejected(HCCL_E_PARA, [&] {
      return HcclAllReduce(send_.ptr, send_.at(es), 4, AsDtype(t), HCCL_REDUCE_SUM, comm_, stream_);
    }, "recvBuf = sendBuf + 1 element, dtype " + std::to_string(t));
    ExpectRejected(HCCL_E_PARA, [&] {
      return HcclAllReduce(send_.at(3 * es), send_.ptr, 4, AsDtype(t), HCCL_REDUCE_SUM, comm_, stream_);
    }, "sendBuf = recvBuf + 3 elements, dtype " + std::to_string(t));
  }
  ExpectRejected(HCCL_E_PARA, [&] {
    return HcclAllReduce(small_.ptr, recv_.ptr, 9, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_, stream_);
  }, "sendBuf 32 bytes, count 9 fp32");
  ExpectRejected(HCCL_E_PARA, [&] {
    return HcclAllReduce(send_.ptr, small_.ptr, 5, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, comm_, stream_);
  }, "recvBuf 32 bytes, count 5 fp64");
  ExpectRejected(HCCL_E_PARA, [&] {
    return HcclAllReduce(send_.at(kBufBytes - 8), recv_.ptr, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm_, stream_);
  }, "sendBuf 8 bytes before the end, count 4 int32");
  // Adjacent buffers, exactly fitting, and in place are fine.
  ASSERT_EQ(HcclAllReduce(recv_.ptr, recv_.at(16), 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  recv_.Reset();
  ASSERT_EQ(HcclAllReduce(send_.at(kBufBytes - 32), small_.ptr, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_, stream_),
            HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  small_.Reset();
  ASSERT_EQ(HcclAllReduce(recv_.ptr, recv_.ptr, 64, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(recv_.Unchanged()) << "1-rank in-place allreduce changed its buffer";
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllReduceOnNonRootRankChecksBothBuffers) {
  REQUIRE_ALLREDUCE();
  MakeTwoRankComm();
  ExpectRejected(HCCL_E_PARA, [&] {
    return HcclAllReduce(send_.ptr, small_.ptr, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm2_[1], stream2_[1]);
  }, "rank 1 recvBuf 32 bytes, count 16 fp32", stream2_[1], comm2_[1]);
  ExpectRejected(HCCL_E_PARA, [&] {
    return HcclAllReduce(send_.ptr, recv_.at(2), 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm2_[0], stream2_[0]);
  }, "rank 0 misaligned recvBuf", stream2_[0], comm2_[0]);
}

TEST_F(CollArgCheck, AllReduceChecksRunInHcclOrder) {
  REQUIRE_ALLREDUCE();
  auto R = [&](void* s, void* r, uint64_t n, int t, int op, HcclComm c, aclrtStream st) {
    return [=] { return HcclAllReduce(s, r, n, AsDtype(t), AsOp(op), c, st); };
  };
  // 2 (null) before 3 (count), 4 (dtype), 5 (op), 8 (buffers).
  ExpectRejected(HCCL_E_PTR, R(nullptr, recv_.ptr, 4, 12, 0, comm_, stream_), "null sendBuf + int128");
  ExpectRejected(HCCL_E_PTR, R(send_.ptr, recv_.ptr, kMaxCount + 1, 4, 0, comm_, nullptr), "null stream + huge count");
  ExpectRejected(HCCL_E_PTR, R(send_.ptr, recv_.ptr, 4, 4, 9, nullptr, stream_), "null comm + bad op");
  ExpectRejected(HCCL_E_PTR, R(send_.at(1), nullptr, 4, 4, 0, comm_, stream_), "null recvBuf + misaligned sendBuf");
  // 3 (count) before 4 (dtype) and 5 (op).
  ExpectRejected(HCCL_E_PARA, R(send_.ptr, recv_.ptr, kMaxCount + 1, 255, 255, comm_, stream_), "huge count + bad dtype + bad op");
  // 4 before 5, both before 8.
  ExpectRejected(HCCL_E_NOT_SUPPORT, R(send_.at(2), recv_.ptr, 4, 15, 0, comm_, stream_), "fp8 + misaligned sendBuf");
  ExpectRejected(HCCL_E_NOT_SUPPORT, R(send_.ptr, send_.at(4), 4, 4, 255, comm_, stream_), "bad op + overlap");
  ExpectRejected(HCCL_E_NOT_SUPPORT, R(small_.ptr, recv_.ptr, 1000, -1, 7, comm_, stream_), "bad dtype + bad op + too small");
  ExpectRejected(HCCL_E_NOT_SUPPORT, R(small_.ptr, recv_.ptr, 1000, 12, 0, comm_, stream_), "int128 + too small");
  ExpectStillWorks();
}

// In place (sendBuf == recvBuf) is accepted and leaves a 1-rank input as it is.
TEST_F(CollArgCheck, AllReduceInPlaceIsAcceptedAndCorrect) {
  ASSERT_EQ(HcclAllReduce(send_.ptr, send_.ptr, 16, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(send_.Unchanged()) << "1-rank in-place allreduce must leave the input as it is";
}

// ---- HcclBroadcast ----

TEST_F(CollArgCheck, BroadcastCountZeroSucceedsBeforeAnyOtherCheck) {
  REQUIRE_BROADCAST();
  ExpectRejected(HCCL_SUCCESS, [] { return HcclBroadcast(nullptr, 0, AsDtype(255), 99, nullptr, nullptr); },
                 "count 0, everything null/invalid");
  ExpectRejected(HCCL_SUCCESS, [&] { return HcclBroadcast(send_.ptr, 0, HCCL_DATA_TYPE_FP32, 0, comm_, stream_); },
                 "count 0, valid arguments");
  ExpectStillWorks();
}

TEST_F(CollArgCheck, BroadcastNullPointersArePtrErrors) {
  REQUIRE_BROADCAST();
  ExpectRejected(HCCL_E_PTR, [&] { return HcclBroadcast(send_.ptr, 4, HCCL_DATA_TYPE_FP32, 0, nullptr, stream_); }, "null comm");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclBroadcast(nullptr, 4, HCCL_DATA_TYPE_FP32, 0, comm_, stream_); }, "null buf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclBroadcast(send_.ptr, 4, HCCL_DATA_TYPE_FP32, 0, comm_, nullptr); }, "null stream");
  // HCCL looks at the stream first for Broadcast and ReduceScatter, last for the others: the
  // message names the first NULL in that order.
  const struct {
    std::function<HcclResult()> call;
    const char* first;
  } order[] = {
      {[] { return HcclBroadcast(nullptr, 4, HCCL_DATA_TYPE_FP32, 0, nullptr, nullptr); }, "stream is NULL"},
      {[] { return HcclReduceScatter(nullptr, nullptr, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nullptr, nullptr); },
       "stream is NULL"},
      {[] { return HcclAllReduce(nullptr, nullptr, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nullptr, nullptr); },
       "comm is NULL"},
      {[] { return HcclAllGather(nullptr, nullptr, 4, HCCL_DATA_TYPE_FP32, nullptr, nullptr); }, "comm is NULL"}};
  for (const auto& o : order) {
    ExpectRejected(HCCL_E_PTR, o.call, o.first);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find(o.first), std::string::npos) << o.first << ": " << aclGetRecentErrMsg();
  }
  ExpectStillWorks();
}

TEST_F(CollArgCheck, BroadcastCountAboveMaximumIsParaError) {
  REQUIRE_BROADCAST();
  for (uint64_t count : {kMaxCount + 1, uint64_t{1} << 40, UINT64_MAX}) {
    ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(send_.ptr, count, HCCL_DATA_TYPE_INT8, 0, comm_, stream_); },
                   "count " + std::to_string(count));
  }
  ExpectStillWorks();
}

TEST_F(CollArgCheck, BroadcastMovesEveryTypeAndRejectsTheRest) {
  REQUIRE_BROADCAST();
  for (int dt : {13, 18, 255, -1, 1000}) {
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclBroadcast(send_.ptr, 4, AsDtype(dt), 0, comm_, stream_); },
                   "dataType " + std::to_string(dt));
  }
  for (int dt : kMovable) {
    ASSERT_EQ(HcclBroadcast(send_.ptr, 8, AsDtype(dt), 0, comm_, stream_), HCCL_SUCCESS) << "dataType " << dt;
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << "dataType " << dt;
    EXPECT_TRUE(send_.Unchanged()) << "dataType " << dt << ": 1-rank broadcast changed the root's buffer";
  }
}

TEST_F(CollArgCheck, BroadcastRootOutOfRangeIsParaError) {
  REQUIRE_BROADCAST();
  for (uint32_t root : {1u, 2u, 0xFFFFFFFFu})
    ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(send_.ptr, 4, HCCL_DATA_TYPE_FP32, root, comm_, stream_); },
                   "1-rank comm, root " + std::to_string(root));
  MakeTwoRankComm();
  for (int rank = 0; rank < 2; ++rank)
    for (uint32_t root : {2u, 0x80000000u})
      ExpectRejected(HCCL_E_PARA, [&] {
        return HcclBroadcast(send_.ptr, 4, HCCL_DATA_TYPE_FP32, root, comm2_[rank], stream2_[rank]);
      }, "2-rank comm rank " + std::to_string(rank) + ", root " + std::to_string(root), stream2_[rank], comm2_[rank]);
}

TEST_F(CollArgCheck, BroadcastBufferRulesAreParaErrors) {
  REQUIRE_BROADCAST();
  for (int t : {1, 2, 4, 5, 10}) {
    const size_t es = ElemSize(t);
    for (size_t off = 1; off < es; off *= 2)
      ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(send_.at(off), 8, AsDtype(t), 0, comm_, stream_); },
                     "buf misaligned by " + std::to_string(off) + ", dtype " + std::to_string(t));
  }
  ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(small_.ptr, 9, HCCL_DATA_TYPE_FP32, 0, comm_, stream_); },
                 "buf 32 bytes, count 9 fp32");
  ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(small_.ptr, 3, HCCL_DATA_TYPE_INT128, 0, comm_, stream_); },
                 "buf 32 bytes, count 3 int128");
  MakeTwoRankComm();
  ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(small_.ptr, 16, HCCL_DATA_TYPE_FP32, 0, comm2_[1], stream2_[1]); },
                 "non-root rank 1 buf 32 bytes, count 16 fp32", stream2_[1], comm2_[1]);
  // int8 at an odd address, exactly fitting: fine.
  ASSERT_EQ(HcclBroadcast(send_.at(kBufBytes - 33), 33, HCCL_DATA_TYPE_INT8, 0, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(send_.Unchanged());
}

TEST_F(CollArgCheck, BroadcastChecksRunInHcclOrder) {
  REQUIRE_BROADCAST();
  auto B = [&](void* b, uint64_t n, int t, uint32_t root, HcclComm c, aclrtStream st) {
    return [=] { return HcclBroadcast(b, n, AsDtype(t), root, c, st); };
  };
  ExpectRejected(HCCL_E_PTR, B(nullptr, kMaxCount + 1, 255, 9, comm_, stream_), "null buf + huge count + bad dtype + bad root");
  ExpectRejected(HCCL_E_PTR, B(send_.ptr, 4, 4, 9, comm_, nullptr), "null stream + bad root");
  // count before dtype and root (legacy order; Ascend 950 checks the root first).
  ExpectRejected(HCCL_E_PARA, B(send_.ptr, kMaxCount + 1, 255, 0, comm_, stream_), "huge count + bad dtype");
  // dtype before root.
  ExpectRejected(HCCL_E_NOT_SUPPORT, B(send_.ptr, 4, 13, 5, comm_, stream_), "dtype 13 + bad root");
  ExpectRejected(HCCL_E_NOT_SUPPORT, B(small_.ptr, 1000, 255, 0, comm_, stream_), "bad dtype + too small");
  // root before the buffer rules.
  ExpectRejected(HCCL_E_PARA, B(send_.at(2), 4, 4, 5, comm_, stream_), "bad root + misaligned");
  ExpectStillWorks();
}

// ---- HcclReduceScatter (collectives.md 2.6: AllReduce's order; sendBuf n x recvCount) ----

TEST_F(CollArgCheck, ReduceScatterChecksInHcclOrder) {
  ExpectRejected(HCCL_SUCCESS, [] { return HcclReduceScatter(nullptr, nullptr, 0, AsDtype(255), AsOp(255), nullptr, nullptr); },
                 "recvCount 0 with everything else invalid");
  const auto F32 = HCCL_DATA_TYPE_FP32;
  const auto SUM = HCCL_REDUCE_SUM;
  ExpectRejected(HCCL_E_PTR, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, 4, F32, SUM, nullptr, stream_); }, "NULL comm");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclReduceScatter(nullptr, recv_.ptr, 4, F32, SUM, comm_, stream_); }, "NULL sendBuf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclReduceScatter(send_.ptr, nullptr, 4, F32, SUM, comm_, stream_); }, "NULL recvBuf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, 4, F32, SUM, comm_, nullptr); }, "NULL stream");
  // The count step (3) comes before the dtype (4) and op (5) steps.
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, kMaxCount + 1, AsDtype(255), AsOp(9), comm_, stream_); },
                 "recvCount above the maximum with a bad dtype and op");
  for (int t : {12, 13, 14, 15, 16, 17, 255, -1})
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, 4, AsDtype(t), AsOp(9), comm_, stream_); },
                   "dtype " + std::to_string(t) + " is not reducible (before the op)");
  for (int op : {4, -1, 1000})
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, 4, F32, AsOp(op), comm_, stream_); },
                   "op " + std::to_string(op));
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(send_.at(2), recv_.ptr, 4, F32, SUM, comm_, stream_); },
                 "misaligned sendBuf");
  ExpectStillWorks();
}

// Buffer rules on a 2-rank communicator (rank r's sendBuf holds 2 x recvCount): the n x recvCount
// size is checked; recvBuf may equal sendBuf or sit exactly at the rank's own block; any other
// overlap is E_PARA on the calling rank, synchronously.
TEST_F(CollArgCheck, ReduceScatterBufferRules) {
  MakeTwoRankComm();
  const auto F32 = HCCL_DATA_TYPE_FP32;
  const auto SUM = HCCL_REDUCE_SUM;
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(small_.ptr, recv_.ptr, 5, F32, SUM, comm2_[0], stream2_[0]); },
                 "sendBuf of 32 bytes for 2 x 5 fp32", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(send_.ptr, send_.at(16), 4, F32, SUM, comm2_[0], stream2_[0]); },
                 "rank 0: recvBuf at rank 1's block", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(send_.ptr, send_.at(8), 4, F32, SUM, comm2_[1], stream2_[1]); },
                 "rank 1: recvBuf half a block into sendBuf", stream2_[1], comm2_[1]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclReduceScatter(send_.at(8), send_.ptr, 4, F32, SUM, comm2_[1], stream2_[1]); },
                 "rank 1: sendBuf inside recvBuf", stream2_[1], comm2_[1]);
  ExpectStillWorks();
}

// ---- HcclAllGather (collectives.md 2.4; in place 1.6) ----

TEST_F(CollArgCheck, AllGatherCountZeroSucceedsBeforeAnyOtherCheck) {
  ExpectRejected(HCCL_SUCCESS, [] { return HcclAllGather(nullptr, nullptr, 0, AsDtype(255), nullptr, nullptr); },
                 "count 0, everything else invalid");
  ExpectRejected(HCCL_SUCCESS, [&] { return HcclAllGather(send_.ptr, recv_.ptr, 0, HCCL_DATA_TYPE_FP32, comm_, stream_); },
                 "count 0");
}

TEST_F(CollArgCheck, AllGatherNullPointersArePtrErrors) {
  ExpectRejected(HCCL_E_PTR, [&] { return HcclAllGather(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, nullptr, stream_); }, "null comm");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclAllGather(nullptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, comm_, stream_); }, "null sendBuf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclAllGather(send_.ptr, nullptr, 4, HCCL_DATA_TYPE_FP32, comm_, stream_); }, "null recvBuf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclAllGather(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, comm_, nullptr); }, "null stream");
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllGatherMovesEveryTypeAndRejectsTheRest) {
  for (uint64_t count : {kMaxCount + 1, uint64_t{1} << 40})
    ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(send_.ptr, recv_.ptr, count, HCCL_DATA_TYPE_INT8, comm_, stream_); },
                   "count " + std::to_string(count));
  for (int dt : {13, 18, 255, -1})
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclAllGather(send_.ptr, recv_.ptr, 4, AsDtype(dt), comm_, stream_); },
                   "dataType " + std::to_string(dt));
  for (int dt : kMovable) {  // one rank: recvBuf = sendBuf, bitwise
    ASSERT_EQ(HcclAllGather(send_.ptr, recv_.ptr, 8, AsDtype(dt), comm_, stream_), HCCL_SUCCESS) << "dataType " << dt;
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    std::vector<unsigned char> got(8 * ElemSize(dt));
    ASSERT_EQ(aclrtMemcpy(got.data(), got.size(), recv_.ptr, got.size(), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), send_.guard.begin())) << "dataType " << dt << ": not a copy";
    recv_.Reset();
  }
}

// recvBuf holds n x count elements; sendBuf may be recvBuf + rank x count or recvBuf itself, and
// must not overlap recvBuf otherwise.
TEST_F(CollArgCheck, AllGatherBufferRulesAreParaErrors) {
  MakeTwoRankComm();
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(send_.ptr, small_.ptr, 5, HCCL_DATA_TYPE_FP32, comm2_[0], stream2_[0]); },
                 "2 ranks: recvBuf 32 bytes < 2 x 5 fp32", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(send_.at(2), recv_.ptr, 4, HCCL_DATA_TYPE_FP32, comm2_[0], stream2_[0]); },
                 "misaligned sendBuf", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(send_.ptr, recv_.at(4), 4, HCCL_DATA_TYPE_FP64, comm2_[0], stream2_[0]); },
                 "misaligned recvBuf", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(recv_.at(16), recv_.ptr, 4, HCCL_DATA_TYPE_FP32, comm2_[0], stream2_[0]); },
                 "rank 0: sendBuf = block 1 of recvBuf", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(recv_.at(4), recv_.ptr, 4, HCCL_DATA_TYPE_FP32, comm2_[1], stream2_[1]); },
                 "rank 1: sendBuf = recvBuf + 1 element", stream2_[1], comm2_[1]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(recv_.ptr, recv_.at(16), 8, HCCL_DATA_TYPE_FP32, comm2_[1], stream2_[1]); },
                 "rank 1: recvBuf inside sendBuf", stream2_[1], comm2_[1]);
  // One rank: in place (sendBuf == recvBuf) and adjacent buffers are fine.
  ASSERT_EQ(HcclAllGather(recv_.ptr, recv_.ptr, 64, HCCL_DATA_TYPE_FP32, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(recv_.Unchanged()) << "1-rank in-place allgather changed its buffer";
  ASSERT_EQ(HcclAllGather(recv_.ptr, recv_.at(16), 4, HCCL_DATA_TYPE_FP32, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  recv_.Reset();
  ExpectStillWorks();
}

TEST_F(CollArgCheck, AllGatherChecksRunInHcclOrder) {
  auto G = [&](void* s, void* r, uint64_t n, int t, HcclComm c, aclrtStream st) {
    return [=] { return HcclAllGather(s, r, n, AsDtype(t), c, st); };
  };
  ExpectRejected(HCCL_E_PTR, G(nullptr, recv_.ptr, kMaxCount + 1, 255, comm_, stream_), "null sendBuf + huge count + bad dtype");
  ExpectRejected(HCCL_E_PTR, G(send_.ptr, recv_.ptr, kMaxCount + 1, 4, comm_, nullptr), "null stream + huge count");
  ExpectRejected(HCCL_E_PARA, G(send_.ptr, recv_.ptr, kMaxCount + 1, 255, comm_, stream_), "huge count + bad dtype");
  ExpectRejected(HCCL_E_NOT_SUPPORT, G(send_.at(1), recv_.ptr, 4, 13, comm_, stream_), "dtype 13 + misaligned");
  ExpectRejected(HCCL_E_NOT_SUPPORT, G(small_.ptr, small_.ptr, 1000, 255, comm_, stream_), "bad dtype + too small");
  ExpectStillWorks();
}

// ---- HcclScatter (collectives.md 2.8: sendBuf is the root's only) ----

TEST_F(CollArgCheck, ScatterCountZeroSucceedsBeforeAnyOtherCheck) {
  ExpectRejected(HCCL_SUCCESS, [] { return HcclScatter(nullptr, nullptr, 0, AsDtype(255), 99, nullptr, nullptr); },
                 "count 0, everything else invalid");
}

TEST_F(CollArgCheck, ScatterNullPointersArePtrErrors) {
  ExpectRejected(HCCL_E_PTR, [&] { return HcclScatter(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, 0, nullptr, stream_); }, "null comm");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclScatter(send_.ptr, nullptr, 4, HCCL_DATA_TYPE_FP32, 0, comm_, stream_); }, "null recvBuf");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclScatter(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, 0, comm_, nullptr); }, "null stream");
  ExpectRejected(HCCL_E_PTR, [&] { return HcclScatter(nullptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, 0, comm_, stream_); },
                 "the root's sendBuf NULL");
  ExpectStillWorks();
}

TEST_F(CollArgCheck, ScatterBufferRootAndTypeRules) {
  for (int dt : {13, 255, -1})
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclScatter(send_.ptr, recv_.ptr, 4, AsDtype(dt), 0, comm_, stream_); },
                   "dataType " + std::to_string(dt));
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(send_.ptr, recv_.ptr, kMaxCount + 1, HCCL_DATA_TYPE_INT8, 0, comm_, stream_); },
                 "huge count");
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(send_.ptr, recv_.ptr, 4, HCCL_DATA_TYPE_FP32, 1, comm_, stream_); }, "root 1 of 1");
  MakeTwoRankComm();
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(small_.ptr, recv_.ptr, 5, HCCL_DATA_TYPE_FP32, 0, comm2_[0], stream2_[0]); },
                 "root: sendBuf 32 bytes < 2 x 5 fp32", stream2_[0], comm2_[0]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(send_.ptr, small_.ptr, 9, HCCL_DATA_TYPE_FP32, 0, comm2_[1], stream2_[1]); },
                 "non-root: recvBuf 32 bytes < 9 fp32", stream2_[1], comm2_[1]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(send_.ptr, send_.ptr, 4, HCCL_DATA_TYPE_FP32, 1, comm2_[1], stream2_[1]); },
                 "root 1: recvBuf = sendBuf (block 0, not block 1)", stream2_[1], comm2_[1]);
  ExpectRejected(HCCL_E_PARA, [&] { return HcclScatter(send_.ptr, send_.at(20), 4, HCCL_DATA_TYPE_FP32, 1, comm2_[1], stream2_[1]); },
                 "root 1: recvBuf = sendBuf + 5 elements", stream2_[1], comm2_[1]);
  // One rank: recvBuf = block 0 of sendBuf (in place) works and changes nothing.
  ASSERT_EQ(HcclScatter(recv_.ptr, recv_.ptr, 64, HCCL_DATA_TYPE_FP32, 0, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(recv_.Unchanged()) << "1-rank in-place scatter changed its buffer";
  ExpectStillWorks();
}

TEST_F(CollArgCheck, ScatterChecksRunInHcclOrder) {
  auto S = [&](void* s, void* r, uint64_t n, int t, uint32_t root, HcclComm c, aclrtStream st) {
    return [=] { return HcclScatter(s, r, n, AsDtype(t), root, c, st); };
  };
  // recvBuf and stream before the root's sendBuf; all pointers before count, dtype and root.
  ExpectRejected(HCCL_E_PTR, S(nullptr, recv_.ptr, kMaxCount + 1, 255, 0, comm_, stream_), "root's null sendBuf + huge count");
  ExpectRejected(HCCL_E_PTR, S(send_.ptr, recv_.ptr, 4, 4, 9, comm_, nullptr), "null stream + bad root");
  ExpectRejected(HCCL_E_PARA, S(send_.ptr, recv_.ptr, kMaxCount + 1, 255, 9, comm_, stream_), "huge count + bad dtype + bad root");
  ExpectRejected(HCCL_E_NOT_SUPPORT, S(send_.ptr, recv_.ptr, 4, 13, 9, comm_, stream_), "dtype 13 + bad root");
  ExpectRejected(HCCL_E_PARA, S(send_.at(2), recv_.ptr, 4, 4, 5, comm_, stream_), "bad root + misaligned");
  ExpectStillWorks();
}

// ---- Profiles (HOSTCCL_SOC; docs/semantics.md profiles) ----

struct Profile {
  const char* name;
  std::set<int> reduce;   // AllReduce dtypes
  std::set<int> no_prod;  // AllReduce dtypes without PROD
  std::set<int> no_op;    // AllReduce dtypes with SUM only
  std::set<int> move;     // Broadcast and Scatter dtypes (empty: neither on this chip)
  std::set<int> gather;   // AllGather dtypes
};

const Profile kProfiles[] = {
    {"Ascend950", {0, 1, 2, 5, 6, 3, 4, 10, 11}, {1, 11}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 17},
     {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 17}},
    {"AtlasA3", {0, 1, 2, 5, 3, 4, 11}, {1, 11}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"AtlasA2", {0, 1, 2, 5, 3, 4, 11}, {1, 11}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
    {"Atlas910", {0, 2, 5, 3, 4}, {}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
    {"Atlas310P", {0, 1, 2, 3, 4}, {}, {1}, {}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
};

// In a child started with HOSTCCL_SOC set: every dtype x op of AllReduce and every dtype of
// Broadcast is accepted (and runs) or rejected with E_NOT_SUPPORT as the profile's table says.
TEST_F(CollArgCheck, DISABLED_SocProfileChild) {
  const char* soc = std::getenv("HOSTCCL_SOC");  // set by CollArgCheckSoc below; not a library read
  if (soc == nullptr || *soc == '\0') GTEST_SKIP() << "runs as a child of CollArgCheckSoc.EveryProfileMatchesTable (disabled in the suite)";
  const Profile* prof = nullptr;
  for (const auto& p : kProfiles)
    if (std::strcmp(p.name, soc) == 0) prof = &p;
  ASSERT_NE(prof, nullptr) << soc;
  // Which operators the build has, as the parent found without a profile (a probe here would see
  // the profile's refusals, e.g. no Broadcast on Atlas310P).
  const std::string have = std::getenv("COLLARG_HAVE") ? std::getenv("COLLARG_HAVE") : "";
  if (have.find("allreduce") != std::string::npos) {
    for (int t : kReducible)
      for (int op = 0; op < 4; ++op) {
        const bool ok = prof->reduce.count(t) && !(op == HCCL_REDUCE_PROD && prof->no_prod.count(t)) &&
                        !(op != HCCL_REDUCE_SUM && prof->no_op.count(t));
        const std::string what = std::string(soc) + " allreduce dtype " + std::to_string(t) + " op " + std::to_string(op);
        if (!ok) {
          ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclAllReduce(send_.ptr, recv_.ptr, 8, AsDtype(t), AsOp(op), comm_, stream_); },
                         what);
          continue;
        }
        ASSERT_EQ(HcclAllReduce(send_.ptr, recv_.ptr, 8, AsDtype(t), AsOp(op), comm_, stream_), HCCL_SUCCESS) << what;
        ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
        recv_.Reset();
      }
  }
  // HcclBarrier exists on every chip but the 310P (collectives.md 5.1).
  if (std::strcmp(soc, "Atlas310P") == 0) {
    ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclBarrier(comm_, stream_); }, std::string(soc) + " barrier");
  } else {
    ASSERT_EQ(HcclBarrier(comm_, stream_), HCCL_SUCCESS) << soc;
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << soc;
  }
  // Topology limits at the call (collectives.md 5.1): this communicator's one rank on device 0 is
  // no whole 4-device cluster (Atlas910 AlltoAll); five ranks exceed the 310P's 4 NPUs of
  // AllGatherV and AlltoAll but not the 32 of AllGather.
  {
    auto a2a = [&] { return HcclAlltoAll(send_.ptr, 8, HCCL_DATA_TYPE_FP32, recv_.ptr, 8, HCCL_DATA_TYPE_FP32, comm_, stream_); };
    if (std::strcmp(soc, "Atlas910") == 0) {
      ExpectRejected(HCCL_E_NOT_SUPPORT, a2a, std::string(soc) + " alltoall on device 0 alone");
    } else {
      ASSERT_EQ(a2a(), HCCL_SUCCESS) << soc;
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << soc;
      recv_.Reset();
    }
  }
  if (std::strcmp(soc, "Atlas310P") == 0) {
    int32_t devs[5] = {0, 1, 2, 3, 4};
    HcclComm five[5] = {};
    ASSERT_EQ(HcclCommInitAll(5, devs, five), HCCL_SUCCESS);
    const uint64_t counts[5] = {8, 8, 8, 8, 8}, displs[5] = {0, 8, 16, 24, 32};
    ExpectRejected(HCCL_E_NOT_SUPPORT,
                   [&] { return HcclAllGatherV(send_.ptr, 8, recv_.ptr, counts, displs, HCCL_DATA_TYPE_FP32, five[0], stream_); },
                   "Atlas310P allgatherv at 5 ranks", nullptr, five[0]);
    ExpectRejected(HCCL_E_NOT_SUPPORT,
                   [&] { return HcclAlltoAll(send_.ptr, 8, HCCL_DATA_TYPE_FP32, recv_.ptr, 8, HCCL_DATA_TYPE_FP32, five[0], stream_); },
                   "Atlas310P alltoall at 5 ranks", nullptr, five[0]);
    // AllGather passes the profile at 5 ranks: the next step (the buffer size) rejects it here.
    ExpectRejected(HCCL_E_PARA, [&] { return HcclAllGather(send_.ptr, small_.ptr, 8, HCCL_DATA_TYPE_FP32, five[0], stream_); },
                   "Atlas310P allgather at 5 ranks, recvBuf too small", nullptr, five[0]);
    for (HcclComm c : five) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  }
  // ReduceScatter follows AllReduce's table (collectives.md 5.3).
  for (int t : kReducible)
    for (int op = 0; op < 4; ++op) {
      const bool ok = prof->reduce.count(t) && !(op == HCCL_REDUCE_PROD && prof->no_prod.count(t)) &&
                      !(op != HCCL_REDUCE_SUM && prof->no_op.count(t));
      const std::string what = std::string(soc) + " reducescatter dtype " + std::to_string(t) + " op " + std::to_string(op);
      if (!ok) {
        ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclReduceScatter(send_.ptr, recv_.ptr, 8, AsDtype(t), AsOp(op), comm_, stream_); },
                       what);
        continue;
      }
      ASSERT_EQ(HcclReduceScatter(send_.ptr, recv_.ptr, 8, AsDtype(t), AsOp(op), comm_, stream_), HCCL_SUCCESS) << what;
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
      recv_.Reset();
    }
  // ReduceScatterV has its own, narrower table (collectives.md 5.3): dtypes, and whether PROD is
  // allowed at all / SUM only; Atlas910 has no ReduceScatterV.
  struct RsvRule { const char* name; std::set<int> dtypes; bool prod; bool sum_only; };
  const RsvRule kRsv[] = {{"Ascend950", {0, 1, 2, 3, 4, 5, 11}, true, false}, {"AtlasA3", {0, 1, 2, 3, 4, 5, 11}, false, false},
                          {"AtlasA2", {0, 1, 2, 3, 4, 11}, false, false}, {"Atlas910", {}, false, false},
                          {"Atlas310P", {1, 3, 4}, false, true}};
  for (const RsvRule& rule : kRsv) {
    if (std::strcmp(rule.name, soc) != 0) continue;
    const uint64_t counts[1] = {8}, displs[1] = {0};
    for (int t : kReducible)
      for (int op = 0; op < 4; ++op) {
        const bool ok = rule.dtypes.count(t) && (op != HCCL_REDUCE_PROD || (rule.prod && t != 1 && t != 11)) &&
                        (op == HCCL_REDUCE_SUM || !rule.sum_only);
        const std::string what = std::string(soc) + " reducescatterv dtype " + std::to_string(t) + " op " + std::to_string(op);
        auto call = [&] { return HcclReduceScatterV(send_.ptr, counts, displs, recv_.ptr, 8, AsDtype(t), AsOp(op), comm_, stream_); };
        if (!ok) {
          ExpectRejected(HCCL_E_NOT_SUPPORT, call, what);
          continue;
        }
        ASSERT_EQ(call(), HCCL_SUCCESS) << what;
        ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
        recv_.Reset();
      }
  }
  if (have.find("broadcast") != std::string::npos) {
    for (int t : kMovable) {
      const std::string what = std::string(soc) + " broadcast dtype " + std::to_string(t);
      if (!prof->move.count(t)) {
        ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclBroadcast(send_.ptr, 8, AsDtype(t), 0, comm_, stream_); }, what);
        continue;
      }
      ExpectRejected(HCCL_E_PARA, [&] { return HcclBroadcast(send_.ptr, 8, AsDtype(t), 1, comm_, stream_); }, what + " root 1");
      ASSERT_EQ(HcclBroadcast(send_.ptr, 8, AsDtype(t), 0, comm_, stream_), HCCL_SUCCESS) << what;
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
    }
  }
  // AllGather and Scatter are in every build from issue 16 on.
  for (int t : kMovable) {
    const std::string what = std::string(soc) + " allgather/scatter dtype " + std::to_string(t);
    if (!prof->gather.count(t)) {
      ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclAllGather(send_.ptr, recv_.ptr, 8, AsDtype(t), comm_, stream_); }, what);
    } else {
      ASSERT_EQ(HcclAllGather(send_.ptr, recv_.ptr, 8, AsDtype(t), comm_, stream_), HCCL_SUCCESS) << what;
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
      recv_.Reset();
    }
    if (!prof->move.count(t)) {
      ExpectRejected(HCCL_E_NOT_SUPPORT, [&] { return HcclScatter(send_.ptr, recv_.ptr, 8, AsDtype(t), 0, comm_, stream_); }, what);
    } else {
      ASSERT_EQ(HcclScatter(send_.ptr, recv_.ptr, 8, AsDtype(t), 0, comm_, stream_), HCCL_SUCCESS) << what;
      ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
      recv_.Reset();
    }
  }
}

TEST(CollArgCheckSoc, EveryProfileMatchesTable) {
  if (!hostccl::test::AllReduceImplemented() && !hostccl::test::BroadcastImplemented())
    GTEST_SKIP() << "neither HcclAllReduce nor HcclBroadcast is implemented in this build";
  const std::string have = std::string(hostccl::test::AllReduceImplemented() ? "allreduce," : "") +
                           (hostccl::test::BroadcastImplemented() ? "broadcast" : "");
  for (const auto& p : kProfiles)
    RunCaseInChild("CollArgCheck.DISABLED_SocProfileChild",
                   {std::string("HOSTCCL_SOC=") + p.name, "COLLARG_HAVE=" + have}, std::string("profile ") + p.name);
}

}  // namespace
