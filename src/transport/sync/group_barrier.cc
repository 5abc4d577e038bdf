#include "transport/sync/group_barrier.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <string>
#include <thread>

#include "common/futex.h"

namespace hostccl::net {

bool Oversubscribed(int ranks) {
  static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(ranks) > cores;
}

Status BarrierEnter(BarrierWords* b, ArrivalWord* arrivals, int size, int rank, Deadline deadline,
                    const BarrierOptions& opt) {
  const uint64_t my_round = arrivals[rank].arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
  const uint64_t target = my_round * static_cast<uint64_t>(size);
  if (b->count.fetch_add(1, std::memory_order_acq_rel) + 1 >= target) {
    b->wake.fetch_add(1, std::memory_order_acq_rel);
    if (b->sleepers.load(std::memory_order_acquire) != 0) FutexWake(&b->wake, INT32_MAX, opt.shared);
    return Status::Ok();
  }
  auto done = [&] { return b->count.load(std::memory_order_acquire) >= target; };
  // A cross-core hand-off takes ~0.03 us, but a running peer may still be a few microseconds
  // behind (its own call overhead); yielding early hands the core to unrelated processes for a
  // whole time slice on a busy host. So: spin (only when the ranks fit on the cores), then yield
  // a little, then sleep on the futex.
  if (opt.spin) {
    for (int i = 0; i < 4000; ++i) {
      if (done()) return Status::Ok();
      __builtin_ia32_pause();
    }
  }
  for (int i = 0; i < 4; ++i) {
    if (done()) return Status::Ok();
    sched_yield();
  }
  while (true) {
    const uint32_t word = b->wake.load(std::memory_order_acquire);
    if (done()) return Status::Ok();
    if (b->aborted.load(std::memory_order_acquire) != 0) return Status(Code::kRemote, "aborted");
    if (deadline.Expired()) {
      std::string missing;
      for (int r = 0; r < size; ++r)
        if (arrivals[r].arrived.load(std::memory_order_acquire) < my_round)
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      return MakeStatus(Code::kTimeout, "timed out waiting for %s %s of %d", opt.what, missing.c_str(), size);
    }
    if (opt.check) {
      Status alive = opt.check();
      if (!alive.ok()) return done() ? Status::Ok() : alive;  // a peer may arrive, then exit
    }
    Deadline slice = opt.check ? deadline.Earlier(Deadline::AfterMs(opt.check_every_ms)) : deadline;
    b->sleepers.fetch_add(1, std::memory_order_acq_rel);
    if (!done() && b->aborted.load(std::memory_order_acquire) == 0) FutexWait(&b->wake, word, slice, opt.shared);
    b->sleepers.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void BarrierAbort(BarrierWords* b, bool shared) {
  b->aborted.store(1, std::memory_order_release);
  b->wake.fetch_add(1, std::memory_order_acq_rel);
  FutexWake(&b->wake, INT32_MAX, shared);
}

}  // namespace hostccl::net
