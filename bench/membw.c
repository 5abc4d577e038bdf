/* membw: streaming memory bandwidth of this machine for the reduce bound.
 *   R = read bandwidth (2 threads each summing half of a large array),
 *   W = write bandwidth (2 threads each memset-ing half), in GB/s (1e9 B/s), best of -r runs.
 * The bound for an N-rank Reduce of S bytes: at least N*S bytes read and S written, so
 * algbw <= 1 / (N/R + 1/W). Usage: membw [-s bytes(M suffix ok)] [-r reps] [-t threads].
 * Prints "R <GB/s>" and "W <GB/s>" lines (bench/run_bench.sh parses them). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const double* src;
  double* dst;
  size_t n;
  double sum;
  pthread_barrier_t* bar;
  int write;
  double t_start, t_end;
} job;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void* run(void* p) {
  job* j = (job*)p;
  pthread_barrier_wait(j->bar);
  /* Each worker times itself: a coordinating thread may be descheduled (3 threads, 2 cores). */
  j->t_start = now_s();
  if (j->write) {
    memset(j->dst, 1, j->n * sizeof(double));
  } else {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= j->n; i += 4) {
      s0 += j->src[i];
      s1 += j->src[i + 1];
      s2 += j->src[i + 2];
      s3 += j->src[i + 3];
    }
    j->sum = s0 + s1 + s2 + s3;
  }
  j->t_end = now_s();
  pthread_barrier_wait(j->bar);
  return NULL;
}

static double measure(double* a, size_t n, int threads, int write, int reps) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    pthread_t tid[64];
    job jobs[64];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)threads + 1);
    size_t per = n / (size_t)threads;
    for (int t = 0; t < threads; ++t) {
      jobs[t].src = a + (size_t)t * per;
      jobs[t].dst = a + (size_t)t * per;
      jobs[t].n = per;
      jobs[t].bar = &bar;
      jobs[t].write = write;
      pthread_create(&tid[t], NULL, run, &jobs[t]);
    }
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
    double t0 = jobs[0].t_start, t1 = jobs[0].t_end;
    for (int t = 1; t < threads; ++t) {
      if (jobs[t].t_start < t0) t0 = jobs[t].t_start;
      if (jobs[t].t_end > t1) t1 = jobs[t].t_end;
    }
    double dt = t1 - t0;
    pthread_barrier_destroy(&bar);
    double gbs = (double)(per * (size_t)threads * sizeof(double)) / dt / 1e9;
    if (gbs > best) best = gbs;
    if (!write && jobs[0].sum == 12345.678) printf(" "); /* keeps the reads alive */
  }
  return best;
}

int main(int argc, char** argv) {
  size_t bytes = 256ull << 20;
  int reps = 5, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-s")) {
      char* e;
      bytes = strtoull(argv[i + 1], &e, 0);
      if (*e == 'M' || *e == 'm') bytes <<= 20;
      if (*e == 'K' || *e == 'k') bytes <<= 10;
    } else if (!strcmp(argv[i], "-r")) {
      reps = atoi(argv[i + 1]);
    } else if (!strcmp(argv[i], "-t")) {
      threads = atoi(argv[i + 1]);
    }
  }
  if (threads < 1 || threads > 64 || reps < 1) return 2;
  size_t n = bytes / sizeof(double);
  double* a = NULL;
  if (posix_memalign((void**)&a, 4096, n * sizeof(double))) return 2;
  /* Distinct values on every page: identical pages could be merged by the host (KSM) and read from cache. */
  for (size_t i = 0; i < n; ++i) a[i] = (double)i * 1.000001;
  printf("R %.2f\n", measure(a, n, threads, 0, reps));
  printf("W %.2f\n", measure(a, n, threads, 1, reps));
  printf("# %zu MiB array, %d threads, best of %d\n", bytes >> 20, threads, reps);
  free(a);
  return 0;
}
