// The host runtime (AscendCL subset) as seen from inside hostccl.
// Implemented in src/runtime/; the extern "C" acl* entry points live in src/api/acl_api.cc.
//
// Ownership and threads:
//  - A Stream is an in-order executor. Tasks are enqueued by any thread and run one at a time,
//    in order, either by the stream's worker thread or by a thread that synchronizes the stream
//    and finds tasks not yet started (it runs them itself: no cross-core wake-up on the
//    enqueue-then-synchronize path).
//  - The first failing task makes the stream's error sticky until it is reported by a
//    synchronize; later tasks still run (collectives on a failed communicator fail at once).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_state.h"

namespace hostccl::rt {

// A stream task: a callable returning Status. Unlike std::function it keeps callables of up to
// kInline bytes inside itself (a collective's task, its whole call record, fits: no heap
// allocation per call; communicator.cc asserts it); larger ones go to the heap. Copyable when the
// callable is (a stream capture replays its tasks); copying one that is not aborts.
class Task {
 public:
  static constexpr size_t kInline = 368;

  Task() = default;
  Task(std::nullptr_t) {}  // NOLINT: an empty task, as std::function
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, Task> && std::is_invocable_r_v<Status, D&>>>
  Task(F&& f) {  // NOLINT: implicit, as std::function
    if constexpr (Fits<D>()) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      ops_ = &kInlineOps<D>;
    } else {
      *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
      ops_ = &kHeapOps<D>;
    }
  }
  Task(const Task& o) : ops_(o.ops_) {
    if (ops_) ops_->copy(buf_, o.buf_);
  }
  Task(Task&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->move(buf_, o.buf_);
    o.ops_ = nullptr;
  }
  Task& operator=(const Task& o) {
    if (this != &o) *this = Task(o);
    return *this;
  }
  Task& operator=(Task&& o) noexcept {
    if (this == &o) return *this;
    Reset();
    ops_ = o.ops_;
    if (ops_) ops_->move(buf_, o.buf_);
    o.ops_ = nullptr;
    return *this;
  }
  Task& operator=(std::nullptr_t) {
    Reset();
    return *this;
  }
  ~Task() { Reset(); }
  explicit operator bool() const { return ops_ != nullptr; }
  Status operator()() { return ops_->call(buf_); }
  // Whether a callable of type F is kept inline (no heap allocation).
  template <typename F>
  static constexpr bool Fits() {
    return sizeof(F) <= kInline && alignof(F) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<F>;
  }

 private:
  struct Ops {
    Status (*call)(void*);
    void (*copy)(void* dst, const void* src);
    void (*move)(void* dst, void* src) noexcept;  // move-constructs into dst, destroys src
    void (*destroy)(void*);
  };
  template <typename D>
  static void CopyOrAbort(void* dst, const D& src) {
    if constexpr (std::is_copy_constructible_v<D>) ::new (dst) D(src);
    else std::abort();  // a move-only task was copied (only a stream capture copies tasks)
  }
  template <typename D>
  static constexpr Ops kInlineOps = {
      [](void* p) -> Status { return (*static_cast<D*>(p))(); },
      [](void* d, const void* s) { CopyOrAbort<D>(d, *static_cast<const D*>(s)); },
      [](void* d, void* s) noexcept {
        ::new (d) D(std::move(*static_cast<D*>(s)));
        static_cast<D*>(s)->~D();
      },
      [](void* p) { static_cast<D*>(p)->~D(); }};
  template <typename D>
  static constexpr Ops kHeapOps = {
      [](void* p) -> Status { return (**static_cast<D**>(p))(); },
      [](void* d, const void* s) {
        if constexpr (std::is_copy_constructible_v<D>) *static_cast<D**>(d) = new D(**static_cast<D* const*>(s));
        else std::abort();
      },
      [](void* d, void* s) noexcept { *static_cast<D**>(d) = *static_cast<D**>(s); },
      [](void* p) { delete *static_cast<D**>(p); }};
  void Reset() {
    if (ops_) ops_->destroy(buf_);
    ops_ = nullptr;
  }

