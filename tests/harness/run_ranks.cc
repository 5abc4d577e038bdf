#include "harness/run_ranks.h"

#include <hostccl/hostccl.h>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

extern char** environ;

namespace hostccl::test {
namespace {

constexpr int kMaxRanks = 64;
constexpr size_t kMsgBytes = 2048;
constexpr const char* kChildFlag = "--hostccl_child=";

// The region shared by the parent and its rank children (a memfd inherited across exec).
struct SharedRegion {
  std::atomic<uint32_t> ready;  // 0 waiting, 1 root info valid, 2 HcclGetRootInfo failed
  int32_t root_result;
  char root_info[HCCL_ROOT_INFO_BYTES];
  char msg[kMaxRanks][kMsgBytes];  // each rank's first failure message
};

struct ChildSpec {
  int rank, nranks, call, fd;
};

std::string g_argv0 = "/proc/self/exe";
std::optional<ChildSpec> g_child;
int g_call_counter = 0;  // RunRanks calls in the current gtest test (main thread only)
std::string g_counted_test;  // the test g_call_counter belongs to

// Index of this RunRanks call within the running gtest test (a child re-runs just that test).
int NextCallIndex() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : std::string();
  if (name != g_counted_test) {
    g_counted_test = name;
    g_call_counter = 0;
  }
  return g_call_counter++;
}

using Clock = std::chrono::steady_clock;

std::string Str(const char* fmt, int a, int b = 0, int c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

void EnsureAclInit() {
  static std::once_flag once;
  std::call_once(once, [] { (void)aclInit(nullptr); });  // REPEAT_INITIALIZE is fine
}

// Sets env vars for the lifetime of the object and restores the previous values.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.push_back({k, old ? std::optional<std::string>(old) : std::nullopt});
      setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// Test defaults: bounded waits inside the library, unless the caller or the environment chose.
std::vector<std::pair<std::string, std::string>> EffectiveEnv(const RunOptions& opts) {
  auto env = opts.env;
  auto has = [&](const char* k) {
    for (const auto& kv : env)
      if (kv.first == k) return true;
    return std::getenv(k) != nullptr;
  };
  if (!has("HOSTCCL_EXEC_TIMEOUT_MS")) env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "60000"});
  if (!has("HOSTCCL_CONNECT_TIMEOUT_MS")) env.push_back({"HOSTCCL_CONNECT_TIMEOUT_MS", "60000"});
  return env;
}

uint32_t DeviceCount() {
  uint32_t n = 0;
  if (aclrtGetDeviceCount(&n) != ACL_SUCCESS || n == 0) n = 1;
  return n;
}

// One rank's life after its communicator exists: device, stream, body, teardown.
bool RunRankBody(RankContext& ctx, const RankBody& body, bool set_device) {
  int32_t dev = static_cast<int32_t>(ctx.rank % DeviceCount());
  if (set_device && aclrtSetDevice(dev) != ACL_SUCCESS) return ctx.Fail(Str("aclrtSetDevice(%d) failed", dev));
  bool ok = true;
  if (aclrtCreateStream(&ctx.stream) != ACL_SUCCESS) {
    ok = ctx.Fail("aclrtCreateStream failed");
  } else {
    ok = body(ctx) && ctx.error.empty();
    if (aclrtDestroyStream(ctx.stream) != ACL_SUCCESS) ok = ctx.Fail("aclrtDestroyStream failed");
  }
  if (ctx.comm != nullptr) {
    HcclResult r = HcclCommDestroy(ctx.comm);
    if (r != HCCL_SUCCESS) ok = ctx.Fail(Str("HcclCommDestroy returned %d", r));
  }
  (void)aclrtResetDevice(dev);
  return ok;
}

