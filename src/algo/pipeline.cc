#include "algo/pipeline.h"

#include <algorithm>

#include "algo/primitives.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

ChunkPipeline::ChunkPipeline(Context& ctx, DataType dtype, RedOp op, uint64_t count, uint64_t chunk_elems)
    : ctx_(ctx), dtype_(dtype), op_(op), count_(count), chunk_(std::max<uint64_t>(1, chunk_elems)),
      nchunks_((count + chunk_ - 1) / chunk_), es_(DataTypeSize(dtype)), wide_(WidensFp32(ctx, dtype, op)) {}

Status ChunkPipeline::SendFirst(int next, const void* src) {
  if (!wide_) return Send(next, src);
  // Chunk c is widened into slot c % K once the send out of that slot (chunk c - K) completed.
  net::Transport* t = ctx_.transport;
  const uint64_t wes = sizeof(float);
  char* slots = static_cast<char*>(ctx_.scratch->Get(kSlots * chunk_ * wes));
  if (slots == nullptr) return Status(Code::kMemory, "cannot allocate pipeline staging");
  std::vector<net::RequestId> sends(nchunks_);
  for (uint64_t c = 0; c < nchunks_; ++c) {
    if (c >= kSlots) HOSTCCL_RETURN_IF_ERROR(t->Wait(sends[c - kSlots], ctx_.deadline));
    float* s = reinterpret_cast<float*>(slots + (c % kSlots) * chunk_ * wes);
    kern::WidenToFp32(dtype_, static_cast<const char*>(src) + off(c) * es_, s, len(c));
    HOSTCCL_RETURN_IF_ERROR(t->Isend(next, s, len(c) * wes, ctx_.fp, &sends[c]));
  }
  const uint64_t waited = nchunks_ > kSlots ? nchunks_ - kSlots : 0;
  return t->WaitAll(sends.data() + waited, nchunks_ - waited, ctx_.deadline);
}

Status ChunkPipeline::Send(int next, const void* src) {
  net::Transport* t = ctx_.transport;
  std::vector<net::RequestId> sends(nchunks_);
  for (uint64_t c = 0; c < nchunks_; ++c)
    HOSTCCL_RETURN_IF_ERROR(t->Isend(next, static_cast<const char*>(src) + off(c) * es_, len(c) * es_, ctx_.fp, &sends[c]));
  return t->WaitAll(sends.data(), sends.size(), ctx_.deadline);
}

Status ChunkPipeline::Recv(int prev, void* dst) {
  net::Transport* t = ctx_.transport;
  std::vector<net::RequestId> recvs(nchunks_);
  for (uint64_t c = 0; c < nchunks_; ++c)
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(prev, static_cast<char*>(dst) + off(c) * es_, len(c) * es_, ctx_.fp, &recvs[c]));
  return t->WaitAll(recvs.data(), recvs.size(), ctx_.deadline);
}

Status ChunkPipeline::RecvCopySend(int prev, int next, void* dst) {
  // No slot: each chunk lands in dst and leaves from there as soon as it is complete.
  net::Transport* t = ctx_.transport;
  char* d = static_cast<char*>(dst);
  std::vector<net::RequestId> recvs(nchunks_), sends(nchunks_);
  for (uint64_t c = 0; c < nchunks_; ++c)
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(prev, d + off(c) * es_, len(c) * es_, ctx_.fp, &recvs[c]));
  for (uint64_t c = 0; c < nchunks_; ++c) {
    HOSTCCL_RETURN_IF_ERROR(t->Wait(recvs[c], ctx_.deadline));
    HOSTCCL_RETURN_IF_ERROR(t->Isend(next, d + off(c) * es_, len(c) * es_, ctx_.fp, &sends[c]));
  }
  return t->WaitAll(sends.data(), sends.size(), ctx_.deadline);
}

Status ChunkPipeline::RecvReduceSend(int prev, int next, const void* mine, bool to_root) {
  return Fold(prev, next, mine, nullptr, to_root);
}

