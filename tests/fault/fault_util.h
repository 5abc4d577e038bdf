// Helpers shared by the fault-injection tests (tests/fault/*_test.cc): device buffers, a
// millisecond clock, the transports every multi-process case runs over, a /dev/shm listing and a
// per-run scratch directory through which rank children publish their pids.
// Public API only (acl/acl.h, hccl/hccl.h); everything here runs on the calling thread.
#pragma once

#include <acl/acl.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <hccl/hccl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/run_ranks.h"

namespace hostccl::faulttest {

// Sanitized builds (scripts/sanitize.sh) run several times slower: "fails within N ms" bounds are
// multiplied by this, which still keeps them well below the tests' exec timeouts (10-20 s).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int64_t kSlowdown = 3;
#else
inline constexpr int64_t kSlowdown = 1;
#endif
// For bounds on calls that move tens of MiB: TSan instruments every access of the copies and
// folds, and such a call's remaining work takes ~10x its plain time (a survivor of
// peer_death_collectives_test finishes its part of a 64 MiB AlltoAllV 0.6 s after the death in a
// plain build, up to 9.5 s under TSan with two tests side by side). 2 s x 9 is still below that
// test's 20 s exec timeout, so a failure by timeout stays out of bounds.
#if defined(__SANITIZE_THREAD__)
inline constexpr int64_t kHeavySlowdown = 3 * kSlowdown;
#else
inline constexpr int64_t kHeavySlowdown = kSlowdown;
#endif

// Binds a TCP socket to `port` (0: the kernel's choice) and closes it: the port bound, or 0.
inline int BindAndRelease(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  sa.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(sa);
  int bound = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
    bound = ntohs(sa.sin_port);
  close(fd);
  return bound;
}

// A TCP port no process holds right now. Tests that need a fixed root port (HCCL_IF_BASE_PORT)
// take one from here: ports derived from the pid collided between test processes running side by
// side. Taken below the kernel's ephemeral range (32768-60999 by default): a port the kernel hands
// out for bind(0) may be given again, before the test's root binds it, to the local end of an
// outgoing connection of a test running alongside. Random in [20000, 32000), checked bindable;
// bind(0) if none is found.
inline int FreeTcpPort() {
  static uint64_t state = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
                          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int i = 0; i < 64; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int port = 20000 + static_cast<int>((state >> 33) % 12000);
    if (BindAndRelease(port) == port) return port;
  }
  return BindAndRelease(0);
}

// Tests that look at memory a stream task may be writing, without synchronizing (a 1-byte marker
// set by aclrtMemsetAsync after a queued call: no AscendCL call reads device memory without
// synchronizing, and a synchronize would change what is tested, since it runs pending work). One
// byte, never torn; hidden from ThreadSanitizer, which would report the look as a race with the
// task's memset.
__attribute__((no_sanitize("thread"))) inline char PeekByte(const void* p) {
  return *static_cast<const volatile char*>(p);
}
// The number of markers set (== 1) among the first n bytes at p.
inline int MarkersSet(const void* p, int n) {
  int set = 0;
  for (int i = 0; i < n; ++i) set += PeekByte(static_cast<const char*>(p) + i) == 1;
  return set;
}

