// Buffer descriptors of the shared-memory plans (transport/shm/shm_group.cc Publish): a rank
// publishes its sendBuf/recvBuf descriptors only when they changed, so the peers keep the lines in
// their caches while the same buffers are used call after call. These cases make sure a changed
// buffer is always seen: ranks as processes free their buffers after each AlltoAll ("shm" plan,
// peers copy straight between the mapped buffers) and allocate new ones, which the allocator tends
// to place at the same address (a new allocation serial, another memfd), or keep one buffer and
// replace the other; every result is compared with the expected blocks.
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
using hostccl::test::RunOptions;
using hostccl::test::RunRanks;

constexpr uint64_t kCount = 16384;  // fp32 elements per block: 64 KiB, beyond the inline slot

// Element x of the block rank `from` sends to rank `to` in round `round`.
float Value(int round, int from, int to, uint64_t x) {
  return static_cast<float>((round * 7919 + from * 131 + to * 17 + static_cast<int>(x % 1000)) % 100003);
}

bool Fill(RankContext& c, void* send, int round) {
  std::vector<float> host(kCount * static_cast<uint64_t>(c.nranks));
  for (int to = 0; to < c.nranks; ++to)
    for (uint64_t x = 0; x < kCount; ++x) host[static_cast<uint64_t>(to) * kCount + x] = Value(round, c.rank, to, x);
  if (aclrtMemcpy(send, host.size() * sizeof(float), host.data(), host.size() * sizeof(float),
                  ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
    return c.Fail("aclrtMemcpy to the sendBuf failed");
  return true;
}

bool Check(RankContext& c, const void* recv, int round) {
  std::vector<float> host(kCount * static_cast<uint64_t>(c.nranks));
  if (aclrtMemcpy(host.data(), host.size() * sizeof(float), recv, host.size() * sizeof(float),
                  ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
    return c.Fail("aclrtMemcpy from the recvBuf failed");
  for (int from = 0; from < c.nranks; ++from)
    for (uint64_t x = 0; x < kCount; ++x) {
      const float want = Value(round, from, c.rank, x);
      const float got = host[static_cast<uint64_t>(from) * kCount + x];
      if (got != want)
        return c.Fail("round " + std::to_string(round) + ": element " + std::to_string(x) + " of rank " +
                      std::to_string(from) + "'s block is " + std::to_string(got) + ", expected " +
                      std::to_string(want));
    }
  return true;
}

bool AlltoAll(RankContext& c, void* send, void* recv) {
  if (HcclAlltoAll(send, kCount, HCCL_DATA_TYPE_FP32, recv, kCount, HCCL_DATA_TYPE_FP32, c.comm, c.stream) !=
          HCCL_SUCCESS ||
      aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
    return c.Fail(std::string("HcclAlltoAll failed: ") + aclGetRecentErrMsg());
  return true;
}

// Which buffers a rank allocates anew before each round.
enum Replace { kBoth, kSendOnly, kRecvOnly };

bool Rounds(RankContext& c, Replace replace) {
  const size_t bytes = kCount * sizeof(float) * static_cast<size_t>(c.nranks);
  void* send = nullptr;
  void* recv = nullptr;
  bool ok = true;
  for (int round = 0; round < 6 && ok; ++round) {
    // Every round replaces the chosen buffers (freed first, so the new one may take its place)
    // and runs two calls: the first publishes the new descriptors, the second repeats them.
    if (send != nullptr && replace != kRecvOnly) {
      (void)aclrtFree(send);
      send = nullptr;
    }
    if (recv != nullptr && replace != kSendOnly) {
      (void)aclrtFree(recv);
      recv = nullptr;
    }
    if ((send == nullptr && aclrtMalloc(&send, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) ||
        (recv == nullptr && aclrtMalloc(&recv, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS))
      return c.Fail("aclrtMalloc failed");
    for (int call = 0; call < 2 && ok; ++call) {
      const int r = 2 * round + call;
      ok = Fill(c, send, r) && AlltoAll(c, send, recv) && Check(c, recv, r);
    }
  }
  (void)aclrtFree(send);
  (void)aclrtFree(recv);
  return ok;
}

RunOptions ShmAlltoAll() {
  RunOptions o;
  o.env = {{"HOSTCCL_ALGO", "alltoall=shm"}};
  return o;
}

TEST(ShmBuffers, NewBuffersEveryRoundAreSeenByThePeers) {
  auto r = RunRanks(3, Mode::kProcesses, [](RankContext& c) { return Rounds(c, kBoth); }, ShmAlltoAll());
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ShmBuffers, ANewSendBufBesideTheSameRecvBuf) {
  auto r = RunRanks(2, Mode::kProcesses, [](RankContext& c) { return Rounds(c, kSendOnly); }, ShmAlltoAll());
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ShmBuffers, ANewRecvBufBesideTheSameSendBuf) {
  auto r = RunRanks(2, Mode::kProcesses, [](RankContext& c) { return Rounds(c, kRecvOnly); }, ShmAlltoAll());
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
