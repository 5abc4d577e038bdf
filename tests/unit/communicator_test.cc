// Communicator lifecycle through the public API, ranks as threads: creation paths, queries,
// names, sub-communicators, rank tables, a missing rank, and leak-free create/destroy cycles.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hccl/hccl.h"

namespace {

int CountDir(const char* path) {
  int n = 0;
  if (DIR* d = opendir(path)) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

long RssKb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

// Runs fn(rank) on n threads, each with aclrtSetDevice(rank).
void OnThreads(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      aclrtSetDevice(r);
      fn(r);
      aclrtResetDevice(r);
    });
  for (auto& t : ts) t.join();
}

std::vector<HcclComm> InitAll(int n) {
  std::vector<int32_t> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  std::vector<HcclComm> comms(n, nullptr);
  EXPECT_EQ(HcclCommInitAll(n, devs.data(), comms.data()), HCCL_SUCCESS);
  return comms;
}

void BarrierAll(const std::vector<HcclComm>& comms) {
  OnThreads(static_cast<int>(comms.size()), [&](int r) {
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(HcclBarrier(comms[r], s), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    aclrtDestroyStream(s);
  });
}

class CommTest : public ::testing::TestWithParam<int> {};

TEST_P(CommTest, InitAllReportsRankSizeNameAndPassesBarrier) {
  const int n = GetParam();
  auto comms = InitAll(n);
  for (int r = 0; r < n; ++r) {
    uint32_t size = 0, rank = 99;
    ASSERT_EQ(HcclGetRankSize(comms[r], &size), HCCL_SUCCESS);
    ASSERT_EQ(HcclGetRankId(comms[r], &rank), HCCL_SUCCESS);
    EXPECT_EQ(size, static_cast<uint32_t>(n));
    EXPECT_EQ(rank, static_cast<uint32_t>(r));
    char name[128] = {};
    ASSERT_EQ(HcclGetCommName(comms[r], name), HCCL_SUCCESS);
    EXPECT_GT(std::strlen(name), 0u);
  }
  BarrierAll(comms);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

TEST_P(CommTest, ThreadsEachCallInitRootInfo) {
  const int n = GetParam();
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  EXPECT_NE(info.internal[0], '\0');  // NUL-terminated IP text at offset 0
  std::vector<HcclComm> comms(n, nullptr);
  OnThreads(n, [&](int r) { EXPECT_EQ(HcclCommInitRootInfo(n, &info, r, &comms[r]), HCCL_SUCCESS); });
  char name0[128] = {}, name1[128] = {};
  ASSERT_EQ(HcclGetCommName(comms[0], name0), HCCL_SUCCESS);
  ASSERT_EQ(HcclGetCommName(comms[n - 1], name1), HCCL_SUCCESS);
  EXPECT_STREQ(name0, name1);  // the root info's identifier
  BarrierAll(comms);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}


TEST(Comm, ConfigNameAndHandleWithName) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<HcclComm> comms(2, nullptr);
  OnThreads(2, [&](int r) {
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    cfg.hcclBufferSize = 64;
    std::strcpy(cfg.hcclCommName, r == 0 ? "named_comm" : "named_comm");
    EXPECT_EQ(HcclCommInitRootInfoConfig(2, &info, r, &cfg, &comms[r]), HCCL_SUCCESS);
  });
  char name[128] = {};
  ASSERT_EQ(HcclGetCommName(comms[0], name), HCCL_SUCCESS);
  EXPECT_STREQ(name, "named_comm");
  HcclComm found = nullptr;
  EXPECT_EQ(HcclCommGetHandleWithName("named_comm", &found), HCCL_SUCCESS);
  EXPECT_NE(found, nullptr);
  EXPECT_EQ(HcclCommGetHandleWithName("no_such_comm", &found), HCCL_E_NOT_FOUND);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

TEST(Comm, BadConfigMagicIsRejected) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  HcclCommConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));  // not initialised with HcclCommConfigInit
  HcclComm comm = nullptr;
  EXPECT_EQ(HcclCommInitRootInfoConfig(1, &info, 0, &cfg, &comm), HCCL_E_PARA);
}

