#include "common/log.h"

#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <vector>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/env.h"
#include "common/status.h"
#include "common/thread_state.h"

namespace hostccl {
namespace {

const char* kLevelNames[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
// CANN's level words; hostccl's TRACE is finer than CANN's DEBUG and prints as DEBUG.
const char* kCannLevelNames[] = {"ERROR", "WARNING", "INFO", "DEBUG", "DEBUG"};
const char* kSubsysNames[] = {"INIT", "BOOT", "COLL", "ALGO", "SHM", "TCP", "RT", "ENV", "CALL", "KERN", "TOOL"};
constexpr int kNumSubsys = sizeof(kSubsysNames) / sizeof(kSubsysNames[0]);
constexpr int kLevelOff = -1;  // ASCEND_GLOBAL_LOG_LEVEL=4 (NULL): nothing is printed

enum class Dest { kStderr, kStdout, kFile };

struct LogState {
  std::atomic<int> level{static_cast<int>(LogLevel::kWarn)};
  std::atomic<unsigned> mask{~0u};
  std::mutex mu;
  FILE* out = stderr;
  Dest dest = Dest::kStderr;
  std::string file_template;  // HOSTCCL_LOG_FILE as given, or the plog directory
  bool plog = false;          // the file is a plog file (one per process, named by pid)
  std::string path;           // the file open now
  pid_t pid = 0;              // the process that opened it (a forked child opens its own)
  char host[64] = "?";
  char proc[64] = "?";
};

// Never destroyed: threads that outlive main (a stream's worker, the root server) may still log
// while the process exits, after static destructors ran.
LogState& State() {
  static LogState* s = new LogState;
  return *s;
}

std::once_flag g_init_once;

const char* Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

bool MakeDirs(const std::string& dir) {
  std::string cur;
  size_t pos = 0;
  while (pos <= dir.size()) {
    size_t slash = dir.find('/', pos);
    if (slash == std::string::npos) slash = dir.size();
    cur = dir.substr(0, slash);
    if (!cur.empty() && mkdir(cur.c_str(), 0750) != 0 && errno != EEXIST) return false;
    pos = slash + 1;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Opens the destination file for this process (s.mu held). False when it cannot be opened.
bool OpenFileLocked(LogState& s, std::string* why) {
  std::string path;
  if (s.plog) {
    if (!MakeDirs(s.file_template)) {
      *why = StrFormat("cannot create directory %s: %s", s.file_template.c_str(), strerror(errno));
      return false;
    }
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
    path = StrFormat("%s/plog-%d_%s%03ld.log", s.file_template.c_str(), static_cast<int>(getpid()), stamp,
                     ts.tv_nsec / 1000000);
  } else {
    for (const char* p = s.file_template.c_str(); *p; ++p) {
      if (p[0] == '%' && p[1] == 'h') { path += s.host; ++p; }
      else if (p[0] == '%' && p[1] == 'p') { path += std::to_string(getpid()); ++p; }
      else path += *p;
    }
  }
  FILE* fp = std::fopen(path.c_str(), "a");
  if (fp == nullptr) {
    *why = StrFormat("cannot open %s: %s", path.c_str(), strerror(errno));
    return false;
  }
  setvbuf(fp, nullptr, _IOLBF, 0);
  if (s.out != stderr && s.out != stdout) std::fclose(s.out);
  s.out = fp;
  s.path = path;
  s.pid = getpid();
  return true;
}

// Reads the environment into s (s.mu held); bad values are returned as warnings, printed by the
// caller once the state is usable (printing here would re-enter the logger).
void InitLocked(LogState& s, std::vector<std::string>* warnings) {
  gethostname(s.host, sizeof(s.host) - 1);
  snprintf(s.proc, sizeof(s.proc), "%s", program_invocation_short_name);  // as CANN: the program's name
  auto bad = [&](const char* name, const char* value, const char* allowed, const char* used) {
    warnings->push_back(StrFormat("EI0001: environment variable %s=%s is invalid: expected %s; using %s", name,
                                  value, allowed, used));
  };
  int level = static_cast<int>(LogLevel::kWarn);
  bool level_set = false;
  if (const char* lv = Getenv("HOSTCCL_LOG_LEVEL")) {
    for (int i = 0; i < 5; ++i)
      if (strcasecmp(lv, kLevelNames[i]) == 0) { level = i; level_set = true; }
    if (lv[0] >= '0' && lv[0] <= '4' && lv[1] == 0) { level = lv[0] - '0'; level_set = true; }
    if (!level_set) bad("HOSTCCL_LOG_LEVEL", lv, "ERROR, WARN, INFO, DEBUG, TRACE or 0..4", "the next setting");
  }
  if (const char* lv = Getenv("ASCEND_GLOBAL_LOG_LEVEL")) {
    static const int kFromCann[] = {static_cast<int>(LogLevel::kDebug), static_cast<int>(LogLevel::kInfo),
                                    static_cast<int>(LogLevel::kWarn), static_cast<int>(LogLevel::kError),
                                    kLevelOff};
    if (lv[0] >= '0' && lv[0] <= '4' && lv[1] == 0) {
      if (!level_set) level = kFromCann[lv[0] - '0'];
    } else {
      bad("ASCEND_GLOBAL_LOG_LEVEL", lv, "0 (debug), 1 (info), 2 (warning), 3 (error) or 4 (null)",
          level_set ? "HOSTCCL_LOG_LEVEL" : "the default, WARNING");
    }
  }
  s.level = level;
  if (const char* ss = Getenv("HOSTCCL_LOG_SUBSYS")) {
    unsigned m = 0;
    std::string list(ss);
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      std::string item = list.substr(pos, comma - pos);
      bool known = false;
      for (int i = 0; i < kNumSubsys; ++i)
        if (strcasecmp(item.c_str(), kSubsysNames[i]) == 0) { m |= 1u << i; known = true; }
      if (!known && !item.empty())
        bad("HOSTCCL_LOG_SUBSYS", ss, "a comma list of INIT,BOOT,COLL,ALGO,SHM,TCP,RT,ENV,CALL,KERN,TOOL",
            "the known names in it");
      pos = comma + 1;
    }
    s.mask = m;
  }
  bool to_stdout = false;
  if (const char* v = Getenv("ASCEND_SLOG_PRINT_TO_STDOUT")) {
    if (strcmp(v, "1") == 0) to_stdout = true;
    else if (strcmp(v, "0") != 0) bad("ASCEND_SLOG_PRINT_TO_STDOUT", v, "0 or 1", "0");
  }
  if (s.out != stderr && s.out != stdout) std::fclose(s.out);
  s.out = stderr;
  s.dest = Dest::kStderr;
  s.path.clear();
  s.plog = false;
  std::string why;
  if (const char* f = Getenv("HOSTCCL_LOG_FILE")) {
    s.file_template = f;
    if (OpenFileLocked(s, &why)) s.dest = Dest::kFile;
    else warnings->push_back(StrFormat("HOSTCCL_LOG_FILE=%s: %s; logging to stderr", f, why.c_str()));
  } else if (to_stdout) {
    s.out = stdout;
    s.dest = Dest::kStdout;
  } else if (const char* dir = Getenv("ASCEND_PROCESS_LOG_PATH")) {
    std::string d(dir);
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    s.file_template = d + "/debug/plog";
    s.plog = true;
    if (OpenFileLocked(s, &why)) s.dest = Dest::kFile;
    else warnings->push_back(StrFormat("ASCEND_PROCESS_LOG_PATH=%s: %s; logging to stderr", dir, why.c_str()));
  }
}

void WriteLine(LogLevel level, Subsys subsys, const char* file, int line, const char* msg);

void InitAndWarn(bool reset) {
  LogState& s = State();
  std::vector<std::string> warnings;
  {
    std::lock_guard<std::mutex> lk(s.mu);
    if (reset) {
      s.level = static_cast<int>(LogLevel::kWarn);
      s.mask = ~0u;
    }
    InitLocked(s, &warnings);
  }
  // Filtered like any warning (ASCEND_GLOBAL_LOG_LEVEL=3 or 4 hides them too).
  const bool shown = static_cast<int>(LogLevel::kWarn) <= s.level.load() &&
                     (s.mask.load() >> static_cast<int>(Subsys::kEnv) & 1u);
  if (shown)
    for (const auto& w : warnings) WriteLine(LogLevel::kWarn, Subsys::kEnv, __FILE__, __LINE__, w.c_str());
}

// Set once the first initialisation finished: LogEnabled runs several times per call, and
// std::call_once costs two thread-local writes and a pthread_once each time.
std::atomic<bool> g_inited{false};

// LogEnabled's answer for every level and subsystem, from the state now (after an initialisation).
void RefreshGate() {
  LogState& s = State();
  const int level = s.level.load();
  const unsigned mask = s.mask.load();
  uint64_t gate = uint64_t{1} << detail::kLogGateReady;
  for (int l = 0; l <= static_cast<int>(LogLevel::kTrace); ++l)
    for (int k = 0; k < kNumSubsys; ++k)
      if (l <= level && (mask >> k & 1u)) gate |= uint64_t{1} << (l * detail::kLogGateStride + k);
  detail::g_log_gate.store(gate, std::memory_order_release);
}

void EnsureInit() {
  if (g_inited.load(std::memory_order_acquire)) return;
  std::call_once(g_init_once, [] { InitAndWarn(false); });
  g_inited.store(true, std::memory_order_release);
  RefreshGate();
}

void WriteLine(LogLevel level, Subsys subsys, const char* file, int line, const char* msg) {
  LogState& s = State();
  char rank[16];
  if (const int r = ThisThread().log_rank; r >= 0) snprintf(rank, sizeof(rank), "%d", r);
  else snprintf(rank, sizeof(rank), "-");
  const long tid = syscall(SYS_gettid);
  const char* base = std::strrchr(file, '/');
  base = base != nullptr ? base + 1 : file;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  localtime_r(&ts.tv_sec, &tm);
  char stamp[40];
  const size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H:%M:%S", &tm);
  snprintf(stamp + n, sizeof(stamp) - n, ".%03ld.%03ld", ts.tv_nsec / 1000000, ts.tv_nsec / 1000 % 1000);
  const char* module = subsys == Subsys::kRuntime ? "RUNTIME" : "HCCL";
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.dest == Dest::kFile && s.pid != getpid()) {  // a forked child: its own file
    std::string why;
    if (!OpenFileLocked(s, &why)) {
      s.out = stderr;
      s.dest = Dest::kStderr;
    }
  }
  std::fprintf(s.out, "[%s] %s(%d,%s):%s [%s:%d] [%ld] [rank %s] [%s] %s\n", kCannLevelNames[static_cast<int>(level)],
               module, static_cast<int>(getpid()), s.proc, stamp, base, line, tid, rank,
               kSubsysNames[static_cast<int>(subsys)], msg);
  std::fflush(s.out);
}

}  // namespace

void SetLogRank(int rank) { ThisThread().log_rank = rank; }
int LogRank() { return ThisThread().log_rank; }

void LogReinit() {
  bool fresh = false;  // the first read of the environment happens now: do not read (and warn) twice
  std::call_once(g_init_once, [&] {
    InitAndWarn(false);
    fresh = true;
  });
  g_inited.store(true, std::memory_order_release);
  if (!fresh) InitAndWarn(true);
  RefreshGate();
}

std::string LogFilePath() {
  EnsureInit();
  LogState& s = State();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.dest == Dest::kFile ? s.path : std::string();
}

namespace detail {
std::atomic<uint64_t> g_log_gate{0};

bool LogEnabledSlow(LogLevel level, Subsys subsys) {
  EnsureInit();
  LogState& s = State();
  return static_cast<int>(level) <= s.level.load(std::memory_order_relaxed) &&
         (s.mask.load(std::memory_order_relaxed) >> static_cast<int>(subsys) & 1u);
}
}  // namespace detail

void LogWrite(LogLevel level, Subsys subsys, const char* file, int line, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  WriteLine(level, subsys, file, line, msg);
}

bool LogRateLimit::Allow(uint64_t interval_ms, uint64_t* suppressed) {
  const uint64_t now = NowNs();
  uint64_t next = next_ns_.load(std::memory_order_relaxed);
  if (now < next || !next_ns_.compare_exchange_strong(next, now + interval_ms * 1000000ull)) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  *suppressed = suppressed_.exchange(0, std::memory_order_relaxed);
  return true;
}

void LogWriteLimited(LogRateLimit* limit, uint64_t interval_ms, LogLevel level, Subsys subsys, const char* file,
                     int line, const char* fmt, ...) {
  uint64_t suppressed = 0;
  if (!limit->Allow(interval_ms, &suppressed)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (suppressed > 0 && n >= 0 && static_cast<size_t>(n) < sizeof(msg))
    snprintf(msg + n, sizeof(msg) - static_cast<size_t>(n), " (%llu more like this suppressed)",
             static_cast<unsigned long long>(suppressed));
  WriteLine(level, subsys, file, line, msg);
}

}  // namespace hostccl
