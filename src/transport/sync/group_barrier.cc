#include "transport/sync/group_barrier.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/futex.h"
#include "common/wait_note.h"
#include "transport/sync/spin_poll.h"
#include "transport/sync/wake_fence.h"

namespace hostccl::net {

int OnlineCores() {
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return cores;
}

bool Oversubscribed(int ranks) { return ranks > OnlineCores(); }

Status WaitUntil(const std::function<bool()>& done, BarrierWords* b, Deadline deadline,
                 const BarrierOptions& opt, const std::function<std::string()>& missing) {
  if (done()) return Status::Ok();
  const uint64_t start = NowNs();
  // A cross-core hand-off takes ~0.03 us, but a running peer may still be a few microseconds
  // behind (its own call overhead): spin first, when the ranks fit on the cores, for at most
  // kSpinNs, then poll with sched_yield (nearly as prompt when nothing else wants this core).
  // Bounded by time, not by pause count (a pause costs ~17 ns on this VM's Xeon: the 4000 spun
  // before were 68 us): on a machine busy with other work two ranks can share one core, and a
  // rank spinning there keeps its peer from arriving; 8 B isolated calls at 2 ranks then took
  // 200-670 us instead of ~1 us in some launches, 10-12 us with this bound (docs/performance.md).
  if (opt.spin && SpinPoll(done, start, kSpinNs)) return Status::Ok();
  // Yield for a bounded time: with more ranks than cores (or a core shared with other work) the
  // peers need our core, and a runnable peer gets it at once, while a sleeping one needs a ~24 us
  // wake-up. Past the bound (a peer that is really late), sleep on the futex so an idle rank
  // costs nothing. With spinning the bound is the ~90 us the spin and yield phases took before.
  const uint64_t yield_until = start + (opt.spin ? 90000 : 200000);
  do {
    if (done()) return Status::Ok();
    sched_yield();
  } while (NowNs() < yield_until);
  // The flight recorder learns whom we wait for (the first rank `missing` names) once the rank
  // slept a whole check interval without it: a hang, not a late peer (formatting `missing`
  // earlier would delay the common short wait), and again at the timeout.
  bool noted = false;
  const uint64_t asleep_since = NowNs();
  // Cleared when the wait succeeds; a failed wait leaves it for the dump ("waited_for").
  struct Unnote {
    bool& on;
    const std::function<bool()>& ok;
    ~Unnote() { if (on && ok()) fr::NoteWaiting(-1); }
  } unnote{noted, done};
  while (true) {
    const uint32_t word = b->wake.load(std::memory_order_acquire);
    if (done()) return Status::Ok();
    if (b->aborted.load(std::memory_order_acquire) != 0) return Status(Code::kRemote, "aborted");
    if (deadline.Expired()) {
      const std::string m = missing();
      if (fr::Noting() && !m.empty() && m[0] >= '0' && m[0] <= '9') fr::NoteWaiting(static_cast<int>(strtol(m.c_str(), nullptr, 10)));
      return MakeStatus(Code::kTimeout, "timed out waiting for %s %s", opt.what, m.c_str());
    }
    if (opt.check) {
      Status alive = opt.check();
      if (!alive.ok()) return done() ? Status::Ok() : alive;  // a peer may finish, then exit
    }
    const uint64_t now = NowNs();
    if (!noted && now - asleep_since >= static_cast<uint64_t>(opt.check_every_ms) * 1000000u && fr::Noting()) {
      const std::string m = missing();
      if (!m.empty() && m[0] >= '0' && m[0] <= '9') fr::NoteWaiting(static_cast<int>(strtol(m.c_str(), nullptr, 10)));
      noted = true;
    }
    Deadline slice = opt.check ? deadline.Earlier(Deadline::AfterMs(opt.check_every_ms)) : deadline;
    // seq_cst, like the waker's arrival store and its load of `sleepers` (and done()'s loads): in
    // their single total order either the waker sees us counted or we see its arrival in done().
    // With asymmetric wakers (no fence of theirs) the membarrier gives the same (wake_fence.h).
    b->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const bool fenced = SleeperFence(opt.asymmetric_wake);
    slice = RecheckBy(slice, opt.asymmetric_wake, fenced, asleep_since, now);
    if (!done() && b->aborted.load(std::memory_order_acquire) == 0) {
      FutexWait(&b->wake, word, slice, opt.shared);
      if (opt.stats != nullptr)
        opt.stats->Note(slice.Expired() && b->wake.load(std::memory_order_acquire) == word && done());
    }
    b->sleepers.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WakeAll(BarrierWords* b, bool shared) {
  b->wake.fetch_add(1, std::memory_order_acq_rel);
  if (b->sleepers.load(std::memory_order_seq_cst) != 0) FutexWake(&b->wake, INT32_MAX, shared);
}

Status BarrierEnter(BarrierWords* b, ArrivalWord* arrivals, int size, int rank, Deadline deadline,
                    const BarrierOptions& opt) {
  const uint64_t my_round = arrivals[rank].arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
  const uint64_t target = my_round * static_cast<uint64_t>(size);
  if (b->count.fetch_add(1, std::memory_order_seq_cst) + 1 >= target) {
    WakeAll(b, opt.shared);
    return Status::Ok();
  }
  auto done = [&] { return b->count.load(std::memory_order_seq_cst) >= target; };
  auto missing = [&] {
    std::string m;
    for (int r = 0; r < size; ++r)
      if (arrivals[r].arrived.load(std::memory_order_acquire) < my_round) m += (m.empty() ? "" : ", ") + std::to_string(r);
    return m + " of " + std::to_string(size);
  };
  return WaitUntil(done, b, deadline, opt, missing);
}

void BarrierAbort(BarrierWords* b, bool shared) {
  b->aborted.store(1, std::memory_order_release);
  b->wake.fetch_add(1, std::memory_order_acq_rel);
  FutexWake(&b->wake, INT32_MAX, shared);
}

}  // namespace hostccl::net
