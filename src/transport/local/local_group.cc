#include "transport/local/local_group.h"

#include <map>

namespace hostccl::net {
namespace {

std::mutex g_groups_mu;
std::map<std::string, std::weak_ptr<LocalGroup>>& Groups() {
  static std::map<std::string, std::weak_ptr<LocalGroup>> groups;
  return groups;
}

}  // namespace

LocalGroup::LocalGroup(std::string key, int size)
    : key_(std::move(key)), size_(size), slots_(static_cast<size_t>(size)),
      arrivals_(new ArrivalWord[static_cast<size_t>(size)]) {
  for (int i = 0; i < size; ++i) arrivals_[i].arrived.store(0);
}

LocalGroup::~LocalGroup() {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  auto it = Groups().find(key_);
  if (it != Groups().end() && it->second.expired()) Groups().erase(it);
}

std::shared_ptr<LocalGroup> LocalGroup::Join(const std::string& key, int size) {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  auto& groups = Groups();
  auto it = groups.find(key);
  if (it != groups.end()) {
    if (auto g = it->second.lock()) return g;
  }
  auto g = std::make_shared<LocalGroup>(key, size);
  groups[key] = g;
  return g;
}

Status LocalGroup::Barrier(int rank, Deadline deadline) {
  BarrierOptions opt;
  opt.shared = false;
  opt.spin = !Oversubscribed(size_);
  opt.what = "thread rank(s)";
  Status st = BarrierEnter(&words_, arrivals_.get(), size_, rank, deadline, opt);
  if (st.code() == Code::kRemote && words_.aborted.load() != 0) {
    std::lock_guard<std::mutex> lk(abort_mu_);
    return Status(abort_code_, abort_reason_);
  }
  return st;
}

void LocalGroup::Abort(Code code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lk(abort_mu_);
    if (words_.aborted.load() != 0) return;
    abort_code_ = code;
    abort_reason_ = reason;
  }
  BarrierAbort(&words_, false);
}

Status LocalGroup::Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc&,
                            const BufDesc&, Deadline deadline, bool check, const void* payload, size_t) {
  Publish(rank, LocalSlot{send, recv, fp, payload});
  HOSTCCL_RETURN_IF_ERROR(Barrier(rank, deadline));
  if (check) {
    for (int r = 1; r < size_; ++r)
      if (Slot(r).fp != Slot(0).fp) return Status(Code::kPara, FormatMismatch(Slot(0).fp, 0, Slot(r).fp, r));
  }
  return Status::Ok();
}

Status LocalGroup::Check(uint64_t) {
  if (words_.aborted.load(std::memory_order_acquire) == 0) return Status::Ok();
  std::lock_guard<std::mutex> lk(abort_mu_);
  return Status(abort_code_, abort_reason_);
}

}  // namespace hostccl::net
