// Streams: in-order executors (implements rt::Stream) and the aclrtStream handle registry.
//
// Execution model (why: an enqueue followed by aclrtSynchronizeStream must not pay two
// cross-core wake-ups):
//  - Tasks get consecutive sequence numbers and run one at a time, in order.
//  - A synchronizer with an infinite deadline claims and runs, on its own thread, the tasks
//    that have not started yet; only one executor runs at a time.
//  - The worker thread (started at the first enqueue) runs tasks only while no such
//    synchronizer is present, and leaves a task alone for kWorkerGraceNs after it first sees it
//    so the enqueuing thread can claim it when it synchronizes right away. While it has been busy
//    in the last kWorkerDozeNs it polls instead of being notified by each enqueue (no wake-up
//    system call or extra runnable thread per call); after that it sleeps until an enqueue
//    notifies it. The poll period starts at kWorkerPollNs and doubles, up to kWorkerPollMaxNs,
//    each time a poll finds that synchronizers ran tasks meanwhile and left none; it drops back
//    to kWorkerPollNs when the worker runs a task itself, wakes from sleep, or is urged. So a
//    task nobody synchronizes starts within ~1 ms on a stream whose tasks the worker runs, and
//    within ~16 ms as the first one after a run of synchronized calls. (Why: with more ranks
//    than cores every worker's wake-up takes a CPU from some rank; at 8 ranks on 2 CPUs, 8 B
//    isolated across rig hosts took 178-222 us without the 1 ms polls and 246-275 us with them.)
//  - Waits that do not run tasks themselves urge the stream they wait for (Urge): event
//    synchronization and queries, a stream waiting for another stream's event.
//  - A synchronizer with a finite deadline never runs tasks itself (a task may block past the
//    deadline); it urges the worker and waits.
//  - Inline attempts (EnqueueAttempt): when nothing runs, the enqueuing thread first attempts the
//    queued tasks that came the same way, front first, then its own (each marked executing, so
//    nothing else starts meanwhile); a task that would have to wait returns kAgain and goes back
//    to the front of the queue, keeping its sequence number, and the rest are queued. So calls
//    issued back to back keep running on the issuing thread while their peers keep up. With
//    nothing queued, BeginAttempt/EndAttempt do the same without a task object (RequeueAttempt
//    hands one over only when the call gave up).
//  - The first failing task's Status is kept until a synchronize reports it; later tasks run.
//  - Settles (DeferSettle): a task that completed before its peers confirmed it (the non-root of
//    a small Reduce, pipelined completion) leaves a settle; every synchronize runs the pending
//    settles after the tasks it waits for, on its own thread, and reports their first error
//    like a task's. A timed synchronize whose deadline passes during a settle keeps it.
//  - Destroy unregisters the handle, makes pending event waits give up, drains the queue and
//    joins the worker. Tasks bound their own waits, so destroy is bounded too.
#pragma once

#include <sys/mman.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "common/quick_lock.h"
#include "common/touch_pages.h"
#include "runtime/runtime.h"

namespace hostccl::rt {

class CaptureModel;  // runtime/capture.cc
// Appends a replay step to a capture (runtime/capture.cc).
void CaptureAppend(CaptureModel& model, Stream::Replay replay);

class StreamImpl final : public Stream {
 public:
  static constexpr uint64_t kWorkerGraceNs = 100 * 1000;
  // While recently active the worker polls instead of being notified on each enqueue: with
  // more ranks than cores an extra runnable thread per call costs more than the poll.
  static constexpr uint64_t kWorkerPollNs = 1000 * 1000;
  static constexpr uint64_t kWorkerPollMaxNs = 16 * 1000 * 1000;
  static constexpr uint64_t kWorkerDozeNs = 50 * 1000 * 1000;
  // Task storage mapped at creation for a stream without a depth bound (416 KiB: 416-byte entries).
  static constexpr size_t kSlabBlocks = 1024;

  // depth: tasks held before an enqueue waits (Backpressure); -1 = HOSTCCL_STREAM_DEPTH, 0 = none.
  // worker_grace_ns: how long the worker leaves a task it sees (tests that must not race the
  // worker give it more).
  StreamImpl(int device, uint32_t priority, uint32_t flags, int64_t depth = -1,
             uint64_t worker_grace_ns = kWorkerGraceNs);
  ~StreamImpl() override;
  StreamImpl(const StreamImpl&) = delete;
  StreamImpl& operator=(const StreamImpl&) = delete;

