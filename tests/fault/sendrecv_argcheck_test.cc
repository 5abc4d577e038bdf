// Argument checks of HcclSend, HcclRecv and HcclBatchSendRecv in hostccl's order (collectives.md
// 2.12, 2.13; docs/semantics.md "Point-to-point"): Send/Recv: count 0 -> success; NULL comm, buf,
// stream -> E_PTR; count -> E_PARA; dtype -> E_NOT_SUPPORT; peer >= rankSize -> E_PARA; peer ==
// self -> E_NOT_SUPPORT; alignment -> E_PARA. BatchSendRecv: itemNum 0 -> success; NULL comm,
// stream, list -> E_PTR; per item type (E_PARA), NULL buf with count (E_PTR), count (E_PARA),
// dtype (E_NOT_SUPPORT), remoteRank (E_PARA); duplicates, unpaired or unequal self items (E_PARA).
// A rejected call enqueues nothing: the communicator still works afterwards.
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/run_ranks.h"

namespace {

using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunRanks;

constexpr uint64_t kTooMany = 0x800000000ull;
const auto kBadType = static_cast<HcclDataType>(255);

#define EXPECT_CODE(want, call)                                                                      \
  do {                                                                                               \
    HcclResult got_ = (call);                                                                        \
    if (got_ != (want)) return c.Fail(std::string(#call) + " returned " + std::to_string(got_) + ", expected " #want); \
  } while (0)

TEST(SendRecvArgCheck, SendAndRecvInOrder) {
  auto res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: the checks, not the memory, are tested here
    std::vector<float> buf(64);
    float* p = buf.data();
    const uint32_t peer = 1 - c.rank, self = c.rank;
    for (int recv = 0; recv < 2; ++recv) {
      auto call = [&](void* b, uint64_t n, HcclDataType t, uint32_t r, HcclComm comm, aclrtStream s) {
        return recv ? HcclRecv(b, n, t, r, comm, s) : HcclSend(b, n, t, r, comm, s);
      };
      EXPECT_CODE(HCCL_SUCCESS, call(nullptr, 0, kBadType, 99, nullptr, nullptr));  // count 0 first
      EXPECT_CODE(HCCL_E_PTR, call(p, 8, HCCL_DATA_TYPE_FP32, peer, nullptr, c.stream));
      EXPECT_CODE(HCCL_E_PTR, call(nullptr, 8, kBadType, 99, c.comm, c.stream));  // NULL before dtype, rank
      EXPECT_CODE(HCCL_E_PTR, call(p, 8, HCCL_DATA_TYPE_FP32, peer, c.comm, nullptr));
      EXPECT_CODE(HCCL_E_PARA, call(p, kTooMany, kBadType, 99, c.comm, c.stream));  // count before dtype
      EXPECT_CODE(HCCL_E_NOT_SUPPORT, call(p, 8, kBadType, 99, c.comm, c.stream));  // dtype before rank
      EXPECT_CODE(HCCL_E_PARA, call(p, 8, HCCL_DATA_TYPE_FP32, 2, c.comm, c.stream));
      EXPECT_CODE(HCCL_E_NOT_SUPPORT, call(p, 8, HCCL_DATA_TYPE_FP32, self, c.comm, c.stream));
      EXPECT_CODE(HCCL_E_PARA, call(reinterpret_cast<char*>(p) + 1, 8, HCCL_DATA_TYPE_FP32, peer, c.comm, c.stream));
    }
    // Nothing was enqueued: a matched pair still works and moves the right bytes.
    for (int i = 0; i < 64; ++i) buf[static_cast<size_t>(i)] = c.rank == 0 ? static_cast<float>(i) : -1.0f;
    EXPECT_CODE(HCCL_SUCCESS, c.rank == 0 ? HcclSend(p, 64, HCCL_DATA_TYPE_FP32, 1, c.comm, c.stream)
                                          : HcclRecv(p, 64, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream));
    if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) return c.Fail(aclGetRecentErrMsg());
    for (int i = 0; i < 64; ++i)
      if (buf[static_cast<size_t>(i)] != static_cast<float>(i)) return c.Fail("wrong data after the rejected calls");
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

TEST(SendRecvArgCheck, BatchInOrder) {
  auto res = RunRanks(2, Mode::kThreadsInitAll, [](RankContext& c) {
    if (!AllowHostBuffers(c)) return false;  // host vectors: the checks, not the memory, are tested here
    std::vector<float> a(64), b(64);
    const uint32_t peer = 1 - c.rank, self = c.rank;
    auto item = [](HcclSendRecvType t, void* p, uint64_t n, HcclDataType d, uint32_t r) {
      return HcclSendRecvItem{t, p, n, d, r};
    };
    auto batch = [&](std::vector<HcclSendRecvItem> v) {
      return HcclBatchSendRecv(v.data(), static_cast<uint32_t>(v.size()), c.comm, c.stream);
    };
    EXPECT_CODE(HCCL_SUCCESS, HcclBatchSendRecv(nullptr, 0, nullptr, nullptr));
    HcclSendRecvItem one = item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, peer);
    EXPECT_CODE(HCCL_E_PTR, HcclBatchSendRecv(&one, 1, nullptr, c.stream));
    EXPECT_CODE(HCCL_E_PTR, HcclBatchSendRecv(&one, 1, c.comm, nullptr));
    EXPECT_CODE(HCCL_E_PTR, HcclBatchSendRecv(nullptr, 1, c.comm, c.stream));
    // Per item, in list order, each check before the next.
    EXPECT_CODE(HCCL_E_PARA, batch({item(static_cast<HcclSendRecvType>(7), nullptr, kTooMany, kBadType, 99)}));
    EXPECT_CODE(HCCL_E_PTR, batch({item(HCCL_SEND, nullptr, kTooMany, kBadType, 99)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), kTooMany, kBadType, 99)}));
    EXPECT_CODE(HCCL_E_NOT_SUPPORT, batch({item(HCCL_SEND, a.data(), 8, kBadType, 99)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, 2)}));
    EXPECT_CODE(HCCL_E_PTR, batch({item(HCCL_RECV, b.data(), 8, HCCL_DATA_TYPE_FP32, peer),
                                   item(HCCL_SEND, nullptr, 8, HCCL_DATA_TYPE_FP32, peer)}));
    // Duplicates, self pairing.
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, peer),
                                    item(HCCL_SEND, b.data(), 8, HCCL_DATA_TYPE_FP32, peer)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, self)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, self),
                                    item(HCCL_RECV, b.data(), 9, HCCL_DATA_TYPE_FP32, self)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, a.data(), 8, HCCL_DATA_TYPE_FP32, self),
                                    item(HCCL_RECV, b.data(), 8, HCCL_DATA_TYPE_INT32, self)}));
    EXPECT_CODE(HCCL_E_PARA, batch({item(HCCL_SEND, reinterpret_cast<char*>(a.data()) + 2, 8, HCCL_DATA_TYPE_FP32, peer)}));
    // A NULL buf with count 0 is a no-op item that still pairs; self items copy.
    for (int i = 0; i < 64; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i + 100 * c.rank);
    EXPECT_CODE(HCCL_SUCCESS, batch({item(HCCL_SEND, nullptr, 0, HCCL_DATA_TYPE_FP32, peer),
                                     item(HCCL_RECV, nullptr, 0, HCCL_DATA_TYPE_FP32, peer),
                                     item(HCCL_RECV, b.data(), 64, HCCL_DATA_TYPE_FP32, self),
                                     item(HCCL_SEND, a.data(), 64, HCCL_DATA_TYPE_FP32, self)}));
    if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) return c.Fail(aclGetRecentErrMsg());
    if (b != a) return c.Fail("the self items did not copy");
    return true;
  });
  EXPECT_TRUE(res.ok) << res.message;
}

}  // namespace
