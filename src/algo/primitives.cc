#include "algo/primitives.h"

#include <cstring>
#include <vector>

#include "common/thread_state.h"
#include "kernels/reduce.h"
#include "transport/shm/shm_group.h"

namespace hostccl::algo {

bool WidensFp32(const Context& ctx, DataType t, RedOp op) {
  return ctx.accumulate_fp32 && kern::WidensToFp32(t, op);
}

void FoldInputs(const Context& ctx, DataType t, RedOp op, void* dst, const void* const* srcs, int k, size_t n) {
  if (WidensFp32(ctx, t, op))
    kern::FoldAcc32(t, op, dst, false, nullptr, srcs, k, n);
  else
    kern::FoldN(t, op, dst, srcs, k, n);
}

Status Requests::Send(int peer, const void* buf, size_t len) {
  net::RequestId id;
  HOSTCCL_RETURN_IF_ERROR(ctx_.transport->Isend(peer, buf, len, ctx_.fp, &id));
  ids_.push_back(id);
  return Status::Ok();
}

Status Requests::Recv(int peer, void* buf, size_t len) {
  net::RequestId id;
  HOSTCCL_RETURN_IF_ERROR(ctx_.transport->Irecv(peer, buf, len, ctx_.fp, &id));
  ids_.push_back(id);
  return Status::Ok();
}

Status Requests::WaitAll() {
  if (done_prefix_ >= ids_.size()) return Status::Ok();
  HOSTCCL_RETURN_IF_ERROR(
      ctx_.transport->WaitAll(ids_.data() + done_prefix_, ids_.size() - done_prefix_, ctx_.deadline));
  done_prefix_ = ids_.size();
  return Status::Ok();
}

Status SendTo(Context& ctx, int peer, const void* buf, size_t len) {
  Requests r(ctx);
  HOSTCCL_RETURN_IF_ERROR(r.Send(peer, buf, len));
  return r.WaitAll();
}

Status RecvFrom(Context& ctx, int peer, void* buf, size_t len) {
  Requests r(ctx);
  HOSTCCL_RETURN_IF_ERROR(r.Recv(peer, buf, len));
  return r.WaitAll();
}

Status FinishRooted(Context& ctx, int root) {
  if (ctx.size == 1) return Status::Ok();
  static const uint8_t kDone = 1;
  if (ctx.rank == root) {
    Requests rq(ctx);
    for (int r = 0; r < ctx.size; ++r)
      if (r != root) HOSTCCL_RETURN_IF_ERROR(rq.Send(r, &kDone, 1));
    return rq.WaitAll();
  }
  return AwaitRootDone(ctx, root);
}

Status AwaitRootDone(Context& ctx, int root) {
  // The root's own waits end at ctx.deadline and its abort names the rank that is really late;
  // give that abort a second to arrive before blaming the root.
  uint8_t done = 0;
  Context late = ctx;
  late.deadline = GraceDeadline(ctx, false, 1000000000ull);
  return RecvFrom(late, root, &done, 1);
}

Status HostArrive(Context& ctx, net::ShmGroup* g, int lo, const OpArgs& a, Deadline deadline,
                  const std::function<Status()>* progress, uint64_t* ticket, const void* payload,
                  size_t payload_bytes) {
  g->Publish(ctx.rank - lo, a.send_desc, a.recv_desc);
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, payload, payload_bytes, deadline, ctx.fp.seq, ticket, progress));
  if (int r = ctx.check_fp ? g->FirstMismatch(*ticket) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, *ticket), lo, g->ArrivedFp(r, *ticket), lo + r));
  return Status::Ok();
}

Deadline GraceDeadline(const Context& ctx, bool own, uint64_t grace_ns) {
  return own || ctx.deadline.infinite() ? ctx.deadline : Deadline::AtNs(ctx.deadline.at_ns() + grace_ns);
}

Status FlatFold(Context& ctx, const OpArgs& a, const void* own, uint64_t bytes, BlockRef (*block)(const OpArgs&, int),
                const char* what) {
  const int n = ctx.size;
  if (n == 1) {
    if (a.recv != own && bytes > 0) std::memcpy(a.recv, own, bytes);
    return Status::Ok();
  }
  char* scratch = bytes > 0 ? static_cast<char*>(ctx.scratch->Get(bytes * static_cast<uint64_t>(n - 1))) : nullptr;
  if (bytes > 0 && scratch == nullptr) return MakeStatus(Code::kMemory, "cannot allocate %s scratch", what);
  thread_local ExitMarked<std::vector<const void*>> srcs;
  srcs.resize(static_cast<size_t>(n));
  Requests rq(ctx);
  int slot = 0;
  for (int r = 0; r < n; ++r) {
    if (r == ctx.rank) {
      srcs[static_cast<size_t>(r)] = own;
      continue;
    }
    char* buf = scratch + static_cast<uint64_t>(slot++) * bytes;
    srcs[static_cast<size_t>(r)] = buf;
    HOSTCCL_RETURN_IF_ERROR(rq.Recv(r, buf, bytes));
  }
  // Sends to the ranks after this one first, so the ranks' sends are spread over their peers.
  for (int k = 1; k < n; ++k) {
    const int j = (ctx.rank + k) % n;
    const BlockRef b = block(a, j);
    HOSTCCL_RETURN_IF_ERROR(rq.Send(j, b.data, b.bytes));
  }
  HOSTCCL_RETURN_IF_ERROR(rq.WaitAll());
  if (a.count > 0) FoldInputs(ctx, a.dtype, a.op, a.recv, srcs.data(), n, a.count);
  return Status::Ok();
}

Status FinishAll(Context& ctx) {
  if (ctx.size == 1) return Status::Ok();
  Requests rq(ctx);
  for (int k = 1; k < ctx.size; ++k) HOSTCCL_RETURN_IF_ERROR(rq.Recv((ctx.rank + ctx.size - k) % ctx.size, nullptr, 0));
  for (int k = 1; k < ctx.size; ++k) HOSTCCL_RETURN_IF_ERROR(rq.Send((ctx.rank + k) % ctx.size, nullptr, 0));
  return rq.WaitAll();
}

void PartRange(uint64_t count, int parts, int i, uint64_t align, uint64_t* begin, uint64_t* end) {
  if (align == 0) align = 1;
  uint64_t units = (count + align - 1) / align;
  uint64_t p = static_cast<uint64_t>(parts);
  uint64_t base = units / p, extra = units % p;
  uint64_t ii = static_cast<uint64_t>(i);
  uint64_t b = ii * base + std::min(ii, extra);
  uint64_t e = b + base + (ii < extra ? 1 : 0);
  *begin = std::min(b * align, count);
  *end = std::min(e * align, count);
}

}  // namespace hostccl::algo
