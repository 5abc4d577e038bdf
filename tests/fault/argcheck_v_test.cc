// Argument checks of the V family (collectives.md 2.5, 2.7, 2.9-2.11; api/arg_check.cc kVOrders):
// HcclAllGatherV, HcclReduceScatterV, HcclAlltoAll, HcclAlltoAllV, HcclAlltoAllVC, each in HCCL's
// legacy order, then hostccl's additions (element sizes of the pairing, displacement overflow,
// overlapping receive blocks, sendBuf == recvBuf, extents against the device buffers).
// Every rejected call enqueues nothing: the stream synchronizes, the buffers keep their guard
// bytes, no async error. A call that passes every check is "accepted": it succeeds, or, while the
// operator's row is not implemented, it returns HCCL_E_NOT_SUPPORT saying so (after the checks).
// Order is shown by calls with two faults whose codes differ. Public API only.
#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fault/argcheck_util.h"

namespace {

using hostccl::argtest::AsDtype;
using hostccl::argtest::AsOp;
using hostccl::argtest::GuardedBuf;

constexpr uint64_t kMax = 0x7FFFFFFFFull;
constexpr size_t kBufBytes = 4096;

constexpr HcclDataType F32 = HCCL_DATA_TYPE_FP32;
constexpr HcclDataType I32 = HCCL_DATA_TYPE_INT32;
constexpr HcclDataType F16 = HCCL_DATA_TYPE_FP16;
constexpr HcclReduceOp SUM = HCCL_REDUCE_SUM;

class VArgCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)aclInit(nullptr);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    int32_t one[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, one, &comm_), HCCL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    int32_t devs[2] = {0, 1};
    ASSERT_EQ(HcclCommInitAll(2, devs, comm2_), HCCL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream2_), ACL_SUCCESS);
    send_.Alloc(kBufBytes, 0x21);
    recv_.Alloc(kBufBytes, 0x6b);
    small_.Alloc(32, 0x35);
  }
  void TearDown() override {
    for (HcclComm c : comm2_) {
      if (c) {
        EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
      }
    }
    if (comm_) {
      EXPECT_EQ(HcclCommDestroy(comm_), HCCL_SUCCESS);
    }
    if (stream2_) {
      EXPECT_EQ(aclrtDestroyStream(stream2_), ACL_SUCCESS);
    }
    if (stream_) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
  }

  // `call` returns `code`, enqueues nothing and writes nothing; `text` (if any) is in the message.
  void Rejected(HcclResult code, const std::function<HcclResult()>& call, const std::string& what,
                const char* text = nullptr, HcclComm comm = nullptr) {
    HcclResult got = call();
    EXPECT_EQ(got, code) << what << ": " << aclGetRecentErrMsg();
    if (text && got == code && code != HCCL_SUCCESS) {
      EXPECT_NE(std::string(aclGetRecentErrMsg()).find(text), std::string::npos)
          << what << ": message lacks '" << text << "': " << aclGetRecentErrMsg();
    }
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
    EXPECT_EQ(aclrtSynchronizeStream(stream2_), ACL_SUCCESS) << what;
    EXPECT_TRUE(send_.Unchanged()) << what << ": sendBuf written";
    EXPECT_TRUE(recv_.Unchanged()) << what << ": recvBuf written";
    EXPECT_TRUE(small_.Unchanged()) << what << ": small buffer written";
    HcclResult async = HCCL_E_INTERNAL;
    EXPECT_EQ(HcclGetCommAsyncError(comm ? comm : comm_, &async), HCCL_SUCCESS);
    EXPECT_EQ(async, HCCL_SUCCESS) << what << ": a rejected call left an async error";
  }
  // A 1-rank call that passes every check.
  void Accepted(const std::function<HcclResult()>& call, const std::string& what) {
    HcclResult got = call();
    if (got == HCCL_E_NOT_SUPPORT) {
      EXPECT_NE(std::string(aclGetRecentErrMsg()).find("not implemented"), std::string::npos)
          << what << ": rejected: " << aclGetRecentErrMsg();
    } else {
      EXPECT_EQ(got, HCCL_SUCCESS) << what << ": " << aclGetRecentErrMsg();
      EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
    }
  }

  HcclComm comm_ = nullptr;
  aclrtStream stream_ = nullptr;
  HcclComm comm2_[2] = {nullptr, nullptr};  // rank 1 is never called with valid arguments
  aclrtStream stream2_ = nullptr;
  GuardedBuf send_, recv_, small_;
};

