// The log's CANN line format and variables (ASCEND_GLOBAL_LOG_LEVEL, ASCEND_SLOG_PRINT_TO_STDOUT,
// ASCEND_PROCESS_LOG_PATH, HOSTCCL_LOG_*), the knob validation of env_knobs.def (HCCL's ranges, one
// EI0001 warning per bad value, one warning per host-meaningless HCCL variable) and the EI codes
// of statuses. In-process against hostccl_common; every case sets its variables and re-reads them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "common/env.h"
#include "common/log.h"
#include "common/status.h"

using namespace hostccl;

namespace {

const char* kVars[] = {"HOSTCCL_LOG_LEVEL", "HOSTCCL_LOG_FILE", "HOSTCCL_LOG_SUBSYS", "ASCEND_GLOBAL_LOG_LEVEL",
                       "ASCEND_SLOG_PRINT_TO_STDOUT", "ASCEND_PROCESS_LOG_PATH"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Every case starts from no log variables and logs to its own file unless it says otherwise.
class LogEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) unsetenv(v);
    path_ = "/tmp/hostccl_log_env_test_" + std::to_string(getpid()) + ".log";
    unlink(path_.c_str());
  }
  void TearDown() override {
    for (const char* v : kVars) unsetenv(v);
    LogReinit();
    unlink(path_.c_str());
  }
  void ToFile() {
    setenv("HOSTCCL_LOG_FILE", path_.c_str(), 1);
    LogReinit();
  }
  std::string path_;
};

TEST_F(LogEnv, LinesHaveCannsFormatWithMicrosecondsAndFileLine) {
  ToFile();
  HLOG_ERROR(kColl, "something broke %d", 42);
  const int line = __LINE__ - 1;
  HLOG_WARN(kRuntime, "a runtime warning");
  const std::string text = ReadFile(path_);
  // [ERROR] HCCL(pid,proc):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file:line] [tid] [rank -] [COLL] message
  const std::regex err("\\[ERROR\\] HCCL\\(" + std::to_string(getpid()) +
                       ",[^)]+\\):[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\.[0-9]{3} "
                       "\\[log_env_test\\.cc:" + std::to_string(line) +
                       "\\] \\[[0-9]+\\] \\[rank -\\] \\[COLL\\] something broke 42\n");
  EXPECT_TRUE(std::regex_search(text, err)) << text;
  EXPECT_NE(text.find("[WARNING] RUNTIME("), std::string::npos) << text;
}

TEST_F(LogEnv, AscendGlobalLogLevelSelectsTheLevel) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "1", 1);  // info
  ToFile();
  HLOG_INFO(kColl, "info line");
  HLOG_DEBUG(kColl, "debug line");
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);  // null: nothing, not even errors
  LogReinit();
  HLOG_ERROR(kColl, "error under null");
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);  // debug
  LogReinit();
  HLOG_DEBUG(kColl, "debug line 2");
  const std::string text = ReadFile(path_);
  EXPECT_NE(text.find("[INFO] HCCL("), std::string::npos) << text;
  EXPECT_EQ(text.find("debug line\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("error under null"), std::string::npos) << text;
  EXPECT_NE(text.find("[DEBUG] HCCL("), std::string::npos) << text;
  EXPECT_NE(text.find("debug line 2"), std::string::npos) << text;
}

TEST_F(LogEnv, HostcclLogLevelWinsOverAscendGlobalLogLevel) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "0", 1);
  setenv("HOSTCCL_LOG_LEVEL", "ERROR", 1);
  ToFile();
  HLOG_WARN(kColl, "a warning");
  HLOG_ERROR(kColl, "an error");
  const std::string text = ReadFile(path_);
  EXPECT_EQ(text.find("a warning"), std::string::npos) << text;
  EXPECT_NE(text.find("an error"), std::string::npos) << text;
}