  Status Enqueue(Task task) override;
  Status EnqueueHostWait(Task task) override { return Push(std::move(task), true); }
  Status EnqueueAttempt(Task task, bool host_wait) override;
  uint64_t BeginAttempt(ThreadState& ts) override;
  void EndAttempt(uint64_t seq, Status st, ThreadState& ts) override;
  void RequeueAttempt(uint64_t seq, Task task, ThreadState& ts, bool host_wait) override;
  Status Synchronize(Deadline deadline) override;
  int device() const override { return device_; }
  // While a capture is set (aclmdlRICaptureBegin .. End), Enqueue records its task into it
  // instead of queueing it, and Capture records `replay`.
  bool Capture(const Replay& replay) override;
  bool capturing() const override { return capturing_.load(std::memory_order_acquire); }
  std::shared_ptr<CaptureModel> capture() { return Locked(capture_); }
  void set_capture(std::shared_ptr<CaptureModel> model) {
    std::lock_guard lk(mu_);
    capturing_.store(model != nullptr, std::memory_order_release);
    capture_ = std::move(model);
  }

  void DeferSettle(const void* key, Settle settle) override;
  // Settles waiting for a synchronize (tests, diagnostics).
  size_t pending_settles() { std::lock_guard lk(mu_); return settles_.size(); }
  // Someone waits for this stream's tasks without running them: poll at the shortest period
  // again and look at the queue now.
  void Urge();

  // Waits for every task enqueued so far. Returns false when the deadline passed first (the
  // sticky error is then kept); else true with the sticky error moved into *task_error.
  bool SyncAll(Deadline deadline, Status* task_error);
  // True once Destroy began: event waits on this stream give up.
  bool aborting() const { return aborting_.load(std::memory_order_acquire); }
  void BeginAbort() { aborting_.store(true, std::memory_order_release); }
  // Number of tasks enqueued / completed so far (tests, diagnostics).
  uint64_t enqueued() { return Locked(enqueued_); }
  uint64_t completed() { return Locked(completed_); }
  size_t queue_free_blocks() {  // task storage kept for reuse (tests)
    std::lock_guard lk(mu_);
    return queue_.free_blocks();
  }
  uint64_t id() const { return id_; }
  void set_failure_mode(uint64_t mode) { failure_mode_ = mode; }
  // Thread id of the worker (std::thread::id() before it started); for tests.
  std::thread::id worker_id();
  // The dozing worker's current poll period and how often Urge ran (tests, diagnostics).
  uint64_t poll_period_ns() { return Locked(poll_ns_); }
  uint64_t urge_count() { return Locked(urges_); }
  // Inline attempts run (EnqueueAttempt on an idle stream), and how many of them were queued.
  uint64_t attempt_count() { return Locked(attempts_); }
  uint64_t attempts_queued() { return Locked(attempts_queued_); }
  // How often an enqueue found depth() tasks queued and ran the front ones, and the most tasks
  // the queue held (tests, diagnostics). depth(): HOSTCCL_STREAM_DEPTH at creation, 0 = no bound.
  uint64_t backpressures() { return Locked(backpressures_); }
  size_t max_queued() { return Locked(max_queued_); }
  size_t depth() const { return depth_; }

