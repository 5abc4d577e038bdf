// FlightRecorder: a communicator's last N operations (docs/flight_recorder.md), kept so that a
// hung or failed job can say what every rank was doing.
//
// What: a ring of N fixed-size entries (N = HOSTCCL_FR_ENTRIES rounded up to a power of two,
// default 1024, 0 = off), slot seq % N (a mask). Each entry: sequence number, operator and arguments (count, dtype, op, root/peer,
// V-array hash), the fingerprint the ranks compare, the algorithm chosen, the state (queued,
// running, waiting for rank X, done, failed + the error) and timestamps (enqueue, start, end).
// Writers: Communicator::Enqueue (user thread: queued), Communicator::Run/Finish (stream thread:
// running, algorithm, done/failed) and the transports' blocking waits (common/wait_note.h:
// waiting for rank X). An operation's entry is two halves in two rings, each written by one
// thread only (the enqueuing thread's 32 bytes, the stream thread's 64-byte line), so recording
// moves no cache line between cores; timestamps are CLOCK_MONOTONIC ns: the start always (the
// reading the operation's deadline took), enqueue and end only with HOSTCCL_FR_TIMESTAMPS=1 or
// HOSTCCL_TRACE (a clock read is 25-100 ns on a VM). Every field is a relaxed atomic: no
// lock, no allocation and no formatting on those paths; the entry's sequence number is stored first and checked by the later writers,
// so a slot reused after a wrap-around is never updated by a stale operation.
// Readers: Dump (JSON, one file per rank) on an error (Communicator::Fail, which every timeout
// and mismatch reaches), on SIGUSR1 (the handler writes one byte to a pipe; a dump thread reads
// it and dumps every live recorder of the process) and on request (tests); WriteTrace writes a
// Chrome/Perfetto trace (HOSTCCL_TRACE=dir) when the communicator is freed. A dump taken while
// operations run may show an entry in the middle of an update (fields of two moments); it is
// a diagnosis aid, never an input to the library.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"

namespace hostccl::core {

// kAhead: completed on this rank before its peers confirmed it (pipelined completion); kDone once
// the settle at the stream's synchronize confirms it; when that settle fails, the last such call
// is marked kFailed with the error and the ones before it stay kAhead (unconfirmed).
enum class FrState : uint8_t { kEmpty = 0, kQueued, kRunning, kDone, kFailed, kAhead };
const char* FrStateName(FrState s);  // "queued", "running", "done", "failed", "ahead"

struct FrIdentity {
  int rank = 0;
  int size = 1;
  std::string comm_name;
  std::string comm_id;  // hex, unique across the job (the communicator's member key hashed)
};

class FlightRecorder {
 public:
  // nullptr when HOSTCCL_FR_ENTRIES is 0 and HOSTCCL_TRACE is unset (the recorder is then off).
  static std::unique_ptr<FlightRecorder> Create(const FrIdentity& id);
  ~FlightRecorder();

  // Hot path (no lock, no allocation, no formatting; about 20 stores, and no clock read of its own
  // unless times_ is on: see Started). Enqueued (the
  // fingerprint with every field, also when HOSTCCL_CHECK_ARGS=0) -> Started (algorithm) -> Ended.
  // Defined inline below: a call each would be a fair part of their cost.
  inline void Enqueued(const Fingerprint& fp);
  // start_ns: the operation's start in CLOCK_MONOTONIC ns when the caller already read the clock
  // (Communicator::Run: its deadline's reading); 0 = read it now.
  inline void Started(uint64_t seq, const char* algo, uint64_t start_ns = 0);
  inline void Ended(uint64_t seq, const Status& st, bool ahead = false);
  // The settle at a synchronize confirmed the calls that completed ahead, up to `upto`: kAhead ->
  // kDone, back from `upto` while entries are kAhead (a failed settle marks `upto` failed through
  // Ended). Not a hot path (once per synchronize that settles); the caller excludes Run
  // (Communicator::exec_mu_), so the run half still has one writer at a time.
  void Confirmed(uint64_t upto);
  // Whether enqueue and end times are taken (then the start time must come from the same clock).
  bool times() const { return times_; }
  // The `waiting` word of `seq`'s entry for common/wait_note.h (nullptr if the slot moved on).
  inline std::atomic<int32_t>* WaitWord(uint64_t seq);

