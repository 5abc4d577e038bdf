#include "algo/host_stage.h"

#include <string>

#include "algo/primitives.h"
#include "kernels/copy.h"
#include "transport/shm/shm_group.h"

namespace hostccl::algo {

HostStage::HostStage(Context& ctx) : ctx_(ctx) {
  if (ctx.nodes == nullptr || ctx.nodes->nodes() < 1) return;
  host_ = ctx.nodes->mine;
  lo_ = first_of(host_);
  hi_ = first_of(host_ + 1);
  net::Transport* t = ctx.transport;
  Context* c = &ctx;
  progress_ = [t, c] { return t->Progress(c->fp); };
}

Status HostStage::Ready(const char* plan) const {
  if (host_ < 0 || ctx_.node_shm == nullptr || ctx_.transport == nullptr)
    return MakeStatus(Code::kInternal, "%s needs per-host groups and a transport", plan);
  return Status::Ok();
}

Status HostStage::Arrive(const OpArgs& a, Deadline deadline, uint64_t* ticket, const void* payload,
                         size_t payload_bytes) {
  return HostArrive(ctx_, group(), lo_, a, deadline, &progress_, ticket, payload, payload_bytes);
}

Status HostStage::Barrier(Deadline deadline) { return group()->Barrier(deadline, ctx_.fp.seq, &progress_); }

Status HostStage::Fail(const Status& st) {
  group()->Abort(st.code(), st.message(), ctx_.fp.seq);
  return st;
}

Status HostStage::Unmapped(const std::string& why, const char* need) {
  return Fail(Status(Code::kNotSupport, why + "; across hosts hostccl needs " + need));
}

char* HostStage::PeerRecv(int i, const char* need, Status* st) {
  std::string why;
  void* p = group()->PeerRecv(i, &why);
  if (p == nullptr) *st = Unmapped(why, need);
  return static_cast<char*>(p);
}

const char* HostStage::PeerSend(int i, const char* need, Status* st) {
  std::string why;
  const void* p = group()->PeerSend(i, &why);
  if (p == nullptr) *st = Unmapped(why, need);
  return static_cast<const char*>(p);
}

void CopyHostBlock(void* dst, const void* src, uint64_t bytes) {
  if (dst != src && bytes > 0) kern::CopyTo(dst, src, bytes, /*stream=*/bytes >= (4u << 20));
}

}  // namespace hostccl::algo
