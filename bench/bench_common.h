/* Shared driver of the side-by-side benchmarks (hostccl_coll_bench.cc, mpi_coll_bench.c,
 * gloo_coll_bench.cc): one program per library, the collective chosen with --op. Every program
 * takes the same options, sizes, timing modes, inputs and exact check, and prints the columns of
 * reduce_test -W 1, so bench/run_bench.sh parses every library the same way. Compiles as C99 and
 * as C++.
 *
 * A program supplies a bench_comm (rank, size, barrier, max over ranks, stats to the root, the
 * collective call; optionally a stream sync and its own buffer allocator) and calls bench_main().
 * Single-threaded; every rank runs the same call sequence.
 *
 * Collectives (kBenchColls; adding one = a row there, a case in bench_check and a call in each
 * program). `c` is the count passed to the call (the per-rank block for the blocked ones), n the
 * rank count, S the size column (bytes, nccl-tests' convention: the larger per-rank buffer):
 *   op              send (elements)   recv (elements)     S          output
 *   reduce          c                 c (root's)          c          rank-order fold
 *   allreduce       c                 c                   c          rank-order fold
 *   broadcast       c (in place)      -                   c          the root's input
 *   allgather(v)    c                 n*c                 n*c        block j = rank j's input
 *   reducescatter(v) n*c              c                   n*c        fold of every rank's block r
 *   scatter         n*c (root only)   c                   n*c        block r of the root's input
 *   alltoall(v)     n*c               n*c                 n*c        block j = rank j's block r
 *   sendrecv        c                 c                   c          the partner's input
 * so c = S / (element size * (n or 1)), at least 1 (S not a multiple: rounded down; the size
 * column still prints S). The V variants are called with equal counts and packed displacements
 * (c, j*c). sendrecv is a ping-pong between exactly 2 ranks: rank 0 sends its input and receives
 * rank 1's, rank 1 receives then sends; one call is a round trip and the time printed is half of
 * it (the one-way latency), so algbw = S / (round trip / 2).
 * Inputs are small integers, exact in every type (bench_input): element x of rank r's send buffer
 * is, for sum, r%3 + 1 + (x%101)%6, prod 2 if x%n == r else 1, max/min (5r + x) % 11, and for the
 * collectives that only move data (37r + 11x) % 101 (x counts over the whole send buffer, blocks
 * included). Before the checked call every checked output is set to 0xFF bytes,
 * then every element is compared exactly with its expected value (the table above); every rank
 * also checks that its send buffer still holds its input (broadcast: the root only; scatter: the
 * root's, the others pass no send buffer). */
#ifndef HOSTCCL_BENCH_COMMON_H
#define HOSTCCL_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char* name; /* reduce_test's -d name */
  int bytes;
} bench_type;

static const bench_type kBenchTypes[] = {
    {"int8", 1},   {"uint8", 1}, {"int16", 2},  {"uint16", 2}, {"int32", 4},
    {"uint32", 4}, {"int64", 8}, {"uint64", 8}, {"fp32", 4},   {"fp64", 8},
};
enum { kBenchNumTypes = 10, kBenchMaxSizes = 256 };
static const char* const kBenchOps[] = {"sum", "prod", "max", "min"};

