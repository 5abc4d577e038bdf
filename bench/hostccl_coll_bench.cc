// hostccl side of bench/run_bench.sh: the public API only (hccl/hccl.h, acl/acl.h,
// hostccl/hostccl.h), with bench_common.h's sizes, modes, types, ops, root, check and output
// columns, the same program as the MPI and gloo peers. --op reduce: HcclReduce, allreduce:
// HcclAllReduce, broadcast: HcclBroadcast (in place), allgather: HcclAllGather, allgatherv:
// HcclAllGatherV, reducescatter: HcclReduceScatter, reducescatterv: HcclReduceScatterV, scatter:
// HcclScatter (non-roots pass sendBuf = NULL), alltoall: HcclAlltoAll, alltoallv: HcclAlltoAllV,
// sendrecv: HcclSend + HcclRecv (a round trip between ranks 0 and 1); the V arrays (host uint64_t,
// in elements) hold equal counts and packed displacements. Buffers come from aclrtMalloc (like
// reduce_test's device buffers); each call is enqueued on one stream and the driver synchronizes
// the stream before it reads a clock or a buffer (back-to-back mode: once after the timed calls).
// Rank and rank count from the launcher (hcclrun -n N ...), the communicator from
// HostcclCommInitFromEnv. A collective the library does not offer yet (HCCL_E_NOT_SUPPORT) makes
// every rank print "n/a (HCCL_E_NOT_SUPPORT)" and exit with status 3.
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "bench_common.h"

namespace {

struct Hostccl {
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  int rank = 0, size = 1;
  void* stats_send = nullptr;  // int64 x 2, for the statistics over ranks
  void* stats_recv = nullptr;
  // The V arrays (counts c, displacements j*c): kept until the count changes, which happens only
  // after the stream was synchronized.
  std::vector<uint64_t> counts, displs;
};

void VArrays(Hostccl* h, size_t count) {
  if (!h->counts.empty() && h->counts[0] == count) return;
  h->counts.assign(static_cast<size_t>(h->size), count);
  h->displs.resize(static_cast<size_t>(h->size));
  for (size_t j = 0; j < h->displs.size(); ++j) h->displs[j] = j * count;
}

const HcclDataType kTypes[kBenchNumTypes] = {
    HCCL_DATA_TYPE_INT8,   HCCL_DATA_TYPE_UINT8,  HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_UINT16,
    HCCL_DATA_TYPE_INT32,  HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT64,
    HCCL_DATA_TYPE_FP32,   HCCL_DATA_TYPE_FP64,
};
const HcclReduceOp kOps[4] = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};

bool Ok(int rc, int rank, const char* what) {
  if (rc == 0) return true;
  const char* msg = aclGetRecentErrMsg();
  fprintf(stderr, "rank %d: %s failed with %d%s%s\n", rank, what, rc, msg && *msg ? ": " : "",
          msg && *msg ? msg : "");
  return false;
}

int Sync(void* p) {
  auto* h = static_cast<Hostccl*>(p);
  return Ok(aclrtSynchronizeStream(h->stream), h->rank, "aclrtSynchronizeStream") ? 0 : 1;
}

void Barrier(void* p) {
  auto* h = static_cast<Hostccl*>(p);
  if (!Ok(HcclBarrier(h->comm, h->stream), h->rank, "HcclBarrier") || Sync(p) != 0) exit(2);
}

// Reduces n <= 2 int64 values with `op` to `root` (HcclReduce: the statistics need nothing else).
bool ReduceI64(Hostccl* h, const int64_t* in, int n, HcclReduceOp op, int root, int64_t* out) {
  const size_t bytes = sizeof(int64_t) * static_cast<size_t>(n);
  memcpy(h->stats_send, in, bytes);
  if (!Ok(HcclReduce(h->stats_send, h->stats_recv, static_cast<uint64_t>(n), HCCL_DATA_TYPE_INT64,
                     op, static_cast<uint32_t>(root), h->comm, h->stream),
          h->rank, "HcclReduce(stats)") ||
      Sync(h) != 0)
    return false;
  if (h->rank == root) memcpy(out, h->stats_recv, bytes);
  return true;
}

