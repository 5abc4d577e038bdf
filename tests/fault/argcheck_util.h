// Helpers shared by the argument-check tests (argcheck_test.cc, argcheck_collectives_test.cc,
// argcheck_v_test.cc): enum values HCCL's headers do not name, a device buffer filled with a
// guard pattern, so that a test can tell that a rejected call wrote nothing, and a case run again
// in a child process under other environment variables (the chip profiles).
// Public API only (acl/acl.h, hccl/hccl.h).
#pragma once

#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace hostccl::argtest {

// Any int as an HcclDataType / HcclReduceOp, in range or not (memcpy: no cast, so no sanitizer or
// compiler assumption about the enum's range applies).
inline HcclDataType AsDtype(int v) {
  HcclDataType t;
  std::memcpy(&t, &v, sizeof(t));
  return t;
}
inline HcclReduceOp AsOp(int v) {
  HcclReduceOp o;
  std::memcpy(&o, &v, sizeof(o));
  return o;
}

// An aclrtMalloc allocation of `n` bytes holding the pattern salt + 13 i; Unchanged() compares it
// with the pattern, Reset() writes it again.
struct GuardedBuf {
  void* ptr = nullptr;
  size_t bytes = 0;
  std::vector<unsigned char> guard;
  void Alloc(size_t n, unsigned char salt) {
    bytes = n;
    ASSERT_EQ(aclrtMalloc(&ptr, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    guard.resize(n);
    for (size_t i = 0; i < n; ++i) guard[i] = static_cast<unsigned char>(salt + i * 13);
    Reset();
  }
  void Reset() { ASSERT_EQ(aclrtMemcpy(ptr, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS); }
  bool Unchanged() const {
    std::vector<unsigned char> now(bytes);
    if (aclrtMemcpy(now.data(), bytes, ptr, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return false;
    return now == guard;
  }
  char* at(size_t off) const { return static_cast<char*>(ptr) + off; }
  GuardedBuf() = default;
  GuardedBuf(const GuardedBuf&) = delete;
  GuardedBuf& operator=(const GuardedBuf&) = delete;
  ~GuardedBuf() {
    if (ptr) (void)aclrtFree(ptr);
  }
};

// Runs the test case `name` (e.g. "ArgCheck.DISABLED_SocProfileChild") of this executable in a
// child process whose environment is this one's with each KEY=VALUE of `set` replacing KEY, waits
// for it and expects it to exit 0 having run the case: its XML report names the case as run and
// completed (a filter that matches nothing would also exit 0). `what` labels the failures. The
// wait is bounded by ctest's TIMEOUT; the children make no collective waits.
inline void RunCaseInChild(const std::string& name, const std::vector<std::string>& set,
                           const std::string& what) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto& kv : set) replaced |= std::strncmp(*e, kv.c_str(), kv.find('=') + 1) == 0;
    if (!replaced) env.push_back(*e);
  }
  env.insert(env.end(), set.begin(), set.end());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char report[] = "/tmp/hostccl_argcheck_child_XXXXXX";
  const int report_fd = mkstemp(report);
  ASSERT_GE(report_fd, 0);
  close(report_fd);
  std::vector<std::string> args = {"/proc/self/exe", "--gtest_filter=" + name, "--gtest_also_run_disabled_tests",
                                   std::string("--gtest_output=xml:") + report};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()), 0) << what;
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid) << what;
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << what << " (child output above)";
  std::ifstream in(report);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(report);
  const std::string case_name = name.substr(name.find('.') + 1);
  EXPECT_TRUE(xml.find("name=\"" + case_name + "\"") != std::string::npos &&
              xml.find("status=\"run\" result=\"completed\"") != std::string::npos)
      << what << ": the child did not run its case:\n" << xml;
}

}  // namespace hostccl::argtest
