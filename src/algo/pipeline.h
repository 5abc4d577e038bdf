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
  Status RecvReduceSend(int prev, int next, const void* mine);
  Status RecvReduceCopy(int prev, const void* mine, void* dst);
  Status RecvCopySend(int prev, int next, void* dst);
  Status Recv(int prev, void* dst);

  // Posts receives of every chunk from `peer` straight into dst (for a final result that arrives
  // while this rank runs another step); WaitPosted() completes them.
  Status PostRecvAll(int peer, void* dst);
  Status WaitPosted();

 private:
  Status Fold(int prev, int next, const void* mine, void* dst);

  Context& ctx_;
  DataType dtype_;
  RedOp op_;
  uint64_t count_, chunk_, nchunks_, es_;
  std::vector<net::RequestId> posted_;
};

}  // namespace hostccl::algo