 private:
  struct Entry {
    uint64_t seq = 0;
    uint64_t seen_ns = 0;  // when the worker first saw it in the queue (0: not yet)
    Task fn;
    bool attempt = false;  // came through EnqueueAttempt: an enqueuing thread may attempt it
    bool follows = false;  // enqueued with no synchronize since the stream's previous task (Follows)
    bool host_wait = false;  // waits for something outside the stream (EnqueueHostWait)
  };
  // The tasks not started, oldest first: a ring of pointers to entries. An entry's storage comes
  // from the stream's own slab (Reserve: one mapping of blocks, faulted in when the stream is
  // created), last freed first reused: the block a task just left is still in cache when the next
  // call takes it. A queue deeper than the slab takes the rest from the heap and gives it back as
  // it drains. So a task costs no allocation, and the first burst of calls queued back to back no
  // page faults (docs/performance.md, "Task storage faulted in at stream creation"); a queue that
  // stays short touches the same few blocks whatever its history (a ring of the entries themselves
  // would walk its whole capacity: 8 B calls back to back at 2 ranks took 0.35 us longer that way).
  class Queue {
   public:
    Queue() = default;
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;
    ~Queue() {
      while (n_ > 0) pop_front();
      if (slab_ != nullptr) munmap(slab_, slab_bytes_);
    }
    // Maps and faults in `blocks` entries' storage (once, before the first push); without the
    // mapping every block comes from the heap. Every page is also written once here (TouchPages):
    // on a VM that maps each process's pages lazily, a queue first as deep as a loop of 800 calls
    // back to back paid ~0.7 ms per rank inside those calls, ~3 ms of the loop at 8 ranks on 2
    // cores (docs/performance.md "Task storage written at stream creation").
    void Reserve(size_t blocks) {
      if (blocks == 0 || slab_ != nullptr) return;
      const size_t bytes = blocks * sizeof(Entry);
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (m == MAP_FAILED) return;
      TouchPages(m, bytes, /*write=*/true);
      slab_ = static_cast<char*>(m);
      slab_bytes_ = bytes;
      free_.reserve(blocks);
      for (size_t i = blocks; i-- > 0;) free_.push_back(slab_ + i * sizeof(Entry));  // lowest address first out
    }
    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    size_t free_blocks() const { return free_.size(); }
    Entry& front() { return *ring_[head_]; }
    Entry& at(size_t i) { return *ring_[(head_ + i) & (ring_.size() - 1)]; }  // i-th from the front
    // Builds the entry in its block (Entry's members, in order).
    template <typename... A>
    void emplace_back(A&&... a) {
      if (n_ == ring_.size()) Grow();
      ring_[(head_ + n_) & (ring_.size() - 1)] = ::new (Block()) Entry{std::forward<A>(a)...};
      ++n_;
    }
    void push_back(Entry&& e) { emplace_back(std::move(e)); }
    void push_front(Entry&& e) {  // a task that goes back to the head of the queue
      if (n_ == ring_.size()) Grow();
      head_ = (head_ + ring_.size() - 1) & (ring_.size() - 1);
      ring_[head_] = ::new (Block()) Entry(std::move(e));
      ++n_;
    }
    void pop_front() { Release(take_front()); }
    // Removes the front entry from the queue but leaves it in its block, to run in place; the
    // caller gives it back with Release.
    Entry* take_front() {
      Entry* e = ring_[head_];
      head_ = (head_ + 1) & (ring_.size() - 1);
      --n_;
      return e;
    }
    void Release(Entry* e) {
      e->~Entry();
      if (InSlab(e)) {
        free_.push_back(e);
      } else {
        ::operator delete(e);
      }
    }

