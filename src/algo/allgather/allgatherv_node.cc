// AllGatherV, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates hosts
// on one machine): host leaders exchange their hosts' blocks over TCP, shared memory inside hosts.
//
// What: rank i's block (B_i = recvCounts[i] x element size bytes) lands at D_i = recvDispls[i] x
//   element size of every recvBuf; nothing else of recvBuf is written. Host k has ranks
//   [first[k], first[k+1]); its leader is first[k]. Unlike AllGather's, a host's blocks need not be
//   contiguous in recvBuf, so the leaders exchange them block by block instead of running a ring
//   over host ranges:
//   1. One arrival on the host (buffers published, fingerprints with the arrays' hash compared);
//      every rank copies its block into its own recvBuf, every non-leader also into the leader's
//      mapped recvBuf; a host barrier.
//   2. Each leader sends every block of its host to every other leader and receives theirs, one
//      message per block (empty blocks too, so every pair of leaders compares fingerprints), all
//      posted at once.
//   3. A host barrier; every non-leader copies every other rank's block out of the leader's
//      recvBuf; a last host barrier keeps the leader's recvBuf alive until every copy is done.
// Bytes: each leader sends its host's blocks to K-1 leaders and receives the rest (the bytes a ring
//   of leaders would carry per host link, one hop instead of K-1); each non-leader writes B_r into
//   the leader and copies sum(B) - B_r out of it.
// Mismatch: inside a host the arrival compares every rank (the arrays' hash is in the fingerprint);
//   across hosts every leader-to-leader message carries the fingerprint. Non-leaders finish only
//   after their leader's exchange succeeded.
// Not in place: the argument check rejects sendBuf == recvBuf and overlaps.
// Preconditions: ctx.nodes, ctx.node_shm, a transport; the leaders' recvBufs are aclrtMalloc memory
//   (otherwise kNotSupport, named).
// Example: 2 hosts x 2 ranks, recvCounts {1, 0, 2, 1}, recvDispls {4, 0, 0, 2} (fp32): rank 1 writes
//   nothing into rank 0 (empty block); rank 3 writes its 4 bytes at byte 8 of rank 2's recvBuf; rank
//   0 sends rank 0's and rank 1's blocks (4 and 0 bytes) to rank 2 and receives rank 2's (8 bytes at
//   byte 0) and rank 3's (4 bytes at byte 8); rank 1 copies bytes 0..12 and 16..20 out of rank 0.
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status AllGatherVNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node allgatherv"));
  const int K = host.hosts(), j = host.host(), n = ctx.size;
  const int lo = host.lo(), hi = host.hi();
  const bool leader = ctx.rank == lo;
  thread_local ExitMarked<std::vector<uint64_t>> off, len;
  VBlocks(ctx, a, &off, &len);
  const size_t me = static_cast<size_t>(ctx.rank);
  char* recv = static_cast<char*>(a.recv);
  // As AllGatherNode: a non-leader gives an abort from another host a second (then two) to arrive
  // before blaming its leader.
  const Deadline step = GraceDeadline(ctx, leader, 1000000000ull);
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, step, &ticket));
  char* lead = nullptr;  // the leader's recvBuf (non-leaders)
  if (!leader) {
    Status st;
    lead = host.PeerRecv(0, "the host leaders' recvBufs from aclrtMalloc (or force HOSTCCL_ALGO=allgatherv=ring)",
                         &st);
    if (lead == nullptr) return st;
    CopyHostBlock(lead + off[me], a.send, len[me]);
  }
  CopyHostBlock(recv + off[me], a.send, len[me]);
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(step));
  if (leader && K > 1) {
    Requests rq(ctx);
    for (int k = 1; k < K; ++k) {
      const int h = (j + K - k) % K;
      for (int r = host.first_of(h); r < host.first_of(h + 1); ++r) {
        const size_t q = static_cast<size_t>(r);
        Status st = rq.Recv(host.first_of(h), len[q] > 0 ? recv + off[q] : nullptr, len[q]);
        if (!st.ok()) return host.Fail(st);
      }
    }
    for (int k = 1; k < K; ++k) {
      const int peer = host.first_of((j + k) % K);
      for (int r = lo; r < hi; ++r) {
        const size_t q = static_cast<size_t>(r);
        Status st = rq.Send(peer, recv + off[q], len[q]);
        if (!st.ok()) return host.Fail(st);
      }
    }
    if (Status st = rq.WaitAll(); !st.ok()) return host.Fail(st);
  }
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(GraceDeadline(ctx, leader, 2000000000ull)));
  if (!leader)
    for (int r = 0; r < n; ++r)
      if (const size_t q = static_cast<size_t>(r); q != me) CopyHostBlock(recv + off[q], lead + off[q], len[q]);
  return host.Barrier(ctx.deadline);
}

}  // namespace hostccl::algo
