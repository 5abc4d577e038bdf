#include "core/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/job_identity.h"
#include "common/clock.h"
#include "common/dtype.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::core {

struct FlightRecorder::View {
  uint64_t seq, count, t_enq, t_start = 0, t_end = 0;
  uint32_t root;
  uint8_t kind, dtype, op;
  FrState state = FrState::kQueued;
  const char* algo = nullptr;
  int32_t waiting = -1;
};

// Timestamps are CLOCK_MONOTONIC nanoseconds. A clock read costs 25-100 ns on a virtual machine
// (rdtsc included), several percent of a ~1 us call, so by default an operation records one time
// only, its start, and that is the reading the operation's deadline already took (the caller
// passes it to Started). The enqueue and end times are read only with HOSTCCL_FR_TIMESTAMPS=1 or
// HOSTCCL_TRACE set (times_).

namespace {

// ---- the process's live recorders and the SIGUSR1 dump thread ----
std::mutex g_mu;
std::vector<FlightRecorder*>& Live() {
  static std::vector<FlightRecorder*> v;
  return v;
}
int g_pipe[2] = {-1, -1};

void OnSigusr1(int) {
  const int saved = errno;
  const char c = 1;
  if (g_pipe[1] >= 0) (void)!write(g_pipe[1], &c, 1);  // async-signal-safe; a full pipe drops it
  errno = saved;
}

void DumpThread() {
  char buf[64];
  for (;;) {
    const ssize_t r = read(g_pipe[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    std::lock_guard<std::mutex> lk(g_mu);
    for (FlightRecorder* f : Live()) {
      const std::string path = f->Dump("SIGUSR1");
      if (!path.empty()) HLOG_WARN(kColl, "flight recorder: SIGUSR1: rank %d dumped to %s", f->identity().rank, path.c_str());
    }
  }
}

// Once per process: a pipe, its reader thread and the SIGUSR1 handler, unless the program has
// its own SIGUSR1 handler (it is left alone; dumps then happen on errors only).
// At exit: the traces of communicators never destroyed (no logging: it may be gone by then).
void TracesAtExit() {
  std::lock_guard<std::mutex> lk(g_mu);
  for (FlightRecorder* f : Live()) (void)f->WriteTrace();
}

void StartSignalDumps() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)Live();  // constructed before the atexit registration, so destroyed after TracesAtExit
    std::atexit(TracesAtExit);
    struct sigaction old {};
    if (sigaction(SIGUSR1, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) {
      HLOG_INFO(kColl, "flight recorder: SIGUSR1 has a handler already; dumps on SIGUSR1 are off");
      return;
    }
    if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
    (void)fcntl(g_pipe[1], F_SETFL, O_NONBLOCK);
    std::thread(DumpThread).detach();
    struct sigaction sa {};
    sa.sa_handler = OnSigusr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
  });
}

std::string Sanitize(const std::string& s, size_t max) {
  std::string o;
  for (char c : s) {
    if (o.size() >= max) break;
    o += (isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  }
  return o.empty() ? "_" : o;
}

void JsonEscape(std::string* out, const std::string& s) {
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { *out += '\\'; *out += static_cast<char>(c); }
    else if (c == '\n') *out += "\\n";
    else if (c < 0x20) *out += StrFormat("\\u%04x", c);
    else *out += static_cast<char>(c);
  }
  *out += '"';
}

std::string Q(const std::string& s) {
  std::string o;
  JsonEscape(&o, s);
  return o;
}

unsigned long long Us(uint64_t ns) { return static_cast<unsigned long long>(ns / 1000); }

