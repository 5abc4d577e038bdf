// The spin phase every shared-memory wait starts with (when the group fits on the cores): looks
// at a condition with one `pause` between looks, bounded by time, never by a count of looks (the
// clock is read once per 64 looks; a pause costs ~19 ns on the AMD EPYC VM, ~17 ns on the Xeon).
//
// The spacing was measured against the alternatives on the EPYC VM, whose cache-line round trip
// flips between ~200 and ~650 ns (docs/performance.md "Polling with pause"): back-to-back looks
// make 8 B calls at 2 ranks ~5-10 % faster when lines move fast and 10-30 % slower when they move
// slowly (the looks keep taking the line the peer is about to write); three pauses per look win
// a few percent only in the slow state. One pause per look is kept.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace hostccl::net {

// The spin budget of the waits that start with SpinPoll (the inline attempt's has its own,
// ShmGroup::kAttemptSpinNs, of the same length).
inline constexpr uint64_t kSpinNs = 2000;

// Looks at ready() until it holds (true) or budget_ns passed since `start` (false; a NowNs()
// reading taken by the caller, who bounds its later phases from it too).
template <typename F>
bool SpinPoll(const F& ready, uint64_t start, uint64_t budget_ns) {
  for (int i = 1;; ++i) {
    if (ready()) return true;
    __builtin_ia32_pause();
    if ((i & 63) == 0 && NowNs() - start >= budget_ns) return false;
  }
}

}  // namespace hostccl::net
