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
#include <cstring>
#include <functional>
#include <vector>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/primitives.h"
#include "common/thread_state.h"
#include "kernels/copy.h"

namespace hostccl::algo {

Status AllGatherNode(Context& ctx, const OpArgs& in) {
  const NodeLayout& L = *ctx.nodes;
  net::ShmGroup* g = ctx.node_shm;
  net::Transport* t = ctx.transport;
  if (g == nullptr || L.nodes() < 1 || t == nullptr) return Status(Code::kInternal, "node allgather needs per-host groups");
  const OpArgs a = AllGatherInPlace(ctx, in);
  const int K = L.nodes(), j = L.mine, n = ctx.size;
  const int lo = L.first[static_cast<size_t>(j)];
  const bool leader = ctx.rank == lo;
  const uint64_t bytes = a.bytes();
  char* recv = static_cast<char*>(a.recv);
  char* own = recv + static_cast<uint64_t>(ctx.rank) * bytes;
  const std::function<Status()> progress = [t, &ctx] { return t->Progress(ctx.fp); };
  // The leader's TCP waits end at ctx.deadline and its abort names the rank it found stopped; the
  // other ranks of this host give that abort a second to arrive before blaming the leader.
  const Deadline step = GraceDeadline(ctx, leader, 1000000000ull);
  auto fail = [&](Status st) {
    g->Abort(st.code(), st.message(), ctx.fp.seq);
    return st;
  };
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(HostArrive(ctx, g, lo, a, step, &progress, &ticket));
  const bool big = bytes >= (4u << 20);
  char* lead = nullptr;  // the leader's recvBuf (non-leaders)
  if (!leader) {
    std::string why;
    lead = static_cast<char*>(g->PeerRecv(0, &why));
    if (lead == nullptr)
      return fail(Status(Code::kNotSupport, why + "; across hosts hostccl needs the host leaders' recvBufs from aclrtMalloc"));
    char* dst = lead + static_cast<uint64_t>(ctx.rank) * bytes;
    if (big)
      kern::CopyStreaming(dst, a.send, bytes);
    else
      std::memcpy(dst, a.send, bytes);
  } else if (a.send != own) {
    std::memcpy(own, a.send, bytes);
  }
  HOSTCCL_RETURN_IF_ERROR(g->Barrier(step, ctx.fp.seq, &progress));
  if (leader && K > 1) {
    thread_local ExitMarked<std::vector<int>> members;
    thread_local ExitMarked<std::vector<uint64_t>> off, len;
    members.resize(static_cast<size_t>(K));
    off.resize(static_cast<size_t>(K));
    len.resize(static_cast<size_t>(K));
    for (int h = 0; h < K; ++h) {
      const int f = L.first[static_cast<size_t>(h)], e = L.first[static_cast<size_t>(h) + 1];
      members[static_cast<size_t>(h)] = f;
      off[static_cast<size_t>(h)] = static_cast<uint64_t>(f) * bytes;
      len[static_cast<size_t>(h)] = static_cast<uint64_t>(e - f) * bytes;
    }
    Status st = RingGather(ctx, members.data(), K, j, off.data(), len.data(), recv, ctx.chunk_bytes);
    if (!st.ok()) return fail(st);
  }
  // Non-leaders wait for the leaders' ring; give a failure found on another host a second more
  // to arrive as an abort.
  const Deadline late = GraceDeadline(ctx, leader, 2000000000ull);
  HOSTCCL_RETURN_IF_ERROR(g->Barrier(late, ctx.fp.seq, &progress));
  if (!leader) {
    const uint64_t me = static_cast<uint64_t>(ctx.rank) * bytes, total = static_cast<uint64_t>(n) * bytes;
    if (big) {
      kern::CopyStreaming(recv, lead, me);
      kern::CopyStreaming(own + bytes, lead + me + bytes, total - me - bytes);
    } else {
      std::memcpy(recv, lead, me);
      std::memcpy(own + bytes, lead + me + bytes, total - me - bytes);
    }
    if (a.send != own) std::memcpy(own, a.send, bytes);
  }
  return g->Barrier(ctx.deadline, ctx.fp.seq, &progress);
}

}  // namespace hostccl::algo
