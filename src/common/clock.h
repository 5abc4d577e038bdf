// Monotonic time and deadlines. Every wait in hostccl is bounded by a Deadline.
#pragma once

#include <cstdint>
#include <ctime>

namespace hostccl {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// CLOCK_MONOTONIC as of the last timer tick: read without the TSC (a few ns where NowNs costs
// 25-75 ns on a VM's kvm-clock), behind NowNs by less than one tick (clock_getres: 4 ms here).
inline uint64_t NowCoarseNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A point in monotonic time; Infinite() never expires.
class Deadline {
 public:
  static Deadline Infinite() { return Deadline(UINT64_MAX); }
  static Deadline AfterMs(int64_t ms) {
    if (ms < 0) return Infinite();
    return Deadline(NowNs() + static_cast<uint64_t>(ms) * 1000000ull);
  }
  // AfterMs on the coarse clock: expires up to one tick early. For bounds of a second or more
  // (an operation's exec timeout), where a tick does not matter and the clock read does.
  static Deadline AfterMsCoarse(int64_t ms) {
    if (ms < 0) return Infinite();
    return Deadline(NowCoarseNs() + static_cast<uint64_t>(ms) * 1000000ull);
  }
  static Deadline AtNs(uint64_t ns) { return Deadline(ns); }
  bool infinite() const { return at_ns_ == UINT64_MAX; }
  bool Expired() const { return !infinite() && NowNs() >= at_ns_; }
  // Milliseconds left, clamped to [0, INT32_MAX]; -1 for infinite (poll() convention).
  int RemainingMsForPoll() const {
    if (infinite()) return -1;
    uint64_t now = NowNs();
    if (now >= at_ns_) return 0;
    uint64_t ms = (at_ns_ - now + 999999) / 1000000;
    return ms > 0x7fffffff ? 0x7fffffff : static_cast<int>(ms);
  }
  uint64_t at_ns() const { return at_ns_; }
  Deadline Earlier(const Deadline& o) const { return at_ns_ < o.at_ns_ ? *this : o; }

 private:
  explicit Deadline(uint64_t at) : at_ns_(at) {}
  uint64_t at_ns_;
};

}  // namespace hostccl
