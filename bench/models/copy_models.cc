// copy_models: what two cores can do for the 2-rank, large-message AllGather, AllReduce and AlltoAll
// cells,
// without the library: two threads pinned to the first two CPUs of the affinity mask, buffers on
// 2 MiB pages (madvise) touched before the first call, a spin barrier before and after each call,
// the median of 35 timed calls after 5 warm-up ones (µs). docs/performance.md "Open gaps against
// the targets" compares hostccl's times with these.
//
//   copy_models allgather S_MiB [piece_KiB, 256]   recvBuf S per rank, each thread's block S/2,
//   each thread copies its block into both recvBufs piece by piece:
//     memcpy2     two memcpy per piece
//     fused       one AVX-512 pass per piece: each 64 bytes loaded once and stored twice
//     each        one AVX-512 copy per piece and destination
//   copy_models allreduce S_MiB [piece_KiB, 128]   fp32 sum of two S inputs into two S outputs,
//   thread t takes the pieces t, t+2, ...:
//     push        folds a piece of both inputs into its own output, then copies it into the other's
//     scratch     folds a piece into a cache-resident scratch piece, then copies it into both
//                 outputs (the shape of hostccl's "shm" AllReduce, algo/allreduce/allreduce_slices.cc)
//     replicated  each thread folds the whole input into its own output
//     pull        each folds its half into its own output; a barrier; each copies the other half
//                 out of the other's output
//     push_nt     push with non-temporal stores into the other's output
//   copy_models alltoall S_MiB [piece_KiB, 256]   sendBuf = recvBuf = S per rank, blocks of S/2:
//   block b of thread t's input goes to block t of thread b's output:
//     pull        each thread copies both blocks of its output out of the two inputs
//     push        each thread copies both blocks of its input into the two outputs
//     claimed     the four blocks' pieces taken in turn, thread t the pieces t, t+2, ... of each
//                 (the shape of hostccl's "shm" AlltoAll, algo/alltoall/alltoall_peer.cc)
//     pull_nt     pull with non-temporal stores
//     claimed_nt  claimed with non-temporal stores
// Every variant of the chosen collective runs in turn, `-r R` rounds of them (default 3).
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "two_cpus.h"

namespace {

constexpr int kWarmup = 5, kTimed = 35;

char* Alloc(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  memset(p, 1, bytes);
  return static_cast<char*>(p);
}

__attribute__((target("avx512f"))) void CopyOnce(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(d + i, _mm512_loadu_si512(s + i));
  memcpy(d + i, s + i, n - i);
}

__attribute__((target("avx512f"))) void CopyTwice(char* d0, char* d1, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_loadu_si512(s + i);
    _mm512_storeu_si512(d0 + i, v);
    _mm512_storeu_si512(d1 + i, v);
  }
  memcpy(d0 + i, s + i, n - i);
  memcpy(d1 + i, s + i, n - i);
}

