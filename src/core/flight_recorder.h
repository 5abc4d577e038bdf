// FlightRecorder: a communicator's last N operations (docs/flight_recorder.md), kept so that a
// hung or failed job can say what every rank was doing.
//
// What: a ring of N fixed-size entries (N = HOSTCCL_FR_ENTRIES, default 1024, 0 = off), slot
// seq % N. Each entry: sequence number, operator and arguments (count, dtype, op, root/peer,
// V-array hash), the fingerprint the ranks compare, the algorithm chosen, the state (queued,
// running, waiting for rank X, done, failed + the error) and timestamps (enqueue, start, end).
// Writers: Communicator::Enqueue (user thread: queued), Communicator::Run/Finish (stream thread:
// running, algorithm, done/failed) and the transports' blocking waits (common/wait_note.h:
// waiting for rank X). An operation's entry is two halves in two rings, each written by one
// thread only (the enqueuing thread's 32 bytes, the stream thread's 64-byte line), so recording
// moves no cache line between cores; timestamps are TSC ticks (x86-64; converted to
// CLOCK_MONOTONIC microseconds when dumped). Every field is a relaxed atomic: no
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

#include "common/fingerprint.h"
#include "common/status.h"

namespace hostccl::core {

enum class FrState : uint8_t { kEmpty = 0, kQueued, kRunning, kDone, kFailed };
const char* FrStateName(FrState s);  // "queued", "running", "done", "failed"

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

  // Hot path (no lock, no allocation; about 20 stores and a TSC read each). Enqueued (the
  // fingerprint with every field, also when HOSTCCL_CHECK_ARGS=0) -> Started (algorithm) -> Ended.
  void Enqueued(const Fingerprint& fp);
  void Started(uint64_t seq, const char* algo);
  void Ended(uint64_t seq, const Status& st);
  // The `waiting` word of `seq`'s entry for common/wait_note.h (nullptr if the slot moved on).
  std::atomic<int32_t>* WaitWord(uint64_t seq);

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
  struct Entry;     // written by the enqueuing thread
  struct RunEntry;  // written by the stream thread that runs the operation
  struct View;      // both halves of one operation, read for a dump
  View Snapshot(const Entry& e) const;
  struct ErrorText {
    uint64_t seq;
    Code code;
    std::string message;
  };
  FlightRecorder(const FrIdentity& id, size_t n, std::string trace_dir);
  Entry* Slot(uint64_t seq) const;
  FrIdentity id_;
  size_t n_;
  std::unique_ptr<Entry[]> ring_;
  std::unique_ptr<RunEntry[]> run_;
  std::string trace_dir_;
  bool trace_written_ = false;  // under the live-recorder lock
  // The error texts of the last failed operations (failure path only; a lock is fine there).
  mutable std::mutex err_mu_;
  std::vector<ErrorText> errors_;
};

// Directory dumps go to (HOSTCCL_FR_DIR or its default); created on demand.
std::string FrDumpDir();

}  // namespace hostccl::core
