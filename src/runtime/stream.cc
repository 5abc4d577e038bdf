// Stream executor and the aclrtStream registry (see stream.h for the execution model).
#include "runtime/stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <vector>

#include "common/env.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "runtime/acl_codes.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/memory.h"

namespace hostccl::rt {

// Bumped (under the registry's mu) whenever `streams` changes: runtime.h's LookupStream and the
// caches below keep an answer while it is unchanged.
std::atomic<uint64_t> g_stream_generation{1};

namespace {

std::atomic<uint64_t> g_next_stream_id{1};

struct Registry {
  std::mutex mu;
  std::map<void*, std::shared_ptr<StreamImpl>> streams;      // created streams by handle
  std::map<int, std::shared_ptr<StreamImpl>> default_streams;  // device -> default stream
};

Registry& Reg() {
  static Registry* r = new Registry();  // leaked: streams may be used from atexit handlers
  return *r;
}

std::chrono::steady_clock::time_point ToSteady(Deadline d) {
  int64_t left = static_cast<int64_t>(d.at_ns()) - static_cast<int64_t>(NowNs());
  return std::chrono::steady_clock::now() + std::chrono::nanoseconds(left > 0 ? left : 0);
}

}  // namespace

bool TaskHasSuccessor() { return ThisThread().has_successor; }
bool Attempting() { return ThisThread().attempting; }

StreamImpl::StreamImpl(int device, uint32_t priority, uint32_t flags, int64_t depth, uint64_t worker_grace_ns)
    : device_(device),
      id_(g_next_stream_id.fetch_add(1)),
      depth_(static_cast<size_t>(std::max<int64_t>(0, depth >= 0 ? depth : EnvInt(Knob::kStreamDepth, 1024)))),
      worker_grace_ns_(worker_grace_ns) {
  // The task storage a full queue needs (depth, or kSlabBlocks without a bound; a deeper queue
  // takes the rest from the heap), faulted in now rather than during the first burst of calls.
  queue_.Reserve(depth_ == 0 ? kSlabBlocks : std::min(depth_, kSlabBlocks));
  HLOG_DEBUG(kRuntime, "stream %llu created on device %d (priority %u, flags %u)",
             static_cast<unsigned long long>(id_), device, priority, flags);
}

StreamImpl::~StreamImpl() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    if (enqueued_ > 0)
      HLOG_INFO(kRuntime, "stream %llu (device %d) destroyed: %llu tasks, %llu inline attempts (%llu of them queued again), "
                "%llu full-queue runs by the enqueuer, at most %zu queued",
                static_cast<unsigned long long>(id_), device_, static_cast<unsigned long long>(enqueued_),
                static_cast<unsigned long long>(attempts_), static_cast<unsigned long long>(attempts_queued_),
                static_cast<unsigned long long>(backpressures_), max_queued_);
  }
  worker_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::thread::id StreamImpl::worker_id() {
  std::lock_guard lk(mu_);
  return worker_.get_id();
}

Status StreamImpl::Enqueue(Task task) { return Push(std::move(task), false); }

Status StreamImpl::Push(Task&& task, bool host_wait) {
  if (!task) return MakeStatus(Code::kPara, "stream %llu: empty task", static_cast<unsigned long long>(id_));
  bool wake = false;
  std::shared_ptr<CaptureModel> cap;
  {
    std::unique_lock lk(mu_);
    if (stop_) return MakeStatus(Code::kPara, "stream %llu is destroyed", static_cast<unsigned long long>(id_));
    if (capture_) {
      cap = capture_;
    } else {
      queue_.emplace_back(++enqueued_, uint64_t{0}, std::move(task), false, Follows(), host_wait);
      quiet_.store(false, std::memory_order_relaxed);
      StartWorker();
      Backpressure(lk);
      wake = !queue_.empty() && claimers_ == 0 && !executing_ && worker_asleep_;
    }
  }
  if (cap) {  // capturing: record the task, run nothing (runtime/capture.h)
    CaptureAppend(*cap, [task = std::move(task), host_wait](Stream* s) {
      return host_wait ? s->EnqueueHostWait(task) : s->Enqueue(task);
    });
    return Status::Ok();
  }
  if (wake) worker_cv_.notify_one();
  return Status::Ok();
}

