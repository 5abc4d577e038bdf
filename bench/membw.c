/* membw: the memory bandwidths behind the memory-traffic bounds of bench/run_bench.sh.
 *
 *   R = streaming read bandwidth: every online CPU runs one thread that reads its share of a large
 *       array with vector loads into 8 independent integer accumulators (no floating-point add
 *       chain, so the loop is limited by memory, not by add latency);
 *   W = non-temporal write bandwidth: every thread writes its share with streaming (non-temporal)
 *       vector stores, then a store fence, so no line is read for ownership;
 *   Wc = ordinary write bandwidth (memset), printed for information only;
 *   C = copy bandwidth (bytes copied per second: streaming reads and non-temporal stores at once),
 *       which shows whether reads and writes overlap: the sum model below needs 1/C >= 1/R + 1/W;
 *   X = the cross-core round trip of one cache line, in ns: two threads pinned to the first two
 *       online CPUs hand a counter back and forth (the floor under every small call that waits
 *       for another rank; on a VM it moves when the hypervisor moves the vCPUs). The median of -r
 *       runs of 100,000 round trips; no line when fewer than 2 CPUs are online.
 * In GB/s (1e9 B/s), the best of -r runs. All threads start together (a barrier); each run takes the
 * longest thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so on a machine shared with other work the
 * slices other processes take do not count; on an idle machine it is the wall time. When threads
 * run one at a time under load the figure can only come out higher (one thread alone gets more of
 * the memory), which keeps a bound computed from it a bound. The array (default 1 GiB) must be far
 * larger than the last-level cache.
 *
 * An operator that must read Rb bytes and write Wb bytes in total (over all ranks) cannot take
 * less than Rb/R + Wb/W seconds: R and W are the whole machine's bandwidths with all cores busy.
 *
 * Usage: membw [-s bytes (K/M/G suffix)] [-r reps] [-t threads (default: online CPUs)].
 * Prints "R <GB/s>", "W <GB/s>", "Wc <GB/s>", "C <GB/s>" and "X <ns>" lines (bench/run_bench.sh
 * parses R and W, and reports the range of X). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__AVX2__)
#include <immintrin.h>
#define MEMBW_KERNEL "avx2"
#elif defined(__SSE2__)
#include <emmintrin.h>
#define MEMBW_KERNEL "sse2"
#else
#define MEMBW_KERNEL "scalar"
#endif

enum { kRead = 0, kWriteNT = 1, kWriteMemset = 2, kCopyNT = 3 };

typedef struct {
  unsigned char* p; /* 64-byte aligned, n a multiple of 256 */
  size_t n;
  uint64_t sink;
  pthread_barrier_t* bar;
  int mode;
  double t_start, t_end;
} job;

/* The calling thread's CPU time: time slices that other processes take on a shared machine do
   not count (measuring wall time there underestimates the memory, and a bound from an
   underestimate is no bound). */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t read_stream(const unsigned char* p, size_t n) {
#if defined(__AVX2__)
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (size_t i = 0; i < n; i += 256) {
    const __m256i* v = (const __m256i*)(p + i);
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(v + 0));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(v + 1));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(v + 2));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(v + 3));
    a4 = _mm256_add_epi64(a4, _mm256_load_si256(v + 4));
    a5 = _mm256_add_epi64(a5, _mm256_load_si256(v + 5));
    a6 = _mm256_add_epi64(a6, _mm256_load_si256(v + 6));
    a7 = _mm256_add_epi64(a7, _mm256_load_si256(v + 7));
  }
  a0 = _mm256_add_epi64(_mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)),
                        _mm256_add_epi64(_mm256_add_epi64(a4, a5), _mm256_add_epi64(a6, a7)));
  uint64_t out[4];
  _mm256_storeu_si256((__m256i*)out, a0);
  return out[0] + out[1] + out[2] + out[3];
#else
  const uint64_t* q = (const uint64_t*)p;
  uint64_t s[8] = {0};
  for (size_t i = 0; i < n / 8; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += q[i + k];
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
#endif
}

