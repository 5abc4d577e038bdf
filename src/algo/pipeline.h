// Chunk pipeline over the transport, with NCCL-like steps. A rank's part of a chain (or of a
// ring/tree edge) is one step applied to every chunk of the buffer; the chunks flow through
// K staging slots, so all links of the chain work at once.
//   Send(next, src)                  chunk -> next
//   RecvReduceSend(prev, next, mine) (prev's chunk ⊕ mine) -> next          (left fold: prev first)
//   RecvReduceCopy(prev, mine, dst)  (prev's chunk ⊕ mine) -> dst
//   RecvCopySend(prev, next, dst)    prev's chunk -> dst, and dst -> next
//   Recv(prev, dst)                  prev's chunk -> dst
// Chunks are ChunkElems(ctx, args) elements (ctx.chunk_bytes), identical on every rank, so sender
// and receiver cut the buffer the same way. Slots: kSlots chunks of the communicator's scratch.
// In place (mine == dst) is safe: a chunk of `mine` is read before that chunk of dst is written.
// fp32 accumulation (WidensFp32: HOSTCCL_ACCUMULATE=fp32, fp16/bf16 sum/prod): a reduce chain's
// partials travel as fp32 (4 bytes per element on the wire: SendFirst widens, RecvReduceSend
// continues the fp32 partial) and are rounded once, where the result is made (RecvReduceCopy, or
// RecvReduceSend with to_root), so a chain gives the bits of one fp32 fold of all inputs.
#pragma once

#include <vector>

#include "algo/context.h"

namespace hostccl::algo {

class ChunkPipeline {
 public:
  static constexpr uint64_t kSlots = 4;
  // Over elements [0, count) of buffers of `dtype` (the buffers passed to the steps start at
  // element 0 of that range).
  ChunkPipeline(Context& ctx, DataType dtype, RedOp op, uint64_t count, uint64_t chunk_elems);

  uint64_t chunks() const { return nchunks_; }
  uint64_t off(uint64_t c) const { return c * chunk_; }
  uint64_t len(uint64_t c) const { return std::min(chunk_, count_ - c * chunk_); }

  Status Send(int next, const void* src);
  // The first link of a reduce chain: Send, or the widened input with fp32 accumulation.
  Status SendFirst(int next, const void* src);
  // to_root: `next` receives the final result (rounded to the element type), not a partial.
  Status RecvReduceSend(int prev, int next, const void* mine, bool to_root = false);
  Status RecvReduceCopy(int prev, const void* mine, void* dst);
  Status RecvCopySend(int prev, int next, void* dst);
  Status Recv(int prev, void* dst);

  // Posts receives of every chunk from `peer` straight into dst (for a final result that arrives
  // while this rank runs another step); WaitPosted() completes them.
  Status PostRecvAll(int peer, void* dst);
  Status WaitPosted();

 private:
  Status Fold(int prev, int next, const void* mine, void* dst, bool to_root);

  Context& ctx_;
  DataType dtype_;
  RedOp op_;
  uint64_t count_, chunk_, nchunks_, es_;
  bool wide_;  // reduce steps accumulate in fp32 (partials on the wire are fp32)
  std::vector<net::RequestId> posted_;
};

}  // namespace hostccl::algo