TEST(Comm, InitChecks) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  HcclComm comm = nullptr;
  EXPECT_EQ(HcclCommInitRootInfo(0, &info, 0, &comm), HCCL_E_PARA);
  EXPECT_EQ(HcclCommInitRootInfo(2, &info, 2, &comm), HCCL_E_PARA);
  EXPECT_EQ(HcclCommInitRootInfo(2, nullptr, 0, &comm), HCCL_E_PTR);
  EXPECT_EQ(HcclCommInitRootInfo(2, &info, 0, nullptr), HCCL_E_PTR);
  HcclRootInfo garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_EQ(HcclCommInitRootInfo(1, &garbage, 0, &comm), HCCL_E_PARA);
  int32_t dup[2] = {0, 0};
  HcclComm two[2];
  EXPECT_EQ(HcclCommInitAll(2, dup, two), HCCL_E_PARA);
  EXPECT_EQ(HcclCommInitAll(0, dup, two), HCCL_E_PARA);
  EXPECT_EQ(HcclCommInitAll(2, nullptr, two), HCCL_E_PTR);
}

TEST(Comm, DestroyedHandleIsRecognised) {
  auto comms = InitAll(1);
  ASSERT_EQ(HcclCommDestroy(comms[0]), HCCL_SUCCESS);
  uint32_t size = 0;
  EXPECT_EQ(HcclGetRankSize(comms[0], &size), HCCL_E_PARA);
  EXPECT_EQ(HcclCommDestroy(comms[0]), HCCL_E_PARA);
  EXPECT_EQ(HcclCommDestroy(nullptr), HCCL_E_PTR);
}

TEST(Comm, MissingRankFailsWithinConnectTimeoutNamingIt) {
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", "1500", 1);
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<HcclResult> res(3, HCCL_SUCCESS);
  std::vector<std::string> msgs(3);
  auto start = std::chrono::steady_clock::now();
  OnThreads(2, [&](int r) {  // rank 2 of 3 never arrives
    HcclComm c = nullptr;
    res[r] = HcclCommInitRootInfo(3, &info, r, &c);
    msgs[r] = aclGetRecentErrMsg();
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("HOSTCCL_CONNECT_TIMEOUT_MS");
  EXPECT_NE(res[0], HCCL_SUCCESS);
  EXPECT_NE(res[1], HCCL_SUCCESS);
  EXPECT_LT(secs, 30.0);
  for (int r = 0; r < 2; ++r) EXPECT_NE(msgs[r].find("2"), std::string::npos) << msgs[r];
}

// Thread ranks' sub-communicators set their shared segment up without waiting for each other:
// one thread creates every rank's sub-communicator in turn, last rank first, and then drives an
// AllReduce on all of them (a creation that waited for its peers would hang here until the
// connect timeout).
TEST(Comm, OneThreadCreatesEveryThreadRanksSubCommunicator) {
  const int n = 3;
  auto comms = InitAll(n);
  std::vector<HcclComm> subs(n, nullptr);
  uint32_t all[3] = {0, 1, 2};
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = n - 1; r >= 0; --r)
    ASSERT_EQ(HcclCreateSubCommConfig(&comms[r], n, all, 5, static_cast<uint32_t>(r), nullptr, &subs[r]),
              HCCL_SUCCESS) << "rank " << r;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  std::vector<aclrtStream> streams(n);
  std::vector<int32_t*> bufs(n);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&streams[r]), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&bufs[r]), 2 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    const int32_t mine = r + 1;
    ASSERT_EQ(aclrtMemcpy(bufs[r], sizeof(mine), &mine, sizeof(mine), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(HcclAllReduce(bufs[r], bufs[r] + 1, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, subs[r], streams[r]),
              HCCL_SUCCESS);
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(streams[r]), ACL_SUCCESS) << aclGetRecentErrMsg();
    int32_t out = 0;
    ASSERT_EQ(aclrtMemcpy(&out, sizeof(out), bufs[r] + 1, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out, 6) << "rank " << r;
    EXPECT_EQ(aclrtFree(bufs[r]), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(streams[r]), ACL_SUCCESS);
    EXPECT_EQ(HcclCommDestroy(subs[r]), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommDestroy(comms[r]), HCCL_SUCCESS);
  }
}