  const Ops* ops_ = nullptr;
  alignas(std::max_align_t) unsigned char buf_[kInline];
};

class Stream {
 public:
  using Task = rt::Task;
  virtual ~Stream() = default;
  // Appends a task; it runs after every task enqueued before it on this stream.
  virtual Status Enqueue(Task task) = 0;
  // An inline attempt (small collectives: no hand-off to another thread, no queue): when the
  // stream is idle (nothing queued or running, not capturing), runs `task` at once on this thread
  // with Attempting() true. A task that cannot finish without waiting for other ranks does what it
  // can and returns kAgain: it is then queued at its place, to run again (Attempting() false)
  // like any task, and must resume rather than redo. Any other result is the task's. When the
  // stream is busy: Enqueue. With `host_wait` the queued task is one as EnqueueHostWait's (below):
  // a full queue neither runs it on an enqueuing thread nor holds this enqueue back.
  virtual Status EnqueueAttempt(Task task, bool host_wait) {
    return host_wait ? EnqueueHostWait(std::move(task)) : Enqueue(std::move(task));
  }
  // A task that may wait for work the enqueuing thread issues only later (an event wait; a call
  // of a communicator with another rank in this process, which one thread may drive): an enqueue
  // held back by a full queue (HOSTCCL_STREAM_DEPTH) never runs it nor waits for it.
  virtual Status EnqueueHostWait(Task task) { return Enqueue(std::move(task)); }
  // The same attempt without a task object (the call's record stays on the caller's stack):
  // BeginAttempt returns the number the call takes when the stream is idle and nothing is queued,
  // and marks it running with Attempting() true; 0 when it cannot start now (nothing changed: use
  // EnqueueAttempt). The caller runs the call on this thread and then either ends it with
  // EndAttempt(seq, result), or, when it returned kAgain, hands it over with RequeueAttempt(seq,
  // task, ts, host_wait): queued at its place, as EnqueueAttempt does. Between the two the stream
  // stays locked for other threads (their calls on it wait for the end); the attempt may call
  // DeferSettle on it, and nothing else of this stream.
  // `ts` is the calling thread's block (ThisThread()), which the caller already holds.
  virtual uint64_t BeginAttempt(ThreadState& ts) {
    (void)ts;
    return 0;
  }
  virtual void EndAttempt(uint64_t seq, Status st, ThreadState& ts) {
    (void)seq;
    (void)st;
    (void)ts;
  }
  virtual void RequeueAttempt(uint64_t seq, Task task, ThreadState& ts, bool host_wait) {
    (void)seq;
    (void)task;
    (void)ts;
    (void)host_wait;
  }
  // Waits until every task enqueued so far has finished (running pending ones on this thread
  // when the deadline is infinite). Returns the first task error since the last synchronize,
  // or kTimeout when the deadline passed first.
  virtual Status Synchronize(Deadline deadline) = 0;
  // Device this stream was created on.
  virtual int device() const = 0;
  // Stream capture (runtime/capture.h): while this stream captures, records `replay` (how to
  // issue the work again on a given stream) into the capture and returns true; returns false
  // when it does not capture, and the caller issues the work itself.
  using Replay = std::function<Status(Stream*)>;
  virtual bool Capture(const Replay& replay) {
    (void)replay;
    return false;
  }
  // Cheap hint that Capture would take work now (it may stop meanwhile: Capture decides).
  virtual bool capturing() const { return false; }

