// "Waiting for rank X": the flight recorder's view into a blocking wait (core/flight_recorder.h).
// While an operation runs, its stream thread's t_wait_word points at the recorder entry's
// `waiting` word; a transport or barrier wait that is about to block (it has already spun, so
// the peer is really late) stores the rank it waits for there. One thread-local load and one
// relaxed store: nothing on the fast path, no locks, no allocation.
#pragma once

#include <atomic>
#include <cstdint>

namespace hostccl::fr {

// initial-exec: one %fs-relative access, no __tls_get_addr call (libhccl is linked, not dlopen'ed late;
// one pointer fits the static TLS surplus glibc keeps for libraries loaded with dlopen).
inline thread_local std::atomic<int32_t>* t_wait_word __attribute__((tls_model("initial-exec"))) = nullptr;

// This thread's running operation now waits for `rank` (-1: no longer waiting).
inline void NoteWaiting(int rank) {
  if (std::atomic<int32_t>* w = t_wait_word) w->store(rank, std::memory_order_relaxed);
}

}  // namespace hostccl::fr