// Whether a run (RunResult::message: one line per failing rank) failed only because rank `victim`
// was killed by SIGKILL: its "rank V: killed by signal 9" line is there and no other line is.
// Otherwise `why` gets the other lines, and says so when the victim's is missing.
inline bool OnlyRankKilled(const std::string& message, int victim, std::string* why) {
  const std::string killed = "rank " + std::to_string(victim) + ": killed by signal 9";
  std::istringstream in(message);
  std::string line;
  bool seen = false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.rfind(killed, 0) == 0) {
      seen = true;
      continue;
    }
    *why += line + "\n";
  }
  if (!seen) *why += "rank " + std::to_string(victim) + " was not reported killed by SIGKILL\n";
  return why->empty();
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One aclrtMalloc allocation, filled with `value` as fp32 (enough for every case here).
struct DevBuf {
  void* ptr = nullptr;
  size_t bytes = 0;
  // fill=false leaves the contents as allocated (large buffers whose values do not matter).
  bool Alloc(size_t n, float value = 1.0f, bool fill = true) {
    bytes = n;
    if (aclrtMalloc(&ptr, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return false;
    if (!fill) return true;
    std::vector<float> host(n / sizeof(float), value);
    return aclrtMemcpy(ptr, n, host.data(), host.size() * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
  }
  float At(size_t i) const {
    float v = 0;
    (void)aclrtMemcpy(&v, sizeof(v), static_cast<char*>(ptr) + i * sizeof(float), sizeof(v), ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
  }
  ~DevBuf() {
    if (ptr) (void)aclrtFree(ptr);
  }
};

// The multi-process transports: shared memory (the default for processes of one host) and TCP.
inline std::vector<std::pair<std::string, std::string>> TransportEnv(const std::string& transport) {
  return {{"HOSTCCL_TRANSPORT", transport}};
}

// The RunOptions of one placement of the fault grids: "threads" (nothing set: their shared
// segment), "threads_local" (HOSTCCL_TRANSPORT=local: the in-process plans), "nodes" (ranks 0-1
// and 2-3 on two emulated hosts, "<tag>-host-a" and "<tag>-host-b"), "shm_host_buffers" (shared
// memory; the case itself passes host buffers) or a transport ("shm", "tcp": TransportEnv); with
// the exec and connect timeouts (ms) and the harness's bound on the whole run (s, times kSlowdown
// under the sanitizers: the 59 cases of mismatch_collectives_test on "nodes" take ~90 s under TSan).
inline test::RunOptions PlacementOptions(const std::string& placement, const std::string& tag, int exec_ms,
                                         int connect_ms, int run_s) {
  test::RunOptions o;
  if (placement == "nodes") {
    o.rank_env = [tag](int rank) {
      return std::vector<std::pair<std::string, std::string>>{{"HOSTCCL_NODE_ID", tag + (rank < 2 ? "-host-a" : "-host-b")}};
    };
  } else if (placement == "shm_host_buffers") {
    o.env = TransportEnv("shm");
  } else if (placement == "threads_local") {
    o.env = TransportEnv("local");
  } else if (placement != "threads") {
    o.env = TransportEnv(placement);
  }
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", std::to_string(exec_ms)});
  o.env.push_back({"HOSTCCL_CONNECT_TIMEOUT_MS", std::to_string(connect_ms)});
  o.timeout_s = static_cast<int>(run_s * kSlowdown);
  return o;
}

inline std::set<std::string> ListDevShm() {
  std::set<std::string> out;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") out.insert(n);
    }
    closedir(d);
  }
  return out;
}

// Entries of `after` that are not in `before`.
inline std::string NewEntries(const std::set<std::string>& before, const std::set<std::string>& after) {
  std::string s;
  for (const auto& n : after)
    if (!before.count(n)) s += n + " ";
  return s;
}

// A scratch directory made by the parent and handed to the rank children through the environment
// variable FAULTTEST_DIR (children only read it). Ranks publish their pid as <dir>/pid.<rank>.
inline constexpr const char* kDirVar = "FAULTTEST_DIR";

inline std::string ScratchDir();

// Rank children re-run the test body from the top: they use the parent's directory (from the
// environment) instead of making one nobody would remove.
inline std::string MakeScratchDir() {
  if (hostccl::test::IsRankChild()) return ScratchDir();
  char tmpl[] = "/tmp/hostccl-faulttest-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? std::string(d) : std::string("/tmp");
}

inline void RemoveScratchDir(const std::string& dir) {
  if (hostccl::test::IsRankChild()) return;  // the parent owns it
  if (dir.rfind("/tmp/hostccl-faulttest-", 0) != 0) return;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") unlink((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

inline std::string ScratchDir() {
  const char* d = std::getenv(kDirVar);
  return d ? d : "";
}

inline void PublishPid(int rank) {
  std::string path = ScratchDir() + "/pid." + std::to_string(rank);
  std::ofstream(path + ".tmp") << getpid() << "\n";
  (void)rename((path + ".tmp").c_str(), path.c_str());
}

// The pid rank `rank` published, waiting up to `wait_ms` for it; -1 if none.
inline pid_t PeerPid(int rank, int wait_ms = 5000) {
  std::string path = ScratchDir() + "/pid." + std::to_string(rank);
  for (int64_t end = NowMs() + wait_ms; NowMs() < end;) {
    std::ifstream in(path);
    long pid = -1;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

// Marker files in the scratch directory: a rank writes one (with a value, e.g. a time) and
// another waits for it; a cheap out-of-band signal that does not go through the library.
inline void WriteMark(const std::string& name, int64_t value) {
  std::string path = ScratchDir() + "/" + name;
  std::ofstream(path + ".tmp") << value << "\n";
  (void)rename((path + ".tmp").c_str(), path.c_str());
}

// The value of mark `name`, waiting up to `wait_ms` for it to appear; -1 if it does not.
inline int64_t ReadMark(const std::string& name, int wait_ms) {
  std::string path = ScratchDir() + "/" + name;
  for (int64_t end = NowMs() + wait_ms;;) {
    std::ifstream in(path);
    long long v = -1;
    if (in >> v) return v;
    if (NowMs() >= end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

inline std::string Errno(const char* what, HcclResult r) {
  return std::string(what) + " returned " + std::to_string(static_cast<int>(r));
}

// One rank's verdict on the calls it issued: the synchronize's code, the communicator's async
// code, the recent error message and the time since `start_ms` (NowMs), synchronize included.
struct Verdict {
  aclError sync = ACL_SUCCESS;
  HcclResult async = HCCL_SUCCESS;
  std::string msg;
  int64_t ms = 0;
};

inline Verdict SynchronizeVerdict(hostccl::test::RankContext& c, int64_t start_ms) {
  Verdict v;
  v.sync = aclrtSynchronizeStream(c.stream);
  v.ms = NowMs() - start_ms;
  v.msg = aclGetRecentErrMsg();
  (void)HcclGetCommAsyncError(c.comm, &v.async);
  return v;
}

// One fp32 sum HcclReduce into root 0 followed by synchronize; returns the synchronize result.
inline aclError ReduceAndSync(hostccl::test::RankContext& ctx, DevBuf& send, DevBuf& recv, uint64_t count,
                              HcclResult* enqueue_rc) {
  *enqueue_rc = HcclReduce(send.ptr, recv.ptr, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, ctx.comm, ctx.stream);
  if (*enqueue_rc != HCCL_SUCCESS) return ACL_SUCCESS;
  return aclrtSynchronizeStream(ctx.stream);
}

}  // namespace hostccl::faulttest