/* The collectives, in --op order. */
enum {
  BENCH_REDUCE = 0,
  BENCH_ALLREDUCE,
  BENCH_BROADCAST,
  BENCH_ALLGATHER,
  BENCH_ALLGATHERV,
  BENCH_REDUCESCATTER,
  BENCH_REDUCESCATTERV,
  BENCH_SCATTER,
  BENCH_ALLTOALL,
  BENCH_ALLTOALLV,
  BENCH_SENDRECV,
  kBenchNumColls
};
typedef struct {
  const char* name; /* --op value */
  int uses_redop;   /* -o matters */
  int uses_root;    /* -r matters (otherwise the root only prints) */
  int in_place;     /* one buffer (the send buffer) */
  int send_n;       /* the send buffer holds n blocks of count elements (else count) */
  int recv_n;       /* the recv buffer holds n blocks (else count; none when in_place) */
  int size_n;       /* the size column is n * count elements (else count) */
  int time_div;     /* one call is this many one-way transfers (sendrecv: a round trip = 2) */
} bench_coll;
static const bench_coll kBenchColls[kBenchNumColls] = {
    /* name            redop root inpl sn rn zn div */
    {"reduce",          1,   1,   0,   0, 0, 0, 1},
    {"allreduce",       1,   0,   0,   0, 0, 0, 1},
    {"broadcast",       0,   1,   1,   0, 0, 0, 1},
    {"allgather",       0,   0,   0,   0, 1, 1, 1},
    {"allgatherv",      0,   0,   0,   0, 1, 1, 1},
    {"reducescatter",   1,   0,   0,   1, 0, 1, 1},
    {"reducescatterv",  1,   0,   0,   1, 0, 1, 1},
    {"scatter",         0,   1,   0,   1, 0, 1, 1},
    {"alltoall",        0,   0,   0,   1, 1, 1, 1},
    {"alltoallv",       0,   0,   0,   1, 1, 1, 1},
    {"sendrecv",        0,   0,   0,   0, 0, 0, 2},
};

/* bench_comm.run's results besides 0 (success) */
enum { BENCH_RUN_ERROR = 1, BENCH_RUN_UNSUPPORTED = 2 };
/* bench_main's exit status when the library does not offer the collective: every rank has printed
 * one line "n/a (<reason>)" and no rows */
enum { BENCH_EXIT_UNSUPPORTED = 3 };
/* -T, back to back: the most calls in the calibration burst that sets the loop's length. */
#define BENCH_CAL_BURST 20

typedef struct {
  uint64_t sizes[kBenchMaxSizes];
  int nsizes;
  long iters, warmup;
  double budget_s; /* -T: calibrate iterations to this many seconds (0 = use -n) */
  int isolated;    /* -I: barrier before every call, median of single calls */
  int one_clock;   /* -S (with -I, ranks on one host): the group's latency on the shared clock */
  int dtype;       /* index into kBenchTypes */
  int op;          /* index into kBenchOps */
  int root;
  int check;
  int coll; /* --op: index into kBenchColls */
} bench_opts;

typedef struct {
  int rank, size;
  void* ctx;
  void (*barrier)(void* ctx);
  double (*max_all)(void* ctx, double v); /* max over ranks, result on every rank */
  /* optional (-S): v[i] = the max over ranks of v[i], i < n, on every rank */
  void (*max_all_n)(void* ctx, double* v, long n);
  /* min and max of t, and the sum of wrong, at the root */
  void (*stats_to_root)(void* ctx, int root, double t, double wrong, double* tmin, double* tmax,
                        double* wsum);
  /* One call of collective `coll` (BENCH_*) with `count` = c of the table above (send is NULL on
     a scatter's non-roots; sendrecv: this rank's half of one round trip): 0, BENCH_RUN_ERROR
     (message printed) or BENCH_RUN_UNSUPPORTED (the library does not offer it; *why* set to a
     short reason). With a `sync`, the call may only enqueue: bench_main calls sync before it
     reads a clock or a buffer. */
  int (*run)(void* ctx, int coll, void* send, void* recv, size_t count, int dtype, int op, int root,
             const char** why);
  int (*sync)(void* ctx);                    /* optional: wait for enqueued calls; 0 = ok */
  void* (*alloc)(void* ctx, uint64_t bytes); /* optional: the library's buffers (zeroed) */
  void (*release)(void* ctx, void* p);       /* with alloc */
} bench_comm;

/* The calling thread's scheduler times (/proc/thread-self/schedstat): ns on a CPU, ns waiting on
   a run queue, timeslices. 0 when unreadable. */
static int bench_schedstat(unsigned long long v[3]) {
  FILE* f = fopen("/proc/thread-self/schedstat", "r");
  int ok = f && fscanf(f, "%llu %llu %llu", &v[0], &v[1], &v[2]) == 3;
  if (f) fclose(f);
  return ok;
}

