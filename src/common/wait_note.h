// "Waiting for rank X": the flight recorder's view into a blocking wait (core/flight_recorder.h).
// While an operation runs, its thread's ThreadState::wait_word (common/thread_state.h) points at
// the recorder entry's `waiting` word; a transport or barrier wait that is about to block (it has
// already spun, so the peer is really late) stores the rank it waits for there. One thread-local
// load and one relaxed store: nothing on the fast path, no locks, no allocation.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/thread_state.h"

namespace hostccl::fr {

// This thread's running operation now waits for `rank` (-1: no longer waiting).
inline void NoteWaiting(int rank) {
  if (std::atomic<int32_t>* w = ThisThread().wait_word) w->store(rank, std::memory_order_relaxed);
}

// Whether this thread runs an operation the flight recorder follows.
inline bool Noting() { return ThisThread().wait_word != nullptr; }

}  // namespace hostccl::fr