   private:
    static_assert(sizeof(Entry) % alignof(Entry) == 0);
    bool InSlab(const void* p) const {
      return reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(slab_) < slab_bytes_;
    }
    void* Block() {  // storage from the slab's free blocks (last freed first), else the heap
      if (free_.empty()) return ::operator new(sizeof(Entry));
      void* mem = free_.back();
      free_.pop_back();
      return mem;
    }
    void Grow() {
      std::vector<Entry*> bigger(ring_.empty() ? 16 : ring_.size() * 2);
      for (size_t i = 0; i < n_; ++i) bigger[i] = &at(i);
      ring_.swap(bigger);
      head_ = 0;
    }
    std::vector<Entry*> ring_;  // size 0 or a power of two
    size_t head_ = 0;
    size_t n_ = 0;
    std::vector<void*> free_;  // the slab's blocks not in use
    char* slab_ = nullptr;
    size_t slab_bytes_ = 0;
  };
  template <typename T>
  T Locked(const T& field) {
    std::lock_guard lk(mu_);
    return field;
  }
  // Starts the worker thread if it is not running yet (mu_ held).
  void StartWorker();
  // Records task `seq`'s result (mu_ held): the first error is kept, later tasks still run.
  void Finished(uint64_t seq, Status&& st);
  void FinishedFailed(uint64_t seq, Status st);  // Finished's failure: logged, kept as the stream's first error
  // Runs e.fn as an attempt with mu_ released (marked executing meanwhile); true when it
  // completed (recorded), false when it went back to the front of the queue.
  bool RunAttempt(std::unique_lock<QuickLock>& lk, Entry&& e);
  // Whether an enqueuing thread may attempt now (mu_ held): nothing runs, captures, claims or
  // settles, and the stream is not stopping. (The caller also checks that it is not inside an
  // attempt itself: attempts never nest.)
  bool AttemptFree() const { return !capture_ && !executing_ && claimers_ == 0 && !settling_ && !stop_; }
  // An attempt starts (mu_ held; then released by the caller while it runs) and ends (mu_ held):
  // its result recorded when it completed, else (`requeue`: its task) back to the front of the
  // queue with its number.
  void StartAttempt(bool follows, ThreadState& ts);  // ts: this thread's
  void EndAttemptLocked(uint64_t seq, Status&& st, Task* requeue, bool host_wait, ThreadState& ts);
  // After attempts (mu_ held, released here): the worker starts or wakes for what is queued.
  void AfterAttempts(std::unique_lock<QuickLock>& lk);
  // Pops the front task and runs it with mu_ released. Requires !executing_ and a non-empty queue.
  void RunFront(std::unique_lock<QuickLock>& lk);
  Status Push(Task&& task, bool host_wait);  // the task is moved once, into its entry
  // After an enqueue (mu_ held): with depth_ tasks queued, runs front tasks on the calling thread
  // (waiting while another thread runs one) until depth_ / 2 are left, or a host wait is in front.
  void Backpressure(std::unique_lock<QuickLock>& lk);
  void WorkerLoop();
  // Runs the pending settles (mu_ released meanwhile; one settler at a time). False when the
  // deadline passed during one (it stays pending).
  bool RunSettles(std::unique_lock<QuickLock>& lk, Deadline deadline);

  const int device_;
  const uint64_t id_;
  const size_t depth_;
  const uint64_t worker_grace_ns_;
  std::atomic<bool> aborting_{false};
  std::atomic<bool> capturing_{false};
  uint64_t failure_mode_ = 0;

  // Held briefly, and by an inline attempt from BeginAttempt to its end (tasks run with it
  // released): a QuickLock, whose release is a plain store (common/quick_lock.h); the condition
  // variables then need the _any kind.
  QuickLock mu_;
  // The thread block of the inline attempt that holds mu_ (BeginAttempt to EndAttempt or
  // RequeueAttempt), else nullptr: its own DeferSettle must not take mu_ again.
  std::atomic<const ThreadState*> attempt_holder_{nullptr};
  std::condition_variable_any worker_cv_;  // wakes the worker: new task, synchronizer left, stop
  std::condition_variable_any done_cv_;    // wakes waiters: a task finished
  int done_waiters_ = 0;                   // threads in a done_cv_ wait (WaitDone, WaitDoneUntil)
  // Every wait on done_cv_ goes through these two and is counted, so that a task's end notifies
  // only when somebody waits (the _any kind's notify takes a mutex of its own even then).
  void WaitDone(std::unique_lock<QuickLock>& lk) {
    ++done_waiters_;
    done_cv_.wait(lk);
    --done_waiters_;
  }
  // The same until `until`; false when it passed first.
  bool WaitDoneUntil(std::unique_lock<QuickLock>& lk, std::chrono::steady_clock::time_point until) {
    ++done_waiters_;
    const bool woken = done_cv_.wait_until(lk, until) == std::cv_status::no_timeout;
    --done_waiters_;
    return woken;
  }
  void NotifyDone() {
    if (done_waiters_ > 0) done_cv_.notify_all();
  }
  Queue queue_;                        // tasks not started, in order
  uint64_t attempts_ = 0;              // inline attempts started / queued again (diagnostics)
  uint64_t attempts_queued_ = 0;
  uint64_t backpressures_ = 0;         // Backpressure runs (diagnostics)
  size_t max_queued_ = 0;              // the longest the queue was (diagnostics)
  uint64_t enqueued_ = 0;              // seq of the last enqueued task
  uint64_t completed_ = 0;             // seq of the last finished task
  bool executing_ = false;             // a task is running (worker or synchronizer)
  bool running_host_wait_ = false;     // ... and it came through EnqueueHostWait
  int claimers_ = 0;                   // infinite-deadline synchronizers present
  int timed_waiters_ = 0;              // finite-deadline waiters present (skip the grace)
  bool worker_dozing_ = false;         // worker polls every poll_ns_ (recently active)
  uint64_t poll_ns_ = kWorkerPollNs;   // the dozing worker's current poll period
  uint64_t urges_ = 0;                 // Urge calls (diagnostics)
  uint64_t claimed_runs_ = 0;          // tasks run by synchronizers
  bool worker_asleep_ = false;         // worker waits for a notification (long idle)
  bool stop_ = false;
  Status error_;                       // first task error since the last report
  std::shared_ptr<CaptureModel> capture_;  // set while capturing (runtime/capture.h)