static double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int bench_parse_size(const char* s, uint64_t* out) {
  char* end = NULL;
  long long v = strtoll(s, &end, 0);
  uint64_t unit = 1;
  if (end == s || v <= 0) return -1;
  if (*end == 'k' || *end == 'K')
    unit = 1ull << 10, ++end;
  else if (*end == 'm' || *end == 'M')
    unit = 1ull << 20, ++end;
  else if (*end == 'g' || *end == 'G')
    unit = 1ull << 30, ++end;
  if (*end != '\0' && *end != ',') return -1;
  *out = (uint64_t)v * unit;
  return 0;
}

static void bench_usage(const char* prog) {
  printf(
      "usage: %s [-b min] [-e max] [-f factor] [--sizes a,b,c] [-n iters] [-w warmup] [-T "
      "seconds]\n"
      "          [-I] [-d int8|uint8|int16|uint16|int32|uint32|int64|uint64|fp32|fp64] [-o "
      "sum|prod|max|min]\n"
      "          [-r root] [-c 0|1] [--op OP] [-S]\n"
      "OP: reduce allreduce broadcast allgather allgatherv reducescatter reducescatterv scatter\n"
      "    alltoall alltoallv sendrecv (2 ranks); the size is the larger per-rank buffer (see\n"
      "    bench/bench_common.h). Output columns match reduce_test -W 1 (times in us, bandwidth in\n"
      "    GB/s = 1e9 B/s; count = the count argument of the call).\n"
      "-S  with -I, every rank on one host: also the median time from the last rank's start of a\n"
      "    call to the last rank's end (one clock for all ranks), how far apart the ranks left the\n"
      "    barrier, and how often the same rank left it last (sendrecv: the time halved, as its\n"
      "    row).\n",
      prog);
}

/* Returns 0 = run, 1 = help printed, -1 = error printed. */
static int bench_parse(int argc, char** argv, bench_opts* o, int rank) {
  uint64_t lo = 8, hi = 256ull << 20;
  double factor = 4;
  const char* list = NULL;
  memset(o, 0, sizeof *o);
  o->iters = 20;
  o->warmup = 5;
  o->dtype = 8;
  o->check = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (!strcmp(a, "-I")) {
      o->isolated = 1;
      takes = 0;
    } else if (!strcmp(a, "-S")) {
      o->one_clock = 1;
      takes = 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) bench_usage(argv[0]);
      return 1;
    } else if (!v) {
      if (rank == 0) fprintf(stderr, "option %s needs a value\n", a);
      return -1;
    } else if (!strcmp(a, "-b")) {
      if (bench_parse_size(v, &lo)) goto bad;
    } else if (!strcmp(a, "-e")) {
      if (bench_parse_size(v, &hi)) goto bad;
    } else if (!strcmp(a, "-f")) {
      factor = atof(v);
      if (factor <= 1.0) goto bad;
    } else if (!strcmp(a, "--sizes"))
      list = v;
    else if (!strcmp(a, "--op")) {
      int k = 0;
      while (k < kBenchNumColls && strcmp(kBenchColls[k].name, v)) ++k;
      if (k == kBenchNumColls) goto bad;
      o->coll = k;
    }
    else if (!strcmp(a, "-n"))
      o->iters = atol(v);
    else if (!strcmp(a, "-w"))
      o->warmup = atol(v);
    else if (!strcmp(a, "-T")) {
      o->budget_s = atof(v);
      if (o->budget_s <= 0) goto bad;
    } else if (!strcmp(a, "-r"))
      o->root = atoi(v);
    else if (!strcmp(a, "-c"))
      o->check = atoi(v);
    else if (!strcmp(a, "-d")) {
      int k = 0;
      while (k < kBenchNumTypes && strcmp(kBenchTypes[k].name, v)) ++k;
      if (k == kBenchNumTypes) goto bad;
      o->dtype = k;
    } else if (!strcmp(a, "-o")) {
      int k = 0;
      while (k < 4 && strcmp(kBenchOps[k], v)) ++k;
      if (k == 4) goto bad;
      o->op = k;
    } else {
      if (rank == 0) fprintf(stderr, "unknown option %s\n", a);
      return -1;
    }
    i += takes;
    continue;
  bad:
    if (rank == 0) fprintf(stderr, "invalid value '%s' for %s\n", v, a);
    return -1;
  }
  if (list) {
    const char* p = list;
    while (*p && o->nsizes < kBenchMaxSizes) {
      if (bench_parse_size(p, &o->sizes[o->nsizes])) {
        if (rank == 0) fprintf(stderr, "bad --sizes\n");
        return -1;
      }
      ++o->nsizes;
      p = strchr(p, ',');
      if (!p) break;
      ++p;
    }
  } else {
    for (uint64_t s = lo; s <= hi && o->nsizes < kBenchMaxSizes; s = (uint64_t)((double)s * factor))
      o->sizes[o->nsizes++] = s;
  }
  if (o->iters < 0 || o->warmup < 0 || o->check < 0 || o->check > 1) {
    if (rank == 0) fprintf(stderr, "invalid -n/-w/-c\n");
    return -1;
  }
  if (o->one_clock && !o->isolated) {
    if (rank == 0) fprintf(stderr, "-S needs -I\n");
    return -1;
  }
  return 0;
}