RunResult RunThreads(int nranks, Mode mode, const RankBody& body, const RunOptions& opts) {
  EnsureAclInit();
  ScopedEnv env(EffectiveEnv(opts));
  std::vector<RankContext> ctx(nranks);
  std::vector<HcclComm> comms(nranks, nullptr);
  HcclRootInfo root_info;
  std::memset(&root_info, 0, sizeof(root_info));
  if (mode == Mode::kThreadsInitAll) {
    if (static_cast<uint32_t>(nranks) > DeviceCount())
      return {false, Str("HcclCommInitAll needs %d distinct devices, only %d visible", nranks, DeviceCount())};
    std::vector<int32_t> devices(nranks);
    for (int i = 0; i < nranks; ++i) devices[i] = i;
    HcclResult r = HcclCommInitAll(static_cast<uint32_t>(nranks), devices.data(), comms.data());
    if (r != HCCL_SUCCESS) return {false, Str("HcclCommInitAll(%d) returned %d", nranks, r)};
  } else {
    HcclResult r = HcclGetRootInfo(&root_info);
    if (r != HCCL_SUCCESS) return {false, Str("HcclGetRootInfo returned %d", r)};
  }

  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < nranks; ++i) {
    threads.emplace_back([&, i] {
      RankContext& c = ctx[i];
      c.rank = i;
      c.nranks = nranks;
      c.comm = comms[i];
      bool set_device = true;
      if (mode == Mode::kThreadsRootInfo) {
        int32_t dev = static_cast<int32_t>(i % DeviceCount());
        if (aclrtSetDevice(dev) != ACL_SUCCESS) {
          c.Fail(Str("aclrtSetDevice(%d) failed", dev));
        } else {
          HcclResult r = HcclCommInitRootInfo(static_cast<uint32_t>(nranks), &root_info, static_cast<uint32_t>(i), &c.comm);
          if (r != HCCL_SUCCESS) c.Fail(Str("HcclCommInitRootInfo returned %d", r));
        }
        set_device = false;
      }
      if (c.error.empty()) RunRankBody(c, body, set_device);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(opts.timeout_s), [&] { return done == nranks; })) {
      // Threads cannot be killed; a hang must not block the suite forever.
      std::fprintf(stderr, "RunRanks(%d ranks, %s): %d of %d ranks still running after %d s; aborting the test process\n",
                   nranks, ModeName(mode), nranks - done, nranks, opts.timeout_s);
      std::fflush(stderr);
      std::_Exit(2);
    }
  }
  for (auto& t : threads) t.join();
  RunResult res;
  for (const auto& c : ctx) {
    if (c.error.empty()) continue;
    res.ok = false;
    res.message += c.error + "\n";
  }
  return res;
}

// --- processes ---

int RunChild(const ChildSpec& spec, const RankBody& body, const RunOptions& opts) {
  if (opts.rank_env)
    for (const auto& [k, v] : opts.rank_env(spec.rank)) setenv(k.c_str(), v.c_str(), 1);
  void* mem = mmap(nullptr, sizeof(SharedRegion), PROT_READ | PROT_WRITE, MAP_SHARED, spec.fd, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "rank %d: mmap of the shared region failed: %s\n", spec.rank, std::strerror(errno));
    return 1;
  }
  auto* shm = static_cast<SharedRegion*>(mem);
  EnsureAclInit();
  RankContext ctx;
  ctx.rank = spec.rank;
  ctx.nranks = spec.nranks;
  HcclRootInfo info;
  int32_t dev = static_cast<int32_t>(spec.rank % DeviceCount());
  if (aclrtSetDevice(dev) != ACL_SUCCESS) ctx.Fail(Str("aclrtSetDevice(%d) failed", dev));
  if (ctx.error.empty() && spec.rank == 0) {
    HcclResult r = HcclGetRootInfo(&info);
    shm->root_result = r;
    if (r == HCCL_SUCCESS) std::memcpy(shm->root_info, &info, sizeof(info));
    shm->ready.store(r == HCCL_SUCCESS ? 1 : 2, std::memory_order_release);
    if (r != HCCL_SUCCESS) ctx.Fail(Str("HcclGetRootInfo returned %d", r));
  } else if (ctx.error.empty()) {
    auto deadline = Clock::now() + std::chrono::seconds(60);
    uint32_t s;
    while ((s = shm->ready.load(std::memory_order_acquire)) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (s == 1) std::memcpy(&info, shm->root_info, sizeof(info));
    else if (s == 2) ctx.Fail(Str("rank 0's HcclGetRootInfo failed (%d)", shm->root_result));
    else ctx.Fail("no root info from rank 0 within 60 s");
  }
  if (ctx.error.empty()) {
    HcclResult r = HcclCommInitRootInfo(static_cast<uint32_t>(spec.nranks), &info, static_cast<uint32_t>(spec.rank), &ctx.comm);
    if (r != HCCL_SUCCESS) ctx.Fail(Str("HcclCommInitRootInfo returned %d", r));
  }
  bool ok = ctx.error.empty() && RunRankBody(ctx, body, /*set_device=*/false);
  if (!ok) {
    std::snprintf(shm->msg[spec.rank], kMsgBytes, "%s", ctx.error.c_str());
    std::fprintf(stderr, "%s\n", ctx.error.c_str());
  }
  std::fflush(stderr);
  return ok ? 0 : 1;
}

