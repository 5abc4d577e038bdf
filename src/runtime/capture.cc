// Stream capture into models (aclmdlRI*): see capture.h for the contract.
#include "runtime/capture.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "runtime/acl_codes.h"
#include "runtime/error.h"
#include "runtime/stream.h"

namespace hostccl::rt {

class CaptureModel {
 public:
  enum class State { kCapturing, kInvalidated, kReady };
  std::mutex mu;
  std::vector<Stream::Replay> steps;
  State state = State::kCapturing;
  std::string why;  // what invalidated the capture
  int mode = kCaptureModeGlobal;
  std::thread::id thread;  // the thread that began the capture
  uint64_t stream_id = 0;
  uint64_t id = 0;
};

void CaptureAppend(CaptureModel& model, Stream::Replay replay) {
  std::lock_guard lk(model.mu);
  if (model.state == CaptureModel::State::kCapturing) model.steps.push_back(std::move(replay));
}

namespace {

const char* ModeName(int mode) {
  switch (mode) {
    case kCaptureModeGlobal: return "GLOBAL";
    case kCaptureModeThreadLocal: return "THREAD_LOCAL";
    case kCaptureModeRelaxed: return "RELAXED";
    default: return "?";
  }
}

struct Registry {
  std::mutex mu;
  std::map<void*, std::shared_ptr<CaptureModel>> models;  // handle -> model (capturing or ready)
  uint64_t next_id = 0;
  int global_captures = 0;                       // active captures begun in GLOBAL mode
  std::map<std::thread::id, int> strict_captures;  // thread -> its active non-RELAXED captures
};

Registry& Reg() {
  static Registry* r = new Registry();  // leaked: usable from atexit handlers
  return *r;
}

thread_local int tl_mode = kCaptureModeGlobal;

// Streams that capture now, anywhere in the process: raised before a stream starts capturing and
// lowered after it stopped (both under Reg().mu), so 0 means no stream captures and
// CheckNotCapturing (every aclrtSynchronizeStream) needs no stream lookup.
std::atomic<int> g_capturing_streams{0};

// Bookkeeping of the active captures (for the unsafe-call check). Requires Reg().mu.
void CountCapture(Registry& r, const CaptureModel& m, int delta) {
  if (m.mode == kCaptureModeGlobal) r.global_captures += delta;
  if (m.mode != kCaptureModeRelaxed) {
    int& n = r.strict_captures[m.thread];
    n += delta;
    if (n == 0) r.strict_captures.erase(m.thread);
  }
}

// Marks the capture of `s` invalidated (it still ends at aclmdlRICaptureEnd).
void Invalidate(StreamImpl& s, const std::string& why) {
  auto m = s.capture();
  if (!m) return;
  std::lock_guard lk(m->mu);
  if (m->state != CaptureModel::State::kCapturing) return;
  m->state = CaptureModel::State::kInvalidated;
  m->why = why;
  m->steps.clear();
}

Status Replay(const std::shared_ptr<CaptureModel>& m, Stream* s) {
  std::vector<Stream::Replay> steps;
  {
    std::lock_guard lk(m->mu);
    steps = m->steps;
  }
  for (auto& step : steps) {
    Status st = step(s);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

int CaptureBegin(void* stream, int mode) {
  if (stream == nullptr)
    return Fail(kAclInvalidParam, "aclmdlRICaptureBegin: the default stream cannot be captured; use a created stream");
  if (mode < kCaptureModeGlobal || mode > kCaptureModeRelaxed)
    return Fail(kAclInvalidParam, "aclmdlRICaptureBegin: mode %d is not GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)",
                mode);
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclmdlRICaptureBegin", &s); rc != kAclSuccess) return rc;
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  if (s->capture())
    return Fail(kAclRtStreamCaptured, "aclmdlRICaptureBegin: stream %llu is already being captured (nested capture)",
                static_cast<unsigned long long>(s->id()));
  auto m = std::make_shared<CaptureModel>();
  m->mode = mode;
  m->thread = std::this_thread::get_id();
  m->stream_id = s->id();
  m->id = ++r.next_id;
  r.models[m.get()] = m;
  CountCapture(r, *m, +1);
  g_capturing_streams.fetch_add(1, std::memory_order_seq_cst);
  s->set_capture(m);
  HLOG_DEBUG(kRuntime, "stream %llu: capture into model %llu begins (mode %s)", static_cast<unsigned long long>(s->id()),
             static_cast<unsigned long long>(m->id), ModeName(mode));
  return kAclSuccess;
}

int CaptureEnd(void* stream, void** model) {
  if (model == nullptr) return Fail(kAclInvalidParam, "aclmdlRICaptureEnd: modelRI is null");
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclmdlRICaptureEnd", &s); rc != kAclSuccess) return rc;
  auto& r = Reg();
  std::unique_lock lk(r.mu);
  auto m = s->capture();
  if (!m)
    return Fail(kAclRtStreamNotCaptured, "aclmdlRICaptureEnd: stream %llu is not being captured",
                static_cast<unsigned long long>(s->id()));
  s->set_capture(nullptr);
  g_capturing_streams.fetch_sub(1, std::memory_order_seq_cst);
  CountCapture(r, *m, -1);
  std::lock_guard mk(m->mu);
  if (m->state == CaptureModel::State::kInvalidated) {
    r.models.erase(m.get());
    *model = nullptr;
    return Fail(kAclRtCaptureInvalidated, "aclmdlRICaptureEnd: the capture of stream %llu was invalidated: %s",
                static_cast<unsigned long long>(s->id()), m->why.c_str());
  }
  m->state = CaptureModel::State::kReady;
  *model = m.get();
  HLOG_DEBUG(kRuntime, "stream %llu: model %llu captured (%zu step(s))", static_cast<unsigned long long>(s->id()),
             static_cast<unsigned long long>(m->id), m->steps.size());
  return kAclSuccess;
}

int CaptureGetInfo(void* stream, int* status, void** model) {
  if (status == nullptr) return Fail(kAclInvalidParam, "aclmdlRICaptureGetInfo: status is null");
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclmdlRICaptureGetInfo", &s); rc != kAclSuccess) return rc;
  auto m = s->capture();
  if (!m) {
    *status = kCaptureStatusNone;
    if (model != nullptr) *model = nullptr;
    return kAclSuccess;
  }
  std::lock_guard lk(m->mu);
  *status = m->state == CaptureModel::State::kInvalidated ? kCaptureStatusInvalidated : kCaptureStatusActive;
  if (model != nullptr) *model = m.get();
  return kAclSuccess;
}

int CaptureThreadExchangeMode(int* mode) {
  if (mode == nullptr) return Fail(kAclInvalidParam, "aclmdlRICaptureThreadExchangeMode: mode is null");
  if (*mode < kCaptureModeGlobal || *mode > kCaptureModeRelaxed)
    return Fail(kAclInvalidParam,
                "aclmdlRICaptureThreadExchangeMode: mode %d is not GLOBAL (0), THREAD_LOCAL (1) or RELAXED (2)", *mode);
  int old = tl_mode;
  tl_mode = *mode;
  *mode = old;
  return kAclSuccess;
}

int ModelExecuteAsync(void* model, void* stream) {
  std::shared_ptr<CaptureModel> m;
  {
    auto& r = Reg();
    std::lock_guard lk(r.mu);
    auto it = r.models.find(model);
    if (model == nullptr || it == r.models.end())
      return Fail(kAclInvalidParam, "aclmdlRIExecuteAsync: %p is not a live model (never captured or destroyed)",
                  model);
    m = it->second;
  }
  {
    std::lock_guard lk(m->mu);
    if (m->state != CaptureModel::State::kReady)
      return Fail(kAclRtModelCaptured, "aclmdlRIExecuteAsync: model %llu is still being captured",
                  static_cast<unsigned long long>(m->id));
  }
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclmdlRIExecuteAsync", &s); rc != kAclSuccess) return rc;
  // On a capturing stream the execution itself is recorded (a model inside a model).
  if (s->Capture([m](Stream* target) { return Replay(m, target); })) return kAclSuccess;
  Status st = Replay(m, s.get());
  if (!st.ok())
    return Fail(kAclRtInternalError, "aclmdlRIExecuteAsync: model %llu: %s", static_cast<unsigned long long>(m->id),
                st.ToString().c_str());
  return kAclSuccess;
}

int ModelDestroy(void* model) {
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  auto it = r.models.find(model);
  if (model == nullptr || it == r.models.end())
    return Fail(kAclInvalidParam, "aclmdlRIDestroy: %p is not a live model (destroyed twice?)", model);
  {
    std::lock_guard mk(it->second->mu);
    if (it->second->state != CaptureModel::State::kReady)
      return Fail(kAclRtModelCaptured, "aclmdlRIDestroy: model %llu is still being captured; end the capture first",
                  static_cast<unsigned long long>(it->second->id));
  }
  r.models.erase(it);
  return kAclSuccess;
}

int ModelDebugPrint(void* model) {
  std::shared_ptr<CaptureModel> m;
  {
    auto& r = Reg();
    std::lock_guard lk(r.mu);
    auto it = r.models.find(model);
    if (model == nullptr || it == r.models.end())
      return Fail(kAclInvalidParam, "aclmdlRIDebugPrint: %p is not a live model", model);
    m = it->second;
  }
  std::lock_guard lk(m->mu);
  HLOG_INFO(kRuntime, "model %llu: captured from stream %llu in mode %s, %zu step(s)",
            static_cast<unsigned long long>(m->id), static_cast<unsigned long long>(m->stream_id),
            ModeName(m->mode), m->steps.size());
  return kAclSuccess;
}

int CheckCaptureSafe(const char* func) {
  if (tl_mode == kCaptureModeRelaxed) return kAclSuccess;
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  auto mine = r.strict_captures.find(std::this_thread::get_id());
  const bool own = mine != r.strict_captures.end() && mine->second > 0;
  const bool forbidden = own || (tl_mode == kCaptureModeGlobal && r.global_captures > 0);
  if (!forbidden) return kAclSuccess;
  return Fail(kAclRtCaptureModeNotSupport,
              "%s is not allowed while a stream is being captured (this thread's capture mode is %s); call it "
              "before aclmdlRICaptureBegin or after aclmdlRICaptureEnd, or switch this thread to RELAXED with "
              "aclmdlRICaptureThreadExchangeMode",
              func, ModeName(tl_mode));
}

namespace {
// The created stream `handle` names when it captures, else nullptr (no message: the call itself
// reports a bad handle).
StreamImpl* CapturingStream(void* handle) {
  if (handle == nullptr) return nullptr;  // the default stream never captures
  Stream* s = LookupStream(handle);
  if (s == nullptr || !s->capturing()) return nullptr;
  return static_cast<StreamImpl*>(s);  // the only Stream implementation
}
}  // namespace

int CheckNotCapturing(void* stream, const char* func) {
  if (g_capturing_streams.load(std::memory_order_acquire) == 0) return kAclSuccess;
  StreamImpl* s = CapturingStream(stream);
  if (s == nullptr) return kAclSuccess;
  Invalidate(*s, std::string(func) + " was called on the capturing stream");
  return Fail(kAclRtStreamCaptured,
              "%s: stream %llu is being captured: nothing on it runs until the model is executed; the capture is "
              "invalidated",
              func, static_cast<unsigned long long>(s->id()));
}

int CheckNoEventWork(void* stream, const char* func) {
  StreamImpl* s = CapturingStream(stream);
  if (s == nullptr) return kAclSuccess;
  Invalidate(*s, std::string(func) + " was called on the capturing stream");
  return Fail(kAclRtFeatureNotSupport,
              "%s: event work on a capturing stream (stream %llu) is not supported by hostccl; the capture is "
              "invalidated",
              func, static_cast<unsigned long long>(s->id()));
}

void AbandonCapture(void* stream) {
  StreamImpl* s = CapturingStream(stream);
  if (s == nullptr) return;
  auto& r = Reg();
  std::lock_guard lk(r.mu);
  auto m = s->capture();
  if (!m) return;
  HLOG_WARN(kRuntime, "aclrtDestroyStream: stream %llu was being captured; the capture is dropped",
            static_cast<unsigned long long>(s->id()));
  s->set_capture(nullptr);
  g_capturing_streams.fetch_sub(1, std::memory_order_seq_cst);
  CountCapture(r, *m, -1);
  r.models.erase(m.get());
}

}  // namespace hostccl::rt