void StreamImpl::StartWorker() {
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
}

// Every call ends here (a task or an attempt): a success only records its number.
[[gnu::always_inline]] inline void StreamImpl::Finished(uint64_t seq, Status&& st) {
  if (!st.ok()) [[unlikely]]
    FinishedFailed(seq, std::move(st));
  completed_ = seq;
}

void StreamImpl::FinishedFailed(uint64_t seq, Status st) {
  HLOG_INFO(kRuntime, "stream %llu (device %d): task #%llu failed: %s", static_cast<unsigned long long>(id_), device_,
            static_cast<unsigned long long>(seq), st.ToString().c_str());
  if (error_.ok()) error_ = std::move(st);
}

void StreamImpl::StartAttempt(bool follows, ThreadState& ts) {
  executing_ = true;
  quiet_.store(false, std::memory_order_relaxed);
  ++attempts_;
  ts.attempting = true;
  ts.has_successor = follows;  // an attempt's stream holds nothing behind it: only the caller's pace says
}

// Inlined into the three ends of an attempt: the inline attempt's end runs once per small call.
[[gnu::always_inline]] inline void StreamImpl::EndAttemptLocked(uint64_t seq, Status&& st, Task* requeue,
                                                                 bool host_wait, ThreadState& ts) {
  executing_ = false;
  if (requeue == nullptr) {
    Finished(seq, std::move(st));
  } else {
    ++attempts_queued_;
    // Its place (later tasks have later numbers), and the same verdict on what follows it.
    queue_.push_front(Entry{seq, 0, std::move(*requeue), true, ts.has_successor, host_wait});
  }
  ts.attempting = false;
  ts.has_successor = false;
  UpdateQuiet();
  NotifyDone();
}

[[gnu::always_inline]] inline void StreamImpl::AfterAttempts(std::unique_lock<QuickLock>& lk) {
  if (!queue_.empty()) StartWorker();
  const bool wake = !queue_.empty() && claimers_ == 0 && !executing_ && worker_asleep_;
  lk.unlock();
  if (wake) worker_cv_.notify_one();
}

bool StreamImpl::RunAttempt(std::unique_lock<QuickLock>& lk, Entry&& e) {
  ThreadState& ts = ThisThread();
  StartAttempt(e.follows, ts);
  lk.unlock();
  Status st = e.fn();
  const bool done = st.code() != Code::kAgain;
  if (done) e.fn = nullptr;  // drop the task's captures before taking the lock again
  lk.lock();
  EndAttemptLocked(e.seq, std::move(st), done ? nullptr : &e.fn, e.host_wait, ts);
  return done;
}

Status StreamImpl::EnqueueAttempt(Task task, bool host_wait) {
  if (!task) return MakeStatus(Code::kPara, "stream %llu: empty task", static_cast<unsigned long long>(id_));
  std::unique_lock lk(mu_);
  if (stop_) return MakeStatus(Code::kPara, "stream %llu is destroyed", static_cast<unsigned long long>(id_));
  // Nobody runs tasks now: attempt the queued attempts first, then this one; stop at the first
  // that has to wait.
  bool blocked = !AttemptFree() || ThisThread().attempting;
  while (!blocked && !queue_.empty()) {
    if (!queue_.front().attempt) {
      blocked = true;
      break;
    }
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    blocked = !RunAttempt(lk, std::move(e)) || !AttemptFree();
  }
  if (capture_) {
    lk.unlock();
    return Enqueue(std::move(task));  // records it into the capture
  }
  Entry mine{++enqueued_, 0, std::move(task), true, Follows(), host_wait};
  if (blocked) {
    queue_.push_back(std::move(mine));
    quiet_.store(false, std::memory_order_relaxed);
    Backpressure(lk);  // stops at a host wait in front (Push)
  } else {
    (void)RunAttempt(lk, std::move(mine));
  }
  AfterAttempts(lk);
  return Status::Ok();
}