  // Work a task left unconfirmed (a collective that returned before its peers confirmed it, its
  // data out and safe): `settle` runs at the stream's next synchronize, after the tasks, bounded by
  // the synchronize's deadline, and its error is reported like a task's. One per key: a later one
  // replaces it (settling an owner's last operation settles its earlier ones). A settle keeps its
  // owner alive only while it runs: `fn(owner, deadline)` is called only if the owner still
  // exists, else it counts as settled. Plain data (no closure to allocate per call that runs ahead).
  struct Settle {
    std::weak_ptr<void> owner;
    Status (*fn)(void* owner, Deadline deadline) = nullptr;
    Status operator()(Deadline deadline) const {
      const std::shared_ptr<void> o = owner.lock();
      return o ? fn(o.get(), deadline) : Status::Ok();
    }
  };
  virtual void DeferSettle(const void* key, Settle settle) = 0;
};

// True while the running stream task was issued back to back: its stream already holds the next
// task, or no synchronize came between the previous task's enqueue and this one's (set by the
// executor around each task and inline attempt; false outside tasks). Pipelined completion uses
// it: a call that completes ahead of its peers gains only when its caller has more work to move
// on to, and otherwise (a call, then a synchronize) pays a settle at its synchronize.
bool TaskHasSuccessor();
// True while a task runs as an inline attempt (Stream::EnqueueAttempt or BeginAttempt) on the
// enqueuing thread.
bool Attempting();

// Resolves an aclrtStream handle; nullptr when it is not a live stream (never created,
// destroyed, or a garbage pointer). Handles are registered, never dereferenced blindly. `ts`: the
// calling thread's block, which keeps the last answer.
// Every call looks up its stream: this thread's last answer is kept in its block until a stream
// is created or destroyed (g_stream_generation changes), so a repeated lookup is a few compares.
extern std::atomic<uint64_t> g_stream_generation;  // stream.cc's registry, bumped under its lock
Stream* LookupStreamSlow(void* handle, ThreadState& ts);
inline Stream* LookupStream(void* handle, ThreadState& ts) {
  if (handle != nullptr && handle == ts.stream_handle &&
      ts.stream_generation == g_stream_generation.load(std::memory_order_acquire))
    return static_cast<Stream*>(ts.stream);
  return LookupStreamSlow(handle, ts);
}
inline Stream* LookupStream(void* handle) { return LookupStream(handle, ThisThread()); }

// Describes the aclrtMalloc allocation that contains an address.
struct Allocation {
  void* base = nullptr;       // start of the allocation (the pointer aclrtMalloc returned)
  size_t requested = 0;       // size the caller asked for
  size_t mapped = 0;          // bytes mapped (requested rounded up to pages)
  int memfd = -1;             // backing memfd (shareable with other processes of the node);
                              // -1 when none could be created (then the memory is not shareable)
  size_t memfd_offset = 0;    // offset of `base` inside the memfd (non-zero only for VMM maps)
  int device = -1;
  uint64_t serial = 0;        // process-unique id of this allocation (never reused): peers key
                              // their cached mappings by it, so a freed-and-reused address or fd
                              // number can never alias an old mapping
};
// The allocation containing p (base <= p < base + mapped), or nullopt for memory that did
// not come from aclrtMalloc (aclrtMallocHost, malloc, stack...).
std::optional<Allocation> FindAllocation(const void* p);

// Observers told the serial of every allocation that is freed (aclrtFree, VMM unmap), so that
// peers that mapped it can drop their mappings. Called on the freeing thread, after the memory is
// unregistered; must be quick and must not call back into the runtime. Returns an id for removal.
int AddFreeObserver(std::function<void(uint64_t serial)> fn);
void RemoveFreeObserver(int id);

// The calling thread's current device (aclrtSetDevice), or -1 when none is set.
int CurrentDevice();
// Number of visible devices (HOSTCCL_DEVICE_COUNT filtered by ASCEND_RT_VISIBLE_DEVICES).
uint32_t DeviceCount();

// Name reported by aclrtGetSocName: the active hardware profile (HOSTCCL_SOC) when set, else a
// host name ("HostCPU").
const char* SocName();

// Thread-local "recent error message" behind aclGetRecentErrMsg.
void SetRecentError(const std::string& msg);

}  // namespace hostccl::rt