TEST_F(LogEnv, BadValuesGetOneWarningNamingVariableValueAndRange) {
  setenv("ASCEND_GLOBAL_LOG_LEVEL", "7", 1);
  setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "yes", 1);
  setenv("HOSTCCL_LOG_LEVEL", "LOUD", 1);
  ToFile();
  const std::string text = ReadFile(path_);
  EXPECT_NE(text.find("EI0001: environment variable ASCEND_GLOBAL_LOG_LEVEL=7 is invalid: expected 0 (debug), 1 "
                      "(info), 2 (warning), 3 (error) or 4 (null)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ASCEND_SLOG_PRINT_TO_STDOUT=yes is invalid: expected 0 or 1"), std::string::npos) << text;
  EXPECT_NE(text.find("HOSTCCL_LOG_LEVEL=LOUD is invalid"), std::string::npos) << text;
  EXPECT_EQ(Count(text, "[WARNING]"), 3) << text;
}

TEST_F(LogEnv, PrintToStdoutSendsLinesToStdout) {
  setenv("ASCEND_SLOG_PRINT_TO_STDOUT", "1", 1);
  LogReinit();
  ::testing::internal::CaptureStdout();
  HLOG_ERROR(kColl, "to stdout please");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("[ERROR] HCCL("), std::string::npos) << out;
  EXPECT_NE(out.find("to stdout please"), std::string::npos) << out;
  EXPECT_EQ(LogFilePath(), "");
}

TEST_F(LogEnv, ProcessLogPathWritesAPlogFilePerProcess) {
  char dir[] = "/tmp/hostccl_plog_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("ASCEND_PROCESS_LOG_PATH", (std::string(dir) + "/logs/").c_str(), 1);  // created when missing
  LogReinit();
  HLOG_ERROR(kColl, "into the plog");
  const std::string path = LogFilePath();
  const std::regex name(std::string(dir) + "/logs/debug/plog/plog-" + std::to_string(getpid()) + "_[0-9]{17}\\.log");
  EXPECT_TRUE(std::regex_match(path, name)) << path;
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find("[ERROR] HCCL("), std::string::npos) << text;
  EXPECT_NE(text.find("into the plog"), std::string::npos) << text;
  // HOSTCCL_LOG_FILE wins over the plog directory.
  ToFile();
  EXPECT_EQ(LogFilePath(), path_);
  unsetenv("HOSTCCL_LOG_FILE");
  unsetenv("ASCEND_PROCESS_LOG_PATH");
  LogReinit();
  unlink(path.c_str());
  EXPECT_EQ(std::system((std::string("rm -r ") + dir).c_str()), 0);
}

TEST_F(LogEnv, HcclVariablesAreValidatedWithHcclsRangesOncePerValue) {
  ToFile();
  setenv("HCCL_CONNECT_TIMEOUT", "5", 1);
  setenv("HCCL_EXEC_TIMEOUT", "-3", 1);
  setenv("HCCL_BUFFSIZE", "0", 1);
  setenv("HCCL_DETERMINISTIC", "bogus", 1);
  EXPECT_EQ(EnvInt(Knob::kHcclConnectTimeout, 120), 120);
  EXPECT_EQ(EnvInt(Knob::kHcclConnectTimeout, 120), 120);  // the second read says nothing
  EXPECT_EQ(EnvInt(Knob::kHcclExecTimeout, 1836), 1836);
  EXPECT_EQ(EnvInt(Knob::kHcclBuffSize, 200), 200);
  EXPECT_EQ(EnvString(Knob::kHcclDeterministic, "false"), "false");
  setenv("HCCL_DETERMINISTIC", "TRUE", 1);  // HCCL upper-cases: any case is fine
  EXPECT_EQ(EnvString(Knob::kHcclDeterministic, "false"), "TRUE");
  setenv("HCCL_CONNECT_TIMEOUT", "300", 1);
  EXPECT_EQ(EnvInt(Knob::kHcclConnectTimeout, 120), 300);
  const std::string text = ReadFile(path_);
  EXPECT_EQ(Count(text, "HCCL_CONNECT_TIMEOUT=5 is invalid: expected an integer in [120, 7200]; using 120"), 1)
      << text;
  EXPECT_EQ(Count(text, "HCCL_EXEC_TIMEOUT=-3 is invalid: expected an integer in [0, 2147483647]"), 1) << text;
  EXPECT_EQ(Count(text, "HCCL_BUFFSIZE=0 is invalid"), 1) << text;
  EXPECT_EQ(Count(text, "EI0001: environment variable HCCL_DETERMINISTIC=bogus is invalid: expected one of false, "
                        "true, strict"),
            1)
      << text;
  EXPECT_EQ(Count(text, "[WARNING]"), 4) << text;
  for (const char* v : {"HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_BUFFSIZE", "HCCL_DETERMINISTIC"})
    unsetenv(v);
}