// The attempt keeps mu_ from here to its end (EndAttempt, RequeueAttempt): one locked
// instruction per call instead of two (each waits for the thread's earlier stores, ~5 ns here).
// Nobody else needs the stream meanwhile: its queue is empty, its worker idle, and an attempt
// only spins briefly before it gives up; a synchronizer or enqueuer on another thread waits.
uint64_t StreamImpl::BeginAttempt(ThreadState& ts) {
  if (ts.attempting) return 0;
  mu_.lock();
  if (!AttemptFree() || !queue_.empty()) {
    mu_.unlock();
    return 0;
  }
  StartAttempt(Follows(), ts);
  attempt_holder_.store(&ts, std::memory_order_relaxed);
  return ++enqueued_;
}

void StreamImpl::EndAttempt(uint64_t seq, Status st, ThreadState& ts) {
  if (st.code() == Code::kAgain) [[unlikely]]
    st = Status(Code::kInternal, "an inline attempt gave up without handing its task over");
  std::unique_lock lk(mu_, std::adopt_lock);  // BeginAttempt's
  attempt_holder_.store(nullptr, std::memory_order_relaxed);
  EndAttemptLocked(seq, std::move(st), nullptr, false, ts);
  AfterAttempts(lk);
}

void StreamImpl::RequeueAttempt(uint64_t seq, Task task, ThreadState& ts, bool host_wait) {
  std::unique_lock lk(mu_, std::adopt_lock);  // BeginAttempt's
  attempt_holder_.store(nullptr, std::memory_order_relaxed);
  Status ok;
  EndAttemptLocked(seq, std::move(ok), &task, host_wait, ts);
  AfterAttempts(lk);
}

bool StreamImpl::Capture(const Replay& replay) {
  std::shared_ptr<CaptureModel> cap = capture();
  if (!cap) return false;
  CaptureAppend(*cap, replay);
  return true;
}

void StreamImpl::Backpressure(std::unique_lock<QuickLock>& lk) {
  // Not from inside a task or an attempt (a task that enqueues must not wait for the stream that
  // runs it), nor while capturing or stopping.
  max_queued_ = std::max(max_queued_, queue_.size());
  const ThreadState& ts = ThisThread();
  if (depth_ == 0 || queue_.size() < depth_ || ts.running || ts.attempting || capture_ || stop_) return;
  ++backpressures_;
  ++claimers_;  // the worker stands back, as for a synchronizer
  while (queue_.size() > depth_ / 2) {
    if (running_host_wait_) break;  // the running task may wait for what this thread does next
    if (!executing_) {
      if (queue_.front().host_wait) break;  // so may this one
      ++claimed_runs_;
      RunFront(lk);
    } else {
      WaitDone(lk);  // the running task ends within its own bound
    }
  }
  --claimers_;
}

void StreamImpl::RunFront(std::unique_lock<QuickLock>& lk) {
  // The task runs in its block (off the queue, not moved) and is destroyed after it ran.
  Entry* e = queue_.take_front();
  executing_ = true;
  running_host_wait_ = e->host_wait;
  quiet_.store(false, std::memory_order_relaxed);
  ThreadState& ts = ThisThread();
  ts.has_successor = !queue_.empty() || e->follows;
  lk.unlock();
  const bool outer = ts.running;
  ts.running = true;
  Status st = e->fn();
  ts.running = outer;
  ts.has_successor = false;
  e->fn = nullptr;  // drop the task's captures before taking the lock again
  lk.lock();
  const uint64_t seq = e->seq;
  queue_.Release(e);
  Finished(seq, std::move(st));
  executing_ = false;
  running_host_wait_ = false;
  UpdateQuiet();
  NotifyDone();
}

