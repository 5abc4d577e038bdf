#include "algo/barrier/barrier.h"

#include <vector>

#include "algo/primitives.h"

namespace hostccl::algo {

Status Barrier(Context& ctx) {
  if (ctx.local != nullptr) return ctx.local->Barrier(ctx.rank, ctx.deadline);
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

}  // namespace hostccl::algo