// ---- HcclAllGatherV: recvCounts, recvDispls, comm, stream; sendBuf; sendCount; dtype; entries;
// all-zero; recvBuf; own count; then hostccl's ----

TEST_F(VArgCheck, AllGatherVInHcclOrder) {
  uint64_t c1[] = {4}, d1[] = {0};
  auto G = [&](void* s, uint64_t n, void* r, const uint64_t* c, const uint64_t* d, HcclDataType t, HcclComm cm,
               aclrtStream st) { return [=] { return HcclAllGatherV(s, n, r, c, d, t, cm, st); }; };
  Rejected(HCCL_E_PTR, G(send_.ptr, 4, recv_.ptr, nullptr, d1, F32, comm_, stream_), "null recvCounts", "recvCounts");
  Rejected(HCCL_E_PTR, G(send_.ptr, 4, recv_.ptr, c1, nullptr, F32, comm_, stream_), "null recvDispls", "recvDispls");
  Rejected(HCCL_E_PTR, G(send_.ptr, 4, recv_.ptr, c1, d1, F32, nullptr, stream_), "null comm", "comm");
  Rejected(HCCL_E_PTR, G(send_.ptr, 4, recv_.ptr, c1, d1, F32, comm_, nullptr), "null stream", "stream");
  Rejected(HCCL_E_PTR, G(nullptr, 4, recv_.ptr, c1, d1, F32, comm_, stream_), "null sendBuf with data", "sendBuf");
  // count before dtype; dtype before the entries' range; entries before the all-zero shortcut.
  Rejected(HCCL_E_PARA, G(send_.ptr, kMax + 1, recv_.ptr, c1, d1, AsDtype(255), comm_, stream_), "huge sendCount + bad dtype");
  uint64_t huge[] = {kMax + 1};
  Rejected(HCCL_E_NOT_SUPPORT, G(send_.ptr, 4, recv_.ptr, huge, d1, AsDtype(255), comm_, stream_), "bad dtype + huge entry");
  uint64_t zero[] = {0};
  Rejected(HCCL_E_PARA, G(send_.ptr, 4, recv_.ptr, huge, d1, F32, comm_, stream_), "huge entry", "recvCounts[0]");
  // All entries zero: success before the recvBuf and own-count checks (sendCount 4 != 0 too).
  Rejected(HCCL_SUCCESS, G(send_.ptr, 4, nullptr, zero, d1, F32, comm_, stream_), "all-zero recvCounts");
  Rejected(HCCL_E_PTR, G(send_.ptr, 4, nullptr, c1, d1, F32, comm_, stream_), "null recvBuf", "recvBuf");
  Rejected(HCCL_E_PARA, G(send_.ptr, 3, recv_.ptr, c1, d1, F32, comm_, stream_), "sendCount != recvCounts[r]",
           "recvCounts[0]");
  Rejected(HCCL_E_PARA, G(send_.ptr, 4, send_.ptr, c1, d1, F32, comm_, stream_), "sendBuf == recvBuf", "same address");
  Accepted(G(send_.ptr, 4, recv_.ptr, c1, d1, F32, comm_, stream_), "valid");
  Accepted(G(send_.ptr, 4, small_.ptr, c1, d1, F32, comm_, stream_), "recvBuf of 32 bytes for 16");
}

