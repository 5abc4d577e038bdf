#include "common/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/env.h"

namespace hostccl {
namespace {

const char* kLevelNames[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
const char* kSubsysNames[] = {"INIT", "BOOT", "COLL", "ALGO", "SHM", "TCP", "RT", "ENV", "CALL", "KERN", "TOOL"};
constexpr int kNumSubsys = sizeof(kSubsysNames) / sizeof(kSubsysNames[0]);

struct LogState {
  std::atomic<int> level{static_cast<int>(LogLevel::kWarn)};
  std::atomic<unsigned> mask{~0u};
  std::mutex mu;
  FILE* out = stderr;
  char host[64] = "?";
};

LogState& State() {
  static LogState s;
  return s;
}

std::once_flag g_init_once;

void InitLocked(LogState& s) {
  gethostname(s.host, sizeof(s.host) - 1);
  if (const char* lv = std::getenv("HOSTCCL_LOG_LEVEL")) {
    for (int i = 0; i < 5; ++i)
      if (strcasecmp(lv, kLevelNames[i]) == 0) s.level = i;
    if (lv[0] >= '0' && lv[0] <= '4' && lv[1] == 0) s.level = lv[0] - '0';
  }
  if (const char* ss = std::getenv("HOSTCCL_LOG_SUBSYS"); ss && *ss) {
    unsigned m = 0;
    std::string list(ss);
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      std::string item = list.substr(pos, comma - pos);
      for (int i = 0; i < kNumSubsys; ++i)
        if (strcasecmp(item.c_str(), kSubsysNames[i]) == 0) m |= 1u << i;
      pos = comma + 1;
    }
    s.mask = m;
  }
  if (const char* f = std::getenv("HOSTCCL_LOG_FILE"); f && *f) {
    std::string path;
    for (const char* p = f; *p; ++p) {
      if (p[0] == '%' && p[1] == 'h') { path += s.host; ++p; }
      else if (p[0] == '%' && p[1] == 'p') { path += std::to_string(getpid()); ++p; }
      else path += *p;
    }
    if (FILE* fp = std::fopen(path.c_str(), "a")) {
      setvbuf(fp, nullptr, _IOLBF, 0);
      if (s.out != stderr) std::fclose(s.out);
      s.out = fp;
    }
  }
}

void EnsureInit() {
  std::call_once(g_init_once, [] {
    LogState& s = State();
    std::lock_guard<std::mutex> lk(s.mu);
    InitLocked(s);
  });
}

thread_local int t_rank = -1;

}  // namespace

void SetLogRank(int rank) { t_rank = rank; }
int LogRank() { return t_rank; }

void LogReinit() {
  EnsureInit();
  LogState& s = State();
  std::lock_guard<std::mutex> lk(s.mu);
  s.level = static_cast<int>(LogLevel::kWarn);
  s.mask = ~0u;
  InitLocked(s);
}

bool LogEnabled(LogLevel level, Subsys subsys) {
  EnsureInit();
  LogState& s = State();
  return static_cast<int>(level) <= s.level.load(std::memory_order_relaxed) &&
         (s.mask.load(std::memory_order_relaxed) >> static_cast<int>(subsys) & 1u);
}

namespace {
void WriteLine(LogLevel level, Subsys subsys, const char* msg) {
  LogState& s = State();
  char rank[16];
  if (t_rank >= 0) snprintf(rank, sizeof(rank), "%d", t_rank);
  else snprintf(rank, sizeof(rank), "-");
  long tid = syscall(SYS_gettid);
  std::lock_guard<std::mutex> lk(s.mu);
  std::fprintf(s.out, "%s:%d:%ld [rank %s] %s %s %s\n", s.host, getpid(), tid, rank,
               kLevelNames[static_cast<int>(level)], kSubsysNames[static_cast<int>(subsys)], msg);
  std::fflush(s.out);
}
}  // namespace

void LogWrite(LogLevel level, Subsys subsys, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  WriteLine(level, subsys, msg);
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

void LogWriteLimited(LogRateLimit* limit, uint64_t interval_ms, LogLevel level, Subsys subsys, const char* fmt, ...) {
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
  WriteLine(level, subsys, msg);
}

}  // namespace hostccl