/* Element x of rank r's input. op = the reduction (0 sum, 1 prod, 2 max, 3 min), or -1 for a
   collective that only moves data: then every rank's values differ and repeat only every 101
   elements, so a block taken from the wrong rank or the wrong offset shows. Every value is a small
   integer (at most 100; a sum over up to 15 ranks stays below 128), exact in every type. */
static double bench_input(int op, int r, int size, uint64_t x) {
  switch (op) {
    case -1:
      return (double)((37 * (uint64_t)r + 11 * x) % 101);
    case 0:
      return (double)(r % 3 + 1 + (int)((x % 101) % 6));
    case 1:
      return (int)(x % (uint64_t)size) == r ? 2.0 : 1.0;
    default:
      return (double)((5 * (uint64_t)r + x) % 11);
  }
}

/* Every input above repeats after this many elements. */
static uint64_t bench_period(int size) { return 5555ull * (uint64_t)size; }

static void bench_store(int dtype, void* buf, uint64_t i, double v) {
  switch (dtype) {
    case 0:
      ((int8_t*)buf)[i] = (int8_t)v;
      break;
    case 1:
      ((uint8_t*)buf)[i] = (uint8_t)v;
      break;
    case 2:
      ((int16_t*)buf)[i] = (int16_t)v;
      break;
    case 3:
      ((uint16_t*)buf)[i] = (uint16_t)v;
      break;
    case 4:
      ((int32_t*)buf)[i] = (int32_t)v;
      break;
    case 5:
      ((uint32_t*)buf)[i] = (uint32_t)v;
      break;
    case 6:
      ((int64_t*)buf)[i] = (int64_t)v;
      break;
    case 7:
      ((uint64_t*)buf)[i] = (uint64_t)v;
      break;
    case 8:
      ((float*)buf)[i] = (float)v;
      break;
    default:
      ((double*)buf)[i] = v;
      break;
  }
}

static double bench_load(int dtype, const void* buf, uint64_t i) {
  switch (dtype) {
    case 0:
      return ((const int8_t*)buf)[i];
    case 1:
      return ((const uint8_t*)buf)[i];
    case 2:
      return ((const int16_t*)buf)[i];
    case 3:
      return ((const uint16_t*)buf)[i];
    case 4:
      return ((const int32_t*)buf)[i];
    case 5:
      return ((const uint32_t*)buf)[i];
    case 6:
      return (double)((const int64_t*)buf)[i];
    case 7:
      return (double)((const uint64_t*)buf)[i];
    case 8:
      return ((const float*)buf)[i];
    default:
      return ((const double*)buf)[i];
  }
}

static void bench_fill(int dtype, int op, int rank, int size, void* buf, uint64_t count) {
  /* Fill one period, then copy it. */
  uint64_t period = bench_period(size), esz = (uint64_t)kBenchTypes[dtype].bytes;
  uint64_t n = count < period ? count : period, filled;
  for (uint64_t i = 0; i < n; ++i) bench_store(dtype, buf, i, bench_input(op, rank, size, i));
  for (filled = n; filled < count;) {
    uint64_t c = filled < count - filled ? filled : count - filled;
    memcpy((char*)buf + filled * esz, buf, c * esz);
    filled += c;
  }
}