TEST_F(VArgCheck, AllGatherVExtentsAndOverlaps) {
  // Two ranks, called as rank 0: recvCounts {4, 4}.
  uint64_t c[] = {4, 4};
  auto G = [&](void* s, void* r, const uint64_t* d, HcclDataType t = F32) {
    return [=, this] { return HcclAllGatherV(s, 4, r, c, d, t, comm2_[0], stream2_); };
  };
  uint64_t overlap[] = {0, 3};
  Rejected(HCCL_E_PARA, G(send_.ptr, recv_.ptr, overlap), "receive blocks overlap", "overlap", comm2_[0]);
  uint64_t same[] = {8, 8};
  Rejected(HCCL_E_PARA, G(send_.ptr, recv_.ptr, same), "receive blocks identical", "blocks 0", comm2_[0]);
  uint64_t wrap[] = {0, UINT64_MAX - 2};
  Rejected(HCCL_E_PARA, G(send_.ptr, recv_.ptr, wrap), "displacement + count overflows", "overflows", comm2_[0]);
  uint64_t far[] = {4, 0};  // extent 8 elements = 32 bytes: fits small_ exactly; 9 does not
  uint64_t farther[] = {5, 0};
  Rejected(HCCL_E_PARA, G(send_.ptr, small_.ptr, farther), "recvBuf smaller than the extent", "device buffer", comm2_[0]);
  Rejected(HCCL_E_PARA, G(recv_.at(16), recv_.ptr, far), "sendBuf inside recvBuf's extent", "overlap", comm2_[0]);
  Rejected(HCCL_E_PARA, G(send_.at(2), recv_.ptr, far), "misaligned sendBuf", "aligned", comm2_[0]);
}

// ---- HcclReduceScatterV: stream, sendCounts, sendDispls, comm; recvBuf; recvCount; dtype; op;
// entries; all-zero; sendBuf; own count; reducible ----

TEST_F(VArgCheck, ReduceScatterVInHcclOrder) {
  uint64_t c1[] = {4}, d1[] = {0}, zero[] = {0}, huge[] = {kMax + 1};
  auto R = [&](void* s, const uint64_t* c, const uint64_t* d, void* r, uint64_t n, int t, int op, HcclComm cm,
               aclrtStream st) {
    return [=] { return HcclReduceScatterV(s, c, d, r, n, AsDtype(t), AsOp(op), cm, st); };
  };
  Rejected(HCCL_E_PTR, R(send_.ptr, nullptr, d1, recv_.ptr, 4, 4, 0, comm_, stream_), "null sendCounts", "sendCounts");
  Rejected(HCCL_E_PTR, R(send_.ptr, c1, nullptr, recv_.ptr, 4, 4, 0, comm_, stream_), "null sendDispls", "sendDispls");
  Rejected(HCCL_E_PTR, R(send_.ptr, c1, d1, recv_.ptr, 4, 4, 0, nullptr, stream_), "null comm", "comm");
  Rejected(HCCL_E_PTR, R(send_.ptr, c1, d1, recv_.ptr, 4, 4, 0, comm_, nullptr), "null stream", "stream");
  Rejected(HCCL_E_PTR, R(send_.ptr, c1, d1, nullptr, 4, 4, 0, comm_, stream_), "null recvBuf with data", "recvBuf");
  Rejected(HCCL_E_PARA, R(send_.ptr, c1, d1, recv_.ptr, kMax + 1, 255, 9, comm_, stream_), "huge recvCount + bad dtype");
  Rejected(HCCL_E_NOT_SUPPORT, R(send_.ptr, huge, d1, recv_.ptr, 4, 4, 9, comm_, stream_), "bad op + huge entry", "op");
  Rejected(HCCL_E_PARA, R(send_.ptr, huge, d1, recv_.ptr, 4, 4, 0, comm_, stream_), "huge entry", "sendCounts[0]");
  // int128 passes the base dtype check: all-zero succeeds; with data it is rejected last.
  Rejected(HCCL_SUCCESS, R(nullptr, zero, d1, recv_.ptr, 4, 12, 0, comm_, stream_), "all-zero sendCounts, int128");
  Rejected(HCCL_E_PTR, R(nullptr, c1, d1, recv_.ptr, 4, 4, 0, comm_, stream_), "null sendBuf", "sendBuf");
  Rejected(HCCL_E_PARA, R(send_.ptr, c1, d1, recv_.ptr, 3, 12, 0, comm_, stream_), "own count before reducible",
           "sendCounts[0]");
  Rejected(HCCL_E_NOT_SUPPORT, R(send_.ptr, c1, d1, recv_.ptr, 4, 12, 0, comm_, stream_), "int128 not reducible",
           "reducible");
  Rejected(HCCL_E_PARA, R(send_.ptr, c1, d1, send_.ptr, 4, 4, 0, comm_, stream_), "sendBuf == recvBuf", "same address");
  Accepted(R(send_.ptr, c1, d1, recv_.ptr, 4, 4, 0, comm_, stream_), "valid");
}