bool WriteFile(const std::string& dir, const std::string& name, const std::string& text, std::string* path) {
  // mkdir -p of one or two levels is enough for the defaults; a missing parent is reported.
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') (void)mkdir(dir.substr(0, i).c_str(), 0755);
  *path = dir + "/" + name;
  const std::string tmp = *path + ".tmp" + std::to_string(gettid());
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  if (fclose(f) != 0 || !ok || rename(tmp.c_str(), path->c_str()) != 0) {
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::string HostName() {
  char h[256] = {0};
  if (gethostname(h, sizeof h - 1) != 0) return "?";
  return h;
}

}  // namespace

const char* FrStateName(FrState s) {
  switch (s) {
    case FrState::kQueued: return "queued";
    case FrState::kRunning: return "running";
    case FrState::kDone: return "done";
    case FrState::kFailed: return "failed";
    case FrState::kAhead: return "ahead";
    default: return "empty";
  }
}

void FlightRecorder::Confirmed(uint64_t upto) {
  // Each entry is looked at once: from `upto` back to the last confirmation (or as far as the
  // ring still holds).
  const uint8_t ahead = static_cast<uint8_t>(FrState::kAhead);
  const uint64_t low = upto > n_ && upto - n_ > confirmed_ ? upto - n_ : confirmed_;
  for (uint64_t s = upto; s > low; --s) {
    RunEntry* e = &run_[s & mask_];
    if (e->seq.load(std::memory_order_relaxed) != s) continue;  // overwritten, or never started
    if (e->state.load(std::memory_order_relaxed) == ahead)
      e->state.store(static_cast<uint8_t>(FrState::kDone), std::memory_order_release);
  }
  if (upto > confirmed_) confirmed_ = upto;
}

std::string FrDumpDir() {
  std::string d = EnvString(Knob::kFrDir, "");
  if (!d.empty()) return d;
  const boot::JobIdentity job = boot::LauncherJobIdentity();
  return "/tmp/hostccl-fr-" + (job.empty() ? "uid" + std::to_string(getuid()) : Sanitize(job.id, 64));
}

std::unique_ptr<FlightRecorder> FlightRecorder::Create(const FrIdentity& id) {
  int64_t n = EnvInt(Knob::kFrEntries, 1024);
  std::string trace = EnvString(Knob::kTrace, "");
  if (n <= 0 && trace.empty()) return nullptr;
  if (n <= 0) n = 1024;  // the trace is drawn from the ring
  n = std::min<int64_t>(n, 1 << 20);
  // A power of two, so the slot of an operation is a mask, not a division (a 64-bit division is
  // 20-40 cycles, and every operation computes its slot four times).
  int64_t pow2 = 1;
  while (pow2 < n) pow2 <<= 1;
  n = pow2;
  const bool times = !trace.empty() || EnvBool(Knob::kFrTimestamps, false);
  std::unique_ptr<FlightRecorder> f(new FlightRecorder(id, static_cast<size_t>(n), std::move(trace), times));
  StartSignalDumps();
  std::lock_guard<std::mutex> lk(g_mu);
  Live().push_back(f.get());
  return f;
}

FlightRecorder::FlightRecorder(const FrIdentity& id, size_t n, std::string trace_dir, bool times)
    : id_(id), n_(n), mask_(n - 1), times_(times), ring_(new Entry[n]), run_(new RunEntry[n]), trace_dir_(std::move(trace_dir)) {
  static_assert(sizeof(Entry) == 32 && sizeof(RunEntry) == 64, "no entry straddles a cache line");
}

FlightRecorder::~FlightRecorder() {
  std::string path;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    auto& v = Live();
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
    path = WriteTrace();
  }
  if (!path.empty()) HLOG_INFO(kColl, "trace of '%s' rank %d written to %s", id_.comm_name.c_str(), id_.rank, path.c_str());
}

std::string FlightRecorder::WriteTrace() {
  if (trace_dir_.empty() || trace_written_) return "";
  trace_written_ = true;
  std::string path;
  const std::string name = StrFormat("hostccl_trace_%s_rank%d_pid%d.json", Sanitize(id_.comm_name, 64).c_str(),
                                     id_.rank, static_cast<int>(getpid()));
  if (WriteFile(trace_dir_, name, TraceJson(), &path)) return path;
  fprintf(stderr, "hostccl: HOSTCCL_TRACE: cannot write %s: %s\n", path.c_str(), strerror(errno));
  return "";
}

