// Broadcast, "chain": pipelined chain over TCP, root -> root+1 -> ... -> root-1 (mod n).
//
// What: ranks in chain order v = (rank - root) mod n. The buffer is cut into chunks
//   (ctx.chunk_bytes, identical on every rank); on the frame's chunk pipeline (algo/pipeline.h)
//   the root runs Send, the middle ranks RecvCopySend (each chunk lands in the rank's buffer and
//   leaves from there as soon as it is complete) and the tail Recv. Every link works at once, so
//   the time is S / link bandwidth plus (n-2) chunks of fill. The tail then sends the root a 1-byte
//   acknowledgement; with it the root knows every rank received (every frame carries the
//   fingerprint, so a mismatch anywhere aborts every peer instead) and sends every rank a 1-byte
//   completion notice (FinishRooted), which they wait for: no rank reports success for an
//   operation another rank rejected.
// Bytes per rank: receives S, sends S (the tail sends only the acknowledgement).
// Preconditions: a transport (n = 1: nothing to do). Any buffers (no shared memory needed).
// Example: 4 ranks, root 2, 3 MiB, 1 MiB chunks: 2 -> 3 -> 0 -> 1; while rank 3 forwards chunk 0
//   to rank 0, it receives chunk 1 from rank 2.
#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/pipeline.h"
#include "algo/primitives.h"

namespace hostccl::algo {

Status BroadcastChain(Context& ctx, const OpArgs& a) {
  const int n = ctx.size;
  if (n == 1) return Status::Ok();
  const int v = (ctx.rank - a.root + n) % n;
  const int prev = (ctx.rank + n - 1) % n, next = (ctx.rank + 1) % n;
  const int tail = (a.root + n - 1) % n;
  ChunkPipeline pipe(ctx, a.dtype, a.op, a.count, ChunkElems(ctx, a));
  static const uint8_t kAck = 1;
  if (v == 0) {
    uint8_t ack = 0;
    Requests rq(ctx);
    HOSTCCL_RETURN_IF_ERROR(rq.Recv(tail, &ack, 1));
    HOSTCCL_RETURN_IF_ERROR(pipe.Send(next, a.send));
    HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
    return FinishRooted(ctx, a.root);
  }
  if (v < n - 1) {
    HOSTCCL_RETURN_IF_ERROR(pipe.RecvCopySend(prev, next, a.recv));
  } else {
    HOSTCCL_RETURN_IF_ERROR(pipe.Recv(prev, a.recv));
    HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, a.root, &kAck, 1));
  }
  return FinishRooted(ctx, a.root);
}

}  // namespace hostccl::algo