// Times travel as integer nanoseconds.
double MaxAll(void* p, double v) {
  auto* h = static_cast<Hostccl*>(p);
  int64_t mine = static_cast<int64_t>(v * 1e3), best = mine, got = 0;
  for (int q = 0; q < h->size; ++q) {  // to each rank in turn
    if (!ReduceI64(h, &mine, 1, HCCL_REDUCE_MAX, q, &got)) exit(2);
    if (q == h->rank) best = got;
  }
  return static_cast<double>(best) / 1e3;
}

// v[i] = max over ranks: integer nanoseconds through an INT64 AllReduce of device buffers (the
// type the statistics already travel as).
void MaxAllN(void* p, double* v, long n) {
  auto* h = static_cast<Hostccl*>(p);
  const size_t bytes = sizeof(int64_t) * static_cast<size_t>(n);
  void *in = nullptr, *out = nullptr;
  if (!Ok(aclrtMalloc(&in, bytes, ACL_MEM_MALLOC_HUGE_FIRST), h->rank, "aclrtMalloc") ||
      !Ok(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST), h->rank, "aclrtMalloc"))
    exit(2);
  auto* ns = static_cast<int64_t*>(in);
  for (long i = 0; i < n; ++i) ns[i] = llround(v[i] * 1e3);
  if (!Ok(HcclAllReduce(in, out, static_cast<uint64_t>(n), HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MAX,
                        h->comm, h->stream),
          h->rank, "HcclAllReduce(stamps)") ||
      Sync(h) != 0)
    exit(2);
  for (long i = 0; i < n; ++i) v[i] = static_cast<double>(static_cast<int64_t*>(out)[i]) / 1e3;
  (void)aclrtFree(in);
  (void)aclrtFree(out);
}

void StatsToRoot(void* p, int root, double t, double wrong, double* tmin, double* tmax,
                 double* wsum) {
  auto* h = static_cast<Hostccl*>(p);
  const int64_t ns = static_cast<int64_t>(t * 1e3);
  int64_t in[2] = {ns, -ns}, out[2] = {0, 0}, w = static_cast<int64_t>(wrong), ws = 0;
  if (!ReduceI64(h, in, 2, HCCL_REDUCE_MAX, root, out) ||
      !ReduceI64(h, &w, 1, HCCL_REDUCE_SUM, root, &ws))
    exit(2);
  *tmax = static_cast<double>(out[0]) / 1e3;
  *tmin = static_cast<double>(-out[1]) / 1e3;
  *wsum = static_cast<double>(ws);
}

int Run(void* p, int coll, void* send, void* recv, size_t count, int dtype, int op, int root,
        const char** why) {
  auto* h = static_cast<Hostccl*>(p);
  HcclResult r = HCCL_E_NOT_SUPPORT;
  const char* name = "?";
  const HcclDataType t = kTypes[dtype];
  const auto uroot = static_cast<uint32_t>(root);
  switch (coll) {
    case BENCH_REDUCE:
      name = "HcclReduce";
      r = HcclReduce(send, recv, count, t, kOps[op], uroot, h->comm, h->stream);
      break;
    case BENCH_ALLREDUCE:
      name = "HcclAllReduce";
      r = HcclAllReduce(send, recv, count, t, kOps[op], h->comm, h->stream);
      break;
    case BENCH_BROADCAST:
      name = "HcclBroadcast";
      r = HcclBroadcast(send, count, t, uroot, h->comm, h->stream);
      break;
    case BENCH_ALLGATHER:
      name = "HcclAllGather";
      r = HcclAllGather(send, recv, count, t, h->comm, h->stream);
      break;
    case BENCH_ALLGATHERV:
      name = "HcclAllGatherV";
      VArrays(h, count);
      r = HcclAllGatherV(send, count, recv, h->counts.data(), h->displs.data(), t, h->comm,
                         h->stream);
      break;
    case BENCH_REDUCESCATTER:
      name = "HcclReduceScatter";
      r = HcclReduceScatter(send, recv, count, t, kOps[op], h->comm, h->stream);
      break;
    case BENCH_REDUCESCATTERV:
      name = "HcclReduceScatterV";
      VArrays(h, count);
      r = HcclReduceScatterV(send, h->counts.data(), h->displs.data(), recv, count, t, kOps[op],
                             h->comm, h->stream);
      break;
    case BENCH_SCATTER:
      name = "HcclScatter";
      r = HcclScatter(send, recv, count, t, uroot, h->comm, h->stream);
      break;
    case BENCH_ALLTOALL:
      name = "HcclAlltoAll";
      r = HcclAlltoAll(send, count, t, recv, count, t, h->comm, h->stream);
      break;
    case BENCH_ALLTOALLV:
      name = "HcclAlltoAllV";
      VArrays(h, count);
      r = HcclAlltoAllV(send, h->counts.data(), h->displs.data(), t, recv, h->counts.data(),
                        h->displs.data(), t, h->comm, h->stream);
      break;
    case BENCH_SENDRECV:  // one round trip: rank 0 sends first, rank 1 receives first
      if (h->rank == 0) {
        name = "HcclSend";
        r = HcclSend(send, count, t, 1, h->comm, h->stream);
        if (r == HCCL_SUCCESS) {
          name = "HcclRecv";
          r = HcclRecv(recv, count, t, 1, h->comm, h->stream);
        }
      } else {
        name = "HcclRecv";
        r = HcclRecv(recv, count, t, 0, h->comm, h->stream);
        if (r == HCCL_SUCCESS) {
          name = "HcclSend";
          r = HcclSend(send, count, t, 0, h->comm, h->stream);
        }
      }
      break;
    default:
      break;
  }
  if (r == HCCL_E_NOT_SUPPORT) {
    *why = "HCCL_E_NOT_SUPPORT";
    return BENCH_RUN_UNSUPPORTED;
  }
  return Ok(r, h->rank, name) ? 0 : BENCH_RUN_ERROR;
}