// d = a + b over n floats (n a multiple of 16: every size here is).
__attribute__((target("avx512f"))) void Add(float* d, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(d + i, _mm512_add_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
}

__attribute__((target("avx512f"))) void CopyNT(float* d, const float* s, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_stream_ps(d + i, _mm512_loadu_ps(s + i));
  _mm_sfence();
}

// Two threads; Wait() returns once both called it (generation counting).
class SpinBarrier {
 public:
  void Wait(int* gen) {
    *gen += 1;
    if (count_.fetch_add(1) == 1) {
      count_.store(0);
      done_.store(*gen);
    } else {
      while (done_.load() != *gen) _mm_pause();
    }
  }

 private:
  std::atomic<int> count_{0};
  std::atomic<int> done_{0};
};

// Runs body(t, &barrier_gen) on two pinned threads per call; returns the median call in µs.
double Measure(const std::vector<int>& cpus, const std::function<void(int, SpinBarrier*, int*)>& body) {
  SpinBarrier bar;
  std::vector<double> us;
  auto run = [&](int t) {
    models::PinThisThread(cpus[static_cast<size_t>(t)]);
    int gen = 0;
    for (int it = 0; it < kWarmup + kTimed; ++it) {
      bar.Wait(&gen);
      const auto t0 = std::chrono::steady_clock::now();
      body(t, &bar, &gen);
      bar.Wait(&gen);
      if (t == 0 && it >= kWarmup)
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

int Usage() {
  fprintf(stderr, "usage: copy_models allgather|allreduce|alltoall SIZE_MiB [PIECE_KiB] [-r ROUNDS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-r" && i + 1 < argc) rounds = atoi(argv[++i]);
    else pos.emplace_back(argv[i]);
  }
  if (pos.size() < 2 || (pos[0] != "allgather" && pos[0] != "allreduce" && pos[0] != "alltoall")) return Usage();
  const size_t bytes = static_cast<size_t>(atol(pos[1].c_str())) << 20;
  const long piece_kib = pos.size() > 2 ? atol(pos[2].c_str()) : pos[0] == "allreduce" ? 128 : 256;
  const size_t piece = static_cast<size_t>(std::max(piece_kib, 0L)) << 10;
  if (bytes == 0 || piece == 0 || bytes % (2 * 64) != 0 || rounds < 1) return Usage();
  if (!__builtin_cpu_supports("avx512f")) {
    fprintf(stderr, "copy_models: needs AVX-512F\n");
    return 1;
  }
  const std::vector<int> cpus = models::FirstTwoCpus();
  if (cpus.size() < 2) {
    fprintf(stderr, "copy_models: needs two CPUs\n");
    return 1;
  }
  std::vector<std::pair<const char*, std::function<void(int, SpinBarrier*, int*)>>> variants;
  char* in[2] = {Alloc(bytes), Alloc(bytes)};
  char* out[2] = {Alloc(bytes), Alloc(bytes)};
  if (pos[0] == "allgather") {
    const size_t block = bytes / 2;  // thread t's block: in[t][0, block) -> out[*][t * block, ...)
    auto pieces = [=](int t, const std::function<void(char*, char*, const char*, size_t)>& copy) {
      for (size_t lo = 0; lo < block; lo += piece) {
        const size_t n = std::min(piece, block - lo);
        copy(out[t] + t * block + lo, out[1 - t] + t * block + lo, in[t] + lo, n);
      }
    };
    variants.push_back({"memcpy2", [=](int t, SpinBarrier*, int*) {
                          pieces(t, [](char* a, char* b, const char* s, size_t n) {
                            memcpy(a, s, n);
                            memcpy(b, s, n);
                          });
                        }});
    variants.push_back({"fused", [=](int t, SpinBarrier*, int*) { pieces(t, CopyTwice); }});
    variants.push_back({"each", [=](int t, SpinBarrier*, int*) {
                          pieces(t, [](char* a, char* b, const char* s, size_t n) {
                            CopyOnce(a, s, n);
                            CopyOnce(b, s, n);
                          });
                        }});
  } else if (pos[0] == "alltoall") {
    const size_t block = bytes / 2;
    // Block b of in[t] -> block t of out[b], pieces [lo, lo + n) of it.
    auto move = [=](int t, int b, size_t lo, size_t n, bool nt) {
      char* d = out[b] + t * block + lo;
      const char* s = in[t] + b * block + lo;
      if (nt) CopyNT(reinterpret_cast<float*>(d), reinterpret_cast<const float*>(s), n / 4);
      else memcpy(d, s, n);
    };
    auto pull = [=](int me, bool nt) {
      for (int from = 0; from < 2; ++from)
        for (size_t lo = 0; lo < block; lo += piece) move(from, me, lo, std::min(piece, block - lo), nt);
    };
    variants.push_back({"pull", [=](int t, SpinBarrier*, int*) { pull(t, false); }});
    variants.push_back({"push", [=](int t, SpinBarrier*, int*) {
                          for (int to = 0; to < 2; ++to)
                            for (size_t lo = 0; lo < block; lo += piece) move(t, to, lo, std::min(piece, block - lo), false);
                        }});
    variants.push_back({"claimed", [=](int t, SpinBarrier*, int*) {
                          for (int k = 0; k < 4; ++k)
                            for (size_t lo = static_cast<size_t>(t) * piece; lo < block; lo += 2 * piece)
                              move(k / 2, k % 2, lo, std::min(piece, block - lo), false);
                        }});
    variants.push_back({"pull_nt", [=](int t, SpinBarrier*, int*) { pull(t, true); }});
    variants.push_back({"claimed_nt", [=](int t, SpinBarrier*, int*) {
                          for (int k = 0; k < 4; ++k)
                            for (size_t lo = static_cast<size_t>(t) * piece; lo < block; lo += 2 * piece)
                              move(k / 2, k % 2, lo, std::min(piece, block - lo), true);
                        }});
  } else {
    const size_t n = bytes / 4, pn = std::max<size_t>(piece / 4, 16);
    float* s0 = reinterpret_cast<float*>(in[0]);
    float* s1 = reinterpret_cast<float*>(in[1]);
    float* r[2] = {reinterpret_cast<float*>(out[0]), reinterpret_cast<float*>(out[1])};
    auto push = [=](int t, bool nt) {
      for (size_t p = static_cast<size_t>(t) * pn; p < n; p += 2 * pn) {
        const size_t m = std::min(pn, n - p);
        Add(r[t] + p, s0 + p, s1 + p, m);
        if (nt) CopyNT(r[1 - t] + p, r[t] + p, m);
        else memcpy(r[1 - t] + p, r[t] + p, m * 4);
      }
    };
    variants.push_back({"push", [=](int t, SpinBarrier*, int*) { push(t, false); }});
    float* tmp[2] = {reinterpret_cast<float*>(Alloc(piece)), reinterpret_cast<float*>(Alloc(piece))};
    variants.push_back({"scratch", [=](int t, SpinBarrier*, int*) {
                          for (size_t p = static_cast<size_t>(t) * pn; p < n; p += 2 * pn) {
                            const size_t m = std::min(pn, n - p);
                            Add(tmp[t], s0 + p, s1 + p, m);
                            memcpy(r[t] + p, tmp[t], m * 4);
                            memcpy(r[1 - t] + p, tmp[t], m * 4);
                          }
                        }});
    variants.push_back({"replicated", [=](int t, SpinBarrier*, int*) { Add(r[t], s0, s1, n); }});
    variants.push_back({"pull", [=](int t, SpinBarrier* bar, int* gen) {
                          for (size_t p = static_cast<size_t>(t) * pn; p < n; p += 2 * pn)
                            Add(r[t] + p, s0 + p, s1 + p, std::min(pn, n - p));
                          bar->Wait(gen);
                          for (size_t p = static_cast<size_t>(1 - t) * pn; p < n; p += 2 * pn)
                            memcpy(r[t] + p, r[1 - t] + p, std::min(pn, n - p) * 4);
                        }});
    variants.push_back({"push_nt", [=](int t, SpinBarrier*, int*) { push(t, true); }});
  }
  printf("# %s, %zu MiB, pieces of %zu KiB, CPUs %d and %d: median of %d calls, us\n", pos[0].c_str(), bytes >> 20,
         piece >> 10, cpus[0], cpus[1], kTimed);
  for (int round = 1; round <= rounds; ++round)
    for (const auto& [name, body] : variants) printf("round %d  %-10s %9.0f\n", round, name, Measure(cpus, body));
  return 0;
}