void StreamImpl::WorkerLoop() {
  std::unique_lock lk(mu_);
  uint64_t last_active = NowNs();
  while (true) {
    if (stop_ && queue_.empty() && !executing_) break;
    if (queue_.empty() || executing_ || claimers_ > 0) {
      if (!queue_.empty() || executing_) last_active = NowNs();
      if (NowNs() - last_active < kWorkerDozeNs) {
        worker_dozing_ = true;
        const uint64_t claimed_before = claimed_runs_;
        bool timed_out = worker_cv_.wait_for(lk, std::chrono::nanoseconds(poll_ns_)) == std::cv_status::timeout;
        worker_dozing_ = false;
        // Synchronizers ran what came meanwhile: look less often. (Nothing came at all: keep the
        // period; after kWorkerDozeNs the worker sleeps anyway.)
        if (timed_out && claimed_runs_ != claimed_before) poll_ns_ = std::min(poll_ns_ * 2, kWorkerPollMaxNs);
      } else {
        worker_asleep_ = true;
        worker_cv_.wait(lk);
        worker_asleep_ = false;
        poll_ns_ = kWorkerPollNs;
      }
      continue;
    }
    last_active = NowNs();
    // Leave a fresh task to a thread that synchronizes right after enqueueing.
    // Enqueue reads no clock: a task's age counts from the worker's first look at it (the
    // worker looks at least every kWorkerPollNs while active, at once when notified).
    const uint64_t now = NowNs();
    for (size_t i = queue_.size(); i > 0 && queue_.at(i - 1).seen_ns == 0; --i) queue_.at(i - 1).seen_ns = now;
    uint64_t age = now - queue_.front().seen_ns;
    if (age < worker_grace_ns_ && timed_waiters_ == 0 && !stop_) {
      worker_cv_.wait_for(lk, std::chrono::nanoseconds(worker_grace_ns_ - age));
      continue;
    }
    poll_ns_ = kWorkerPollNs;  // tasks here are left to the worker: keep an eye on the queue
    RunFront(lk);
  }
}

void StreamImpl::Urge() {
  bool wake;
  {
    std::lock_guard lk(mu_);
    poll_ns_ = kWorkerPollNs;
    ++urges_;
    wake = !queue_.empty() && claimers_ == 0 && !executing_ && (worker_dozing_ || worker_asleep_);
  }
  if (wake) worker_cv_.notify_one();
}

void StreamImpl::DeferSettle(const void* key, Settle settle) {
  // From inside an attempt of this thread (Communicator::Submit, before EndAttempt), which holds
  // mu_ already; only this thread stores its own block there, so the relaxed look is exact.
  std::unique_lock lk(mu_, std::defer_lock);
  if (attempt_holder_.load(std::memory_order_relaxed) != &ThisThread()) lk.lock();
  quiet_.store(false, std::memory_order_relaxed);
  for (auto& [k, fn] : settles_)
    if (k == key) {
      fn = std::move(settle);
      return;
    }
  settles_.emplace_back(key, std::move(settle));
}

bool StreamImpl::RunSettles(std::unique_lock<QuickLock>& lk, Deadline deadline) {
  while (settling_) WaitDone(lk);  // another synchronizer settles: wait for its verdicts
  if (settles_.empty()) return true;
  settling_ = true;
  std::vector<std::pair<const void*, Settle>> mine;
  mine.swap(settles_);
  lk.unlock();
  bool in_time = true;
  std::vector<Status> errors;
  size_t i = 0;
  for (; i < mine.size(); ++i) {
    Status st = mine[i].second(deadline);
    if (!st.ok() && st.code() == Code::kTimeout && !deadline.infinite() && deadline.Expired()) {
      in_time = false;  // the synchronize's bound, not the operation's: keep it and the rest
      break;
    }
    if (!st.ok()) errors.push_back(std::move(st));
  }
  lk.lock();
  for (; i < mine.size(); ++i) {
    bool replaced = false;
    for (auto& [k, fn] : settles_) replaced = replaced || k == mine[i].first;
    if (!replaced) settles_.push_back(std::move(mine[i]));
  }
  if (settles_.empty()) {  // keep the storage: the next call that runs ahead defers without allocating
    mine.clear();
    settles_.swap(mine);
  }
  for (auto& st : errors) {
    HLOG_INFO(kRuntime, "stream %llu (device %d): a settled task failed: %s", static_cast<unsigned long long>(id_),
              device_, st.ToString().c_str());
    if (error_.ok()) error_ = std::move(st);
  }
  settling_ = false;
  UpdateQuiet();
  NotifyDone();
  return in_time;
}