/* The count argument for a size of `bytes` (at least 1). */
static uint64_t bench_count(int coll, uint64_t bytes, int esz, int size) {
  uint64_t per = (uint64_t)esz * (uint64_t)(kBenchColls[coll].size_n ? size : 1);
  uint64_t c = bytes / per;
  return c > 0 ? c : 1;
}

/* Elements of rank `rank`'s send buffer (0: it passes none) and recv buffer (0: none). */
static uint64_t bench_send_elems(int coll, uint64_t count, int size, int rank, int root) {
  if (coll == BENCH_SCATTER && rank != root) return 0;
  return kBenchColls[coll].send_n ? count * (uint64_t)size : count;
}
static uint64_t bench_recv_elems(int coll, uint64_t count, int size) {
  if (kBenchColls[coll].in_place) return 0;
  return kBenchColls[coll].recv_n ? count * (uint64_t)size : count;
}

/* Whether rank `rank` has a defined output to check (in its recv buffer, or its send buffer for
   an in-place collective). */
static int bench_checks_output(int coll, int rank, int root) {
  if (coll == BENCH_REDUCE) return rank == root;
  if (coll == BENCH_BROADCAST) return rank != root;
  return 1;
}

static double bench_fold(int op, double acc, double x) {
  return op == 0   ? acc + x
         : op == 1 ? acc * x
         : op == 2 ? (x > acc ? x : acc)
                   : (x < acc ? x : acc);
}

/* Compares out[0, elems) of rank `rank` with the expected output (or, with `own_input`, with the
   rank's own input: the send-buffer check); returns the number of elements that differ. Inputs
   repeat with period P = bench_period(size), so one period of every rank's input and of the fold is
   tabulated first. */
static uint64_t bench_check(int coll, int dtype, int op, int size, int root, int rank,
                            const void* out, uint64_t elems, uint64_t count, int own_input) {
  const uint64_t P = bench_period(size);
  double* tab = (double*)malloc(sizeof(double) * P * (uint64_t)(size + 1));
  double* fold = tab + P * (uint64_t)size;
  uint64_t wrong = 0, i;
  const uint64_t me = (uint64_t)rank;
  if (!tab) return elems > 0 ? elems : 1;
  for (int j = 0; j < size; ++j)
    for (i = 0; i < P; ++i) tab[(uint64_t)j * P + i] = bench_input(op, j, size, i);
  for (i = 0; i < P; ++i) {
    fold[i] = tab[i];
    for (int j = 1; j < size; ++j) fold[i] = bench_fold(op, fold[i], tab[(uint64_t)j * P + i]);
  }
  for (i = 0; i < elems; ++i) {
    double e;
    const uint64_t blk = count > 0 ? i / count : 0, k = count > 0 ? i % count : i;
    if (own_input) {
      e = tab[me * P + i % P];
    } else {
      switch (coll) {
        case BENCH_REDUCE:
        case BENCH_ALLREDUCE:
          e = fold[i % P];
          break;
        case BENCH_BROADCAST:
          e = tab[(uint64_t)root * P + i % P];
          break;
        case BENCH_ALLGATHER:
        case BENCH_ALLGATHERV: /* block j = rank j's input */
          e = tab[blk * P + k % P];
          break;
        case BENCH_REDUCESCATTER:
        case BENCH_REDUCESCATTERV: /* the fold of every rank's block `rank` */
          e = fold[(me * count + i) % P];
          break;
        case BENCH_SCATTER: /* block `rank` of the root's input */
          e = tab[(uint64_t)root * P + (me * count + i) % P];
          break;
        case BENCH_ALLTOALL:
        case BENCH_ALLTOALLV: /* block j = block `rank` of rank j's input */
          e = tab[blk * P + (me * count + k) % P];
          break;
        default: /* BENCH_SENDRECV: the partner's input */
          e = tab[(me ^ 1u) * P + i % P];
          break;
      }
    }
    wrong += bench_load(dtype, out, i) != e;
  }
  free(tab);
  return wrong;
}

static int bench_cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void* bench_alloc(const bench_comm* c, uint64_t bytes) {
  void* p = NULL;
  if (bytes == 0) bytes = 64;
  if (c->alloc) return c->alloc(c->ctx, bytes); /* zeroed, touched */
  if (posix_memalign(&p, 4096, bytes)) return NULL;
  memset(p, 0, bytes); /* touched before timing */
  return p;
}

