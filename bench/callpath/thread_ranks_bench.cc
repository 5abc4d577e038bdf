// Small calls of thread ranks (docs/performance.md "Thread ranks: small calls"): N ranks as threads
// of this process (HcclCommInitAll, one thread per rank, each with its own stream), S bytes of
// fp32 per rank and call (-b, default 8), every operator without V arrays (small_calls.h),
//   isolated       the call followed by aclrtSynchronizeStream, n times
//   back to back   n calls, then one aclrtSynchronizeStream
// Each timed loop starts on every rank at once (a std::barrier) and counts the slowest rank's time.
// Prints µs per call, the best and the median of --reps loops, and how much the process's peak
// resident memory grew over the back-to-back loops (the queued calls' storage); first, how long
// HcclCommInitAll took.
//   thread_ranks_bench [-t ranks, default 2] [-b bytes, default 8] [-n calls per loop, default 20000]
//                      [-r reps, default 5] [-o op] [-m iso|b2b] [-H 1: buffers from malloc, not aclrtMalloc]
//                      [-D 1: one thread drives every rank: each call is issued on every rank's
//                       stream in turn, and an isolated call synchronizes every stream]
// The transport is the library's choice for thread ranks (a shared segment from 2 ranks) unless
// HOSTCCL_TRANSPORT says otherwise (local: the in-process plans only).
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "small_calls.h"

namespace {

using Rank = hostccl::bench::CallEnv;
using Op = hostccl::bench::SmallOp;

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  int nranks = 2, reps = 5;
  long n = 20000, bytes = 8;
  bool host_buffers = false, one_driver = false;
  std::string only_op, only_mode;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-t")) nranks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-n")) n = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-b")) bytes = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-H")) host_buffers = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "-D")) one_driver = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "-r")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-o")) only_op = argv[i + 1];
    else if (!std::strcmp(argv[i], "-m")) only_mode = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: thread_ranks_bench [-t ranks] [-b bytes] [-n calls] [-r reps] [-o op] [-m iso|b2b] [-H 1] [-D 1]\n");
      return 2;
    }
  }
  if (nranks < 1 || n <= 0 || reps <= 0 || bytes < 4 || bytes % 4 != 0) return 2;
  const uint64_t count = static_cast<uint64_t>(bytes) / 4;
  if (aclInit(nullptr) != ACL_SUCCESS) return 2;
  std::vector<int32_t> devs(static_cast<size_t>(nranks));
  for (int i = 0; i < nranks; ++i) devs[static_cast<size_t>(i)] = i;
  std::vector<Rank> ranks(static_cast<size_t>(nranks));
  std::vector<HcclComm> comms(static_cast<size_t>(nranks));
  const auto init0 = std::chrono::steady_clock::now();
  if (HcclCommInitAll(static_cast<uint32_t>(nranks), devs.data(), comms.data()) != HCCL_SUCCESS) {
    std::fprintf(stderr, "thread_ranks_bench: HcclCommInitAll failed\n");
    return 2;
  }
  std::printf("HcclCommInitAll of %d ranks: %.2f ms\n", nranks,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - init0).count());
  const std::vector<Op> ops = hostccl::bench::FixedCountOps(count);
  std::barrier sync(nranks);
  std::vector<double> ns(static_cast<size_t>(nranks));  // one loop's time per rank
  std::atomic<bool> failed{false};
  std::printf("%-14s %-13s %10s %10s %12s   (us per call, %ld B, %d thread ranks, %s, %d x %ld calls)\n",
              "operator", "mode", "best", "median", "peak RSS +", bytes, nranks,
              one_driver ? "one thread drives every rank" : "max over ranks", reps, n);
  // -D 1: rank 0's thread issues every rank's call; the other threads only keep the loops' step.
  // The ranks thread `me` issues calls for: its own, or with -D 1 all of them (rank 0's thread).
  auto driven = [&](int me) {
    if (!one_driver) return std::span<Rank>(&ranks[static_cast<size_t>(me)], 1);
    return me == 0 ? std::span<Rank>(ranks) : std::span<Rank>();
  };
  auto synchronize = [&](int me) {
    for (const Rank& r : driven(me))
      if (aclrtSynchronizeStream(r.stream) != ACL_SUCCESS) failed = true;
  };
  auto issue = [&](const Op& op, int me, bool isolated) {
    for (const Rank& r : driven(me))
      if (op.call(r) != HCCL_SUCCESS) failed = true;
    if (isolated) synchronize(me);
  };
  // Rank 0's thread prints; every rank runs the same sequence of loops.
  auto body = [&](int me) {
    Rank& r = ranks[static_cast<size_t>(me)];
    r.comm = comms[static_cast<size_t>(me)];
    // n x S both ways: AllGather's recvBuf, ReduceScatter's, Scatter's and AlltoAll's sendBuf.
    const size_t send_bytes = static_cast<size_t>(bytes) * static_cast<size_t>(nranks), recv_bytes = send_bytes;
    if (aclrtSetDevice(me) != ACL_SUCCESS || aclrtCreateStream(&r.stream) != ACL_SUCCESS) std::abort();
    if (host_buffers) {
      r.send = std::calloc(1, send_bytes);
      r.recv = std::calloc(1, recv_bytes);
      if (r.send == nullptr || r.recv == nullptr) std::abort();
    } else if (aclrtMalloc(&r.send, send_bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
               aclrtMalloc(&r.recv, recv_bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
               aclrtMemset(r.send, send_bytes, 0, send_bytes) != ACL_SUCCESS) {
      std::abort();
    }
    for (const Op& op : ops) {
      if (!only_op.empty() && only_op != op.name) continue;
      for (bool isolated : {true, false}) {
        if (!only_mode.empty() && only_mode != (isolated ? "iso" : "b2b")) continue;
        const long rss0 = PeakRssKb();
        std::vector<double> t;
        for (int rep = -1; rep < reps; ++rep) {  // rep -1 warms up
          const long calls = rep < 0 ? std::min(n, 200L) : n;
          sync.arrive_and_wait();
          const auto t0 = std::chrono::steady_clock::now();
          for (long i = 0; i < calls && !failed.load(std::memory_order_relaxed); ++i) issue(op, me, isolated);
          if (!isolated) synchronize(me);
          ns[static_cast<size_t>(me)] =
              std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
              static_cast<double>(calls);
          sync.arrive_and_wait();
          if (rep >= 0) t.push_back(*std::max_element(ns.begin(), ns.end()));
          sync.arrive_and_wait();  // every rank has read ns
        }
        if (me == 0) {
          std::sort(t.begin(), t.end());
          std::printf("%-14s %-13s %10.3f %10.3f %9ld KiB\n", op.name, isolated ? "isolated" : "back to back",
                      t.front() / 1000, t[t.size() / 2] / 1000, PeakRssKb() - rss0);
          std::fflush(stdout);
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < nranks; ++i) threads.emplace_back(body, i);
  for (auto& th : threads) th.join();
  for (Rank& r : ranks) {
    HcclCommDestroy(r.comm);
    if (host_buffers) {
      std::free(r.send);
      std::free(r.recv);
    } else {
      aclrtFree(r.send);
      aclrtFree(r.recv);
    }
    aclrtDestroyStream(r.stream);
  }
  aclFinalize();
  if (failed.load()) std::fprintf(stderr, "thread_ranks_bench: a call failed\n");
  return failed.load() ? 1 : 0;
}
