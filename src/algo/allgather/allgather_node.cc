// AllGather, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates
// hosts on one machine): a ring of host leaders over TCP, shared memory inside each host.
//
// What: host k has ranks [first[k], first[k+1]), its leader is first[k]; since ranks are
//   contiguous per host, host k's blocks are one contiguous range of recvBuf, its "host block".
//   1. One arrival on the host (buffers published, fingerprints compared); every non-leader writes
//      its block into the leader's mapped recvBuf; a host barrier.
//   2. The leaders run RingGather over the host blocks (pipelined ring over TCP, chunks straight
//      into their recvBufs); a host barrier passes the end on (non-leaders answer stall probes from
//      other hosts meanwhile).
//   3. Every non-leader copies the leader's recvBuf (all blocks but its own) into its own; a last
//      host barrier keeps the leader's recvBuf alive until every copy is done.
// Bytes: each host link carries (K-1) host blocks once (the ring's minimum); each non-leader writes
//   S into the leader and copies (n-1) S out of it.
// Mismatch: inside a host the arrival compares every rank; across hosts the ring compares each
//   link's frames (see allgather_ring.cc), and non-leaders finish only after their leader did.
// In place: AllGatherInPlace first; then no rank writes another rank's own block.
// Preconditions: ctx.nodes, ctx.node_shm, a transport; the leaders' recvBufs are aclrtMalloc memory
//   (otherwise kNotSupport, named).
// Example: 2 hosts x 2 ranks, 1 MiB each: rank 1 writes its block into rank 0's recvBuf at 1 MiB,
//   rank 3 into rank 2's at 3 MiB; ranks 0 and 2 exchange 2 MiB host blocks; ranks 1 and 3 copy
//   3 MiB from their leader.
#include <algorithm>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status AllGatherNode(Context& ctx, const OpArgs& in) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node allgather"));
  const OpArgs a = AllGatherInPlace(ctx, in);
  const int K = host.hosts(), j = host.host(), n = ctx.size;
  const bool leader = ctx.rank == host.lo();
  const uint64_t bytes = a.bytes();
  char* recv = static_cast<char*>(a.recv);
  char* own = recv + static_cast<uint64_t>(ctx.rank) * bytes;
  // The leader's TCP waits end at ctx.deadline and its abort names the rank it found stopped; the
  // other ranks of this host give that abort a second to arrive before blaming the leader.
  const Deadline step = GraceDeadline(ctx, leader, 1000000000ull);
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, step, &ticket));
  char* lead = nullptr;  // the leader's recvBuf (non-leaders)
  if (!leader) {
    Status st;
    lead = host.PeerRecv(0, "the host leaders' recvBufs from aclrtMalloc (or force HOSTCCL_ALGO=allgather=ring)",
                         &st);
    if (lead == nullptr) return st;
    CopyHostBlock(lead + static_cast<uint64_t>(ctx.rank) * bytes, a.send, bytes);
  } else {
    CopyHostBlock(own, a.send, bytes);
  }
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(step));
  if (leader && K > 1) {
    thread_local ExitMarked<std::vector<int>> members;
    thread_local ExitMarked<std::vector<uint64_t>> off, len;
    members.resize(static_cast<size_t>(K));
    off.resize(static_cast<size_t>(K));
    len.resize(static_cast<size_t>(K));
    for (int h = 0; h < K; ++h) {
      const int f = host.first_of(h), e = host.first_of(h + 1);
      members[static_cast<size_t>(h)] = f;
      off[static_cast<size_t>(h)] = static_cast<uint64_t>(f) * bytes;
      len[static_cast<size_t>(h)] = static_cast<uint64_t>(e - f) * bytes;
    }
    Status st = RingGather(ctx, members.data(), K, j, off.data(), len.data(), recv, ctx.chunk_bytes);
    if (!st.ok()) return host.Fail(st);
  }
  // Non-leaders wait for the leaders' ring; give a failure found on another host a second more
  // to arrive as an abort.
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(GraceDeadline(ctx, leader, 2000000000ull)));
  if (!leader) {
    const uint64_t me = static_cast<uint64_t>(ctx.rank) * bytes, total = static_cast<uint64_t>(n) * bytes;
    CopyHostBlock(recv, lead, me);
    CopyHostBlock(own + bytes, lead + me + bytes, total - me - bytes);
    CopyHostBlock(own, a.send, bytes);
  }
  return host.Barrier(ctx.deadline);
}

}  // namespace hostccl::algo