TEST(Comm, SubCommunicatorOfHalfTheRanks) {
  const int n = 4;
  auto comms = InitAll(n);
  std::vector<HcclComm> subs(n, nullptr);
  OnThreads(n, [&](int r) {
    uint32_t even[2] = {0, 2};
    if (r % 2 == 0) {
      EXPECT_EQ(HcclCreateSubCommConfig(&comms[r], 2, even, 7, r / 2, nullptr, &subs[r]), HCCL_SUCCESS);
    } else {
      EXPECT_EQ(HcclCreateSubCommConfig(&comms[r], 0, nullptr, 0xFFFFFFFFu, 0, nullptr, &subs[r]), HCCL_SUCCESS);
      EXPECT_EQ(subs[r], nullptr);
    }
  });
  for (int r = 0; r < n; r += 2) {
    uint32_t size = 0, rank = 9;
    ASSERT_EQ(HcclGetRankSize(subs[r], &size), HCCL_SUCCESS);
    ASSERT_EQ(HcclGetRankId(subs[r], &rank), HCCL_SUCCESS);
    EXPECT_EQ(size, 2u);
    EXPECT_EQ(rank, static_cast<uint32_t>(r / 2));
    char name[128] = {};
    ASSERT_EQ(HcclGetCommName(subs[r], name), HCCL_SUCCESS);
    EXPECT_NE(std::string(name).find("_sub_7"), std::string::npos) << name;
  }
  // Reduce on the sub-communicator: ranks 0 and 2 of the parent.
  OnThreads(n, [&](int r) {
    if (r % 2) return;
    // An HCCL program: device buffers (NPU fidelity, docs/semantics.md §9).
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    float in[3] = {1.0f + r, 2.0f + r, 3.0f + r}, out[3] = {0, 0, 0};
    void *din = nullptr, *dout = nullptr;
    ASSERT_EQ(aclrtMalloc(&din, sizeof(in), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&dout, sizeof(out), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(din, sizeof(in), in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(dout, sizeof(out), out, sizeof(out), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(HcclReduce(din, dout, 3, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 1, subs[r], s), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(out, sizeof(out), dout, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    if (r == 2) {
      EXPECT_EQ(out[0], 1.0f + 3.0f);
      EXPECT_EQ(out[2], 3.0f + 5.0f);
    }
    aclrtFree(din);
    aclrtFree(dout);
    aclrtDestroyStream(s);
  });
  for (auto c : subs)
    if (c) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

TEST_P(CommTest, RankTableSingleServer) {
  const int n = GetParam();
  char path[] = "/tmp/hostccl_ranktable_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string json = R"({"status":"completed","version":"1.0","server_count":"1","server_list":[
    {"server_id":"node_0","device":[)";
  for (int r = 0; r < n; ++r) {
    json += std::string(r ? "," : "") + R"({"device_id":")" + std::to_string(r) +
            R"(","device_ip":"192.168.1.)" + std::to_string(8 + r) + R"(","rank_id":")" + std::to_string(r) + "\"}";
  }
  json += "]}]}";
  ASSERT_EQ(write(fd, json.data(), json.size()), static_cast<ssize_t>(json.size()));
  close(fd);
  // Each size gets its own port range so back-to-back cases never meet a lingering listener.
  setenv("HCCL_IF_BASE_PORT", std::to_string(61000 + 40 * n).c_str(), 1);
  std::vector<HcclComm> comms(n, nullptr);
  OnThreads(n, [&](int r) { EXPECT_EQ(HcclCommInitClusterInfo(path, r, &comms[r]), HCCL_SUCCESS); });
  unsetenv("HCCL_IF_BASE_PORT");
  for (int r = 0; r < n; ++r) {
    ASSERT_NE(comms[r], nullptr);
    uint32_t size = 0, rank = 99;
    ASSERT_EQ(HcclGetRankSize(comms[r], &size), HCCL_SUCCESS);
    ASSERT_EQ(HcclGetRankId(comms[r], &rank), HCCL_SUCCESS);
    EXPECT_EQ(size, static_cast<uint32_t>(n));
    EXPECT_EQ(rank, static_cast<uint32_t>(r));
  }
  char name[128] = {};
  ASSERT_EQ(HcclGetCommName(comms[0], name), HCCL_SUCCESS);
  EXPECT_STREQ(name, "hccl_world_group");
  BarrierAll(comms);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  HcclComm bad = nullptr;
  EXPECT_NE(HcclCommInitClusterInfo(path, static_cast<uint32_t>(n + 1), &bad), HCCL_SUCCESS);
  unlink(path);
}

TEST_P(CommTest, SubCommunicatorOfHalfTheRanksPassesBarrier) {
  const int n = GetParam();
  auto comms = InitAll(n);
  const int half = n < 2 ? 1 : n / 2;  // at one rank: the one-rank sub-communicator of all ranks
  std::vector<uint32_t> members;
  for (int r = 0; r < half; ++r) members.push_back(static_cast<uint32_t>(r));
  std::vector<HcclComm> subs(n, nullptr);
  OnThreads(n, [&](int r) {
    if (r < half) {
      EXPECT_EQ(HcclCreateSubCommConfig(&comms[r], half, members.data(), 3, r, nullptr, &subs[r]), HCCL_SUCCESS);
    } else {
      EXPECT_EQ(HcclCreateSubCommConfig(&comms[r], 0, nullptr, 0xFFFFFFFFu, 0, nullptr, &subs[r]), HCCL_SUCCESS);
    }
  });
  std::vector<HcclComm> sub_only(subs.begin(), subs.begin() + half);
  for (int r = 0; r < half; ++r) {
    uint32_t size = 0;
    ASSERT_EQ(HcclGetRankSize(sub_only[r], &size), HCCL_SUCCESS);
    EXPECT_EQ(size, static_cast<uint32_t>(half));
  }
  BarrierAll(sub_only);
  for (auto c : sub_only) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

TEST(Comm, CreateDestroyCyclesLeakNothing) {
  auto cycle = [] {
    auto comms = InitAll(2);
    BarrierAll(comms);
    for (auto c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  };
  for (int i = 0; i < 5; ++i) cycle();  // warm up lazily created state
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int fds = CountDir("/proc/self/fd");
  const int threads = CountDir("/proc/self/task");
  const long rss = RssKb();
  for (int i = 0; i < 200; ++i) cycle();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  HcclRootInfo info;  // reaps finished root servers
  (void)HcclGetRootInfo(&info);
  EXPECT_LE(CountDir("/proc/self/fd"), fds + 2);  // + the new root server's listener
  EXPECT_LE(CountDir("/proc/self/task"), threads + 1);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Sanitizer runtimes hold freed memory back (ASan's quarantine, TSan's shadow), so RSS growth
  // means nothing there; LeakSanitizer checks the heap instead (scripts/sanitize.sh).
  (void)rss;
#else
  EXPECT_LT(RssKb() - rss, 20 * 1024) << "RSS grew by " << (RssKb() - rss) << " KiB over 200 cycles";
#endif
}

// One thread drives both thread ranks and issues all of rank 0's calls before any of rank 1's,
// more of them than a stream holds (HOSTCCL_STREAM_DEPTH, 1024): the enqueues past the depth must
// not run rank 0's calls on this thread (they would wait for rank 1's, issued only later), so the
// program completes, with every result right. Over every transport thread ranks can use: the
// default (a shared segment set up without sockets, whose attempts then look once), in-process,
// shared memory over a mesh and TCP.
class OneThreadTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OneThreadTest, IssuesEachRanksCallsInTurnPastTheStreamDepth) {
  // Both are read when the communicators are created (a regression fails in 30 s, not 30 min).
  setenv("HOSTCCL_EXEC_TIMEOUT_MS", "30000", 1);
  setenv("HOSTCCL_TRANSPORT", GetParam(), 1);
  auto comms = InitAll(2);
  unsetenv("HOSTCCL_TRANSPORT");
  unsetenv("HOSTCCL_EXEC_TIMEOUT_MS");
  constexpr int kCalls = 1500;
  aclrtStream streams[2];
  float* send[2];
  float* recv[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&streams[r]), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&send[r]), kCalls * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&recv[r]), kCalls * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    std::vector<float> in(kCalls);
    for (int i = 0; i < kCalls; ++i) in[static_cast<size_t>(i)] = static_cast<float>(r * 10000 + i);
    ASSERT_EQ(aclrtMemcpy(send[r], kCalls * sizeof(float), in.data(), kCalls * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_SUCCESS);
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    for (int i = 0; i < kCalls; ++i)
      ASSERT_EQ(HcclAllReduce(send[r] + i, recv[r] + i, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r], streams[r]),
                HCCL_SUCCESS) << "rank " << r << " call " << i;
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(streams[r]), ACL_SUCCESS) << aclGetRecentErrMsg();
    std::vector<float> out(kCalls);
    ASSERT_EQ(aclrtMemcpy(out.data(), kCalls * sizeof(float), recv[r], kCalls * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    for (int i = 0; i < kCalls; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], static_cast<float>(10000 + 2 * i)) << i;
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(send[r]), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(recv[r]), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(streams[r]), ACL_SUCCESS);
    EXPECT_EQ(HcclCommDestroy(comms[r]), HCCL_SUCCESS);
  }
}
INSTANTIATE_TEST_SUITE_P(Transports, OneThreadTest, ::testing::Values("auto", "local", "shm", "tcp"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// Which plans thread ranks take (each call's info line names its algorithm and transport): by
// default the shared segment's (shm_inline, the mailbox for Send/Recv), with HOSTCCL_TRANSPORT=
// local the in-process ones (direct, local). One process per test (ctest): the log variables are
// read at the first library call.
class ThreadRanksPlacement : public ::testing::TestWithParam<const char*> {
 protected:
  void TearDown() override {
    unlink(log_.c_str());
    unsetenv("HOSTCCL_TRANSPORT");
  }
  const std::string log_ = "/tmp/hostccl_comm_placement_test_" + std::to_string(getpid()) + ".log";
};

TEST_P(ThreadRanksPlacement, CollectivesAndTransfersTakeTheTransportsPlans) {
  unlink(log_.c_str());
  setenv("HOSTCCL_LOG_FILE", log_.c_str(), 1);
  setenv("HOSTCCL_LOG_LEVEL", "INFO", 1);
  const bool local = std::string(GetParam()) == "local";
  if (local) setenv("HOSTCCL_TRANSPORT", "local", 1);
  auto comms = InitAll(2);
  OnThreads(2, [&](int r) {
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    float* buf = nullptr;
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&buf), 2 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const float mine = static_cast<float>(r + 1);
    ASSERT_EQ(aclrtMemcpy(buf, sizeof(float), &mine, sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(HcclAllReduce(buf, buf + 1, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r], s), HCCL_SUCCESS);
    if (r == 0)
      EXPECT_EQ(HcclSend(buf + 1, 1, HCCL_DATA_TYPE_FP32, 1, comms[r], s), HCCL_SUCCESS);
    else
      EXPECT_EQ(HcclRecv(buf, 1, HCCL_DATA_TYPE_FP32, 0, comms[r], s), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS) << aclGetRecentErrMsg();
    float out[2] = {0, 0};
    ASSERT_EQ(aclrtMemcpy(out, sizeof(out), buf, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out[1], 3.0f);
    EXPECT_EQ(out[0], r == 0 ? 1.0f : 3.0f);
    EXPECT_EQ(aclrtFree(buf), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  });
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  // An inline attempt that gives up having changed nothing (a Recv before its message) runs
  // again from the stream and logs again: at least one line per call, and none naming another plan.
  int allreduce = 0, send = 0, recv = 0;
  std::vector<std::string> other;
  std::ifstream in(log_);
  const std::string transport = local ? "transport in-process" : "transport shared memory";
  for (std::string line; std::getline(in, line);) {
    const auto is = [&](const char* api) { return line.find(api) != std::string::npos; };
    const auto ran = [&](const char* algo) {
      return line.find(std::string(": ") + algo + " (default rule") != std::string::npos &&
             line.find(transport) != std::string::npos;
    };
    if (!is("HcclAllReduce #") && !is("HcclSend") && !is("HcclRecv")) continue;
    if (is("HcclAllReduce #") && ran(local ? "direct" : "shm_inline")) ++allreduce;
    else if (is("HcclSend") && ran(local ? "local" : "mailbox")) ++send;
    else if (is("HcclRecv") && ran(local ? "local" : "mailbox")) ++recv;
    else if (line.find(" on '") != std::string::npos) other.push_back(line);  // a call's selection line
  }
  EXPECT_GE(allreduce, 2) << "log: " << log_;
  EXPECT_GE(send, 1);
  EXPECT_GE(recv, 1);
  EXPECT_TRUE(other.empty()) << other.front();
}
// One thread issues every call of both thread ranks, back to back in bursts (rank 0's, then rank
// 1's, each call): an attempt for rank 0 cannot complete before the same thread issues rank 1's call, so it
// must look once and give up, not spin for a peer that cannot come (docs/runtime.md "Inline
// attempts"). That includes rank 0's queued call run again just before its next one, where the
// thread's last attempt was for rank 0 too. Each attempt that spins and gives up logs a debug line:
// at most the first one may (before the thread is seen driving both ranks). Results checked.
TEST(ThreadRanksDriver, OneThreadDrivingBothRanksNeverSpinsForThem) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "attempts spin only when the ranks fit the cores";
  const std::string log = "/tmp/hostccl_comm_driver_test_" + std::to_string(getpid()) + ".log";
  unlink(log.c_str());
  setenv("HOSTCCL_LOG_FILE", log.c_str(), 1);
  setenv("HOSTCCL_LOG_LEVEL", "DEBUG", 1);
  auto comms = InitAll(2);
  constexpr int kCalls = 200;
  aclrtStream streams[2];
  float* bufs[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&streams[r]), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&bufs[r]), 2 * kCalls * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_SUCCESS);
    std::vector<float> in(kCalls);
    for (int i = 0; i < kCalls; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i + 1000 * r);
    const size_t bytes = kCalls * sizeof(float);
    ASSERT_EQ(aclrtMemcpy(bufs[r], bytes, in.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  }
  // Bursts of 10 calls per rank, each followed by synchronizing both streams: a burst is too short
  // for the thread to stop counting as a driver (64 attempts on one rank) even when the host
  // deschedules it long enough for a stream's worker to take that stream's calls over (then only
  // the other rank's calls are attempts, each of which may rightly spin for that worker).
  constexpr int kBurst = 10;
  for (int i = 0; i < kCalls; ++i) {
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
      ASSERT_EQ(HcclAllReduce(bufs[r] + i, bufs[r] + kCalls + i, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r],
                              streams[r]),
                HCCL_SUCCESS);
    }
    if (i % kBurst == kBurst - 1)
      for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
        ASSERT_EQ(aclrtSynchronizeStream(streams[r]), ACL_SUCCESS) << aclGetRecentErrMsg();
      }
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(streams[r]), ACL_SUCCESS) << aclGetRecentErrMsg();
    std::vector<float> out(kCalls);
    ASSERT_EQ(aclrtMemcpy(out.data(), kCalls * sizeof(float), bufs[r] + kCalls, kCalls * sizeof(float),
                          ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    for (int i = 0; i < kCalls; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], static_cast<float>(2 * i + 1000)) << i;
    EXPECT_EQ(aclrtFree(bufs[r]), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(streams[r]), ACL_SUCCESS);
  }
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
  int spun = 0, attempts = 0;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    spun += line.find("the inline attempt spun for its peers and gave up") != std::string::npos;
    attempts += line.find("HcclAllReduce #") != std::string::npos && line.find("shm_inline") != std::string::npos;
  }
  EXPECT_GE(attempts, kCalls) << "log: " << log;  // the calls ran over the segment
  EXPECT_LE(spun, 1) << "log: " << log;
  unlink(log.c_str());
}

// More thread ranks than the segment has mailboxes for (32) but within its thread-rank limit (64):
// transfers re-plan to the in-process mailboxes (no TCP mesh for the segment's other plan) and
// collectives still run over the segment; a ring exchange and an AllReduce, results checked.
TEST(ThreadRanksMany, TransfersAboveTheMailboxLimitAndCollectivesComplete) {
  constexpr int n = 34;
  setenv("HOSTCCL_DEVICE_COUNT", "34", 1);  // read at the first runtime call (one process per test)
  setenv("HOSTCCL_EXEC_TIMEOUT_MS", "60000", 1);
  auto comms = InitAll(n);
  unsetenv("HOSTCCL_EXEC_TIMEOUT_MS");
  OnThreads(n, [&](int r) {
    aclrtStream s;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    int32_t* buf = nullptr;  // [0] mine, [1] from the left neighbour, [2] the sum
    ASSERT_EQ(aclrtMalloc(reinterpret_cast<void**>(&buf), 3 * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const int32_t mine = r + 1;
    ASSERT_EQ(aclrtMemcpy(buf, sizeof(mine), &mine, sizeof(mine), ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    HcclSendRecvItem items[2] = {
        {HCCL_SEND, buf, 1, HCCL_DATA_TYPE_INT32, static_cast<uint32_t>((r + 1) % n)},
        {HCCL_RECV, buf + 1, 1, HCCL_DATA_TYPE_INT32, static_cast<uint32_t>((r + n - 1) % n)}};
    EXPECT_EQ(HcclBatchSendRecv(items, 2, comms[r], s), HCCL_SUCCESS);
    EXPECT_EQ(HcclAllReduce(buf, buf + 2, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comms[r], s), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS) << aclGetRecentErrMsg();
    int32_t out[3] = {0, 0, 0};
    ASSERT_EQ(aclrtMemcpy(out, sizeof(out), buf, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out[1], (r + n - 1) % n + 1) << "rank " << r;
    EXPECT_EQ(out[2], n * (n + 1) / 2) << "rank " << r;
    EXPECT_EQ(aclrtFree(buf), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  });
  for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Transports, ThreadRanksPlacement, ::testing::Values("auto", "local"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

INSTANTIATE_TEST_SUITE_P(Ranks, CommTest, ::testing::Values(1, 2, 3, 5, 8));

}  // namespace