static void bench_free(const bench_comm* c, void* p) {
  if (!p) return;
  if (c->release)
    c->release(c->ctx, p);
  else
    free(p);
}

/* -S: from every rank's start and end of each isolated call (stamps: n starts, n ends, n negated
   starts, on the clock every rank of one host shares), the median over calls of the time from
   the last rank's start to the last rank's end (the group's latency once every rank has begun),
   of how far apart the ranks left the barrier (the last start minus the first), and the share of
   calls in which the rank that started last was the one that did so most often; the root prints
   them after its row. The per-rank medians of the table mix the skew in: a rank that leaves the
   barrier early waits for the others inside its call (docs/performance.md "8-byte isolated calls
   at 2 ranks: the barrier's exit skew"). */
static void bench_one_clock(const bench_comm* c, double* stamps, long n, double out[3]) {
  double* mine = (double*)malloc(sizeof(double) * (size_t)n);
  double* latency = (double*)malloc(sizeof(double) * (size_t)n);
  double* skew = (double*)malloc(sizeof(double) * (size_t)n);
  double last_count, same;
  long i, last = 0;
  memcpy(mine, stamps, sizeof(double) * (size_t)n);
  c->max_all_n(c->ctx, stamps, 3 * n);
  for (i = 0; i < n; ++i) {
    latency[i] = stamps[n + i] - stamps[i];
    skew[i] = stamps[i] + stamps[2 * n + i]; /* last start - first start */
    /* this rank started last (ties, within the clock's 1 ns, count for each; a library may carry
       the stamps as integer ns) */
    last += mine[i] >= stamps[i] - 1e-3;
  }
  last_count = c->max_all(c->ctx, (double)last);
  same = 100.0 * last_count / (double)n;
  qsort(latency, (size_t)n, sizeof(double), bench_cmp_double);
  qsort(skew, (size_t)n, sizeof(double), bench_cmp_double);
  out[0] = latency[n / 2];
  out[1] = skew[n / 2];
  out[2] = same;
  free(mine);
  free(latency);
  free(skew);
}

/* One call, completed (synced) when `complete`; returns a BENCH_RUN_* value. */
static int bench_call(const bench_opts* o, const bench_comm* c, void* send, void* recv,
                      uint64_t count, int complete, const char** why) {
  int rc = c->run(c->ctx, o->coll, send, recv, (size_t)count, o->dtype, o->op, o->root, why);
  if (rc == 0 && complete && c->sync && c->sync(c->ctx)) rc = BENCH_RUN_ERROR;
  return rc;
}

/* Runs the sweep; returns 0 when everything ran and checked, 1 on wrong results, 2 on errors,
 * BENCH_EXIT_UNSUPPORTED when the library does not offer the collective. */
