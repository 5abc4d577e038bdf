#include "algo/barrier/barrier.h"

#include <vector>

#include "algo/primitives.h"

namespace hostccl::algo {

Status BarrierLocal(Context& ctx, const OpArgs&) {
  if (ctx.local == nullptr) return Status(Code::kInternal, "local barrier needs every rank in this process");
  return ctx.local->Barrier(ctx.rank, ctx.deadline);
}

Status BarrierShm(Context& ctx, const OpArgs&) {
  net::ShmGroup* g = ctx.shm;
  if (g == nullptr) return Status(Code::kInternal, "shm barrier needs a shared segment");
  uint64_t ticket = 0;
  HOSTCCL_RETURN_IF_ERROR(g->Arrive(ctx.fp, nullptr, 0, ctx.deadline, ctx.fp.seq, &ticket));
  if (int r = ctx.check_fp ? g->FirstMismatch(ticket) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(g->ArrivedFp(0, ticket), 0, g->ArrivedFp(r, ticket), r));
  return Status::Ok();
}

Status BarrierTcp(Context& ctx, const OpArgs&) {
  if (ctx.size == 1) return Status::Ok();
  uint8_t token = 1;
  if (ctx.rank != 0) {
    uint8_t back = 0;
    HOSTCCL_RETURN_IF_ERROR(SendTo(ctx, 0, &token, 1));
    return RecvFrom(ctx, 0, &back, 1);
  }
  std::vector<uint8_t> in(static_cast<size_t>(ctx.size));
  Requests fan_in(ctx);
  for (int r = 1; r < ctx.size; ++r) HOSTCCL_RETURN_IF_ERROR(fan_in.Recv(r, &in[static_cast<size_t>(r)], 1));
  HOSTCCL_RETURN_IF_ERROR(fan_in.WaitAll());
  Requests fan_out(ctx);
  for (int r = 1; r < ctx.size; ++r) HOSTCCL_RETURN_IF_ERROR(fan_out.Send(r, &token, 1));
  return fan_out.WaitAll();
}

Status Barrier(Context& ctx) {
  OpArgs none;
  none.kind = CollKind::kBarrier;
  return ctx.local != nullptr ? BarrierLocal(ctx, none) : BarrierTcp(ctx, none);
}

}  // namespace hostccl::algo