static void write_nt(unsigned char* p, size_t n) {
#if defined(__AVX2__)
  const __m256i v = _mm256_set1_epi8(1);
  for (size_t i = 0; i < n; i += 256) {
    __m256i* d = (__m256i*)(p + i);
    _mm256_stream_si256(d + 0, v);
    _mm256_stream_si256(d + 1, v);
    _mm256_stream_si256(d + 2, v);
    _mm256_stream_si256(d + 3, v);
    _mm256_stream_si256(d + 4, v);
    _mm256_stream_si256(d + 5, v);
    _mm256_stream_si256(d + 6, v);
    _mm256_stream_si256(d + 7, v);
  }
  _mm_sfence();
#elif defined(__SSE2__)
  const __m128i v = _mm_set1_epi8(1);
  for (size_t i = 0; i < n; i += 64) {
    __m128i* d = (__m128i*)(p + i);
    _mm_stream_si128(d + 0, v);
    _mm_stream_si128(d + 1, v);
    _mm_stream_si128(d + 2, v);
    _mm_stream_si128(d + 3, v);
  }
  _mm_sfence();
#else
  memset(p, 1, n); /* no portable non-temporal store: an ordinary write */
#endif
}

/* dst = src with streaming loads and non-temporal stores (both 64-byte aligned, n % 256 == 0). */
static void copy_nt(unsigned char* dst, const unsigned char* src, size_t n) {
#if defined(__AVX2__)
  for (size_t i = 0; i < n; i += 128) {
    const __m256i* s = (const __m256i*)(src + i);
    __m256i* d = (__m256i*)(dst + i);
    __m256i v0 = _mm256_load_si256(s + 0), v1 = _mm256_load_si256(s + 1);
    __m256i v2 = _mm256_load_si256(s + 2), v3 = _mm256_load_si256(s + 3);
    _mm256_stream_si256(d + 0, v0);
    _mm256_stream_si256(d + 1, v1);
    _mm256_stream_si256(d + 2, v2);
    _mm256_stream_si256(d + 3, v3);
  }
  _mm_sfence();
#elif defined(__SSE2__)
  for (size_t i = 0; i < n; i += 64) {
    const __m128i* s = (const __m128i*)(src + i);
    __m128i* d = (__m128i*)(dst + i);
    __m128i v0 = _mm_load_si128(s + 0), v1 = _mm_load_si128(s + 1);
    __m128i v2 = _mm_load_si128(s + 2), v3 = _mm_load_si128(s + 3);
    _mm_stream_si128(d + 0, v0);
    _mm_stream_si128(d + 1, v1);
    _mm_stream_si128(d + 2, v2);
    _mm_stream_si128(d + 3, v3);
  }
  _mm_sfence();
#else
  memcpy(dst, src, n);
#endif
}

static void* run(void* arg) {
  job* j = (job*)arg;
  pthread_barrier_wait(j->bar);
  /* Each worker times itself, in its own CPU time. */
  j->t_start = now_s();
  if (j->mode == kRead)
    j->sink = read_stream(j->p, j->n);
  else if (j->mode == kWriteNT)
    write_nt(j->p, j->n);
  else if (j->mode == kCopyNT)
    copy_nt(j->p, j->p + j->n, j->n); /* the second half of the share to the first */
  else
    memset(j->p, 1, j->n);
  j->t_end = now_s();
  return NULL;
}

static double measure(unsigned char* a, size_t n, int threads, int mode, int reps) {
  double best = 0;
  size_t per = (n / (size_t)threads) & ~(size_t)255;
  if (mode == kCopyNT) per = (per / 2) & ~(size_t)255; /* copies per bytes, reads per more */
  for (int r = 0; r < reps; ++r) {
    pthread_t tid[256];
    job jobs[256];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)threads);
    for (int t = 0; t < threads; ++t) {
      jobs[t].p = a + (size_t)t * per * (mode == kCopyNT ? 2 : 1);
      jobs[t].n = per;
      jobs[t].bar = &bar;
      jobs[t].mode = mode;
      pthread_create(&tid[t], NULL, run, &jobs[t]);
    }
    uint64_t sink = 0;
    for (int t = 0; t < threads; ++t) {
      pthread_join(tid[t], NULL);
      sink += jobs[t].sink;
    }
    pthread_barrier_destroy(&bar);
    double dt = 0; /* the longest thread's CPU time */
    for (int t = 0; t < threads; ++t)
      if (jobs[t].t_end - jobs[t].t_start > dt) dt = jobs[t].t_end - jobs[t].t_start;
    double gbs = (double)(per * (size_t)threads) / dt / 1e9;
    if (gbs > best) best = gbs;
    if (mode == kRead && sink == 0x123456789abcdefull) printf(" "); /* keeps the reads alive */
  }
  return best;
}

/* X: the cache-line round trip between two pinned threads. */
typedef struct {
  _Alignas(64) atomic_long ping;
  _Alignas(64) atomic_long pong;
  long rounds;
  int cpu;
} pingpong;

