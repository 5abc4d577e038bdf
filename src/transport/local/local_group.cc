#include "transport/local/local_group.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <thread>

#include "common/futex.h"
#include "common/log.h"

namespace hostccl::net {
namespace {

std::mutex g_groups_mu;
std::map<std::string, std::weak_ptr<LocalGroup>>& Groups() {
  static std::map<std::string, std::weak_ptr<LocalGroup>> groups;
  return groups;
}

// Spinning only pays when another core can make progress meanwhile.
bool Oversubscribed(int group_size) {
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(group_size) > cores;
}

}  // namespace

LocalGroup::LocalGroup(std::string key, int size)
    : key_(std::move(key)), size_(size), slots_(static_cast<size_t>(size)),
      arrived_(new std::atomic<uint64_t>[static_cast<size_t>(size)]) {
  for (int i = 0; i < size; ++i) arrived_[i].store(0);
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
  uint64_t my_round = arrived_[rank].fetch_add(1, std::memory_order_acq_rel) + 1;
  uint64_t target = my_round * static_cast<uint64_t>(size_);
  uint64_t now = count_.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (now >= target) {
    wake_word_.fetch_add(1, std::memory_order_acq_rel);
    if (sleepers_.load(std::memory_order_acquire) != 0) FutexWake(&wake_word_, INT32_MAX, false);
    return Status::Ok();
  }
  // Adaptive wait: spin (only when the group fits on the cores), then yield, then futex sleep.
  const int spins = Oversubscribed(size_) ? 0 : 4000;
  for (int i = 0; i < spins; ++i) {
    if (count_.load(std::memory_order_acquire) >= target) return Status::Ok();
    __builtin_ia32_pause();
  }
  for (int i = 0; i < 4; ++i) {
    if (count_.load(std::memory_order_acquire) >= target) return Status::Ok();
    sched_yield();
  }
  while (true) {
    uint32_t word = wake_word_.load(std::memory_order_acquire);
    if (count_.load(std::memory_order_acquire) >= target) return Status::Ok();
    if (aborted_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lk(abort_mu_);
      return Status(abort_code_, abort_reason_);
    }
    if (deadline.Expired()) {
      std::string missing;
      for (int r = 0; r < size_; ++r) {
        if (arrived_[r].load() < my_round) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      return MakeStatus(Code::kTimeout, "timed out waiting for rank(s) %s of %d (threads of this process)",
                        missing.c_str(), size_);
    }
    sleepers_.fetch_add(1, std::memory_order_acq_rel);
    if (count_.load(std::memory_order_acquire) < target && !aborted_.load()) {
      FutexWait(&wake_word_, word, deadline, false);
    }
    sleepers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void LocalGroup::Abort(Code code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lk(abort_mu_);
    if (aborted_.load()) return;
    abort_code_ = code;
    abort_reason_ = reason;
    aborted_.store(true, std::memory_order_release);
  }
  wake_word_.fetch_add(1, std::memory_order_acq_rel);
  FutexWake(&wake_word_, INT32_MAX, false);
}

}  // namespace hostccl::net