  std::vector<std::pair<const void*, Settle>> settles_;  // DeferSettle, by key
  bool settling_ = false;              // a synchronizer runs settles
  // Nothing to wait for or report (every task done, nothing running, no settle or error kept):
  // a synchronize then returns without the lock. Stored under mu_ (UpdateQuiet) with release, so
  // a synchronize that reads it true also sees the tasks' effects.
  std::atomic<bool> quiet_{true};
  // A synchronize was called since the last enqueue (every synchronize sets it, every enqueue
  // clears it; relaxed: a hint). Follows() reads and clears it: whether the task being enqueued
  // comes back to back after the previous one, i.e. the caller is not waiting between calls.
  std::atomic<bool> synced_{true};
  bool Follows() {
    if (synced_.load(std::memory_order_relaxed)) {
      synced_.store(false, std::memory_order_relaxed);
      return false;
    }
    return true;
  }
  void UpdateQuiet() {
    quiet_.store(completed_ == enqueued_ && !executing_ && settles_.empty() && !settling_ && error_.ok(),
                 std::memory_order_release);
  }
  std::thread worker_;
};

// aclrtCreateStream[WithConfig]: a new stream on the current (or implicit 0) device.
int CreateStream(void** handle, uint32_t priority, uint32_t flags);
int DestroyStream(void* handle);
// timeout_ms < 0 waits forever (the caller runs pending tasks); otherwise returns
// kAclRtStreamSyncTimeout when the stream is not done in time. A task error is returned as
// kAclRtTaskTimeout (Code::kTimeout) or kAclRtInternalError (other codes), and its message
// becomes the calling thread's recent error.
int SynchronizeStream(void* handle, int32_t timeout_ms, const char* func);
// Synchronizes every stream of the current device (default stream included).
int SynchronizeDevice();
// A stream with work enqueued but not completed, and how much had been enqueued: aclrtFree keeps
// memory mapped until every stream busy at the free completed that far (memory.cc).
struct StreamMark {
  std::weak_ptr<StreamImpl> stream;
  uint64_t enqueued = 0;
};
// Every stream (any device, default streams included) with work not completed yet.
std::vector<StreamMark> BusyStreams();
// Whether each marked stream completed its marked work (or no longer exists).
bool StreamsPassed(const std::vector<StreamMark>& marks);
int SetStreamFailureMode(void* handle, uint64_t mode);
// Resolves an aclrtStream for an API call: null -> the current device's default stream
// (created on first use); an unknown handle -> kAclInvalidParam with a message naming func.
int ResolveStream(void* handle, const char* func, std::shared_ptr<StreamImpl>* out);
// Drains and drops the default stream of a device (last aclrtResetDevice).
void ReleaseDefaultStream(int device);
// Bound on waits inside tasks (stream waits on events) and on aclrtSynchronizeEvent:
// HOSTCCL_EXEC_TIMEOUT_MS, else HCCL_EXEC_TIMEOUT seconds; -1 = no limit.
int64_t TaskWaitBoundMs();
// Maps a failed task's Status to the AscendCL code returned by a synchronize.
int TaskErrorToAcl(const Status& st);

}  // namespace hostccl::rt
