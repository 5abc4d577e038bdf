// Scatter, "node": several hosts (contiguous rank ranges per host; HOSTCCL_NODE_ID emulates hosts on
// one machine): shared memory on the root's host, TCP from the root to the ranks of other hosts.
//
// What: rank r's recvBuf gets block r (S bytes at r x S) of the root's sendBuf.
//   On the root's host: one arrival (buffers published, fingerprints compared); when the root's
//     sendBuf is shareable (aclrtMalloc memory) every rank there copies its block straight out of
//     it, as "shm" does; a closing host barrier, which the root passes only after the other hosts'
//     part succeeded, keeps the sendBuf alive until every copy is done.
//   Other hosts (and the root's host too when its sendBuf is not shareable): the root sends each
//     rank its block directly (every block crosses the root's link once: relaying through a host
//     leader would not carry fewer bytes), the rank answers with a 1-byte acknowledgement, and once
//     the root has them all it sends each such rank a 1-byte completion notice, which the rank waits
//     for; so no rank reports success unless every rank's fingerprint matched the root's.
// Bytes: the root's link carries one block per rank of the other hosts; each rank on the root's host
//   reads S from the mapped sendBuf.
// Mismatch: the arrival compares the root's host; every TCP message carries the fingerprint.
// In place (root): recvBuf == sendBuf + root x S: the own copy is skipped.
// Preconditions: ctx.nodes, ctx.node_shm, a transport.
// Example: 2 hosts x 2 ranks, root 1, 1 MiB blocks: rank 0 copies bytes [0, 1 MiB) out of rank 1's
//   mapped sendBuf; rank 1 sends [2, 3) MiB to rank 2 and [3, 4) MiB to rank 3 over TCP and waits
//   for both acknowledgements before the host barrier.
#include <string>
#include <vector>

#include "algo/host_stage.h"
#include "algo/primitives.h"
#include "algo/scatter/scatter_algorithms.h"
#include "common/thread_state.h"

namespace hostccl::algo {

Status ScatterNode(Context& ctx, const OpArgs& a) {
  HostStage host(ctx);
  HOSTCCL_RETURN_IF_ERROR(host.Ready("node scatter"));
  const int n = ctx.size;
  const uint64_t bytes = a.bytes();
  int root_host = 0;
  while (host.first_of(root_host + 1) <= a.root) ++root_host;
  const int lo = host.first_of(root_host), hi = host.first_of(root_host + 1);
  const bool on_root_host = host.host() == root_host;
  const bool root = ctx.rank == a.root;
  auto fail = [&](const Status& st) { return on_root_host ? host.Fail(st) : st; };
  // The root's host arrives first: its ranks learn whether the root's sendBuf is shareable.
  bool shared = false;
  if (on_root_host) {
    uint64_t ticket = 0;
    HOSTCCL_RETURN_IF_ERROR(host.Arrive(a, ctx.deadline, &ticket));
    shared = host.group()->SendDesc(a.root - lo).serial != 0;
  }
  // Ranks the root serves over TCP: every rank of another host, and its own host's when not shared.
  auto over_tcp = [&](int r) { return r != a.root && (r < lo || r >= hi || !shared); };
  static const uint8_t kAck = 1, kDone = 1;
  if (root) {
    const char* send = static_cast<const char*>(a.send);
    CopyHostBlock(a.recv, send + static_cast<uint64_t>(a.root) * bytes, bytes);
    thread_local ExitMarked<std::vector<uint8_t>> acks;
    acks.assign(static_cast<size_t>(n), 0);
    Requests rq(ctx);
    for (int k = 1; k < n; ++k) {
      const int r = (a.root + k) % n;
      if (!over_tcp(r)) continue;
      if (Status st = rq.Recv(r, &acks[static_cast<size_t>(r)], 1); !st.ok()) return fail(st);
    }
    for (int k = 1; k < n; ++k) {
      const int r = (a.root + k) % n;
      if (!over_tcp(r)) continue;
      if (Status st = rq.Send(r, send + static_cast<uint64_t>(r) * bytes, bytes); !st.ok()) return fail(st);
    }
    if (Status st = rq.WaitAll(); !st.ok()) return fail(st);
    Requests done(ctx);
    for (int r = 0; r < n; ++r)
      if (over_tcp(r))
        if (Status st = done.Send(r, &kDone, 1); !st.ok()) return fail(st);
    if (Status st = done.WaitAll(); !st.ok()) return fail(st);
  } else if (over_tcp(ctx.rank)) {
    HOSTCCL_RETURN_IF_ERROR(RecvFrom(ctx, a.root, a.recv, bytes));
    HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, a.root, &kAck, 1));
    HOSTCCL_RETURN_IF_ERROR(AwaitRootDone(ctx, a.root));
  } else {
    std::string why;
    const char* src = static_cast<const char*>(host.group()->PeerSend(a.root - lo, &why));
    if (src == nullptr) return fail(Status(Code::kRemote, why));
    CopyHostBlock(a.recv, src + static_cast<uint64_t>(ctx.rank) * bytes, bytes);
  }
  if (!on_root_host) return Status::Ok();
  // The root passes only after the other hosts' part succeeded: give its abort time to arrive.
  return host.Barrier(GraceDeadline(ctx, root, 2000000000ull));
}

}  // namespace hostccl::algo