TEST_F(VArgCheck, ReduceScatterVSourceBlocksMayOverlap) {
  uint64_t c[] = {4, 4}, d[] = {0, 2};  // overlapping source blocks are only read: fine
  // As rank 0 of two with a too-small recvBuf: the check passes the overlap and stops at the size,
  // so nothing is enqueued on the 2-rank communicator.
  Rejected(HCCL_E_PARA, [&] { return HcclReduceScatterV(send_.ptr, c, d, small_.at(24), 4, F32, SUM, comm2_[0], stream2_); },
           "recvBuf too small", "device buffer", comm2_[0]);
  uint64_t far[] = {0, 1021};  // extent 1025 fp32 > 4096 bytes
  Rejected(HCCL_E_PARA, [&] { return HcclReduceScatterV(send_.ptr, c, far, recv_.ptr, 4, F32, SUM, comm2_[0], stream2_); },
           "sendBuf smaller than the extent", "device buffer", comm2_[0]);
}

// ---- HcclAlltoAll: both counts zero; sendBuf, recvBuf; counts equal; types equal; stream, comm;
// sendBuf == recvBuf; count range; types ----

TEST_F(VArgCheck, AlltoAllInHcclOrder) {
  auto A = [&](void* s, uint64_t sc, int st, void* r, uint64_t rc, int rt, HcclComm cm, aclrtStream str) {
    return [=] { return HcclAlltoAll(s, sc, AsDtype(st), r, rc, AsDtype(rt), cm, str); };
  };
  Rejected(HCCL_SUCCESS, A(nullptr, 0, 255, nullptr, 0, 255, nullptr, nullptr), "both counts 0");
  Rejected(HCCL_E_PTR, A(nullptr, 4, 4, recv_.ptr, 4, 4, comm_, stream_), "null sendBuf", "sendBuf");
  Rejected(HCCL_E_PTR, A(send_.ptr, 0, 4, nullptr, 4, 4, comm_, stream_), "null recvBuf, sendCount 0", "recvBuf");
  Rejected(HCCL_E_PARA, A(send_.ptr, 4, 4, recv_.ptr, 5, 4, comm_, nullptr), "counts differ + null stream", "recvCount");
  Rejected(HCCL_E_PARA, A(send_.ptr, 4, 4, recv_.ptr, 4, 2, nullptr, stream_), "types differ + null comm", "recvType");
  Rejected(HCCL_E_PTR, A(send_.ptr, 4, 4, recv_.ptr, 4, 4, comm_, nullptr), "null stream", "stream");
  Rejected(HCCL_E_PTR, A(send_.ptr, 4, 4, recv_.ptr, 4, 4, nullptr, stream_), "null comm", "comm");
  Rejected(HCCL_E_PARA, A(send_.ptr, kMax + 1, 255, send_.ptr, kMax + 1, 255, comm_, stream_), "same buffer first",
           "same address");
  Rejected(HCCL_E_PARA, A(send_.ptr, kMax + 1, 255, recv_.ptr, kMax + 1, 255, comm_, stream_), "count before dtype",
           "sendCount");
  Rejected(HCCL_E_NOT_SUPPORT, A(send_.ptr, 4, 255, recv_.ptr, 4, 255, comm_, stream_), "bad dtype", "sendType");
  Rejected(HCCL_E_PARA, A(send_.ptr, 9, 4, small_.ptr, 9, 4, comm_, stream_), "recvBuf too small", "device buffer");
  Rejected(HCCL_E_PARA, A(send_.ptr, 8, 4, send_.at(16), 8, 4, comm_, stream_), "buffers overlap", "overlap");
  Accepted(A(send_.ptr, 8, 4, small_.ptr, 8, 4, comm_, stream_), "valid, recvBuf exactly n x count");
}

