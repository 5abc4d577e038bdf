// Store basics: key checks, the default Wait, the in-process MemStore and the PrefixStore wrapper.
#include "bootstrap/store.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/env.h"

namespace hostccl::boot {

void StoreBackoff(Deadline deadline, int* sleep_us) {
  int remaining_ms = deadline.RemainingMsForPoll();
  int us = *sleep_us;
  if (remaining_ms >= 0 && remaining_ms * 1000 < us) us = remaining_ms * 1000 + 100;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
  *sleep_us = *sleep_us * 2 > 20000 ? 20000 : *sleep_us * 2;
}

Status CheckStoreKey(const std::string& key) {
  if (key.empty()) return MakeStatus(Code::kPara, "store: empty key");
  if (key.size() > kMaxStoreKeyBytes)
    return MakeStatus(Code::kPara, "store: key of %zu bytes exceeds %zu", key.size(),
                      kMaxStoreKeyBytes);
  return Status::Ok();
}

Status CheckStoreValue(const std::string& key, size_t value_bytes) {
  if (value_bytes > kMaxStoreValueBytes) {
    return MakeStatus(Code::kPara, "store: value of key '%s' is %zu bytes; at most %zu are allowed",
                      key.c_str(), value_bytes, kMaxStoreValueBytes);
  }
  return Status::Ok();
}

Status Store::Wait(const std::vector<std::string>& keys, Deadline deadline) {
  std::string ignored;
  for (const std::string& key : keys) HOSTCCL_RETURN_IF_ERROR(Get(key, deadline, &ignored));
  return Status::Ok();
}

namespace {

class MemStore final : public Store {
 public:
  Status Set(const std::string& key, const std::string& value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    HOSTCCL_RETURN_IF_ERROR(CheckStoreValue(key, value.size()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      map_[key] = value;
    }
    cv_.notify_all();
    return Status::Ok();
  }

  Status Get(const std::string& key, Deadline deadline, std::string* value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto it = map_.find(key);
      if (it != map_.end()) {
        *value = it->second;
        return Status::Ok();
      }
      if (deadline.Expired())
        return MakeStatus(Code::kTimeout, "store: key '%s' did not appear before the deadline",
                          key.c_str());
      int ms = deadline.RemainingMsForPoll();
      cv_.wait_for(lock, std::chrono::milliseconds(ms < 0 ? 1000 : ms));
    }
  }

  Status Add(const std::string& key, int64_t delta, int64_t* new_value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    {
      std::lock_guard<std::mutex> lock(mu_);
      int64_t v = 0;
      auto it = map_.find(key);
      if (it != map_.end()) {
        auto parsed = ParseInt(it->second);
        if (!parsed)
          return MakeStatus(Code::kPara, "store: Add on key '%s' whose value is not an integer",
                            key.c_str());
        v = *parsed;
      }
      v += delta;
      map_[key] = std::to_string(v);
      if (new_value != nullptr) *new_value = v;
    }
    cv_.notify_all();
    return Status::Ok();
  }

  Status Delete(const std::string& key) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    std::lock_guard<std::mutex> lock(mu_);
    map_.erase(key);
    return Status::Ok();
  }

  Status Check(const std::string& key, bool* present) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    std::lock_guard<std::mutex> lock(mu_);
    *present = map_.count(key) != 0;
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> map_;  // guarded by mu_
};

class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base)
      : prefix_(std::move(prefix) + "/"), base_(std::move(base)) {}
  Status Set(const std::string& key, const std::string& value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    return base_->Set(prefix_ + key, value);
  }
  Status Get(const std::string& key, Deadline deadline, std::string* value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    return base_->Get(prefix_ + key, deadline, value);
  }
  Status Add(const std::string& key, int64_t delta, int64_t* new_value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    return base_->Add(prefix_ + key, delta, new_value);
  }
  Status Delete(const std::string& key) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    return base_->Delete(prefix_ + key);
  }
  Status Check(const std::string& key, bool* present) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    return base_->Check(prefix_ + key, present);
  }

 private:
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace

std::unique_ptr<Store> NewMemStore() { return std::make_unique<MemStore>(); }

std::unique_ptr<Store> NewPrefixStore(const std::string& prefix, std::shared_ptr<Store> base) {
  return std::make_unique<PrefixStore>(prefix, std::move(base));
}

}  // namespace hostccl::boot