static int bench_main(const bench_opts* o, const bench_comm* c) {
  const int esz = kBenchTypes[o->dtype].bytes;
  const bench_coll* coll = &kBenchColls[o->coll];
  const int iop = coll->uses_redop ? o->op : -1; /* the inputs (bench_input) */
  int status = 0;
  if (o->root < 0 || o->root >= c->size) {
    if (c->rank == 0) fprintf(stderr, "root %d out of range for %d ranks\n", o->root, c->size);
    return 2;
  }
  if (o->coll == BENCH_SENDRECV && c->size != 2) {
    fprintf(stderr, "rank %d: sendrecv is a ping-pong between 2 ranks: start exactly 2 (got %d)\n",
            c->rank, c->size);
    return 2;
  }
  if (c->rank == o->root) {
    printf("# %s\n", coll->name);
    printf("#%11s %12s %7s %6s %5s %12s %12s %12s %9s %9s %7s %s\n", "size(B)", "count", "type",
           "redop", "root", "time(us)", "min(us)", "max(us)", "algbw", "busbw", "#wrong", "check");
    fflush(stdout);
  }
  for (int s = 0; s < o->nsizes; ++s) {
    const uint64_t bytes = o->sizes[s];
    const uint64_t count = bench_count(o->coll, bytes, esz, c->size);
    const uint64_t scount = bench_send_elems(o->coll, count, c->size, c->rank, o->root);
    const uint64_t rcount = bench_recv_elems(o->coll, count, c->size);
    uint64_t wrong = 0;
    void* send = scount > 0 ? bench_alloc(c, scount * esz) : NULL;
    void* recv = bench_alloc(c, rcount * esz);
    double t = 0, tmin = 0, tmax = 0, wsum = 0;
    double one_clock_out[3] = {0, 0, 0}; /* -S: latency, exit skew (us), same rank last (%) */
    int one_clock = 0;
    long iters = o->iters, warm = o->warmup, i;
    int warm_timed = 0, rc = 0;
    const char* why = NULL;
    double* samples;
    if ((scount > 0 && !send) || !recv) {
      fprintf(stderr, "rank %d: out of memory\n", c->rank);
      return 2;
    }
    if (send) bench_fill(o->dtype, iop, c->rank, c->size, send, scount);
    if (o->budget_s > 0 && warm < 2) warm = 2;
    c->barrier(c->ctx);
    t = bench_now_us();
    for (i = 0; i < warm && rc == 0; ++i) {
      if (i == 1)
        t = bench_now_us(); /* the first call may pay one-time costs: calibrate on the rest */
      rc = bench_call(o, c, send, recv, count, 1, &why);
    }
    if (rc == BENCH_RUN_UNSUPPORTED) {
      /* Every rank gets the same answer from its own call: nobody waits for a partner. Every
         rank prints it: a launcher may end the others as soon as the first one exits. */
      printf("n/a (%s)\n", why ? why : "not supported");
      fflush(stdout);
      bench_free(c, send);
      bench_free(c, recv);
      return BENCH_EXIT_UNSUPPORTED;
    }
    if (rc) return 2;
    if (o->budget_s > 0) {
      double mine = (bench_now_us() - t) / (double)(warm - 1);
      double per = c->max_all(c->ctx, mine);
      double n;
      /* Back to back, the count comes from a burst of calls issued back to back (one synchronize
         at its end), the mode the loop measures: up to 20 calls, as many as the warm-up's time
         says fit in a quarter of the budget, when that is at least 2. A single synchronized call
         also waits for the slowest rank to be scheduled, and one that took a few ms on a busy
         host gave a loop of a hundred calls whose fixed cost (the wake-ups of the closing
         synchronize) then dominated the per-call time (docs/performance.md "Short timed
         loops"). Same rule for every library. */
      const double fit = per > 0 ? o->budget_s * 1e6 / 4 / per : 0; /* a quarter of the budget */
      const long burst = fit >= BENCH_CAL_BURST ? BENCH_CAL_BURST : (long)fit;
      if (!o->isolated && burst >= 2) {
        c->barrier(c->ctx);
        const double tb = bench_now_us();
        for (i = 0; i < burst && rc == 0; ++i) rc = bench_call(o, c, send, recv, count, 0, &why);
        if (rc || (c->sync && c->sync(c->ctx))) return 2;
        per = c->max_all(c->ctx, (bench_now_us() - tb) / (double)burst);
      }
      n = per > 0 ? o->budget_s * 1e6 / per : 5000;
      iters = n < 1 ? 1 : n > 5000 ? 5000 : (long)n; /* as reduce_test: [1, 5000] */
      /* as reduce_test: a call longer than the budget is measured by the back-to-back warm-up
         calls after the first, with no further calls */
      if (!o->isolated && per > o->budget_s * 1e6) {
        warm_timed = 1;
        t = mine;
        iters = warm - 1;
      }
    }
    samples = (double*)malloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
    if (warm_timed) {
      /* t measured above */
    } else if (!o->isolated) {
      /* BENCH_SCHEDSTAT=1: how long the calling thread ran and waited for a CPU in the loop. */
      const int sched = getenv("BENCH_SCHEDSTAT") != NULL;
      unsigned long long s0[3] = {0, 0, 0}, s1[3] = {0, 0, 0};
      c->barrier(c->ctx);
      if (sched) bench_schedstat(s0);
      t = bench_now_us();
      double t_calls; /* us the calls took, before the closing synchronize */
      for (i = 0; i < iters; ++i)
        if (bench_call(o, c, send, recv, count, 0, &why)) return 2;
      t_calls = bench_now_us() - t;
      if (c->sync && c->sync(c->ctx)) return 2;
      t = iters > 0 ? (bench_now_us() - t) / (double)iters : 0;
      if (sched && bench_schedstat(s1))
        fprintf(stderr,
                "rank %d, %llu bytes: timed loop %.0f us (the calls %.0f, the closing synchronize %.0f), "
                "on a CPU %.0f us, waiting for one %.0f us, %llu timeslices\n",
                c->rank, (unsigned long long)bytes, t * (double)iters, t_calls, t * (double)iters - t_calls,
                (double)(s1[0] - s0[0]) / 1e3, (double)(s1[1] - s0[1]) / 1e3, s1[2] - s0[2]);
    } else {
      /* -S: every call's start on this rank, then its end, then minus its start */
      double* stamps = NULL;
      if (o->one_clock && c->max_all_n && iters > 0)
        stamps = (double*)malloc(sizeof(double) * 3 * (size_t)iters);
      for (i = 0; i < iters; ++i) {
        double t0;
        c->barrier(c->ctx);
        t0 = bench_now_us();
        if (bench_call(o, c, send, recv, count, 1, &why)) return 2;
        samples[i] = bench_now_us() - t0;
        if (stamps) {
          stamps[i] = t0;
          stamps[iters + i] = t0 + samples[i];
          stamps[2 * iters + i] = -t0;
        }
      }
      if (stamps) {
        bench_one_clock(c, stamps, iters, one_clock_out);
        one_clock = 1;
      }
      free(stamps);
      qsort(samples, (size_t)iters, sizeof(double), bench_cmp_double);
      t = iters == 0  ? 0
          : iters % 2 ? samples[iters / 2]
                      : (samples[iters / 2 - 1] + samples[iters / 2]) / 2;
    }
    free(samples);
    t /= coll->time_div; /* sendrecv: one way = half the round trip */
    one_clock_out[0] /= coll->time_div;
    if (o->check) {
      /* the outputs this rank checks, preset to 0xFF */
      const int checks_out = bench_checks_output(o->coll, c->rank, o->root);
      void* out = coll->in_place ? send : recv;
      const uint64_t ocount = coll->in_place ? scount : rcount;
      if (checks_out) memset(out, 0xFF, ocount * esz);
      if (bench_call(o, c, send, recv, count, 1, &why)) return 2;
      if (checks_out)
        wrong += bench_check(o->coll, o->dtype, iop, c->size, o->root, c->rank, out, ocount,
                             count, 0);
      /* the input is unchanged (an in-place collective: only where it is not the output) */
      if (send && !(coll->in_place && checks_out) &&
          bench_check(o->coll, o->dtype, iop, c->size, o->root, c->rank, send, scount, count, 1))
        wrong += 1;
    }
    c->stats_to_root(c->ctx, o->root, t, (double)wrong, &tmin, &tmax, &wsum);
    if (c->rank == o->root) {
      double algbw = t > 0 ? (double)bytes / t / 1e3 : 0;
      char root[16] = "-";
      if (coll->uses_root) snprintf(root, sizeof root, "%d", o->root);
      printf("%12llu %12llu %7s %6s %5s %12.2f %12.2f %12.2f %9.5f %9.5f %7llu %s\n",
             (unsigned long long)bytes, (unsigned long long)count, kBenchTypes[o->dtype].name,
             coll->uses_redop ? kBenchOps[o->op] : "-", root, t, tmin, tmax, algbw, algbw,
             (unsigned long long)wsum,
             !o->check  ? "NULL"
             : wsum > 0 ? "failed"
                        : "success");
      if (one_clock)
        printf("# -S: last start to last end %.2f us (median of %ld calls); the ranks left the "
               "barrier %.2f us apart (median); the same rank started last in %.0f %% of them\n",
               one_clock_out[0], iters, one_clock_out[1], one_clock_out[2]);
      else if (o->one_clock)
        printf("# -S: not available in this benchmark\n");
      fflush(stdout);
      if (wsum > 0) status = 1;
    }
    bench_free(c, send);
    bench_free(c, recv);
  }
  return status;
}

#endif /* HOSTCCL_BENCH_COMMON_H */
