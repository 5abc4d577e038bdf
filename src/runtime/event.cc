// Events: numbered record occurrences completed by stream tasks (see event.h).
#include "runtime/event.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "common/clock.h"
#include "common/log.h"
#include "runtime/acl_codes.h"
#include "runtime/error.h"
#include "runtime/stream.h"

namespace hostccl::rt {
namespace {

struct Event {
  explicit Event(uint32_t f) : flags(f) {}
  const uint32_t flags;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;   // occurrences issued by aclrtRecordEvent
  uint64_t completed = 0;  // highest occurrence whose task ran
  uint64_t ts_ns = 0;      // CLOCK_MONOTONIC time of occurrence `completed`
  bool reset = true;       // never recorded, or reset since the last record
  std::weak_ptr<StreamImpl> recorder;  // stream of the latest record (urged by waiters)
};

// A waiter that runs no tasks itself makes the recording stream's worker look now.
void UrgeRecorder(Event& e) {
  std::shared_ptr<StreamImpl> s;
  {
    std::lock_guard lk(e.mu);
    if (e.reset || e.completed >= e.recorded) return;
    s = e.recorder.lock();
  }
  if (s) s->Urge();
}

struct Registry {
  std::mutex mu;
  std::map<void*, std::shared_ptr<Event>> events;
};

Registry& Reg() {
  static Registry* r = new Registry();  // leaked: usable from atexit handlers
  return *r;
}

std::shared_ptr<Event> Lookup(void* handle) {
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  auto it = r.events.find(handle);
  return it == r.events.end() ? nullptr : it->second;
}

// Slice of a bounded event wait: how often a waiting task checks whether its stream is aborting.
constexpr int64_t kWaitSliceMs = 20;

}  // namespace

int CreateEvent(void** event, uint32_t flags) {
  if (event == nullptr) return Fail(kAclInvalidParam, "aclrtCreateEvent: event is null");
  auto e = std::make_shared<Event>(flags);
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  r.events.emplace(e.get(), e);
  *event = e.get();
  return kAclSuccess;
}

int DestroyEvent(void* event) {
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  if (event == nullptr || r.events.erase(event) == 0)
    return Fail(kAclInvalidParam, "aclrtDestroyEvent: %p is not a live event", event);
  return kAclSuccess;
}

int RecordEvent(void* event, void* stream) {
  auto e = Lookup(event);
  if (!e) return Fail(kAclInvalidParam, "aclrtRecordEvent: %p is not a live event", event);
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclrtRecordEvent", &s); rc != kAclSuccess) return rc;
  uint64_t gen;
  {
    std::lock_guard lk(e->mu);
    gen = ++e->recorded;
    e->reset = false;
    e->recorder = s;
  }
  Status st = s->Enqueue([e, gen]() -> Status {
    uint64_t now = NowNs();
    {
      std::lock_guard lk(e->mu);
      if (gen > e->completed) {
        e->completed = gen;
        e->ts_ns = now;
      }
    }
    e->cv.notify_all();
    return Status::Ok();
  });
  if (!st.ok()) return Fail(kAclRtInternalError, "aclrtRecordEvent: %s", st.ToString().c_str());
  return kAclSuccess;
}

int ResetEvent(void* event, void* stream) {
  auto e = Lookup(event);
  if (!e) return Fail(kAclInvalidParam, "aclrtResetEvent: %p is not a live event", event);
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclrtResetEvent", &s); rc != kAclSuccess) return rc;
  std::lock_guard lk(e->mu);
  e->reset = true;
  return kAclSuccess;
}

int QueryEventComplete(void* event) {
  auto e = Lookup(event);
  if (!e) return -1;
  UrgeRecorder(*e);  // a caller polling for completion runs nothing itself
  std::lock_guard lk(e->mu);
  return (e->reset || e->completed >= e->recorded) ? 1 : 0;
}

int SynchronizeEvent(void* event) {
  auto e = Lookup(event);
  if (!e) return Fail(kAclInvalidParam, "aclrtSynchronizeEvent: %p is not a live event", event);
  int64_t bound = TaskWaitBoundMs();
  Deadline deadline = Deadline::AfterMs(bound);
  UrgeRecorder(*e);
  std::unique_lock lk(e->mu);
  if (e->reset) return kAclSuccess;  // never recorded: complete, as in ACL
  const uint64_t target = e->recorded;
  while (e->completed < target) {
    if (deadline.Expired())
      return Fail(kAclRtEventSyncTimeout, "aclrtSynchronizeEvent: event %p occurrence %llu not complete after %lld ms",
                  event, static_cast<unsigned long long>(target), static_cast<long long>(bound));
    int ms = deadline.RemainingMsForPoll();
    e->cv.wait_for(lk, std::chrono::milliseconds(ms < 0 ? 1000 : ms));
  }
  return kAclSuccess;
}

int StreamWaitEvent(void* stream, void* event) {
  auto e = Lookup(event);
  if (!e) return Fail(kAclInvalidParam, "aclrtStreamWaitEvent: %p is not a live event", event);
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclrtStreamWaitEvent", &s); rc != kAclSuccess) return rc;
  uint64_t target;
  {
    std::lock_guard lk(e->mu);
    target = e->reset ? e->recorded + 1 : e->recorded;
  }
  StreamImpl* self = s.get();  // the task runs on this stream, which outlives its tasks
  Status st = s->EnqueueHostWait([e, target, self]() -> Status {
    int64_t bound = TaskWaitBoundMs();
    Deadline deadline = Deadline::AfterMs(bound);
    UrgeRecorder(*e);
    std::unique_lock lk(e->mu);
    while (e->completed < target) {
      if (self->aborting())
        return MakeStatus(Code::kInternal, "stream %llu destroyed while waiting for event %p occurrence %llu",
                          static_cast<unsigned long long>(self->id()), static_cast<void*>(e.get()),
                          static_cast<unsigned long long>(target));
      if (deadline.Expired())
        return MakeStatus(Code::kTimeout, "stream %llu: event %p occurrence %llu not recorded/complete after %lld ms",
                          static_cast<unsigned long long>(self->id()), static_cast<void*>(e.get()),
                          static_cast<unsigned long long>(target), static_cast<long long>(bound));
      int ms = deadline.RemainingMsForPoll();
      int64_t slice = (ms < 0 || ms > kWaitSliceMs) ? kWaitSliceMs : ms;
      e->cv.wait_for(lk, std::chrono::milliseconds(slice));
      lk.unlock();
      UrgeRecorder(*e);  // the record may have been enqueued since
      lk.lock();
    }
    return Status::Ok();
  });
  if (!st.ok()) return Fail(kAclRtInternalError, "aclrtStreamWaitEvent: %s", st.ToString().c_str());
  return kAclSuccess;
}

int EventElapsedTime(float* ms, void* start, void* end) {
  if (ms == nullptr) return Fail(kAclInvalidParam, "aclrtEventElapsedTime: ms is null");
  auto a = Lookup(start);
  auto b = Lookup(end);
  if (!a || !b)
    return Fail(kAclInvalidParam, "aclrtEventElapsedTime: %s event %p is not a live event", a ? "end" : "start",
                a ? end : start);
  uint64_t ts[2];
  std::shared_ptr<Event> evs[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    std::lock_guard lk(evs[i]->mu);
    if (evs[i]->reset || evs[i]->completed < evs[i]->recorded)
      return Fail(kAclInvalidParam, "aclrtEventElapsedTime: %s event %p is %s", i == 0 ? "start" : "end",
                  i == 0 ? start : end, evs[i]->reset ? "not recorded" : "not complete yet (synchronize first)");
    ts[i] = evs[i]->ts_ns;
  }
  *ms = static_cast<float>((static_cast<double>(ts[1]) - static_cast<double>(ts[0])) / 1e6);
  return kAclSuccess;
}

}  // namespace hostccl::rt