TEST_F(LogEnv, HostcclWordKnobsRejectOtherWordsTheSameWay) {
  ToFile();
  setenv("HOSTCCL_KERNEL_ISA", "bogus", 1);
  setenv("HOSTCCL_CMA", "AUTO", 1);  // exact words: only HCCL_DETERMINISTIC takes any case
  EXPECT_EQ(EnvString(Knob::kKernelIsa, "auto"), "auto");
  EXPECT_EQ(EnvString(Knob::kCma, "auto"), "auto");
  setenv("HOSTCCL_CMA", "off", 1);
  EXPECT_EQ(EnvString(Knob::kCma, "auto"), "off");
  const std::string text = ReadFile(path_);
  EXPECT_EQ(Count(text, "HOSTCCL_KERNEL_ISA=bogus is invalid: expected one of auto, avx512, avx2, scalar; using auto"),
            1)
      << text;
  EXPECT_EQ(Count(text, "HOSTCCL_CMA=AUTO is invalid: expected one of auto, off; using auto"), 1) << text;
  for (const char* v : {"HOSTCCL_KERNEL_ISA", "HOSTCCL_CMA"}) unsetenv(v);
}

TEST_F(LogEnv, HostMeaninglessHcclVariablesGetOneWarningEachPerProcess) {
  ToFile();
  setenv("HCCL_WHITELIST_DISABLE", "1", 1);
  setenv("HCCL_INTRA_ROCE_ENABLE", "1", 1);
  setenv("HCCL_SOCKET_FAMILY", "AF_UNIX", 1);
  CheckEnvironmentOnce();
  CheckEnvironmentOnce();
  const std::string text = ReadFile(path_);
  EXPECT_EQ(Count(text, "HCCL_WHITELIST_DISABLE=1 has no effect on a host"), 1) << text;
  EXPECT_EQ(Count(text, "HCCL_INTRA_ROCE_ENABLE=1 has no effect on a host"), 1) << text;
  EXPECT_EQ(Count(text, "HCCL_SOCKET_FAMILY=AF_UNIX is invalid: expected one of AF_INET, AF_INET6"), 1) << text;
  for (const char* v : {"HCCL_WHITELIST_DISABLE", "HCCL_INTRA_ROCE_ENABLE", "HCCL_SOCKET_FAMILY"}) unsetenv(v);
}

TEST(EiCodes, StatusesCarryHcclsCodeForTheSameCause) {
  EXPECT_STREQ(EiCode(Status(Code::kTimeout, "rank 1: timed out after 100 ms waiting for rank 2")), "EI0002");
  EXPECT_STREQ(EiCode(Status(Code::kTimeout, "HcclBroadcast #2 (rank 1): timed out waiting for the root")), "EI0002");
  EXPECT_STREQ(EiCode(Status(Code::kTimeout, "could not connect to 127.0.0.1:5 within 10 ms")), "EI0006");
  EXPECT_STREQ(EiCode(Status(Code::kTimeout, "root 10.0.0.1:4711: only 3 of 4 ranks joined within 120000 ms")),
               "EI0006");
  EXPECT_STREQ(EiCode(Status(Code::kPara, "HcclAllReduce #1 mismatch: rank 0 is in ..., rank 1 is in ...")), "EI0005");
  EXPECT_STREQ(EiCode(Status(Code::kPara, "root 4 >= rankSize 4")), "EI0003");
  EXPECT_STREQ(EiCode(Status(Code::kPara, "rank table has 2 servers but ...")), "EI0004");
  EXPECT_STREQ(EiCode(Status(Code::kRemote, "rank 2 (pid 7) exited or was killed")), "EI0013");
  EXPECT_STREQ(EiCode(Status(Code::kTcpConnect, "connection refused")), "EI0006");
  EXPECT_STREQ(EiCode(Status(Code::kUnavail, "cannot bind 127.0.0.1:60000: address in use")), "EI0019");
  EXPECT_EQ(EiCode(Status::Ok()), nullptr);
  EXPECT_EQ(ReportString(Status(Code::kTimeout, "x waits")), "EI0002: HCCL_E_TIMEOUT: x waits");
}

}  // namespace