bool StreamImpl::SyncAll(Deadline deadline, Status* task_error) {
  synced_.store(true, std::memory_order_relaxed);
  if (quiet_.load(std::memory_order_acquire)) {  // every call ran inline, nothing kept
    *task_error = Status();
    return true;
  }
  std::unique_lock lk(mu_);
  const uint64_t target = enqueued_;
  if (deadline.infinite()) {
    ++claimers_;
    while (completed_ < target) {
      if (!executing_ && !queue_.empty()) {
        ++claimed_runs_;
        RunFront(lk);  // front seq == completed_ + 1 <= target
        continue;
      }
      WaitDone(lk);
    }
    --claimers_;
    if (claimers_ == 0 && !queue_.empty()) worker_cv_.notify_one();
    (void)RunSettles(lk, deadline);
  } else {
    ++timed_waiters_;
    worker_cv_.notify_one();
    auto until = ToSteady(deadline);
    while (completed_ < target)
      if (!WaitDoneUntil(lk, until) && completed_ < target) break;
    --timed_waiters_;
    if (completed_ < target) return false;
    if (!RunSettles(lk, deadline)) return false;
  }
  *task_error = std::move(error_);
  error_ = Status();
  UpdateQuiet();
  return true;
}

Status StreamImpl::Synchronize(Deadline deadline) {
  Status err;
  if (!SyncAll(deadline, &err))
    return MakeStatus(Code::kTimeout, "stream %llu (device %d): synchronize timed out with %llu task(s) pending",
                      static_cast<unsigned long long>(id_), device_,
                      static_cast<unsigned long long>(enqueued() - completed()));
  return err;
}

Stream* LookupStreamSlow(void* handle, ThreadState& ts) {
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  auto it = r.streams.find(handle);
  Stream* found = it == r.streams.end() ? nullptr : it->second.get();
  if (found != nullptr) {
    ts.stream_handle = handle;
    ts.stream = found;
    ts.stream_generation = g_stream_generation.load(std::memory_order_relaxed);
  }
  return found;
}

int64_t TaskWaitBoundMs() {
  if (EnvRaw(Knob::kExecTimeoutMs)) {
    int64_t v = EnvInt(Knob::kExecTimeoutMs, -1);
    return v <= 0 ? -1 : v;
  }
  int64_t s = EnvInt(Knob::kHcclExecTimeout, 1836);
  return s <= 0 ? -1 : s * 1000;
}

int TaskErrorToAcl(const Status& st) {
  if (st.ok()) return kAclSuccess;
  return st.code() == Code::kTimeout ? kAclRtTaskTimeout : kAclRtInternalError;
}

int CreateStream(void** handle, uint32_t priority, uint32_t flags) {
  if (handle == nullptr) return Fail(kAclInvalidParam, "aclrtCreateStream: stream is null");
  int device = 0;
  if (int rc = RequireDevice("aclrtCreateStream", &device); rc != kAclSuccess) return rc;
  auto s = std::make_shared<StreamImpl>(device, priority, flags);
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  r.streams.emplace(s.get(), s);
  g_stream_generation.fetch_add(1, std::memory_order_release);
  *handle = s.get();
  return kAclSuccess;
}

