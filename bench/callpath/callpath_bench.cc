// The per-call cost of the API path (docs/performance.md "8-byte isolated calls: the per-call
// cost"): a one-rank communicator, so every call is argument check, enqueue, stream task,
// selection, flight recorder and the algorithm's one-rank arrival, with no peer to wait for.
// For each operator, 8 B (two fp32) per call:
//   isolated       the call followed by aclrtSynchronizeStream, N times
//   back to back   N calls, then one aclrtSynchronizeStream
// Prints ns per call: the best and the median of --reps timed loops (a loaded machine only adds
// to the best). Run it under `perf stat`/`perf record`, or with a uprobe on pthread_mutex_lock or
// malloc, to see where the time goes (`-o OP -m iso` runs one operator and mode only).
//   callpath_bench [-n calls per loop, default 200000] [-r reps, default 7] [-o op] [-m iso|b2b]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "small_calls.h"

namespace {

using Env = hostccl::bench::CallEnv;
using Op = hostccl::bench::SmallOp;

bool Ok(int rc, const char* what) {
  if (rc == 0) return true;
  std::fprintf(stderr, "callpath_bench: %s failed: %d\n", what, rc);
  return false;
}

std::vector<Op> Ops() {
  const uint64_t c = 2;  // 8 B of fp32
  std::vector<Op> ops = hostccl::bench::FixedCountOps(c);
  const std::vector<Op> v = {
      // The V family: one rank, so each array has one entry (2 elements at 0).
      {"allgatherv", [c](const Env& e) {
         static uint64_t counts[1] = {c}, displs[1] = {0};
         return HcclAllGatherV(e.send, c, e.recv, counts, displs, HCCL_DATA_TYPE_FP32, e.comm, e.stream); }},
      {"reducescatterv", [c](const Env& e) {
         static uint64_t counts[1] = {c}, displs[1] = {0};
         return HcclReduceScatterV(e.send, counts, displs, e.recv, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, e.comm,
                                   e.stream); }},
      {"alltoallv", [c](const Env& e) {
         static uint64_t counts[1] = {c}, displs[1] = {0};
         return HcclAlltoAllV(e.send, counts, displs, HCCL_DATA_TYPE_FP32, e.recv, counts, displs, HCCL_DATA_TYPE_FP32,
                              e.comm, e.stream); }},
  };
  ops.insert(ops.end(), v.begin(), v.end());
  return ops;
}

// ns per call of one timed loop.
double Loop(const Env& e, const Op& op, bool isolated, long n) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    if (op.call(e) != HCCL_SUCCESS) std::exit(1);
    if (isolated && aclrtSynchronizeStream(e.stream) != 0) std::exit(1);
  }
  if (!isolated && aclrtSynchronizeStream(e.stream) != 0) std::exit(1);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  long n = 200000;
  int reps = 7;
  std::string only_op, only_mode;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-n")) n = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-r")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-o")) only_op = argv[i + 1];
    else if (!std::strcmp(argv[i], "-m")) only_mode = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: callpath_bench [-n calls] [-r reps] [-o op] [-m iso|b2b]\n");
      return 2;
    }
  }
  if (n <= 0 || reps <= 0) return 2;
  Env e;
  int32_t dev[1] = {0};
  if (!Ok(aclInit(nullptr), "aclInit") || !Ok(aclrtSetDevice(0), "aclrtSetDevice") ||
      !Ok(aclrtCreateStream(&e.stream), "aclrtCreateStream") || !Ok(HcclCommInitAll(1, dev, &e.comm), "HcclCommInitAll") ||
      !Ok(aclrtMalloc(&e.send, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc") ||
      !Ok(aclrtMalloc(&e.recv, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc"))
    return 2;
  std::printf("%-14s %-13s %10s %10s   (ns per call, 8 B, 1 rank, %d x %ld calls)\n", "operator", "mode", "best",
              "median", reps, n);
  for (const Op& op : Ops()) {
    if (!only_op.empty() && only_op != op.name) continue;
    for (bool isolated : {true, false}) {
      if (!only_mode.empty() && only_mode != (isolated ? "iso" : "b2b")) continue;
      (void)Loop(e, op, isolated, std::min(n, 10000L));  // warm up
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) t.push_back(Loop(e, op, isolated, n));
      std::sort(t.begin(), t.end());
      std::printf("%-14s %-13s %10.1f %10.1f\n", op.name, isolated ? "isolated" : "back to back", t.front(),
                  t[t.size() / 2]);
    }
  }
  HcclCommDestroy(e.comm);
  aclrtFree(e.send);
  aclrtFree(e.recv);
  aclrtDestroyStream(e.stream);
  aclrtResetDevice(0);
  aclFinalize();
  return 0;
}