  // The JSON document of one rank (see docs/flight_recorder.md) and its file, written to
  // HOSTCCL_FR_DIR (default /tmp/hostccl-fr-<job id or user>); returns the path ("" on failure).
  std::string Json(const char* reason) const;
  std::string Dump(const char* reason) const;
  // Chrome trace events JSON (one track per rank); written by the destructor when HOSTCCL_TRACE
  // is set.
  std::string TraceJson() const;

  // Writes the trace file now (once; HOSTCCL_TRACE set): from the destructor, or at process exit
  // for a communicator never destroyed. Returns the path ("" when none was written).
  std::string WriteTrace();

  size_t capacity() const { return n_; }
  const FrIdentity& identity() const { return id_; }

 private:
  // The enqueue half: the fingerprint (kind, dtype, op, root or V-array hash, count, seq) and the
  // enqueue time. Written by the enqueuing thread only.
  struct alignas(32) Entry {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> t_enq{0};
    std::atomic<uint32_t> root{0};
    std::atomic<uint8_t> kind{0}, dtype{0}, op{0};
  };
  // The run half: algorithm, state, the rank waited for, start and end. Written by the stream
  // thread running the operation (and its transport waits) only.
  struct alignas(64) RunEntry {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint64_t> t_start{0}, t_end{0};
    std::atomic<const char*> algo{nullptr};
    std::atomic<int32_t> waiting{-1};
    std::atomic<uint8_t> state{0};
  };
  void RecordError(uint64_t seq, const Status& st);  // the failure path of Ended (a lock, a copy)
  struct View;      // both halves of one operation, read for a dump
  View Snapshot(const Entry& e) const;
  struct ErrorText {
    uint64_t seq;
    Code code;
    std::string message;
  };
  FlightRecorder(const FrIdentity& id, size_t n, std::string trace_dir, bool times);
  FrIdentity id_;
  size_t n_;     // a power of two
  size_t mask_;  // n_ - 1
  bool times_;  // enqueue and end times too (HOSTCCL_FR_TIMESTAMPS=1 or HOSTCCL_TRACE)
  std::unique_ptr<Entry[]> ring_;
  std::unique_ptr<RunEntry[]> run_;
  std::string trace_dir_;
  bool trace_written_ = false;  // under the live-recorder lock
  uint64_t confirmed_ = 0;      // Confirmed: entries up to here were looked at
  // The error texts of the last failed operations (failure path only; a lock is fine there).
  mutable std::mutex err_mu_;
  std::vector<ErrorText> errors_;
};

inline void FlightRecorder::Enqueued(const Fingerprint& fp) {
  Entry* e = &ring_[fp.seq & mask_];
  constexpr auto R = std::memory_order_relaxed;
  e->seq.store(0, R);
  e->kind.store(fp.kind, R);
  e->dtype.store(fp.dtype, R);
  e->op.store(fp.op, R);
  e->root.store(fp.root, R);
  e->count.store(fp.count, R);
  e->t_enq.store(times_ ? NowNs() : 0, R);
  e->seq.store(fp.seq, std::memory_order_release);
}

inline void FlightRecorder::Started(uint64_t seq, const char* algo, uint64_t start_ns) {
  RunEntry* e = &run_[seq & mask_];
  constexpr auto R = std::memory_order_relaxed;
  if (e->seq.load(R) > seq) return;  // a later operation has the slot already
  e->seq.store(0, R);
  e->algo.store(algo, R);
  e->waiting.store(-1, R);
  e->t_end.store(0, R);
  e->t_start.store(start_ns != 0 ? start_ns : NowNs(), R);
  e->state.store(static_cast<uint8_t>(FrState::kRunning), R);
  e->seq.store(seq, std::memory_order_release);
}

inline void FlightRecorder::Ended(uint64_t seq, const Status& st, bool ahead) {
  RunEntry* e = &run_[seq & mask_];
  if (e->seq.load(std::memory_order_relaxed) != seq) return;  // never started, or its slot moved on
  if (times_) e->t_end.store(NowNs(), std::memory_order_relaxed);
  if (!st.ok()) RecordError(seq, st);
  const FrState to = !st.ok() ? FrState::kFailed : ahead ? FrState::kAhead : FrState::kDone;
  e->state.store(static_cast<uint8_t>(to), std::memory_order_release);
}

inline std::atomic<int32_t>* FlightRecorder::WaitWord(uint64_t seq) {
  RunEntry* e = &run_[seq & mask_];
  return e->seq.load(std::memory_order_relaxed) == seq ? &e->waiting : nullptr;
}

// Directory dumps go to (HOSTCCL_FR_DIR or its default); created on demand.
std::string FrDumpDir();

}  // namespace hostccl::core
