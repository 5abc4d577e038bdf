// AlltoAll family, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates
// hosts on one machine): shared memory inside each host, TCP only for blocks that cross hosts.
//
// What: rank r on host j (ranks [lo, hi)):
//   1. AlltoAllV: posts the exchange of its (sendCounts, sdispls, recvCounts) with every rank on
//      another host (3 n words each way per pair).
//   2. One arrival in the host's segment (node_shm): buffers published, fingerprints compared,
//      AlltoAllV's arrays inline in the slot (24 n bytes). AlltoAllV: waits for the remote arrays
//      and checks every pair of all n ranks (CheckPairs) before any data moves, so every rank of
//      every host fails with the same message.
//   3. Posts, for k = 1 .. n-1 with t = (r + k) mod n on another host, the send of its block for t
//      and the receive of t's block straight into recvBuf + RecvDispl(t): one message each way per
//      cross-host pair (zero-length for empty blocks), so every rank sees the fingerprint of every
//      rank on other hosts.
//   4. Meanwhile copies the blocks of its own host's ranks (itself included) straight out of their
//      mapped sendBufs (the "shm" pull, rotated from r), progressing TCP every 4 MiB.
//   5. Waits for its messages, then one host barrier: no rank returns (and reuses its sendBuf)
//      while a host peer may still read it.
//   When a sendBuf on host j cannot be mapped (not aclrtMalloc memory), every rank of host j (all
//   read the same descriptors) moves its host's blocks over TCP too (logged once); other hosts are
//   unaffected. AlltoAllV with 24 n > 4 KiB (n > 170): every rank runs "pairwise" (decided from n).
// Link bound: host j's link carries, each way, exactly the blocks between its ranks and the other
//   hosts' ranks, each byte once (per rank: its send total minus its own host's blocks out, its
//   receive total minus its own host's blocks in) -- as "pairwise", but blocks inside a host never
//   touch TCP, and their copy overlaps the wire. Not aggregated per host pair: n - (hi - lo)
//   messages per rank each way (a leader-gather plan would send K - 1 larger ones but copy every
//   byte twice more).
// Preconditions: ctx.nodes, ctx.node_shm, a transport.
// Example: 2 hosts x 2 ranks (host 0: ranks 0, 1; host 1: ranks 2, 3): rank 1 sends its blocks for
//   2 and 3 over TCP and receives theirs, and copies rank 0's block for 1 (and its own) out of the
//   mapped sendBufs; host 0's link carries 4 blocks each way.
#include <cstring>
#include <vector>

#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "common/log.h"

namespace hostccl::algo {

Status AlltoAllNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node alltoall"));
  net::ShmGroup* g = host.group();
  const int n = ctx.size, r = ctx.rank;
  const int lo = host.lo(), hi = host.hi();
  auto local = [&](int i) { return i >= lo && i < hi; };
  const bool v = a.kind == CollKind::kAlltoAllV;
  const uint64_t words = 3 * static_cast<uint64_t>(n);
  if (v && words * sizeof(uint64_t) > g->PayloadLimit()) {
    if (g->FirstUse("alltoall node: arrays"))
      HLOG_INFO(kAlgo, "HcclAlltoAllV #%llu: %d ranks' arrays do not fit the arrival slot; re-plan node -> pairwise",
                static_cast<unsigned long long>(ctx.fp.seq), n);
    return AlltoAllPairwise(ctx, a);
  }
  const uint64_t es = DataTypeSize(a.dtype);
  const Blocks b{a};
  // 1. AlltoAllV: the arrays of every rank on another host.
  uint64_t* all = nullptr;
  Requests arr(ctx);
  if (v) {
    all = static_cast<uint64_t*>(ctx.scratch->Get(words * static_cast<uint64_t>(n) * sizeof(uint64_t)));
    if (all == nullptr) return host.Fail(Status(Code::kMemory, "cannot allocate the alltoallv arrays' scratch"));
    for (int k = 1; k < n; ++k) {
      const int from = (r - k + n) % n;
      if (!local(from))
        if (Status st = arr.Recv(from, all + static_cast<uint64_t>(from) * words, words * sizeof(uint64_t)); !st.ok())
          return host.Fail(st);
    }
    for (int k = 1; k < n; ++k) {
      const int to = (r + k) % n;
      if (!local(to))
        if (Status st = arr.Send(to, a.send_counts, words * sizeof(uint64_t)); !st.ok()) return host.Fail(st);
    }
  }
  // 2. The host's arrival.
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(
      host.Arrive(a, ctx.deadline, &ticket, v ? a.send_counts : nullptr, v ? words * sizeof(uint64_t) : 0));
  std::vector<const uint64_t*> rows;
  if (v) {
    if (Status st = arr.WaitAll(); !st.ok()) return host.Fail(st);
    rows.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      rows[static_cast<size_t>(i)] =
          i == r ? a.send_counts
                 : local(i) ? reinterpret_cast<const uint64_t*>(g->ArrivedPayload(i - lo, ticket))
                            : all + static_cast<uint64_t>(i) * words;
    // Every rank of every host has the same rows and finds the same pair; the slots stay readable,
    // so no rank needs to wait for the others before leaving.
    HOSTCCL_RETURN_IF_ERROR(CheckPairs(ctx, rows.data(), 2 * static_cast<size_t>(n)));
  }
  // 3. The cross-host blocks (and the host's own blocks too when a sendBuf cannot be mapped).
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  if (unshared >= 0 && hi - lo > 1 && g->FirstUse("alltoall node: own host over TCP"))
    HLOG_INFO(kAlgo, "%s #%llu: rank %d's sendBuf is not aclrtMalloc memory; its host's blocks go over TCP in node",
              CollKindName(a.kind), static_cast<unsigned long long>(ctx.fp.seq), lo + unshared);
  auto over_tcp = [&](int i) { return i != r && (!local(i) || unshared >= 0); };
  const char* send = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  Requests rq(ctx);
  Status st;
  for (int k = 1; k < n && st.ok(); ++k) {
    const int from = (r - k + n) % n;
    if (over_tcp(from)) st = rq.Recv(from, recv + b.RecvDispl(from) * es, b.RecvCount(from) * es);
  }
  for (int k = 1; k < n && st.ok(); ++k) {
    const int to = (r + k) % n;
    if (over_tcp(to)) st = rq.Send(to, send + b.SendDispl(to) * es, b.SendCount(to) * es);
  }
  // 4. The host's blocks out of the mapped sendBufs (only its own block when over TCP).
  if (st.ok()) {
    if (unshared < 0) {
      st = PullBlocks(ctx, g, a, lo, hi, v ? rows.data() : nullptr, host.progress());
    } else if (const uint64_t len = b.RecvCount(r) * es; len) {
      std::memmove(recv + b.RecvDispl(r) * es, send + b.SendDispl(r) * es, len);
    }
  }
  // 5. The messages, then the host barrier.
  if (st.ok()) st = rq.WaitAll();
  if (!st.ok()) return host.Fail(st);
  return host.Barrier(ctx.deadline);
}

}  // namespace hostccl::algo
