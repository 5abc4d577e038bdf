// Memory registered with a communicator (src/core/comm_memory.h, docs/memory_registration.md):
// - zero-copy ranges: HcclCommSetMemoryRange + aclrtMallocPhysical/aclrtMapMem +
//   HcclCommActivateCommMemory, then HcclAllReduce / HcclReduce with both buffers inside the
//   activated blocks, bit-exact, with ranks as threads and as processes (peers map the blocks);
// - symmetric windows: HcclCommSymWinRegister / Get / Deregister around an AllReduce in a window;
// - the checks: NULL pointers (E_PTR), reserved arguments, memory that was not reserved or mapped,
//   overlaps, unset with active memory, deactivate / deregister twice, a window larger than
//   hcclSymWinMaxMemSizePerRank; each failure leaves the registrations as they were.
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness/run_ranks.h"

namespace {

using hostccl::test::Mode;
using hostccl::test::RankContext;
using hostccl::test::RunRanks;

constexpr size_t kMiB = size_t{1} << 20;

#define EXPECT_CODE(want, call)                                                                       \
  do {                                                                                                \
    auto got_ = (call);                                                                               \
    if (static_cast<int>(got_) != static_cast<int>(want))                                             \
      return c.Fail(std::string(#call) + " returned " + std::to_string(static_cast<int>(got_)) +     \
                    ", expected " #want " (" + aclGetRecentErrMsg() + ")");                          \
  } while (0)

aclrtPhysicalMemProp DeviceProp() {
  aclrtPhysicalMemProp prop{};
  prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
  prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
  prop.memAttr = ACL_HBM_MEM_HUGE;
  int32_t dev = 0;
  (void)aclrtGetDevice(&dev);
  prop.location.id = static_cast<uint32_t>(dev);
  prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
  return prop;
}

// Fills n floats with values whose sum over ranks is exact in fp32, runs AllReduce(sum) from
// send to recv and checks every element bit for bit.
bool AllReduceCheck(RankContext& c, float* send, float* recv, size_t n) {
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>((c.rank + 1) * 8 + static_cast<int>(i % 1000));
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(send, n * 4, host.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_CODE(HCCL_SUCCESS, HcclAllReduce(send, recv, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c.comm, c.stream));
  EXPECT_CODE(ACL_SUCCESS, aclrtSynchronizeStream(c.stream));
  EXPECT_CODE(ACL_SUCCESS, aclrtMemcpy(host.data(), n * 4, recv, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
  const int rank_sum = c.nranks * (c.nranks + 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    float want = static_cast<float>(rank_sum * 8 + c.nranks * static_cast<int>(i % 1000));
    if (std::memcmp(&want, &host[i], 4) != 0)
      return c.Fail("element " + std::to_string(i) + ": " + std::to_string(host[i]) + " != " + std::to_string(want));
  }
  return true;
}

// One rank's zero-copy run: a 16 MiB range, two activated 4 MiB blocks (send, recv).
bool ZeroCopyBody(RankContext& c) {
  void* base = nullptr;
  EXPECT_CODE(ACL_SUCCESS, aclrtReserveMemAddress(&base, 16 * kMiB, 0, nullptr, 1));
  EXPECT_CODE(HCCL_SUCCESS, HcclCommSetMemoryRange(c.comm, base, 16 * kMiB, 0, 0));
  aclrtPhysicalMemProp prop = DeviceProp();
  aclrtDrvMemHandle h[2] = {nullptr, nullptr};
  char* blk[2] = {static_cast<char*>(base), static_cast<char*>(base) + 8 * kMiB};
  for (int i = 0; i < 2; ++i) {
    EXPECT_CODE(ACL_SUCCESS, aclrtMallocPhysical(&h[i], 4 * kMiB, &prop, 0));
    EXPECT_CODE(ACL_SUCCESS, aclrtMapMem(blk[i], 4 * kMiB, 0, h[i], 0));
    EXPECT_CODE(HCCL_SUCCESS, HcclCommActivateCommMemory(c.comm, blk[i], 4 * kMiB, 0, h[i], 0));
  }
  const size_t n = 4 * kMiB / 4 - 3;  // not a multiple of the rank count or of a slice
  if (!AllReduceCheck(c, reinterpret_cast<float*>(blk[0]), reinterpret_cast<float*>(blk[1]), n)) return false;
  // In place, inside one activated block.
  if (!AllReduceCheck(c, reinterpret_cast<float*>(blk[1]), reinterpret_cast<float*>(blk[1]), 1000)) return false;

  // Checks that fail and change nothing.
  EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, blk[1], 4 * kMiB, 0, 0));         // overlap
  EXPECT_CODE(HCCL_E_PARA, HcclCommUnsetMemoryRange(c.comm, base));                         // still active
  EXPECT_CODE(HCCL_E_PARA, HcclCommActivateCommMemory(c.comm, blk[0], 4 * kMiB, 0, h[0], 0));  // again
  EXPECT_CODE(HCCL_E_PARA, HcclCommActivateCommMemory(c.comm, blk[0] + 4 * kMiB, kMiB, 0, h[0], 0));  // unmapped
  EXPECT_CODE(HCCL_E_PARA, HcclCommActivateCommMemory(c.comm, blk[0], 8 * kMiB, 0, h[0], 0));  // past the map
  for (int i = 0; i < 2; ++i) {
    EXPECT_CODE(HCCL_SUCCESS, HcclCommDeactivateCommMemory(c.comm, blk[i]));
    EXPECT_CODE(HCCL_E_PARA, HcclCommDeactivateCommMemory(c.comm, blk[i]));  // twice
    EXPECT_CODE(ACL_SUCCESS, aclrtUnmapMem(blk[i]));
    EXPECT_CODE(ACL_SUCCESS, aclrtFreePhysical(h[i]));
  }
  EXPECT_CODE(HCCL_SUCCESS, HcclCommUnsetMemoryRange(c.comm, base));
  EXPECT_CODE(HCCL_E_PARA, HcclCommUnsetMemoryRange(c.comm, base));
  EXPECT_CODE(ACL_SUCCESS, aclrtReleaseMemAddress(base));
  return true;
}

// One rank's symmetric-window run: a 4 MiB window holding send and recv.
bool WindowBody(RankContext& c) {
  void* base = nullptr;
  aclrtDrvMemHandle h = nullptr;
  aclrtPhysicalMemProp prop = DeviceProp();
  EXPECT_CODE(ACL_SUCCESS, aclrtReserveMemAddress(&base, 8 * kMiB, 0, nullptr, 1));
  EXPECT_CODE(ACL_SUCCESS, aclrtMallocPhysical(&h, 4 * kMiB, &prop, 0));
  char* p = static_cast<char*>(base);
  HcclCommSymWindow win = nullptr, got = nullptr, other = nullptr;
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, p, 4 * kMiB, &win, 1));  // not mapped yet
  EXPECT_CODE(ACL_SUCCESS, aclrtMapMem(p, 4 * kMiB, 0, h, 0));
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, p, 4 * kMiB, &win, 0));      // flag
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, p, 4 * kMiB + 1, &win, 1));  // past the physical
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, p, 0, &win, 1));
  EXPECT_CODE(HCCL_E_PTR, HcclCommSymWinRegister(c.comm, p, 4 * kMiB, nullptr, 1));
  EXPECT_CODE(HCCL_SUCCESS, HcclCommSymWinRegister(c.comm, p, 4 * kMiB, &win, 1));
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, p + kMiB, kMiB, &other, 1));  // overlap
  size_t off = 1;
  EXPECT_CODE(HCCL_SUCCESS, HcclCommSymWinGet(c.comm, p + 2 * kMiB, 100, &got, &off));
  if (got != win || off != 2 * kMiB) return c.Fail("HcclCommSymWinGet: wrong handle or offset");
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinGet(c.comm, p + 2 * kMiB, 2 * kMiB + 1, &got, &off));  // past the end
  EXPECT_CODE(HCCL_E_PTR, HcclCommSymWinGet(c.comm, p, 100, &got, nullptr));
  float* send = reinterpret_cast<float*>(p);
  float* recv = reinterpret_cast<float*>(p + 2 * kMiB);
  if (!AllReduceCheck(c, send, recv, 2 * kMiB / 4)) return false;
  EXPECT_CODE(HCCL_SUCCESS, HcclCommSymWinDeregister(win));
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinDeregister(win));  // twice
  EXPECT_CODE(HCCL_E_PTR, HcclCommSymWinDeregister(nullptr));
  EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinGet(c.comm, p, 100, &got, &off));
  EXPECT_CODE(ACL_SUCCESS, aclrtUnmapMem(p));
  EXPECT_CODE(ACL_SUCCESS, aclrtFreePhysical(h));
  EXPECT_CODE(ACL_SUCCESS, aclrtReleaseMemAddress(base));
  return true;
}

