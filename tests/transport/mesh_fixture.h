// Test helper: builds TCP meshes of N ranks as threads of this process over loopback.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "transport/tcp/tcp_mesh.h"

namespace hostccl::net::testing {

// Deterministic pseudo-random bytes (payloads whose corruption or reordering shows).
inline std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

// Milliseconds since t0.
inline int64_t ElapsedMs(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
}

inline const uint8_t kTestToken[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct Mesh {
  std::vector<std::unique_ptr<TcpListener>> listeners;
  std::vector<std::string> addrs;
  std::vector<std::unique_ptr<Transport>> t;
};

inline void MakeListeners(int n, Mesh* m) {
  for (int r = 0; r < n; ++r) {
    std::unique_ptr<TcpListener> l;
    Status st = CreateTcpListener("127.0.0.1", &l);
    ASSERT_TRUE(st.ok()) << st.ToString();
    m->addrs.push_back(l->address());
    m->listeners.push_back(std::move(l));
  }
}

// Every rank runs CreateTcpMesh in its own thread; returns the per-rank statuses.
// sockets: connections per pair (0 = HOSTCCL_SOCKETS_PER_PEER); per_rank_sockets (optional)
// overrides it rank by rank.
inline std::vector<Status> ConnectMesh(Mesh* m, uint64_t tag, int64_t timeout_ms,
                                       const std::vector<int>& ranks_to_run = {}, int sockets = 0,
                                       const std::vector<int>& per_rank_sockets = {}) {
  int n = static_cast<int>(m->addrs.size());
  std::vector<int> run = ranks_to_run;
  if (run.empty())
    for (int r = 0; r < n; ++r) run.push_back(r);
  m->t.resize(n);
  std::vector<Status> sts(n);
  std::vector<std::thread> th;
  Deadline d = Deadline::AfterMs(timeout_ms);
  for (int r : run) {
    th.emplace_back([&, r] {
      const int k = per_rank_sockets.empty() ? sockets : per_rank_sockets[static_cast<size_t>(r)];
      sts[r] = CreateTcpMesh(r, n, m->listeners[r].get(), m->addrs, kTestToken, tag, d, &m->t[r], k);
    });
  }
  for (auto& x : th) x.join();
  return sts;
}

inline Mesh MakeMesh(int n, int sockets = 0) {
  Mesh m;
  MakeListeners(n, &m);
  auto sts = ConnectMesh(&m, 7, 20000, {}, sockets);
  for (int r = 0; r < n; ++r) EXPECT_TRUE(sts[r].ok()) << "rank " << r << ": " << sts[r].ToString();
  return m;
}

inline Fingerprint Fp(uint64_t seq, uint64_t count = 0) {
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(CollKind::kAllReduce);
  fp.seq = seq;
  fp.count = count;
  return fp;
}

// Runs fn(rank) on one thread per rank.
template <typename Fn>
void OnRanks(int n, Fn fn) {
  std::vector<std::thread> th;
  for (int r = 0; r < n; ++r) th.emplace_back([&, r] { fn(r); });
  for (auto& x : th) x.join();
}

}  // namespace hostccl::net::testing