// ---- HcclAlltoAllV: the four arrays, stream, comm; sendBuf == recvBuf; entries; NULL buffers
// with data; types; then element sizes, overlapping receive blocks, extents ----

TEST_F(VArgCheck, AlltoAllVInHcclOrder) {
  uint64_t c1[] = {4}, d1[] = {0}, zero[] = {0}, huge[] = {kMax + 1};
  auto V = [&](void* s, const uint64_t* sc, const uint64_t* sd, int st, void* r, const uint64_t* rc,
               const uint64_t* rd, int rt, HcclComm cm, aclrtStream str) {
    return [=] { return HcclAlltoAllV(s, sc, sd, AsDtype(st), r, rc, rd, AsDtype(rt), cm, str); };
  };
  Rejected(HCCL_E_PTR, V(send_.ptr, nullptr, d1, 4, recv_.ptr, c1, d1, 4, comm_, stream_), "null sendCounts", "sendCounts");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, nullptr, 4, recv_.ptr, c1, d1, 4, comm_, stream_), "null sdispls", "sdispls");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, d1, 4, recv_.ptr, nullptr, d1, 4, comm_, stream_), "null recvCounts", "recvCounts");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, d1, 4, recv_.ptr, c1, nullptr, 4, comm_, stream_), "null rdispls", "rdispls");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, d1, 4, recv_.ptr, c1, d1, 4, comm_, nullptr), "null stream", "stream");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, d1, 4, recv_.ptr, c1, d1, 4, nullptr, stream_), "null comm", "comm");
  Rejected(HCCL_E_PARA, V(send_.ptr, huge, d1, 255, send_.ptr, c1, d1, 255, comm_, stream_), "same buffer first",
           "same address");
  Rejected(HCCL_E_PARA, V(nullptr, huge, d1, 255, recv_.ptr, c1, d1, 4, comm_, stream_), "entry before null + dtype",
           "sendCounts[0]");
  Rejected(HCCL_E_PARA, V(send_.ptr, c1, d1, 4, recv_.ptr, huge, d1, 4, comm_, stream_), "huge recv entry", "recvCounts[0]");
  Rejected(HCCL_E_PTR, V(nullptr, c1, d1, 255, recv_.ptr, c1, d1, 4, comm_, stream_), "null sendBuf before dtype", "sendBuf");
  Rejected(HCCL_E_PTR, V(send_.ptr, c1, d1, 4, nullptr, c1, d1, 4, comm_, stream_), "null recvBuf", "recvBuf");
  Rejected(HCCL_E_NOT_SUPPORT, V(send_.ptr, c1, d1, 255, recv_.ptr, c1, d1, 4, comm_, stream_), "bad sendType", "sendType");
  Rejected(HCCL_E_NOT_SUPPORT, V(send_.ptr, c1, d1, 4, recv_.ptr, c1, d1, 255, comm_, stream_), "bad recvType", "recvType");
  Rejected(HCCL_E_PARA, V(send_.ptr, c1, d1, 4, recv_.ptr, c1, d1, 3, comm_, stream_), "fp32 -> fp16: sizes differ", "size");
  uint64_t d5[] = {5};  // extent 9 fp32 = 36 bytes
  Rejected(HCCL_E_PARA, V(send_.ptr, c1, d1, 4, small_.ptr, c1, d5, 4, comm_, stream_), "recvBuf too small",
           "device buffer");
  // No all-zero shortcut, but NULL buffers are fine without data; same-size types pair.
  Accepted(V(nullptr, zero, d1, 4, nullptr, zero, d1, 4, comm_, stream_), "all zero, NULL buffers");
  Accepted(V(send_.ptr, c1, d1, 4, recv_.ptr, c1, d1, 2, comm_, stream_), "fp32 -> int32 (same size)");
  (void)F16;
  (void)I32;
}

