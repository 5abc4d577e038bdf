// "Waiting for rank X": the flight recorder's view into a blocking wait (core/flight_recorder.h).
// While an operation runs, its stream thread's t_wait_word points at the recorder entry's
// `waiting` word; a transport or barrier wait that is about to block (it has already spun, so
// the peer is really late) stores the rank it waits for there. One thread-local load and one
// relaxed store: nothing on the fast path, no locks, no allocation.
#pragma once

#include <atomic>
#include <cstdint>

namespace hostccl::fr {

// Default TLS model, not initial-exec: one initial-exec variable marks all of libhccl STATIC_TLS, and
// then its whole TLS block (~2 KiB) must fit glibc's small surplus when the library is loaded with
// dlopen (Python's `import hostccl`, torch) - it does not ("cannot allocate memory in static TLS
// block"). The wait word is read once per operation and stored only before a blocking wait.
inline thread_local std::atomic<int32_t>* t_wait_word = nullptr;

// This thread's running operation now waits for `rank` (-1: no longer waiting).
inline void NoteWaiting(int rank) {
  if (std::atomic<int32_t>* w = t_wait_word) w->store(rank, std::memory_order_relaxed);
}

}  // namespace hostccl::fr