Status ChunkPipeline::RecvReduceCopy(int prev, const void* mine, void* dst) { return Fold(prev, -1, mine, dst, true); }

// Receives chunk c into slot c % K (at most K-1 receives posted ahead; a slot is reused once the
// send out of it completed), folds slot ⊕ mine into dst (or back into the slot) and sends the
// slot to `next`. Widened (wide_): the slots hold fp32 partials; the fold continues them in fp32
// and rounds once when this rank makes the result (dst, or to_root: rounded in place in the slot).
Status ChunkPipeline::Fold(int prev, int next, const void* mine, void* dst, bool to_root) {
  net::Transport* t = ctx_.transport;
  const uint64_t wes = wide_ ? sizeof(float) : es_;  // bytes per element of a received partial
  char* slots = static_cast<char*>(ctx_.scratch->Get(kSlots * chunk_ * wes));
  if (slots == nullptr) return Status(Code::kMemory, "cannot allocate pipeline staging");
  auto slot = [&](uint64_t c) { return slots + (c % kSlots) * chunk_ * wes; };
  const char* in = static_cast<const char*>(mine);
  char* out = static_cast<char*>(dst);
  std::vector<net::RequestId> recvs(nchunks_), sends(nchunks_);
  std::vector<bool> sent(nchunks_, false);
  for (uint64_t c = 0; c < std::min<uint64_t>(kSlots - 1, nchunks_); ++c)
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(prev, slot(c), len(c) * wes, ctx_.fp, &recvs[c]));
  for (uint64_t c = 0; c < nchunks_; ++c) {
    const uint64_t ahead = c + kSlots - 1;  // reuses the slot of chunk c-1
    if (ahead < nchunks_) {
      if (c >= 1 && sent[c - 1]) {
        HOSTCCL_RETURN_IF_ERROR(t->Wait(sends[c - 1], ctx_.deadline));
        sent[c - 1] = false;  // a request is waited once
      }
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(prev, slot(ahead), len(ahead) * wes, ctx_.fp, &recvs[ahead]));
    }
    HOSTCCL_RETURN_IF_ERROR(t->Wait(recvs[c], ctx_.deadline));
    char* to = out != nullptr ? out + off(c) * es_ : slot(c);
    uint64_t send_es = es_;
    if (wide_) {
      const void* own[1] = {in + off(c) * es_};
      const bool keep_fp32 = !to_root;  // a partial for the next link stays fp32
      kern::FoldAcc32(dtype_, op_, to, keep_fp32, reinterpret_cast<const float*>(slot(c)), own, 1, len(c));
      if (keep_fp32) send_es = sizeof(float);
    } else {
      const void* srcs[2] = {slot(c), in + off(c) * es_};
      kern::FoldN(dtype_, op_, to, srcs, 2, len(c));
    }
    if (next >= 0) {
      HOSTCCL_RETURN_IF_ERROR(t->Isend(next, to, len(c) * send_es, ctx_.fp, &sends[c]));
      sent[c] = true;
    }
  }
  for (uint64_t c = 0; c < nchunks_; ++c)
    if (sent[c]) HOSTCCL_RETURN_IF_ERROR(t->Wait(sends[c], ctx_.deadline));
  return Status::Ok();
}

Status ChunkPipeline::PostRecvAll(int peer, void* dst) {
  net::Transport* t = ctx_.transport;
  posted_.resize(nchunks_);
  for (uint64_t c = 0; c < nchunks_; ++c)
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(peer, static_cast<char*>(dst) + off(c) * es_, len(c) * es_, ctx_.fp, &posted_[c]));
  return Status::Ok();
}

Status ChunkPipeline::WaitPosted() {
  if (posted_.empty()) return Status::Ok();
  Status st = ctx_.transport->WaitAll(posted_.data(), posted_.size(), ctx_.deadline);
  posted_.clear();
  return st;
}

}  // namespace hostccl::algo