static int pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* pong_loop(void* arg) {
  pingpong* p = (pingpong*)arg;
  pin_to(p->cpu);
  for (long i = 1; i <= p->rounds; ++i) {
    while (atomic_load_explicit(&p->ping, memory_order_acquire) != i) {
    }
    atomic_store_explicit(&p->pong, i, memory_order_release);
  }
  return NULL;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Median round trip in ns over `reps` runs; < 0 when two online CPUs cannot be pinned. */
static double round_trip_ns(int reps) {
  cpu_set_t online;
  if (sched_getaffinity(0, sizeof online, &online)) return -1;
  int cpus[2], n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < 2; ++c)
    if (CPU_ISSET(c, &online)) cpus[n++] = c;
  if (n < 2) return -1;
  double runs[64];
  if (reps > 64) reps = 64;
  if (pin_to(cpus[0])) return -1;
  for (int r = 0; r < reps; ++r) {
    static pingpong p;
    atomic_store(&p.ping, 0);
    atomic_store(&p.pong, 0);
    p.rounds = 100000;
    p.cpu = cpus[1];
    pthread_t tid;
    if (pthread_create(&tid, NULL, pong_loop, &p)) reps = r;
    if (reps == r) break;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 1; i <= p.rounds; ++i) {
      atomic_store_explicit(&p.ping, i, memory_order_release);
      while (atomic_load_explicit(&p.pong, memory_order_acquire) != i) {
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(tid, NULL);
    runs[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)p.rounds;
  }
  pthread_setaffinity_np(pthread_self(), sizeof online, &online);
  if (reps == 0) return -1;
  qsort(runs, (size_t)reps, sizeof runs[0], cmp_double);
  return runs[reps / 2];
}

static int parse_bytes(const char* s, size_t* out) {
  char* e;
  unsigned long long v = strtoull(s, &e, 0);
  if (e == s) return -1;
  if (*e == 'K' || *e == 'k') v <<= 10, ++e;
  else if (*e == 'M' || *e == 'm') v <<= 20, ++e;
  else if (*e == 'G' || *e == 'g') v <<= 30, ++e;
  if (*e) return -1;
  *out = (size_t)v;
  return 0;
}

int main(int argc, char** argv) {
  size_t bytes = 1ull << 30;
  int reps = 5;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; ++i) {
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: membw [-s bytes] [-r reps] [-t threads]\n");
      return 0;
    }
    if (!v) {
      fprintf(stderr, "membw: option %s needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "-s")) {
      if (parse_bytes(v, &bytes)) return 2;
    } else if (!strcmp(argv[i], "-r")) {
      reps = atoi(v);
    } else if (!strcmp(argv[i], "-t")) {
      threads = atol(v);
    } else {
      fprintf(stderr, "membw: unknown option %s\n", argv[i]);
      return 2;
    }
    ++i;
  }
  if (threads < 1 || threads > 256 || reps < 1 || bytes < (size_t)threads * 4096) {
    fprintf(stderr, "membw: bad -t/-r/-s\n");
    return 2;
  }
  unsigned char* a = NULL;
  if (posix_memalign((void**)&a, 4096, bytes)) {
    fprintf(stderr, "membw: cannot allocate %zu bytes\n", bytes);
    return 2;
  }
  /* Distinct values on every page, so no two pages can be merged (KSM) and served from one cached
     copy; this also faults every page in before timing. */
  for (size_t i = 0; i < bytes / 8; ++i) ((uint64_t*)a)[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
  double r = measure(a, bytes, (int)threads, kRead, reps);
  double w = measure(a, bytes, (int)threads, kWriteNT, reps);
  double wc = measure(a, bytes, (int)threads, kWriteMemset, reps);
  double c = measure(a, bytes, (int)threads, kCopyNT, reps);
  printf("R %.2f\n", r);
  printf("W %.2f\n", w);
  printf("Wc %.2f\n", wc);
  printf("C %.2f\n", c);
  const double x = round_trip_ns(reps);
  if (x > 0) printf("X %.0f\n", x);
  printf("# %zu MiB array, %ld threads (all online CPUs unless -t), %s kernel, best of %d;\n"
         "# R streaming read, W non-temporal store, Wc memset (ordinary stores), C copy (streaming\n"
         "# read + non-temporal store, bytes copied; reads and writes share the bandwidth when\n"
         "# 1/C >= 1/R + 1/W), GB/s = 1e9 B/s; X cache-line round trip between the first two\n"
         "# online CPUs, ns (median)\n",
         bytes >> 20, threads, MEMBW_KERNEL, reps);
  free(a);
  return 0;
}
