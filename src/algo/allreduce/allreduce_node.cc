// AllReduce, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates
// hosts on one machine): shared memory inside a host, TCP between hosts, canonical fold.
//
// What: 1. Reduce "node_chain" to rank 0 (host by host, each host folds its ranks onto the partial
//   it received, in rank order: the canonical fold; reduce_node_chain.cc), with the last host
//   folding straight into its leader's recvBuf and sending rank 0's copy from there, chunk by
//   chunk: so H(K-1) and H0 hold the result when the chain ends. 2. With K > 2 hosts the result
//   travels on from rank 0 along the leaders of H1 .. H(K-2) (first rank of each host) on the
//   chunk pipeline (Send / RecvCopySend / Recv straight into the leaders' recvBufs). 3. Inside
//   each host, after a host barrier, every other rank copies the result from its leader's mapped
//   recvBuf; a second host barrier keeps the leader's recvBuf alive until every copy is done.
// Bytes: the canonical fold must carry every element's partial through the hosts in rank order
//   and the result back, so with 2 hosts each link carries S per direction at once (H0 sends the
//   partial and receives the result; H1 the reverse): time ~ S / link + the pipeline fill, which
//   is also the bound (2 (K-1)/K x S per link for K = 2). K > 2: step 2 adds S on the links of
//   H0 .. H(K-2) after the chain. Each non-leader copies S.
// Preconditions: ctx.nodes, ctx.node_shm, a transport; aclrtMalloc buffers (node_chain's rule).
// In place: the result is written into a recvBuf only where the fold has read that chunk of every
//   sendBuf (the last host folds chunk by chunk into its leader's recvBuf: each local rank reads
//   and writes only its own sub-slice; rank 0 receives chunk c after H0 has folded it).
// Example: 2 hosts x 2 ranks: host 0 folds x0 ⊕ x1 per chunk and sends it to rank 2; host 1 folds
//   (.. ⊕ x2) ⊕ x3 into rank 2's recvBuf, rank 2 sends that chunk to rank 0; ranks 1 and 3 copy
//   from ranks 0 and 2 at the end.
#include <cstring>

#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/host_stage.h"
#include "algo/pipeline.h"
#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"

namespace hostccl::algo {

Status AllReduceNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node allreduce"));
  OpArgs r = a;
  r.root = 0;
  HOSTCCL_RETURN_IF_ERROR(ReduceNodeChainKeepLast(ctx, r));
  const int K = host.hosts(), j = host.host();
  const bool leader = ctx.rank == host.lo();
  if (leader && K > 2 && j < K - 1) {  // H0 -> H1 -> ... -> H(K-2); H(K-1) has the result
    ChunkPipeline pipe(ctx, a.dtype, a.op, a.count, ChunkElems(ctx, a));
    const int prev = j > 0 ? host.first_of(j - 1) : -1;
    const int next = j + 2 < K ? host.first_of(j + 1) : -1;
    Status st = prev < 0 ? pipe.Send(next, a.recv) : next < 0 ? pipe.Recv(prev, a.recv) : pipe.RecvCopySend(prev, next, a.recv);
    if (!st.ok()) return host.Fail(st);
  }
  const Deadline step = GraceDeadline(ctx, leader, 1000000000ull);
  HOSTCCL_RETURN_IF_ERROR(host.Barrier(step));
  if (!leader) {
    Status st;
    const char* src = host.PeerRecv(0, "recvBufs from aclrtMalloc (or force HOSTCCL_ALGO=allreduce=rs_ag)", &st);
    if (src == nullptr) return st;
    std::memcpy(a.recv, src, a.bytes());
  }
  return host.Barrier(step);
}

}  // namespace hostccl::algo