void* Alloc(void* p, uint64_t bytes) {
  auto* h = static_cast<Hostccl*>(p);
  void* ptr = nullptr;
  // Fresh memory reads as zero and is pre-faulted (docs/runtime.md), like reduce_test's buffers.
  if (!Ok(aclrtMalloc(&ptr, bytes, ACL_MEM_MALLOC_HUGE_ONLY), h->rank, "aclrtMalloc")) return nullptr;
  return ptr;
}

void Release(void*, void* ptr) { (void)aclrtFree(ptr); }

}  // namespace

int main(int argc, char** argv) {
  uint32_t rank = 0, size = 0;
  if (HostcclGetEnvRank(&rank, &size) != HCCL_SUCCESS || size == 0) {
    fprintf(stderr, "hostccl_coll_bench: no launcher variables (start it with hcclrun -n N)\n");
    return 2;
  }
  bench_opts o;
  int rc = bench_parse(argc, argv, &o, static_cast<int>(rank));
  if (rc != 0) return rc > 0 ? 0 : 2;
  Hostccl h;
  h.rank = static_cast<int>(rank);
  h.size = static_cast<int>(size);
  uint32_t devices = 0;
  if (!Ok(aclInit(nullptr), h.rank, "aclInit") ||
      !Ok(aclrtGetDeviceCount(&devices), h.rank, "aclrtGetDeviceCount") || devices == 0)
    return 2;
  const int device = static_cast<int>(rank % devices);
  if (!Ok(aclrtSetDevice(device), h.rank, "aclrtSetDevice") ||
      !Ok(aclrtCreateStream(&h.stream), h.rank, "aclrtCreateStream") ||
      !Ok(HostcclCommInitFromEnv(&h.comm), h.rank, "HostcclCommInitFromEnv") ||
      !Ok(aclrtMalloc(&h.stats_send, 64, ACL_MEM_MALLOC_HUGE_ONLY), h.rank, "aclrtMalloc") ||
      !Ok(aclrtMalloc(&h.stats_recv, 64, ACL_MEM_MALLOC_HUGE_ONLY), h.rank, "aclrtMalloc"))
    return 2;
  bench_comm c{};
  c.rank = h.rank;
  c.size = h.size;
  c.ctx = &h;
  c.barrier = Barrier;
  c.max_all = MaxAll;
  c.max_all_n = MaxAllN;
  c.stats_to_root = StatsToRoot;
  c.run = Run;
  c.sync = Sync;
  c.alloc = Alloc;
  c.release = Release;
  rc = bench_main(&o, &c);
  (void)aclrtFree(h.stats_send);
  (void)aclrtFree(h.stats_recv);
  (void)HcclCommDestroy(h.comm);
  (void)aclrtDestroyStream(h.stream);
  (void)aclrtResetDevice(device);
  (void)aclFinalize();
  return rc;
}
