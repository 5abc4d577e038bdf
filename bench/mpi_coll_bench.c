/* MPI side of bench/run_bench.sh: each collective is MPI's own (--op reduce: MPI_Reduce,
 * allreduce: MPI_Allreduce, broadcast: MPI_Bcast, allgather: MPI_Allgather, allgatherv:
 * MPI_Allgatherv, reducescatter: MPI_Reduce_scatter_block, reducescatterv: MPI_Reduce_scatter,
 * scatter: MPI_Scatter, alltoall: MPI_Alltoall, alltoallv: MPI_Alltoallv, sendrecv: MPI_Send and
 * MPI_Recv), with bench_common.h's sizes, modes, types, ops, root, check and output columns; the
 * V variants get equal counts and packed displacements. Built twice (Open MPI via mpicc.openmpi,
 * MPICH via mpicc.mpich) by bench/CMakeLists.txt. */
#include <mpi.h>

#include "bench_common.h"

static MPI_Datatype MpiType(int dtype) {
  static MPI_Datatype types[kBenchNumTypes];
  types[0] = MPI_INT8_T;
  types[1] = MPI_UINT8_T;
  types[2] = MPI_INT16_T;
  types[3] = MPI_UINT16_T;
  types[4] = MPI_INT32_T;
  types[5] = MPI_UINT32_T;
  types[6] = MPI_INT64_T;
  types[7] = MPI_UINT64_T;
  types[8] = MPI_FLOAT;
  types[9] = MPI_DOUBLE;
  return types[dtype];
}

static MPI_Op MpiOp(int op) {
  return op == 0 ? MPI_SUM : op == 1 ? MPI_PROD : op == 2 ? MPI_MAX : MPI_MIN;
}

static void Barrier(void* ctx) {
  (void)ctx;
  MPI_Barrier(MPI_COMM_WORLD);
}

static double MaxAll(void* ctx, double v) {
  double out = v;
  (void)ctx;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

static void MaxAllN(void* ctx, double* v, long n) {
  (void)ctx;
  MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static void StatsToRoot(void* ctx, int root, double t, double wrong, double* tmin, double* tmax,
                        double* wsum) {
  double in[2] = {t, -t}, out[2] = {0, 0};
  (void)ctx;
  MPI_Reduce(in, out, 2, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
  *tmax = out[0];
  *tmin = -out[1];
  MPI_Reduce(&wrong, wsum, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
}

/* The V arrays (counts c, displacements j*c), rebuilt when the count changes. */
static int* g_counts = NULL;
static int* g_displs = NULL;
static size_t g_vcount = 0;

static void VArrays(size_t count, int size) {
  if (g_counts && g_vcount == count) return;
  free(g_counts);
  free(g_displs);
  g_counts = (int*)malloc(sizeof(int) * (size_t)size);
  g_displs = (int*)malloc(sizeof(int) * (size_t)size);
  for (int j = 0; j < size; ++j) {
    g_counts[j] = (int)count;
    g_displs[j] = (int)(count * (size_t)j);
  }
  g_vcount = count;
}

static int Run(void* ctx, int coll, void* send, void* recv, size_t count, int dtype, int op,
               int root, const char** why) {
  const bench_comm* c = (const bench_comm*)ctx;
  const MPI_Datatype t = MpiType(dtype);
  const int n = (int)count;
  int rc;
  (void)why;
  switch (coll) {
    case BENCH_REDUCE:
      rc = MPI_Reduce(send, recv, n, t, MpiOp(op), root, MPI_COMM_WORLD);
      break;
    case BENCH_ALLREDUCE:
      rc = MPI_Allreduce(send, recv, n, t, MpiOp(op), MPI_COMM_WORLD);
      break;
    case BENCH_BROADCAST:
      rc = MPI_Bcast(send, n, t, root, MPI_COMM_WORLD);
      break;
    case BENCH_ALLGATHER:
      rc = MPI_Allgather(send, n, t, recv, n, t, MPI_COMM_WORLD);
      break;
    case BENCH_ALLGATHERV:
      VArrays(count, c->size);
      rc = MPI_Allgatherv(send, n, t, recv, g_counts, g_displs, t, MPI_COMM_WORLD);
      break;
    case BENCH_REDUCESCATTER:
      rc = MPI_Reduce_scatter_block(send, recv, n, t, MpiOp(op), MPI_COMM_WORLD);
      break;
    case BENCH_REDUCESCATTERV:
      VArrays(count, c->size);
      rc = MPI_Reduce_scatter(send, recv, g_counts, t, MpiOp(op), MPI_COMM_WORLD);
      break;
    case BENCH_SCATTER:
      rc = MPI_Scatter(send, n, t, recv, n, t, root, MPI_COMM_WORLD);
      break;
    case BENCH_ALLTOALL:
      rc = MPI_Alltoall(send, n, t, recv, n, t, MPI_COMM_WORLD);
      break;
    case BENCH_ALLTOALLV:
      VArrays(count, c->size);
      rc = MPI_Alltoallv(send, g_counts, g_displs, t, recv, g_counts, g_displs, t, MPI_COMM_WORLD);
      break;
    case BENCH_SENDRECV: /* one round trip between ranks 0 and 1 */
      if (c->rank == 0) {
        rc = MPI_Send(send, n, t, 1, 0, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS) rc = MPI_Recv(recv, n, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        rc = MPI_Recv(recv, n, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = MPI_Send(send, n, t, 0, 0, MPI_COMM_WORLD);
      }
      break;
    default:
      return BENCH_RUN_UNSUPPORTED;
  }
  return rc == MPI_SUCCESS ? 0 : BENCH_RUN_ERROR;
}

int main(int argc, char** argv) {
  bench_opts o;
  bench_comm c;
  int rc;
  MPI_Init(&argc, &argv);
  memset(&c, 0, sizeof c);
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  c.barrier = Barrier;
  c.max_all = MaxAll;
  c.max_all_n = MaxAllN;
  c.stats_to_root = StatsToRoot;
  c.run = Run;
  c.ctx = &c;
  rc = bench_parse(argc, argv, &o, c.rank);
  if (rc == 0)
    rc = bench_main(&o, &c);
  else
    rc = rc > 0 ? 0 : 2;
  free(g_counts);
  free(g_displs);
  MPI_Finalize();
  return rc;
}
