// Failure reports through the public API: one error line per failure per rank (the communicator's,
// not repeated by the stream or the api), with HCCL's EI code and the rank; a call on a destroyed
// communicator names the rank it had; HostcclCommInitFromEnv keeps the specific reason in
// aclGetRecentErrMsg. Each case runs in its own process and sets HOSTCCL_LOG_FILE before its first
// library call, then reads the log back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace {

std::string LogPath() { return "/tmp/hostccl_log_failure_test_" + std::to_string(getpid()) + ".log"; }

void LogToFile() {
  unlink(LogPath().c_str());
  setenv("HOSTCCL_LOG_FILE", LogPath().c_str(), 1);
  unsetenv("HOSTCCL_LOG_LEVEL");
  unsetenv("ASCEND_GLOBAL_LOG_LEVEL");
}

std::vector<std::string> ErrorLines() {
  std::ifstream in(LogPath());
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("[ERROR]", 0) == 0) out.push_back(line);
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::vector<HcclComm> InitAll(int n) {
  std::vector<int32_t> devs(n);
  for (int i = 0; i < n; ++i) devs[i] = i;
  std::vector<HcclComm> comms(n, nullptr);
  EXPECT_EQ(HcclCommInitAll(n, devs.data(), comms.data()), HCCL_SUCCESS);
  return comms;
}

TEST(LogFailure, MismatchIsOneErrorLinePerRankWithItsEiCode) {
  LogToFile();
  constexpr int kRanks = 2;
  auto comms = InitAll(kRanks);
  std::vector<std::string> recent(kRanks);
  std::vector<int> sync_rc(kRanks, 0);
  std::vector<std::thread> ts;
  for (int r = 0; r < kRanks; ++r)
    ts.emplace_back([&, r] {
      ASSERT_EQ(aclrtSetDevice(r), ACL_SUCCESS);
      aclrtStream s = nullptr;
      ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
      void* buf = nullptr;
      ASSERT_EQ(aclrtMalloc(&buf, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
      const uint64_t count = r == 0 ? 8 : 16;  // counts differ between the ranks
      EXPECT_EQ(HcclAllReduce(buf, buf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r], s), HCCL_SUCCESS);
      sync_rc[r] = aclrtSynchronizeStream(s);
      recent[r] = aclGetRecentErrMsg();
      aclrtDestroyStream(s);
      aclrtFree(buf);
      aclrtResetDevice(r);
    });
  for (auto& t : ts) t.join();
  for (auto c : comms) HcclCommDestroy(c);
  const auto lines = ErrorLines();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NE(sync_rc[r], ACL_SUCCESS) << "rank " << r;
    EXPECT_NE(recent[r].find("EI0005: HCCL_E_PARA: HcclAllReduce #1 mismatch"), std::string::npos)
        << "rank " << r << ": " << recent[r];
    int mine = 0;
    for (const auto& l : lines) mine += l.find("[rank " + std::to_string(r) + "]") != std::string::npos;
    EXPECT_EQ(mine, 1) << "rank " << r << " printed the failure " << mine << " times:\n" << Joined(lines);
  }
  EXPECT_EQ(lines.size(), static_cast<size_t>(kRanks)) << Joined(lines);
  for (const auto& l : lines) EXPECT_NE(l.find("EI0005: "), std::string::npos) << l;
  unlink(LogPath().c_str());
}

TEST(LogFailure, ACallOnADestroyedCommunicatorNamesItsRank) {
  LogToFile();
  auto comms = InitAll(2);
  ASSERT_EQ(HcclCommDestroy(comms[1]), HCCL_SUCCESS);
  std::thread t([&] {
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    void* buf = nullptr;
    ASSERT_EQ(aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(HcclAllReduce(buf, buf, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[1], s), HCCL_E_PARA);
    EXPECT_NE(std::string(aclGetRecentErrMsg()).find("HcclAllReduce(rank 1): "), std::string::npos)
        << aclGetRecentErrMsg();
    aclrtDestroyStream(s);
    aclrtFree(buf);
    aclrtResetDevice(1);
  });
  t.join();
  HcclCommDestroy(comms[0]);
  const auto lines = ErrorLines();
  ASSERT_EQ(lines.size(), 1u) << Joined(lines);
  EXPECT_NE(lines[0].find("HcclAllReduce(rank 1): comm is not a live communicator"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("rank ?"), std::string::npos) << lines[0];
  unlink(LogPath().c_str());
}

TEST(LogFailure, InitFromEnvKeepsTheSpecificReasonForAclGetRecentErrMsg) {
  LogToFile();
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "1", 1);
  setenv("HOSTCCL_TRANSPORT", "bogus", 1);  // makes the inner HcclCommInitRootInfo fail
  HcclComm comm = nullptr;
  EXPECT_NE(HostcclCommInitFromEnv(&comm), HCCL_SUCCESS);
  const std::string msg = aclGetRecentErrMsg();
  EXPECT_NE(msg.find("HOSTCCL_TRANSPORT=bogus"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HostcclCommInitFromEnv"), std::string::npos) << msg;
  const auto lines = ErrorLines();
  EXPECT_EQ(lines.size(), 1u) << "the reason was printed more than once:\n" << Joined(lines);
  for (const char* v : {"RANK", "WORLD_SIZE", "HOSTCCL_TRANSPORT"}) unsetenv(v);
  unlink(LogPath().c_str());
}

}  // namespace
