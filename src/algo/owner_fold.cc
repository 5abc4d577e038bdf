#include "algo/owner_fold.h"

#include <algorithm>

#include "algo/primitives.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"

namespace hostccl::algo {

Status OwnerFold(Context& ctx, const OpArgs& a, const OwnerSlices& s, char* out, const OwnerFoldHooks& hooks) {
  const int n = ctx.size, me = ctx.rank;
  const uint64_t es = DataTypeSize(a.dtype);
  net::Transport* t = ctx.transport;
  const char* send = static_cast<const char*>(a.send);
  const uint64_t mine = s.chunks(me), chunk = s.chunk;

  // Sends: all of them at once, from the sendBuf, to each owner in chunk order.
  std::vector<net::RequestId> sends;
  for (int k = 1; k < n; ++k) {
    const int j = (me + k) % n;
    for (uint64_t c = 0; c < s.chunks(j); ++c) {
      net::RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend(j, send + s.off(j, c) * es, s.len(j, c) * es, ctx.fp, &id));
      sends.push_back(id);
    }
  }
  // Receives of my slice: K slots, each (n-1) chunks.
  constexpr uint64_t kSlots = 3;
  const uint64_t slot_elems = chunk * static_cast<uint64_t>(n - 1);
  char* slots = mine > 0 ? static_cast<char*>(ctx.scratch->Get(kSlots * slot_elems * es)) : nullptr;
  if (mine > 0 && slots == nullptr) return Status(Code::kMemory, "cannot allocate reduce-scatter staging");
  auto peer_buf = [&](uint64_t c, int r) {  // chunk c of rank r's contribution (r != me)
    const uint64_t idx = static_cast<uint64_t>(r < me ? r : r - 1);
    return slots + ((c % kSlots) * slot_elems + idx * chunk) * es;
  };
  std::vector<net::RequestId> rs(mine * static_cast<uint64_t>(n));
  auto post = [&](uint64_t c) -> Status {
    for (int r = 0; r < n; ++r)
      if (r != me)
        HOSTCCL_RETURN_IF_ERROR(
            t->Irecv(r, peer_buf(c, r), s.len(me, c) * es, ctx.fp, &rs[c * static_cast<uint64_t>(n) + static_cast<uint64_t>(r)]));
    return Status::Ok();
  };
  uint64_t posted = std::min<uint64_t>(kSlots, mine);
  for (uint64_t c = 0; c < posted; ++c) HOSTCCL_RETURN_IF_ERROR(post(c));
  bool told = false;
  if (posted == mine && hooks.all_posted) {
    told = true;
    HOSTCCL_RETURN_IF_ERROR(hooks.all_posted());
  }

  thread_local ExitMarked<std::vector<const void*>> srcs;
  srcs.resize(static_cast<size_t>(n));
  for (uint64_t c = 0; c < mine; ++c) {
    for (int r = 0; r < n; ++r) {
      if (r == me) {
        srcs[static_cast<size_t>(r)] = send + s.off(me, c) * es;
        continue;
      }
      HOSTCCL_RETURN_IF_ERROR(t->Wait(rs[c * static_cast<uint64_t>(n) + static_cast<uint64_t>(r)], ctx.deadline));
      srcs[static_cast<size_t>(r)] = peer_buf(c, r);
    }
    char* dst = out + (s.off(me, c) - s.lo[static_cast<size_t>(me)]) * es;
    FoldInputs(ctx, a.dtype, a.op, dst, srcs.data(), n, s.len(me, c));
    if (hooks.folded) HOSTCCL_RETURN_IF_ERROR(hooks.folded(c, dst));
    // Chunk c's slot is free: post the receives of chunk c + K into it.
    if (posted < mine) {
      HOSTCCL_RETURN_IF_ERROR(post(posted));
      if (++posted == mine && hooks.all_posted) {
        told = true;
        HOSTCCL_RETURN_IF_ERROR(hooks.all_posted());
      }
    }
  }
  if (!told && hooks.all_posted) HOSTCCL_RETURN_IF_ERROR(hooks.all_posted());
  return t->WaitAll(sends.data(), sends.size(), ctx.deadline);
}

}  // namespace hostccl::algo