TEST_F(VArgCheck, AlltoAllVReceiveBlocksMustNotOverlap) {
  uint64_t c[] = {4, 4}, packed[] = {0, 4}, overlap[] = {0, 2};
  Rejected(HCCL_E_PARA, [&] {
    return HcclAlltoAllV(send_.ptr, c, packed, F32, recv_.ptr, c, overlap, F32, comm2_[0], stream2_);
  }, "receive blocks overlap", "overlap", comm2_[0]);
  // Overlapping send blocks are only read: the check goes on to the size of recvBuf.
  Rejected(HCCL_E_PARA, [&] {
    return HcclAlltoAllV(send_.ptr, c, overlap, F32, small_.at(8), c, packed, F32, comm2_[0], stream2_);
  }, "send blocks overlap, recvBuf too small", "device buffer", comm2_[0]);
}

// ---- HcclAlltoAllVC: matrix, comm, stream; sendBuf == recvBuf; entries (the whole matrix);
// NULL buffers with data (row r / column r); types ----

TEST_F(VArgCheck, AlltoAllVCInHcclOrder) {
  uint64_t m1[] = {4}, zero[] = {0}, huge[] = {kMax + 1};
  auto C = [&](void* s, const uint64_t* m, int st, void* r, int rt, HcclComm cm, aclrtStream str) {
    return [=] { return HcclAlltoAllVC(s, m, AsDtype(st), r, AsDtype(rt), cm, str); };
  };
  Rejected(HCCL_E_PTR, C(send_.ptr, nullptr, 4, recv_.ptr, 4, comm_, stream_), "null matrix", "sendCountMatrix");
  Rejected(HCCL_E_PTR, C(send_.ptr, m1, 4, recv_.ptr, 4, nullptr, stream_), "null comm", "comm");
  Rejected(HCCL_E_PTR, C(send_.ptr, m1, 4, recv_.ptr, 4, comm_, nullptr), "null stream", "stream");
  Rejected(HCCL_E_PARA, C(send_.ptr, huge, 255, send_.ptr, 255, comm_, stream_), "same buffer first", "same address");
  Rejected(HCCL_E_PARA, C(nullptr, huge, 255, recv_.ptr, 255, comm_, stream_), "entry before null + dtype",
           "sendCountMatrix[0]");
  Rejected(HCCL_E_PTR, C(nullptr, m1, 255, recv_.ptr, 4, comm_, stream_), "null sendBuf before dtype", "sendBuf");
  Rejected(HCCL_E_NOT_SUPPORT, C(send_.ptr, m1, 4, recv_.ptr, 255, comm_, stream_), "bad recvType", "recvType");
  Rejected(HCCL_E_PARA, C(send_.ptr, m1, 4, recv_.ptr, 1, comm_, stream_), "fp32 -> int16: sizes differ", "size");
  Accepted(C(nullptr, zero, 4, nullptr, 4, comm_, stream_), "all zero, NULL buffers");
  Accepted(C(send_.ptr, m1, 4, recv_.ptr, 4, comm_, stream_), "valid");
}

TEST_F(VArgCheck, AlltoAllVCUsesRowAndColumnOfThisRank) {
  // Two ranks, as rank 0: row 0 = {0, 0} (sends nothing), column 0 = {0, 9} (receives 9).
  uint64_t m[] = {0, 0, 9, 1};
  Rejected(HCCL_E_PTR, [&] { return HcclAlltoAllVC(nullptr, m, F32, nullptr, F32, comm2_[0], stream2_); },
           "column 0 has data: recvBuf required", "recvBuf", comm2_[0]);
  Rejected(HCCL_E_PARA, [&] { return HcclAlltoAllVC(nullptr, m, F32, small_.ptr, F32, comm2_[0], stream2_); },
           "9 fp32 into 32 bytes", "device buffer", comm2_[0]);
  // Any entry above the maximum, even in another rank's row.
  uint64_t bad[] = {1, 1, kMax + 1, 1};
  Rejected(HCCL_E_PARA, [&] { return HcclAlltoAllVC(send_.ptr, bad, F32, recv_.ptr, F32, comm2_[0], stream2_); },
           "entry of row 1", "sendCountMatrix[2]", comm2_[0]);
}

}  // namespace