namespace {
// This thread's last synchronized stream (SynchronizeStream): a strong reference, so the
// synchronize uses the stream without counting a reference while another thread may destroy its
// handle. The destroying thread drops its own at once (DestroyStream), any other thread at its
// next synchronize after a registry change.
struct SyncCached {
  void* handle = nullptr;
  uint64_t generation = 0;
  std::shared_ptr<StreamImpl> stream;
};
thread_local ExitMarked<SyncCached> t_sync_cached;
}  // namespace

int DestroyStream(void* handle) {
  std::shared_ptr<StreamImpl> s;
  {
    auto& r = Reg();
    std::lock_guard lk(r.mu);
    auto it = r.streams.find(handle);
    if (handle == nullptr || it == r.streams.end())
      return Fail(kAclInvalidParam, "aclrtDestroyStream: %p is not a live stream", handle);
    s = std::move(it->second);
    r.streams.erase(it);
    g_stream_generation.fetch_add(1, std::memory_order_release);
  }
  if (t_sync_cached.handle == handle) t_sync_cached = SyncCached();  // not kept alive by this thread
  s->BeginAbort();
  Status err;
  (void)s->SyncAll(Deadline::Infinite(), &err);
  if (!err.ok())
    HLOG_WARN(kRuntime, "aclrtDestroyStream: stream %llu had an unreported task error: %s",
              static_cast<unsigned long long>(s->id()), err.ToString().c_str());
  return kAclSuccess;  // the worker is joined when the last reference drops
}

int ResolveStream(void* handle, const char* func, std::shared_ptr<StreamImpl>* out) {
  auto& r = Reg();
  if (handle == nullptr) {
    int device = 0;
    if (int rc = RequireDevice(func, &device); rc != kAclSuccess) return rc;
    std::lock_guard lk(r.mu);
    auto& slot = r.default_streams[device];
    if (!slot) slot = std::make_shared<StreamImpl>(device, 0, 0);
    *out = slot;
    return kAclSuccess;
  }
  // Every synchronize resolves its stream: remember this thread's last answer until a stream is
  // created or destroyed (no registry lock or tree walk; the weak reference keeps nothing alive).
  struct Cached {
    void* handle = nullptr;
    uint64_t generation = 0;
    std::weak_ptr<StreamImpl> stream;
  };
  thread_local ExitMarked<Cached> cached;
  if (handle == cached.handle && cached.generation == g_stream_generation.load(std::memory_order_acquire)) {
    if (auto s = cached.stream.lock()) {
      *out = std::move(s);
      return kAclSuccess;
    }
  }
  std::lock_guard lk(r.mu);
  auto it = r.streams.find(handle);
  if (it == r.streams.end())
    return Fail(kAclInvalidParam, "%s: stream %p is not a live stream (never created or destroyed)", func, handle);
  *out = it->second;
  // Not while the thread exits: a weak reference kept in the emptied cache would keep the
  // stream's memory (ExitMarked, common/thread_state.h).
  if (ThisThread().exiting) return kAclSuccess;
  cached.handle = handle;
  cached.generation = g_stream_generation.load(std::memory_order_relaxed);
  cached.stream = it->second;
  return kAclSuccess;
}