RunResult RunProcesses(int nranks, int call, const RankBody& body, const RunOptions& opts) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return {false, "RunRanks(kProcesses) must be called from inside a gtest test"};
  if (nranks > kMaxRanks) return {false, Str("RunRanks(kProcesses): %d ranks > %d", nranks, kMaxRanks)};
  int fd = memfd_create("hostccl_test_ranks", 0);  // inherited by the children (no CLOEXEC)
  if (fd < 0 || ftruncate(fd, sizeof(SharedRegion)) != 0)
    return {false, std::string("memfd for RunRanks failed: ") + std::strerror(errno)};
  void* mem = mmap(nullptr, sizeof(SharedRegion), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    close(fd);
    return {false, std::string("mmap for RunRanks failed: ") + std::strerror(errno)};
  }
  auto* shm = static_cast<SharedRegion*>(mem);

  // The children's environment: ours, with the overrides replacing same-named entries.
  auto overrides = EffectiveEnv(opts);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : overrides)
      if (kv.compare(0, k.size() + 1, k + "=") == 0) replaced = true;
    if (!replaced) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : overrides) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  const std::string filter = std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);  // child gtest chatter

  std::vector<pid_t> pids(nranks, -1);
  RunResult res;
  for (int r = 0; r < nranks; ++r) {
    std::string child = std::string(kChildFlag) + std::to_string(r) + "," + std::to_string(nranks) + "," +
                        std::to_string(call) + "," + std::to_string(fd);
    std::vector<std::string> args = {g_argv0, filter, "--gtest_also_run_disabled_tests", child};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&pids[r], "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      pids[r] = -1;
      res.ok = false;
      res.message += Str("rank %d: posix_spawn failed (errno %d)\n", r, rc);
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fd);

  auto deadline = Clock::now() + std::chrono::seconds(opts.timeout_s);
  std::vector<int> status(nranks, -1);
  int running = 0;
  for (pid_t p : pids) running += p > 0;
  while (running > 0 && Clock::now() < deadline) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] <= 0 || status[r] != -1) continue;
      int st = 0;
      if (waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        status[r] = st;
        --running;
      }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < nranks; ++r) {
    if (pids[r] <= 0) continue;
    if (status[r] == -1) {
      kill(pids[r], SIGKILL);
      int st = 0;
      waitpid(pids[r], &st, 0);
      res.ok = false;
      res.message += Str("rank %d: still running after %d s; killed\n", r, opts.timeout_s);
      continue;
    }
    int st = status[r];
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
    res.ok = false;
    std::string m = shm->msg[r][0] ? std::string(shm->msg[r]) : std::string();
    if (WIFSIGNALED(st)) res.message += Str("rank %d: killed by signal %d", r, WTERMSIG(st));
    else res.message += Str("rank %d: exit status %d", r, WEXITSTATUS(st));
    res.message += m.empty() ? "\n" : ": " + m + "\n";
  }
  munmap(mem, sizeof(SharedRegion));
  return res;
}

}  // namespace

bool RankContext::Fail(const std::string& msg) {
  if (error.empty()) error = "rank " + std::to_string(rank) + ": " + msg;
  return false;
}

bool AllowHostBuffers(RankContext& ctx) {
  if (HostcclCommAllowHostBuffers(ctx.comm) == HCCL_SUCCESS) return true;
  return ctx.Fail(std::string("HostcclCommAllowHostBuffers failed: ") + aclGetRecentErrMsg());
}

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kThreadsInitAll: return "threads-initall";
    case Mode::kThreadsRootInfo: return "threads-rootinfo";
    case Mode::kProcesses: return "processes";
  }
  return "?";
}

RunResult RunRanks(int nranks, Mode mode, const RankBody& body, const RunOptions& opts) {
  const int call = NextCallIndex();
  if (g_child) {
    if (call != g_child->call) return {true, "skipped in a rank child"};
    std::fflush(stdout);
    std::_Exit(RunChild(*g_child, body, opts));
  }
  if (nranks < 1) return {false, Str("RunRanks: nranks %d < 1", nranks)};
  if (mode == Mode::kProcesses) return RunProcesses(nranks, call, body, opts);
  return RunThreads(nranks, mode, body, opts);
}

bool IsRankChild() { return g_child.has_value(); }

bool InitHarness(int* argc, char** argv) {
  if (*argc > 0 && argv[0] != nullptr) g_argv0 = argv[0];
  int out = 0;
  bool ok = true;
  for (int i = 0; i < *argc; ++i) {
    if (std::strncmp(argv[i], kChildFlag, std::strlen(kChildFlag)) == 0) {
      ChildSpec s{};
      if (std::sscanf(argv[i] + std::strlen(kChildFlag), "%d,%d,%d,%d", &s.rank, &s.nranks, &s.call, &s.fd) == 4)
        g_child = s;
      else
        ok = false;
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
  return ok;
}

int ChildFinishedWithoutRun() {
  std::fprintf(stderr, "rank child %d: the test finished without reaching RunRanks call #%d\n",
               g_child ? g_child->rank : -1, g_child ? g_child->call : -1);
  return 3;
}

}  // namespace hostccl::test
