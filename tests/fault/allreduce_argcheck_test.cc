// HcclAllReduce argument checks (collectives.md 2.1: semantics.md §1 order without the root step):
// 1 count == 0 -> success before anything else; 2 NULL comm, sendBuf, recvBuf, stream -> E_PTR;
// 3 count range -> E_PARA; 4 dtype (reducible) -> E_NOT_SUPPORT; 5 op -> E_NOT_SUPPORT; 6 profile
// (AllReduce has its own per-chip rules: Atlas310P runs it, unlike HcclReduce); 8 alignment,
// device-buffer size, overlap -> E_PARA. Every rejection enqueues nothing and writes nothing;
// in place (sendBuf == recvBuf) is accepted and runs. Public API only.
#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kMaxCount = 0x7FFFFFFFFull;
constexpr size_t kBufBytes = 4096;

HcclDataType AsDtype(int v) {
  HcclDataType t;
  std::memcpy(&t, &v, sizeof(t));
  return t;
}
HcclReduceOp AsOp(int v) {
  HcclReduceOp o;
  std::memcpy(&o, &v, sizeof(o));
  return o;
}

struct DevBuf {
  void* ptr = nullptr;
  size_t bytes = 0;
  std::vector<unsigned char> guard;
  void Alloc(size_t n, unsigned char salt) {
    bytes = n;
    ASSERT_EQ(aclrtMalloc(&ptr, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    guard.resize(n);
    for (size_t i = 0; i < n; ++i) guard[i] = static_cast<unsigned char>(salt + i * 7);
    Reset();
  }
  void Reset() { ASSERT_EQ(aclrtMemcpy(ptr, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS); }
  bool Unchanged() const {
    std::vector<unsigned char> now(bytes);
    if (aclrtMemcpy(now.data(), bytes, ptr, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return false;
    return now == guard;
  }
  char* at(size_t off) const { return static_cast<char*>(ptr) + off; }
  ~DevBuf() {
    if (ptr) (void)aclrtFree(ptr);
  }
};

class AllReduceArgCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)aclInit(nullptr);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    int32_t one[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, one, &comm_), HCCL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    send_.Alloc(kBufBytes, 0x11);
    recv_.Alloc(kBufBytes, 0x5a);
    small_.Alloc(32, 0x77);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(HcclCommDestroy(comm_), HCCL_SUCCESS);
    }
    if (stream_) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
  }
  void ExpectRejected(HcclResult code, const std::function<HcclResult()>& call, const std::string& what) {
    EXPECT_EQ(call(), code) << what;
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << what;
    EXPECT_TRUE(send_.Unchanged()) << what << ": sendBuf written";
    EXPECT_TRUE(recv_.Unchanged()) << what << ": recvBuf written";
    EXPECT_TRUE(small_.Unchanged()) << what << ": small buffer written";
    HcclResult async = HCCL_E_INTERNAL;
    EXPECT_EQ(HcclGetCommAsyncError(comm_, &async), HCCL_SUCCESS);
    EXPECT_EQ(async, HCCL_SUCCESS) << what << ": a rejected call left an async error";
  }
  static std::function<HcclResult()> AR(void* s, void* r, uint64_t n, HcclDataType t, HcclReduceOp op, HcclComm c,
                                        aclrtStream st) {
    return [=] { return HcclAllReduce(s, r, n, t, op, c, st); };
  }
  HcclComm comm_ = nullptr;
  aclrtStream stream_ = nullptr;
  DevBuf send_, recv_, small_;
};

const auto F32 = HCCL_DATA_TYPE_FP32;
const auto SUM = HCCL_REDUCE_SUM;

TEST_F(AllReduceArgCheck, EachCheckHasItsCode) {
  ExpectRejected(HCCL_SUCCESS, AR(nullptr, nullptr, 0, AsDtype(255), AsOp(255), nullptr, nullptr), "count 0, all bad");
  ExpectRejected(HCCL_E_PTR, AR(send_.ptr, recv_.ptr, 4, F32, SUM, nullptr, stream_), "null comm");
  ExpectRejected(HCCL_E_PTR, AR(nullptr, recv_.ptr, 4, F32, SUM, comm_, stream_), "null sendBuf");
  ExpectRejected(HCCL_E_PTR, AR(send_.ptr, nullptr, 4, F32, SUM, comm_, stream_), "null recvBuf");
  ExpectRejected(HCCL_E_PTR, AR(send_.ptr, recv_.ptr, 4, F32, SUM, comm_, nullptr), "null stream");
  ExpectRejected(HCCL_E_PARA, AR(send_.ptr, recv_.ptr, kMaxCount + 1, F32, SUM, comm_, stream_), "count > max");
  for (int t : {12, 13, 14, 17, 255, -1})
    ExpectRejected(HCCL_E_NOT_SUPPORT, AR(send_.ptr, recv_.ptr, 4, AsDtype(t), SUM, comm_, stream_),
                   "dtype " + std::to_string(t));
  for (int op : {4, 255, -1})
    ExpectRejected(HCCL_E_NOT_SUPPORT, AR(send_.ptr, recv_.ptr, 4, F32, AsOp(op), comm_, stream_),
                   "op " + std::to_string(op));
  ExpectRejected(HCCL_E_PARA, AR(send_.at(2), recv_.ptr, 4, F32, SUM, comm_, stream_), "misaligned sendBuf");
  ExpectRejected(HCCL_E_PARA, AR(send_.ptr, recv_.at(1), 4, HCCL_DATA_TYPE_INT16, SUM, comm_, stream_),
                 "misaligned recvBuf");
  ExpectRejected(HCCL_E_PARA, AR(send_.ptr, send_.at(4), 4, F32, SUM, comm_, stream_), "partial overlap");
  ExpectRejected(HCCL_E_PARA, AR(small_.ptr, recv_.ptr, 9, F32, SUM, comm_, stream_), "sendBuf too small");
  ExpectRejected(HCCL_E_PARA, AR(send_.ptr, small_.ptr, 9, F32, SUM, comm_, stream_), "recvBuf too small");
}

TEST_F(AllReduceArgCheck, ChecksRunInHcclOrder) {
  ExpectRejected(HCCL_E_PTR, AR(nullptr, recv_.ptr, kMaxCount + 1, AsDtype(12), AsOp(9), comm_, stream_),
                 "null sendBuf before count, dtype, op");
  ExpectRejected(HCCL_E_PTR, AR(send_.ptr, recv_.ptr, kMaxCount + 1, F32, SUM, comm_, nullptr), "null stream + count");
  ExpectRejected(HCCL_E_PARA, AR(send_.ptr, recv_.ptr, kMaxCount + 1, AsDtype(255), AsOp(255), comm_, stream_),
                 "count before dtype and op");
  ExpectRejected(HCCL_E_NOT_SUPPORT, AR(send_.ptr, recv_.at(1), 4, AsDtype(13), AsOp(7), comm_, stream_),
                 "dtype before op and alignment");
  ExpectRejected(HCCL_E_NOT_SUPPORT, AR(send_.ptr, send_.at(4), 4, F32, AsOp(5), comm_, stream_), "op before overlap");
  // Size before overlap (a count in bytes makes neighbouring buffers look overlapping).
  ExpectRejected(HCCL_E_PARA, AR(small_.ptr, small_.at(4), 8, F32, SUM, comm_, stream_), "size and overlap");
}

TEST_F(AllReduceArgCheck, InPlaceIsAcceptedAndCorrect) {
  ASSERT_EQ(HcclAllReduce(send_.ptr, send_.ptr, 16, HCCL_DATA_TYPE_INT32, SUM, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_TRUE(send_.Unchanged()) << "1-rank in-place allreduce must leave the input as it is";
  ASSERT_EQ(HcclAllReduce(send_.ptr, recv_.ptr, 16, HCCL_DATA_TYPE_INT32, SUM, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  std::vector<unsigned char> got(64);
  ASSERT_EQ(aclrtMemcpy(got.data(), 64, recv_.ptr, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), send_.guard.begin())) << "1-rank allreduce is not a copy";
}

// Per-chip rules (collectives.md 5.3): Atlas310P has AllReduce (int8 int16 int32 fp16 fp32; no
// prod/max/min for int16) but not Reduce; Atlas910 reduces int8 int32 int64 fp16 fp32.
TEST(AllReduceProfiles, PerChipRules) {
  (void)aclInit(nullptr);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  void* buf = nullptr;
  ASSERT_EQ(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  struct Row { const char* soc; HcclDataType t; HcclReduceOp op; HcclResult want; };
  const Row rows[] = {
      {"Atlas310P", HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, HCCL_SUCCESS},
      {"Atlas310P", HCCL_DATA_TYPE_INT16, HCCL_REDUCE_SUM, HCCL_SUCCESS},
      {"Atlas310P", HCCL_DATA_TYPE_INT16, HCCL_REDUCE_MAX, HCCL_E_NOT_SUPPORT},
      {"Atlas310P", HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, HCCL_E_NOT_SUPPORT},
      {"Atlas310P", HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, HCCL_E_NOT_SUPPORT},
      {"Atlas910", HCCL_DATA_TYPE_INT64, HCCL_REDUCE_PROD, HCCL_SUCCESS},
      {"Atlas910", HCCL_DATA_TYPE_INT16, HCCL_REDUCE_SUM, HCCL_E_NOT_SUPPORT},
      {"AtlasA2", HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, HCCL_E_NOT_SUPPORT},
      {"AtlasA3", HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, HCCL_E_NOT_SUPPORT},
      {"Ascend950", HCCL_DATA_TYPE_UINT64, HCCL_REDUCE_PROD, HCCL_SUCCESS},
      {"Ascend950", HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM, HCCL_E_NOT_SUPPORT},
  };
  for (const Row& r : rows) {
    setenv("HOSTCCL_SOC", r.soc, 1);  // read when the communicator is created
    HcclComm comm = nullptr;
    int32_t one[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, one, &comm), HCCL_SUCCESS);
    EXPECT_EQ(HcclAllReduce(buf, buf, 4, r.t, r.op, comm, stream), r.want) << r.soc << " " << r.t << " " << r.op;
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    if (std::string(r.soc) == "Atlas310P") {
      EXPECT_EQ(HcclReduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, stream), HCCL_E_NOT_SUPPORT);
    }
    EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  }
  unsetenv("HOSTCCL_SOC");
  (void)aclrtFree(buf);
  (void)aclrtDestroyStream(stream);
}

}  // namespace