struct Place {
  const char* name;
  Mode mode;
};
const Place kPlaces[] = {{"threads", Mode::kThreadsInitAll}, {"processes", Mode::kProcesses}};

class MemoryRegistration : public ::testing::TestWithParam<Place> {};

TEST_P(MemoryRegistration, ZeroCopyAllReduceInActivatedBlocks) {
  auto r = RunRanks(3, GetParam().mode, ZeroCopyBody);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST_P(MemoryRegistration, AllReduceInSymmetricWindow) {
  auto r = RunRanks(2, GetParam().mode, WindowBody);
  EXPECT_TRUE(r.ok) << r.message;
}

INSTANTIATE_TEST_SUITE_P(Places, MemoryRegistration, ::testing::ValuesIn(kPlaces),
                         [](const auto& info) { return std::string(info.param.name); });

// Argument checks on one rank: NULLs, reserved fields, memory that is not a reservation.
TEST(MemoryRegistrationChecks, ArgumentsAndUnreservedMemory) {
  auto r = RunRanks(1, Mode::kThreadsInitAll, [](RankContext& c) {
    void* dev = nullptr;
    EXPECT_CODE(ACL_SUCCESS, aclrtMalloc(&dev, kMiB, ACL_MEM_MALLOC_HUGE_FIRST));
    void* base = nullptr;
    EXPECT_CODE(ACL_SUCCESS, aclrtReserveMemAddress(&base, 4 * kMiB, 0, nullptr, 1));
    EXPECT_CODE(HCCL_E_PTR, HcclCommSetMemoryRange(nullptr, base, 4 * kMiB, 0, 0));
    EXPECT_CODE(HCCL_E_PTR, HcclCommSetMemoryRange(c.comm, nullptr, 4 * kMiB, 0, 0));
    EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, base, 0, 0, 0));
    EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, base, 4 * kMiB, 4096, 0));
    EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, base, 4 * kMiB, 0, 1));
    EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, base, 8 * kMiB, 0, 0));  // past the reservation
    EXPECT_CODE(HCCL_E_PARA, HcclCommSetMemoryRange(c.comm, dev, kMiB, 0, 0));       // aclrtMalloc memory
    EXPECT_CODE(HCCL_E_PARA, HcclCommUnsetMemoryRange(c.comm, base));                // never set
    EXPECT_CODE(HCCL_SUCCESS, HcclCommSetMemoryRange(c.comm, base, 4 * kMiB, 0, 0));
    EXPECT_CODE(HCCL_E_PTR, HcclCommActivateCommMemory(c.comm, base, kMiB, 0, nullptr, 0));
    EXPECT_CODE(HCCL_E_PARA, HcclCommActivateCommMemory(c.comm, base, kMiB, 0, dev, 0));  // not a handle
    HcclCommSymWindow win = nullptr;
    EXPECT_CODE(HCCL_E_PARA, HcclCommSymWinRegister(c.comm, dev, kMiB, &win, 1));  // not VMM memory
    EXPECT_CODE(HCCL_E_PTR, HcclCommSymWinGet(nullptr, base, 1, nullptr, nullptr));
    // A reservation released while still set is forgotten: the range can be set again.
    EXPECT_CODE(ACL_SUCCESS, aclrtReleaseMemAddress(base));
    EXPECT_CODE(ACL_SUCCESS, aclrtReserveMemAddress(&base, 4 * kMiB, 0, nullptr, 1));
    EXPECT_CODE(HCCL_SUCCESS, HcclCommSetMemoryRange(c.comm, base, 4 * kMiB, 0, 0));
    EXPECT_CODE(HCCL_SUCCESS, HcclCommUnsetMemoryRange(c.comm, base));
    EXPECT_CODE(ACL_SUCCESS, aclrtReleaseMemAddress(base));
    EXPECT_CODE(ACL_SUCCESS, aclrtFree(dev));
    return true;
  });
  EXPECT_TRUE(r.ok) << r.message;
}

