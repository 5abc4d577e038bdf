// What the AllReduce and Broadcast grids share: communicator configurations (ranks, mode,
// placement, forced algorithm, chunk size), the placement an algorithm needs, and the library's
// algorithm registry when this build has one (algo::Algorithms(), linked from hostccl_algo; a
// build without it lists no algorithms, and the grids then run the automatic choice only).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/run_ranks.h"

// HOSTCCL_TEST_HAS_REGISTRY is defined by tests/collective/CMakeLists.txt when src/algo/registry.h
// exists (a compile definition, not __has_include: ccache's direct mode does not notice a header
// that appears later and would reuse an object compiled without it).
#if defined(HOSTCCL_TEST_HAS_REGISTRY) && HOSTCCL_TEST_HAS_REGISTRY
#include "algo/registry.h"
#define HOSTCCL_GRID_HAS_REGISTRY 1
#else
#define HOSTCCL_GRID_HAS_REGISTRY 0
#endif

namespace hostccl::test::grid {

// Where the ranks are, i.e. which of the library's shared resources exist:
//   kThreads  threads of one process (in-process group, and from 2 ranks a shared segment, which
//             the default rules prefer; HOSTCCL_TRANSPORT default)
//   kShm      processes of one host (shared segment + transport)
//   kTcp      processes of one host with HOSTCCL_TRANSPORT=tcp (transport only)
//   kHosts    processes on `hosts` emulated hosts (HOSTCCL_NODE_ID, contiguous blocks): per-host
//             segments + transport
enum class Place { kThreads, kShm, kTcp, kHosts };

// An algorithm's placement needs, as the registry's bits (algo::Needs) say.
struct LibAlgo {
  std::string name;
  bool local = false, shm = false, nodes = false, transport = false;
  bool chunked = false;
  uint64_t max_bytes = 0;  // largest message it takes (bytes per rank); 0 = no limit
};

// The library's algorithms for the operator whose HOSTCCL_ALGO name is `op` ("allreduce"), in
// registry order; empty without a registry.
inline std::vector<LibAlgo> LibraryAlgorithms(const char* op) {
  std::vector<LibAlgo> out;
#if HOSTCCL_GRID_HAS_REGISTRY
  const OpInfo* info = FindOpByAlgoName(op);
  if (info == nullptr) return out;
  for (const auto& a : algo::Algorithms()) {
    if (a.op != info->kind) continue;
    LibAlgo l;
    l.name = a.name;
    l.local = (a.needs & algo::kNeedsLocal) != 0;
    l.shm = (a.needs & algo::kNeedsShm) != 0;
    l.nodes = (a.needs & algo::kNeedsNodes) != 0;
    l.transport = (a.needs & algo::kNeedsTransport) != 0;
    l.chunked = a.chunk_cap != 0;
    l.max_bytes = a.max_bytes;
    out.push_back(l);
  }
#else
  (void)op;
#endif
  return out;
}

struct GridConfig {
  int index;
  int nranks;
  Mode mode;
  Place place;
  std::string algo;  // "" = automatic choice
  int chunk_bytes;   // 0 = library default
  bool full;
  int hosts = 1;     // kHosts only
};

// Names are built with += only (GCC 12 -O3 false -Wrestrict on "literal" + std::string).
inline std::string ConfigName(const GridConfig& c) {
  std::string s = "r";
  s += std::to_string(c.nranks);
  s += c.mode == Mode::kThreadsInitAll ? "_initall" : c.mode == Mode::kThreadsRootInfo ? "_rootinfo" : "_proc";
  if (c.place == Place::kTcp) s += "_tcp";
  if (c.place == Place::kHosts) (s += "_hosts") += std::to_string(c.hosts);
  s += "_";
  s += c.algo.empty() ? std::string("auto") : c.algo;
  if (c.chunk_bytes) (s += "_chunk") += std::to_string(c.chunk_bytes);
  return s;
}

inline void PrintTo(const GridConfig& c, std::ostream* os) { *os << ConfigName(c); }

// Would the library run algorithm `a` (rather than fall back to its rules) in configuration g?
inline bool Runs(const LibAlgo& a, const GridConfig& g) {
  const bool threads = g.mode != Mode::kProcesses;
  if (a.local && (!threads || g.place == Place::kTcp)) return false;
  if (a.shm && (threads ? g.place != Place::kThreads || g.nranks < 2 : g.place != Place::kShm)) return false;
  if (a.nodes && (threads || g.place != Place::kHosts || g.hosts < 2)) return false;
  return true;
}

// The placements where `a` runs, as (mode, place) pairs to force it in, best first.
inline std::vector<std::pair<Mode, Place>> PlacesFor(const LibAlgo& a) {
  if (a.nodes) return {{Mode::kProcesses, Place::kHosts}};
  if (a.local) return {{Mode::kThreadsInitAll, Place::kThreads}, {Mode::kThreadsRootInfo, Place::kThreads}};
  if (a.shm) return {{Mode::kProcesses, Place::kShm}, {Mode::kThreadsRootInfo, Place::kThreads}};
  // Transport only: processes over TCP, threads (which then open a mesh), processes over shm.
  return {{Mode::kProcesses, Place::kTcp}, {Mode::kThreadsRootInfo, Place::kThreads}, {Mode::kProcesses, Place::kShm}};
}

// The default subset's configurations: the automatic choice in every placement and rank count,
// then every library algorithm forced at one rank (where one rank can run it), at 3 ranks and at
// 5 ranks with a small chunk (pipelined algorithms; several chunks per slice) in the placements
// it needs.
inline std::vector<GridConfig> DefaultConfigs(const char* op) {
  std::vector<GridConfig> out;
  auto add = [&](int n, Mode m, Place p, const std::string& algo, int chunk, int hosts = 1) {
    out.push_back({static_cast<int>(out.size()), n, m, p, algo, chunk, false, hosts});
  };
  add(1, Mode::kThreadsInitAll, Place::kThreads, "", 0);
  add(2, Mode::kProcesses, Place::kShm, "", 0);
  add(4, Mode::kThreadsRootInfo, Place::kThreads, "", 0);
  add(8, Mode::kThreadsInitAll, Place::kThreads, "", 0);
  add(5, Mode::kProcesses, Place::kShm, "", 0);
  add(3, Mode::kProcesses, Place::kTcp, "", 0);
  add(8, Mode::kProcesses, Place::kTcp, "", 0);
  add(6, Mode::kProcesses, Place::kHosts, "", 0, 2);
  for (const LibAlgo& a : LibraryAlgorithms(op)) {
    const auto places = PlacesFor(a);
    if (a.nodes) {
      add(4, Mode::kProcesses, Place::kHosts, a.name, 0, 2);
      add(5, Mode::kProcesses, Place::kHosts, a.name, a.chunked ? 8192 : 0, 3);
      continue;
    }
    add(1, places[0].first, places[0].second, a.name, 0);
    const auto& p3 = places[places.size() > 1 ? 1 : 0];
    add(3, p3.first, p3.second, a.name, 0);
    add(a.chunked ? 5 : 4, places[0].first, places[0].second, a.name, a.chunked ? 4096 : 0);
  }
  return out;
}

// The full grid's configurations: every rank count x every placement x (auto + every algorithm
// that runs there), and the pipelined ones once more with a small chunk.
inline std::vector<GridConfig> FullConfigs(const char* op) {
  std::vector<GridConfig> out;
  const auto algos = LibraryAlgorithms(op);
  std::vector<LibAlgo> all = {LibAlgo{}};  // "" = auto, runs anywhere
  all.insert(all.end(), algos.begin(), algos.end());
  const std::pair<Mode, Place> places[] = {{Mode::kThreadsInitAll, Place::kThreads},
                                           {Mode::kThreadsRootInfo, Place::kThreads},
                                           {Mode::kProcesses, Place::kShm},
                                           {Mode::kProcesses, Place::kTcp},
                                           {Mode::kProcesses, Place::kHosts}};
  for (int n : {1, 2, 3, 4, 5, 8})
    for (const auto& [m, p] : places) {
      if (p == Place::kHosts && n < 2) continue;
      for (const LibAlgo& a : all) {
        GridConfig g{static_cast<int>(out.size()), n, m, p, a.name, 0, true, p == Place::kHosts ? 2 : 1};
        if (Runs(a, g)) out.push_back(g);
      }
    }
  for (const LibAlgo& a : algos) {
    if (!a.chunked) continue;
    const auto place = PlacesFor(a)[0];
    for (int n : {3, 8})
      out.push_back({static_cast<int>(out.size()), n, place.first, place.second, a.name, 4096, true,
                     place.second == Place::kHosts ? 2 : 1});
  }
  return out;
}

// The largest message (bytes per rank) the forced algorithm `algo` of `op` takes, from the
// registry's max_bytes (UINT64_MAX: no limit, or the automatic choice). A larger call falls back
// to the default rules (core/selector.cc), so configurations cap most cases to it to exercise the
// forced algorithm, and keep one case above it to exercise the fallback.
inline uint64_t SizeLimit(const char* op, const std::string& algo) {
  for (const LibAlgo& a : LibraryAlgorithms(op))
    if (a.name == algo && a.max_bytes != 0) return a.max_bytes;
  return UINT64_MAX;
}

// The payload an inline algorithm carries in its 4 KiB arrival slot, for operators whose
// shm_inline re-plans to shm by itself beyond it (AllGather(V), Scatter: no registry max_bytes), so
// their grids cap most cases to it to exercise the inline path; UINT64_MAX for other algorithms.
inline uint64_t InlineSlotBytes(const std::string& algo) {
  return algo.find("inline") != std::string::npos ? 4096 : UINT64_MAX;
}

// RunOptions of a configuration: the forced algorithm, chunk, transport and emulated hosts.
inline RunOptions Options(const GridConfig& g, const char* op) {
  RunOptions opts;
  if (!g.algo.empty()) opts.env.push_back({"HOSTCCL_ALGO", std::string(op) + "=" + g.algo});
  if (g.chunk_bytes) opts.env.push_back({"HOSTCCL_CHUNK_BYTES", std::to_string(g.chunk_bytes)});
  if (g.place == Place::kTcp) opts.env.push_back({"HOSTCCL_TRANSPORT", "tcp"});
  // 5 processes on one host: 3 workers share the claimed pieces (PeerMemory::Workers) whatever the
  // machine's core count, so ranks 3 and 4 only wait, the ranges are uneven, and on 2 cores a
  // worker that waits for a core loses pieces to the others.
  if (g.place == Place::kShm && g.nranks == 5) opts.env.push_back({"HOSTCCL_SHM_WORKERS", "3"});
  if (g.full) opts.timeout_s = 7200;
  if (g.place == Place::kHosts) {
    const int hosts = g.hosts, n = g.nranks;
    opts.rank_env = [hosts, n](int rank) {
      return std::vector<std::pair<std::string, std::string>>{
          {"HOSTCCL_NODE_ID", "grid-host-" + std::to_string(rank * hosts / n)}};
    };
  }
  return opts;
}

inline bool FullGridRequested() { return std::getenv("HOSTCCL_FULL_GRID") != nullptr; }  // test switch

// The host-buffer tests (buffers from malloc, not aclrtMalloc) run between processes of one host,
// whose peers cannot map them (the shared-memory plans re-plan, logged), and between thread ranks
// over their default shared segment (set up without sockets), which read them in place: one
// address space.
enum class HostBufRun { kProcesses, kThreadsShm };
inline const char* HostBufRunName(HostBufRun r) { return r == HostBufRun::kProcesses ? "processes" : "threads_shm"; }
inline Mode HostBufMode(HostBufRun r) { return r == HostBufRun::kProcesses ? Mode::kProcesses : Mode::kThreadsRootInfo; }
inline constexpr HostBufRun kHostBufRuns[] = {HostBufRun::kProcesses, HostBufRun::kThreadsShm};

}  // namespace hostccl::test::grid
