// hostccl_soak (reliability.md row 8, long; run by scripts/soak.sh, not by ctest): ranks are
// threads of this process (HOSTCCL_TRANSPORT picks their shared segment, in-process or TCP). Phases:
//   small   N small HcclReduce calls back to back on one 4-rank communicator (default 100,000);
//   multi   8 communicators of 2 ranks used at once, each on its own stream per rank;
//   cycles  create / use / destroy a 2-rank communicator C times (default 1,000).
// Before and after each phase (after a warm-up) it reads open fds, threads, RSS and /dev/shm, and
// exits 1 if fds, threads or /dev/shm objects grew at all (zero growth; re-measured for up to 2 s
// while background threads wind down), RSS grew by more than 64 MiB, or a result was wrong.
// A short run (soak_quick, ctest label fault) is in the default test run. Usage: hostccl_soak [--small N] [--multi ITERS] [--cycles C]
#include <acl/acl.h>
#include <dirent.h>
#include <hccl/hccl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Usage {
  long fds = 0, threads = 0, rss_kb = 0;
  std::set<std::string> shm;
};

long CountDir(const char* path) {
  long n = 0;
  if (DIR* d = opendir(path)) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

Usage Measure() {
  Usage u;
  u.fds = CountDir("/proc/self/fd") - 1;  // minus the one opendir holds
  u.threads = CountDir("/proc/self/task");
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("VmRSS:", 0) == 0) u.rss_kb = std::atol(line.c_str() + 6);
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') u.shm.insert(e->d_name);
    closedir(d);
  }
  return u;
}

bool Grew(const Usage& a, const Usage& b) {
  bool new_shm = false;
  for (const auto& n : b.shm) new_shm |= !a.shm.count(n);
  return b.fds > a.fds || b.threads > a.threads || new_shm;
}

// Measures after a phase. Background threads (a root server sending its last table, a stream
// worker going idle) may still be releasing what they held: re-measure for up to 2 s before
// calling anything a leak. A real leak stays and fails the check.
Usage MeasureAfter(const Usage& before) {
  Usage u = Measure();
  for (int i = 0; i < 100 && Grew(before, u); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    u = Measure();
  }
  return u;
}

bool g_ok = true;

void Check(const char* phase, const Usage& a, const Usage& b) {
  std::string new_shm;
  for (const auto& n : b.shm)
    if (!a.shm.count(n)) new_shm += " " + n;
  std::printf("soak %-7s fds %ld -> %ld, threads %ld -> %ld, RSS %ld -> %ld KiB, new /dev/shm:%s\n", phase, a.fds,
              b.fds, a.threads, b.threads, a.rss_kb, b.rss_kb, new_shm.empty() ? " none" : new_shm.c_str());
  if (Grew(a, b) || b.rss_kb - a.rss_kb > 64 * 1024) {
    std::printf("soak %s: LEAK; open fds now:", phase);
    if (DIR* d = opendir("/proc/self/fd")) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char target[256] = {};
        std::string link = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(link.c_str(), target, sizeof(target) - 1) > 0) std::printf(" %s=%s", e->d_name, target);
      }
      closedir(d);
    }
    std::printf("\n");
    g_ok = false;
  }
}

void Fail(const std::string& m) {
  std::printf("soak: FAIL %s (%s)\n", m.c_str(), aclGetRecentErrMsg());
  g_ok = false;
}

// Runs body(rank) on n threads, each with its device set and its communicator from a fresh root info.
void WithComm(int n, const std::function<void(int, HcclComm)>& body) {
  HcclRootInfo info;
  if (HcclGetRootInfo(&info) != HCCL_SUCCESS) return Fail("HcclGetRootInfo");
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      aclrtSetDevice(r);
      HcclComm comm = nullptr;
      if (HcclCommInitRootInfo(n, &info, r, &comm) != HCCL_SUCCESS) return Fail("HcclCommInitRootInfo");
      body(r, comm);
      if (HcclCommDestroy(comm) != HCCL_SUCCESS) Fail("HcclCommDestroy");
    });
  for (auto& t : ts) t.join();
}

constexpr uint64_t kCount = 256;