// hcclSymWinMaxMemSizePerRank bounds a window (checked before the memory is looked at).
TEST(MemoryRegistrationChecks, WindowLargerThanConfiguredMaximum) {
  (void)aclInit(nullptr);  // ACL_ERROR_REPEAT_INITIALIZE when another test ran first
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  HcclRootInfo root;
  ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
  HcclCommConfig cfg;
  HcclCommConfigInit(&cfg);
  cfg.hcclSymWinMaxMemSizePerRank = 1;  // GB
  HcclComm comm = nullptr;
  ASSERT_EQ(HcclCommInitRootInfoConfig(1, &root, 0, &cfg, &comm), HCCL_SUCCESS);
  void* base = nullptr;
  ASSERT_EQ(aclrtReserveMemAddress(&base, 4 * kMiB, 0, nullptr, 1), ACL_SUCCESS);
  HcclCommSymWindow win = nullptr;
  EXPECT_EQ(HcclCommSymWinRegister(comm, base, (uint64_t{1} << 30) + 1, &win, 1), HCCL_E_PARA);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("hcclSymWinMaxMemSizePerRank"), std::string::npos)
      << aclGetRecentErrMsg();
  EXPECT_EQ(aclrtReleaseMemAddress(base), ACL_SUCCESS);
  EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
}

}  // namespace
