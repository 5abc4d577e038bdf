// ThreadState: what every layer keeps per thread for a call, in one thread_local.
//
// libhccl reaches a thread_local through a TLS descriptor call (common/tls_ref.h says why not the
// initial-exec model); the 11 of them an 8 B call made cost ~30 ns on the EPYC VM (a build
// without them, for measuring only). They were the memo of the call's checks, the communicator
// and stream lookups, the stream's attempt flags, the log rank, the flight recorder's wait word
// and the ran-ahead flag. The fields several layers read on every call live here instead: the
// fast check takes the block once for its lookups and hands it on through the enqueue to the
// stream's BeginAttempt/EndAttempt and to Communicator::Run (a queued task takes it once when it
// runs); docs/performance.md "One thread-local block per call". Each field is owned by the layer
// named next to it; the others do not touch it. Plain data only (no destructor, constant
// initializer): an access needs no initialization guard, and a thread's exit runs no code for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "common/tls_ref.h"

namespace hostccl {

struct ThreadState {
  // common/log.h: the rank this thread's log lines name (-1: none).
  int log_rank = -1;
  // runtime/stream.cc: this thread's part in the streams.
  bool attempting = false;     // rt::Attempting(): set around an inline attempt
  bool has_successor = false;  // rt::TaskHasSuccessor(): set around each task
  bool running = false;        // set while this thread runs a queued task
  // core/communicator.cc: the operation this thread just ran completed ahead of its peers.
  bool ran_ahead = false;
  // common/wait_note.h: the flight recorder's word for whom the running operation waits.
  std::atomic<int32_t>* wait_word = nullptr;
  // core/communicator.cc LookupCommForCall: the last answer while the registry's generation is
  // unchanged (the strong reference that keeps it alive is a thread_local of its own there).
  uintptr_t comm_handle = 0;
  uint64_t comm_generation = 0;
  void* comm = nullptr;
  // runtime/stream.cc LookupStream: the last answer while the stream registry is unchanged.
  void* stream_handle = nullptr;
  void* stream = nullptr;
  uint64_t stream_generation = 0;
  // core/communicator.cc Run: the shared segment and rank of this thread's last inline attempt,
  // and how many attempts it made on that segment since one was for another rank of it than the
  // attempt before (kDriverMemory or more: none, or not lately). Fewer than kDriverMemory: this
  // thread drives several of the segment's ranks, so its attempts look once
  // (net::ShmGroup::BeginAttempt) — also its attempts that stay on one rank for a while, such as
  // a queued call run again before the thread's next one on that rank.
  static constexpr uint32_t kDriverMemory = 64;
  const void* attempt_segment = nullptr;
  int attempt_rank = -1;
  uint32_t attempts_since_switch = kDriverMemory;
  // ExitMarked below: a thread_local of the library with a destructor was destroyed (the thread
  // is exiting); api::RefuseAtThreadExit (api/arg_check.h) then refuses operations.
  bool exiting = false;
};

inline thread_local constinit ThreadState t_thread_state;

// This thread's block: one descriptor call; keep the reference for the rest of the function.
inline ThreadState& ThisThread() { return TlsRef(t_thread_state); }

// The type of every thread_local of the library that has a destructor. At a thread's exit the
// C++ runtime destroys its thread_locals in the reverse order of their construction, so one of
// the program's, constructed before the thread's first HCCL call, is destroyed after the
// library's, and its destructor may still call the library (an RAII wrapper that destroys its
// communicator). Going, an ExitMarked object leaves itself empty (a later use finds an empty
// container or reference, not freed memory) and marks the thread `exiting`: operations are then
// refused with an error, while HcclCommDestroy, aclrtDestroyStream, aclrtSynchronizeStream and
// aclrtFree still work (docs/runtime.md "Calls at thread exit").
template <typename T>
struct ExitMarked : T {
  using T::T;
  using T::operator=;
  ExitMarked() = default;
  ExitMarked(const ExitMarked&) = delete;
  ExitMarked& operator=(const ExitMarked&) = delete;
  ~ExitMarked() {
    // Swapped with a new object, which frees what this one held, rather than assigned: a moved-to
    // std::string keeps its buffer, which its destructor would then free under it.
    T fresh{};  // value-initialized: an aggregate's plain members are zero, as in the thread_local
    std::swap(static_cast<T&>(*this), fresh);
    t_thread_state.exiting = true;
  }
};

}  // namespace hostccl