int SynchronizeStream(void* handle, int32_t timeout_ms, const char* func) {
  std::shared_ptr<StreamImpl> held;  // the default stream, or a lookup that missed the cache
  StreamImpl* s = nullptr;
  SyncCached& c = t_sync_cached;
  if (handle != nullptr && handle == c.handle && c.generation == g_stream_generation.load(std::memory_order_acquire)) {
    s = c.stream.get();
  } else {
    // The generation from before the lookup: a change during it makes the next call look again.
    const uint64_t generation = g_stream_generation.load(std::memory_order_acquire);
    if (int rc = ResolveStream(handle, func, &held); rc != kAclSuccess) return rc;
    s = held.get();
    // Not while the thread exits: the emptied cache would keep the stream alive (ExitMarked,
    // common/thread_state.h).
    if (handle != nullptr && !ThisThread().exiting) {
      c.handle = handle;
      c.generation = generation;
      c.stream = held;
    }
  }
  if (timeout_ms < -1 || timeout_ms == 0)
    return Fail(kAclInvalidParam, "%s: timeout %d ms is invalid (-1 = forever, or > 0)", func, timeout_ms);
  Status err;
  const bool synced = s->SyncAll(Deadline::AfterMs(timeout_ms), &err);
  ReleaseFreedMemory();  // memory freed while this stream's work was queued
  if (!synced)
    return Fail(kAclRtStreamSyncTimeout, "%s: stream %llu (device %d) not done after %d ms (%llu task(s) pending)",
                func, static_cast<unsigned long long>(s->id()), s->device(), timeout_ms,
                static_cast<unsigned long long>(s->enqueued() - s->completed()));
  if (!err.ok()) {
    int code = TaskErrorToAcl(err);
    // A failure the communicator already logged is not printed again (one line per failure).
    if (!err.logged())
      HLOG_ERROR(kRuntime, "%s: stream %llu reports a failed task: %s", func,
                 static_cast<unsigned long long>(s->id()), ReportString(err).c_str());
    SetRecentError(ReportString(err));
    return code;
  }
  return kAclSuccess;
}

namespace {

// The live streams of `device` (every device: -1), its default stream last.
std::vector<std::shared_ptr<StreamImpl>> LiveStreams(int device) {
  std::vector<std::shared_ptr<StreamImpl>> all;
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  for (auto& [h, s] : r.streams)
    if (device < 0 || s->device() == device) all.push_back(s);
  for (auto& [d, s] : r.default_streams)
    if (s && (device < 0 || d == device)) all.push_back(s);
  return all;
}

}  // namespace

int SynchronizeDevice() {
  int device = 0;
  if (int rc = RequireDevice("aclrtSynchronizeDevice", &device); rc != kAclSuccess) return rc;
  const std::vector<std::shared_ptr<StreamImpl>> all = LiveStreams(device);
  int first = kAclSuccess;
  Status first_err;
  for (auto& s : all) {
    Status err;
    (void)s->SyncAll(Deadline::Infinite(), &err);
    if (!err.ok() && first == kAclSuccess) {
      first = TaskErrorToAcl(err);
      first_err = err;
    }
  }
  ReleaseFreedMemory();
  if (first != kAclSuccess) {
    if (!first_err.logged())
      HLOG_ERROR(kRuntime, "aclrtSynchronizeDevice(%d): a task failed: %s", device, ReportString(first_err).c_str());
    SetRecentError(ReportString(first_err));
  }
  return first;
}

std::vector<StreamMark> BusyStreams() {
  std::vector<StreamMark> marks;
  for (auto& s : LiveStreams(-1))
    if (const uint64_t e = s->enqueued(); s->completed() < e) marks.push_back({s, e});
  return marks;
}

bool StreamsPassed(const std::vector<StreamMark>& marks) {
  for (const StreamMark& m : marks)
    if (auto s = m.stream.lock(); s && s->completed() < m.enqueued) return false;
  return true;
}

int SetStreamFailureMode(void* handle, uint64_t mode) {
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(handle, "aclrtSetStreamFailureMode", &s); rc != kAclSuccess) return rc;
  if (mode > 1)
    return Fail(kAclInvalidParam, "aclrtSetStreamFailureMode: mode %llu is not ACL_CONTINUE_ON_FAILURE (0) or "
                "ACL_STOP_ON_FAILURE (1)", static_cast<unsigned long long>(mode));
  s->set_failure_mode(mode);
  return kAclSuccess;
}

void ReleaseDefaultStream(int device) {
  std::shared_ptr<StreamImpl> s;
  {
    auto& r = Reg();
    std::lock_guard lk(r.mu);
    auto it = r.default_streams.find(device);
    if (it == r.default_streams.end()) return;
    s = std::move(it->second);
    r.default_streams.erase(it);
  }
  if (!s) return;
  Status err;
  (void)s->SyncAll(Deadline::Infinite(), &err);
}

}  // namespace hostccl::rt