struct Bufs {
  void* send = nullptr;
  void* recv = nullptr;
  explicit Bufs(float v) {
    aclrtMalloc(&send, kCount * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&recv, kCount * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    std::vector<float> h(kCount, v);
    aclrtMemcpy(send, kCount * 4, h.data(), kCount * 4, ACL_MEMCPY_HOST_TO_DEVICE);
  }
  float First() const {
    float v = 0;
    aclrtMemcpy(&v, 4, recv, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
  }
  ~Bufs() {
    aclrtFree(send);
    aclrtFree(recv);
  }
};

// Sum of rank+1 over n ranks.
float Expected(int n) { return static_cast<float>(n * (n + 1) / 2); }

void Small(long calls) {
  const int n = 4;
  WithComm(n, [&](int r, HcclComm comm) {
    aclrtStream s;
    aclrtCreateStream(&s);
    Bufs b(static_cast<float>(r + 1));
    for (long i = 0; i < calls && g_ok; ++i) {
      if (HcclReduce(b.send, b.recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s) != HCCL_SUCCESS)
        return Fail("HcclReduce (small)");
      if ((i + 1) % 1000 == 0 || i + 1 == calls) {
        if (aclrtSynchronizeStream(s) != ACL_SUCCESS) return Fail("synchronize (small)");
        if (r == 0 && b.First() != Expected(n)) return Fail("wrong result (small) at call " + std::to_string(i));
      }
    }
    aclrtDestroyStream(s);
  });
}

void Multi(int iters) {
  const int n = 2, k = 8;
  std::vector<HcclRootInfo> infos(k);
  for (auto& i : infos)
    if (HcclGetRootInfo(&i) != HCCL_SUCCESS) return Fail("HcclGetRootInfo (multi)");
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      aclrtSetDevice(r);
      std::vector<HcclComm> comms(k);
      std::vector<aclrtStream> streams(k);
      std::vector<std::unique_ptr<Bufs>> bufs;
      for (int c = 0; c < k; ++c) {
        if (HcclCommInitRootInfo(n, &infos[c], r, &comms[c]) != HCCL_SUCCESS) return Fail("init (multi)");
        aclrtCreateStream(&streams[c]);
        bufs.push_back(std::make_unique<Bufs>(static_cast<float>(r + 1)));
      }
      for (int i = 0; i < iters && g_ok; ++i) {
        for (int c = 0; c < k; ++c)
          if (HcclReduce(bufs[c]->send, bufs[c]->recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comms[c],
                         streams[c]) != HCCL_SUCCESS)
            return Fail("HcclReduce (multi)");
        for (int c = 0; c < k; ++c)
          if (aclrtSynchronizeStream(streams[c]) != ACL_SUCCESS) return Fail("synchronize (multi)");
        if (r == 0)
          for (int c = 0; c < k; ++c)
            if (bufs[c]->First() != Expected(n)) return Fail("wrong result (multi)");
      }
      for (int c = 0; c < k; ++c) {
        aclrtDestroyStream(streams[c]);
        HcclCommDestroy(comms[c]);
      }
    });
  for (auto& t : ts) t.join();
}

void Cycles(int cycles) {
  for (int i = 0; i < cycles && g_ok; ++i)
    WithComm(2, [&](int r, HcclComm comm) {
      aclrtStream s;
      aclrtCreateStream(&s);
      Bufs b(static_cast<float>(r + 1));
      if (HcclReduce(b.send, b.recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s) != HCCL_SUCCESS ||
          aclrtSynchronizeStream(s) != ACL_SUCCESS)
        Fail("reduce (cycles) at cycle " + std::to_string(i));
      else if (r == 0 && b.First() != Expected(2))
        Fail("wrong result (cycles)");
      aclrtDestroyStream(s);
    });
}

}  // namespace

int main(int argc, char** argv) {
  long small = 100000;
  int multi = 2000, cycles = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--small")) small = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--multi")) multi = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--cycles")) cycles = std::atoi(argv[i + 1]);
  }
  aclInit(nullptr);
  // Warm-up: lazily created pools, thread caches and kernels exist before the first measurement.
  Small(100);
  Multi(2);
  Cycles(2);
  Usage u0 = Measure();
  Small(small);
  Usage u1 = MeasureAfter(u0);
  Check("small", u0, u1);
  Multi(multi);
  Usage u2 = MeasureAfter(u1);
  Check("multi", u1, u2);
  Cycles(cycles);
  Usage u3 = MeasureAfter(u2);
  Check("cycles", u2, u3);
  aclFinalize();
  std::printf("soak: %s\n", g_ok ? "PASS" : "FAIL");
  return g_ok ? 0 : 1;
}
