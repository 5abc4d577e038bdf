// exchange_model: what the isolated 8 B cells of the benchmark measure at 2 ranks, without any
// library. Two threads pinned to the first two CPUs of the affinity mask repeat
//   exchange (the "barrier"), t0, exchange (the "call"), t1
// where an exchange is one 8-byte store by each thread and a spin until the other's store is seen.
// Each thread keeps its own t1 - t0 per iteration, as hostccl_coll_bench -I and mpi_coll_bench -I
// do, and the model prints what those benchmarks print at 2 ranks (the median of each rank, the
// larger of the two is the "max over ranks" column) plus what they cannot see: how far apart the
// two threads leave the barrier (the clock is one clock for both threads) and whether the same
// thread is the later one iteration after iteration. docs/performance.md "8-byte isolated calls at
// 2 ranks: the barrier's exit skew" reads it.
//
//   exchange_model [own|mailbox] [-n ITERS, 20000] [-r ROUNDS, 3]
//     own      each thread stores into its own line and polls the other's (hostccl's arrival
//              slots, transport/shm/shm_group.cc)
//     mailbox  each thread stores into the other's line and polls its own (a receiver-side
//              mailbox, the shape of Open MPI vader's fast boxes)
// Both variants run in turn when none is named; min(ITERS, 1,000) untimed iterations come first.
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "two_cpus.h"

namespace {

struct alignas(64) Line {
  std::atomic<uint64_t> seq{0};
};
constexpr int kLines = 64;  // a ring of lines per thread, as the arrival slots are a ring

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Model {
  bool mailbox = false;
  Line lines[2][kLines];

  // Thread t's exchange number s: one store, then a spin until the other thread's store is seen.
  void Exchange(int t, uint64_t s) {
    const size_t i = s % kLines;
    Line& mine = mailbox ? lines[1 - t][i] : lines[t][i];
    Line& theirs = mailbox ? lines[t][i] : lines[1 - t][i];
    mine.seq.store(s, std::memory_order_release);
    // A spin; yielding only after ~65,000 looks, so that a model sharing its CPUs (a test run
    // beside others) still moves on.
    for (uint32_t n = 0; theirs.seq.load(std::memory_order_acquire) < s; ++n) {
      if (n < (1u << 16)) {
        _mm_pause();
      } else {
        sched_yield();
      }
    }
  }
};

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Round(const std::vector<int>& cpus, bool mailbox, int iters, int round) {
  auto m = std::make_unique<Model>();  // 8 KiB of aligned lines: on the heap
  m->mailbox = mailbox;
  std::vector<int64_t> t0[2], t1[2];
  auto run = [&](int t) {
    models::PinThisThread(cpus[static_cast<size_t>(t)]);
    t0[t].resize(static_cast<size_t>(iters));
    t1[t].resize(static_cast<size_t>(iters));
    uint64_t s = 0;
    for (int i = -std::min(iters, 1000); i < iters; ++i) {
      m->Exchange(t, ++s);
      const int64_t a = NowNs();
      m->Exchange(t, ++s);
      const int64_t b = NowNs();
      if (i >= 0) {
        t0[t][static_cast<size_t>(i)] = a;
        t1[t][static_cast<size_t>(i)] = b;
      }
    }
  };
  std::thread other(run, 1);
  run(0);
  other.join();
  std::vector<int64_t> d[2], skew, span;
  int later1 = 0, later0 = 0;  // iterations in which thread 1 (0) left the barrier >= 20 ns later
  for (size_t i = 0; i < static_cast<size_t>(iters); ++i) {
    for (int t = 0; t < 2; ++t) d[t].push_back(t1[t][i] - t0[t][i]);
    const int64_t k = t0[1][i] - t0[0][i];
    skew.push_back(std::llabs(k));
    later1 += k >= 20;
    later0 += k <= -20;
    span.push_back(std::max(t1[0][i], t1[1][i]) - std::max(t0[0][i], t0[1][i]));
  }
  const int64_t m0 = Median(d[0]), m1 = Median(d[1]);
  const int64_t period = (t0[0].back() - t0[0].front()) / (iters - 1);
  printf(
      "round %d  %-8s rank medians %4lld %4lld ns (max %4lld) | exit skew %4lld ns, the same "
      "thread later in %3d %% | later start to last end %4lld ns | period %4lld ns\n",
      round, mailbox ? "mailbox" : "own", static_cast<long long>(m0), static_cast<long long>(m1),
      static_cast<long long>(std::max(m0, m1)), static_cast<long long>(Median(skew)),
      100 * std::max(later0, later1) / std::max(1, later0 + later1),
      static_cast<long long>(Median(span)), static_cast<long long>(period));
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> variants;
  int iters = 20000, rounds = 3;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "own") || !strcmp(argv[i], "mailbox")) {
      variants.emplace_back(argv[i]);
    } else {
      fprintf(stderr, "usage: exchange_model [own|mailbox] [-n ITERS] [-r ROUNDS]\n");
      return 2;
    }
  }
  if (iters < 2 || rounds < 1) {
    fprintf(stderr, "exchange_model: -n needs at least 2 and -r at least 1\n");
    return 2;
  }
  if (variants.empty()) variants = {"own", "mailbox"};
  const std::vector<int> cpus = models::FirstTwoCpus();
  if (cpus.size() < 2) {
    fprintf(stderr, "exchange_model: needs two CPUs in the affinity mask\n");
    return 2;
  }
  for (int r = 1; r <= rounds; ++r)
    for (const std::string& v : variants) Round(cpus, v == "mailbox", iters, r);
  return 0;
}