void FlightRecorder::RecordError(uint64_t seq, const Status& st) {
  std::lock_guard<std::mutex> lk(err_mu_);
  if (errors_.size() >= 32) errors_.erase(errors_.begin());
  errors_.push_back({seq, st.code(), st.message()});
}

FlightRecorder::View FlightRecorder::Snapshot(const Entry& e) const {
  constexpr auto R = std::memory_order_relaxed;
  View v;
  v.seq = e.seq.load(std::memory_order_acquire);
  v.count = e.count.load(R);
  v.t_enq = e.t_enq.load(R);
  v.root = e.root.load(R);
  v.kind = e.kind.load(R);
  v.dtype = e.dtype.load(R);
  v.op = e.op.load(R);
  const RunEntry& r = run_[v.seq & mask_];
  if (v.seq != 0 && r.seq.load(std::memory_order_acquire) == v.seq) {
    v.state = static_cast<FrState>(r.state.load(std::memory_order_acquire));
    v.t_start = r.t_start.load(R);
    v.t_end = r.t_end.load(R);
    v.algo = r.algo.load(R);
    v.waiting = r.waiting.load(R);
  }
  return v;
}

std::string FlightRecorder::Json(const char* reason) const {
  timespec rt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  const uint64_t real_ns = static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec);
  const uint64_t mono_ns = NowNs();
  std::string o = "{\n";
  o += StrFormat("  \"format\": \"hostccl-flight-recorder-1\",\n  \"reason\": %s,\n", Q(reason).c_str());
  o += StrFormat("  \"rank\": %d,\n  \"nranks\": %d,\n  \"pid\": %d,\n  \"host\": %s,\n", id_.rank, id_.size,
                 static_cast<int>(getpid()), Q(HostName()).c_str());
  o += StrFormat("  \"comm_name\": %s,\n  \"comm_id\": %s,\n  \"capacity\": %zu,\n", Q(id_.comm_name).c_str(),
                 Q(id_.comm_id).c_str(), n_);
  o += StrFormat("  \"dump_time_us\": %llu,\n  \"unix_minus_monotonic_us\": %lld,\n", Us(mono_ns),
                 static_cast<long long>(real_ns / 1000) - static_cast<long long>(mono_ns / 1000));
  // Entries in sequence order (the oldest kept first).
  std::vector<View> es;
  for (size_t i = 0; i < n_; ++i)
    if (View v = Snapshot(ring_[i]); v.seq != 0) es.push_back(v);
  std::sort(es.begin(), es.end(), [](const View& a, const View& b) { return a.seq < b.seq; });
  o += "  \"entries\": [";
  bool first = true;
  for (const View& e : es) {
    const uint64_t seq = e.seq;
    const FrState state = e.state;
    const auto kind = static_cast<CollKind>(e.kind);
    const OpInfo* info = FindOp(kind);
    Fingerprint fp;
    fp.kind = e.kind;
    fp.seq = seq;
    fp.dtype = e.dtype;
    fp.op = e.op;
    fp.root = e.root;
    fp.count = e.count;
    const int32_t waiting = e.waiting;
    const char* algo = e.algo;
    o += first ? "\n    {" : ",\n    {";
    first = false;
    o += StrFormat("\"seq\": %llu, \"op\": %s", static_cast<unsigned long long>(seq), Q(CollKindName(kind)).c_str());
    const bool any_type = kind == CollKind::kAlltoAllV || kind == CollKind::kAlltoAllVC;  // fp: element size only
    const bool v_hash = kind == CollKind::kAllGatherV || kind == CollKind::kReduceScatterV || kind == CollKind::kAlltoAllVC;
    o += StrFormat(", \"count\": %llu", static_cast<unsigned long long>(fp.count));
    if (any_type) o += StrFormat(", \"elem_bytes\": %u", fp.op);
    else if (kind != CollKind::kBarrier) o += StrFormat(", \"dtype\": %s", Q(DataTypeName(fp.dtype)).c_str());
    if (info && info->reduces) o += StrFormat(", \"red_op\": %s", Q(RedOpName(fp.op)).c_str());
    if (info && info->root == RootRule::kRoot) o += StrFormat(", \"root\": %u", fp.root);
    if (info && info->root == RootRule::kPeer) o += StrFormat(", \"peer\": %u", fp.root);
    if (v_hash && fp.root != 0) o += StrFormat(", \"v_hash\": \"%08x\"", fp.root);
    o += StrFormat(", \"fingerprint\": %s", Q(DescribeFingerprint(fp)).c_str());
    o += StrFormat(", \"algo\": %s", algo ? Q(algo).c_str() : "null");
    const bool is_waiting = state == FrState::kRunning && waiting >= 0;
    o += StrFormat(", \"state\": \"%s\"", is_waiting ? "waiting" : FrStateName(state));
    if (is_waiting) o += StrFormat(", \"waiting_for\": %d", waiting);
    if (state == FrState::kFailed && waiting >= 0) o += StrFormat(", \"waited_for\": %d", waiting);
    if (state == FrState::kFailed) {
      std::lock_guard<std::mutex> lk(err_mu_);
      for (auto it = errors_.rbegin(); it != errors_.rend(); ++it)
        if (it->seq == seq) {
          o += StrFormat(", \"error_code\": %s, \"error\": %s", Q(CodeName(it->code)).c_str(), Q(it->message).c_str());
          break;
        }
    }
    auto t = [&](const char* name, uint64_t ticks) {
      o += ticks ? StrFormat(", \"%s\": %llu", name, Us(ticks)) : StrFormat(", \"%s\": null", name);
    };
    t("t_enqueue_us", e.t_enq);
    t("t_start_us", e.t_start);
    t("t_end_us", e.t_end);
    o += "}";
  }
  o += first ? "]\n}\n" : "\n  ]\n}\n";
  return o;
}

