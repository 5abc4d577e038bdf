// Broadcast, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates
// hosts on one machine): TCP between host leaders, shared memory inside each host.
//
// What: each host has a leader: the root on the root's host, the host's first rank elsewhere.
//   1. The leaders form a pipelined chain over TCP starting at the root's host (hosts j_root,
//      j_root+1, ... mod K) on the frame's chunk pipeline: Send / RecvCopySend / Recv, straight
//      into the leaders' buffers. 2. Inside each host, one arrival (buffers published, fingerprints
//      compared) after the leader has the data; every other rank copies the whole buffer from the
//      leader's mapped buffer (the leader's is only read); a host barrier keeps the leader's buffer
//      alive until every copy is done.
//   3. The leaders of the other hosts then send the root a 1-byte acknowledgement; with all of them
//      the root sends those leaders a 1-byte completion notice, and a last host barrier passes it on:
//      no rank reports success for an operation a rank on another host rejected (that rank aborts
//      every peer instead, and the notice never comes).
// Bytes: each host link carries S once; each non-leader copies S.
// Preconditions: ctx.nodes, ctx.node_shm, a transport; every leader's buffer is aclrtMalloc memory
//   (otherwise kNotSupport, named).
// Example: 2 hosts x 2 ranks, root 3: rank 3 (leader of host 1) sends to rank 0 (leader of host 0);
//   rank 2 copies from rank 3, rank 1 from rank 0; rank 0 acknowledges to rank 3.
#include <cstring>
#include <vector>

#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/host_stage.h"
#include "algo/pipeline.h"
#include "algo/primitives.h"
#include "common/thread_state.h"

namespace hostccl::algo {
namespace {

// Leaders only: the other hosts' leaders acknowledge to the root, the root answers with the
// completion notice.
template <typename LeaderOf>
Status Acknowledge(Context& ctx, const OpArgs& a, int K, int jr, const LeaderOf& leader_of) {
  static const uint8_t kByte = 1;
  if (ctx.rank != a.root) {
    HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, a.root, &kByte, 1));
    return AwaitRootDone(ctx, a.root);
  }
  thread_local ExitMarked<std::vector<uint8_t>> acks;
  acks.assign(static_cast<size_t>(K), 0);
  Requests rq(ctx);
  for (int h = 0; h < K; ++h)
    if (h != jr) HOSTCCL_RETURN_IF_ERROR(rq.Recv(leader_of(h), &acks[static_cast<size_t>(h)], 1));
  HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
  Requests done(ctx);
  for (int h = 0; h < K; ++h)
    if (h != jr) HOSTCCL_RETURN_IF_ERROR(done.Send(leader_of(h), &kByte, 1));
  return done.WaitAll();
}

}  // namespace

Status BroadcastNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node broadcast"));
  const int K = host.hosts(), j = host.host();
  auto host_of = [&](int r) {
    int h = 0;
    while (r >= host.first_of(h + 1)) ++h;
    return h;
  };
  const int jr = host_of(a.root);
  auto leader_of = [&](int h) { return h == jr ? a.root : host.first_of(h); };
  const int me_leader = leader_of(j);
  const bool leader = ctx.rank == me_leader;
  const int pos = (j - jr + K) % K;  // position of this host in the chain
  if (leader && K > 1) {
    ChunkPipeline pipe(ctx, a.dtype, a.op, a.count, ChunkElems(ctx, a));
    const int prev = pos > 0 ? leader_of((j + K - 1) % K) : -1;
    const int next = pos + 1 < K ? leader_of((j + 1) % K) : -1;
    Status st = prev < 0 ? pipe.Send(next, a.send) : next < 0 ? pipe.Recv(prev, a.recv) : pipe.RecvCopySend(prev, next, a.recv);
    if (!st.ok()) return host.Fail(st);
  }
  // The leader's TCP waits end at ctx.deadline and its abort names the rank it found stopped; the
  // other ranks of this host give that abort a second to arrive before blaming the leader.
  const Deadline step = GraceDeadline(ctx, leader, 1000000000ull);
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, step, &ticket));
  if (!leader && a.bytes() > 0) {
    Status st;
    const char* src = host.PeerSend(
        me_leader - host.lo(), "the host leaders' buffers from aclrtMalloc (or force HOSTCCL_ALGO=broadcast=chain)", &st);
    if (src == nullptr) return st;
    std::memcpy(a.recv, src, a.bytes());
  }
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(step));
  if (K == 1) return Status::Ok();
  if (leader)
    if (Status st = Acknowledge(ctx, a, K, jr, leader_of); !st.ok()) return host.Fail(st);
  // Non-leaders wait for their leader's notice; give a failure found on another host a second
  // more to arrive as an abort.
  return host.Barrier(GraceDeadline(ctx, leader, 2000000000ull));
}

}  // namespace hostccl::algo