std::string FlightRecorder::Dump(const char* reason) const {
  const std::string dir = FrDumpDir();
  const std::string name = StrFormat("hostccl_fr_%s_rank%d_pid%d.json", Sanitize(id_.comm_name, 64).c_str(), id_.rank,
                                     static_cast<int>(getpid()));
  std::string path;
  if (!WriteFile(dir, name, Json(reason), &path)) {
    HLOG_WARN(kColl, "flight recorder: cannot write %s: %s", path.c_str(), strerror(errno));
    return "";
  }
  return path;
}

std::string FlightRecorder::TraceJson() const {
  std::string o = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  o += StrFormat("  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": %s}}",
                 id_.rank, Q(StrFormat("rank %d (%s)", id_.rank, id_.comm_name.c_str())).c_str());
  o += StrFormat(",\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
                 id_.rank, id_.rank);
  std::vector<View> es;
  for (size_t i = 0; i < n_; ++i)
    if (View v = Snapshot(ring_[i]); v.seq != 0 && v.t_start != 0) es.push_back(v);
  std::sort(es.begin(), es.end(), [](const View& a, const View& b) { return a.seq < b.seq; });
  const uint64_t now = NowNs();
  for (const View& e : es) {
    const auto kind = static_cast<CollKind>(e.kind);
    const uint64_t ts = e.t_start;
    const uint64_t end = e.t_end ? std::max(ts, e.t_end) : now;
    const char* algo = e.algo;
    const auto state = e.state;
    o += StrFormat(",\n  {\"name\": %s, \"cat\": \"hccl\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, \"ts\": %.3f, "
                   "\"dur\": %.3f, \"args\": {\"seq\": %llu, \"count\": %llu, \"dtype\": %s, \"algo\": %s, "
                   "\"state\": \"%s\", \"queued_us\": %.3f}}",
                   Q(CollKindName(kind)).c_str(), id_.rank, static_cast<double>(ts) / 1e3,
                   static_cast<double>(end - ts) / 1e3, static_cast<unsigned long long>(e.seq),
                   static_cast<unsigned long long>(e.count), Q(DataTypeName(e.dtype)).c_str(),
                   Q(algo ? algo : "").c_str(), FrStateName(state),
                   static_cast<double>(ts - std::min(ts, e.t_enq)) / 1e3);
  }
  o += "\n]}\n";
  return o;
}

}  // namespace hostccl::core
