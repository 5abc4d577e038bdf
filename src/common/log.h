// Logging with levels and subsystems.
// Line format: "host:pid:tid [rank r] LEVEL SUBSYS message" ("[rank -]" before a rank is known).
// HOSTCCL_LOG_LEVEL = ERROR|WARN|INFO|DEBUG|TRACE (default WARN); HOSTCCL_LOG_FILE = path
// (%h -> host, %p -> pid; default stderr); HOSTCCL_LOG_SUBSYS = comma list to keep (default all).
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>

namespace hostccl {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

enum class Subsys : int { kInit, kBoot, kColl, kAlgo, kShm, kTcp, kRuntime, kEnv, kCall, kKernel, kTool };

bool LogEnabled(LogLevel level, Subsys subsys);
void LogWrite(LogLevel level, Subsys subsys, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// The rank shown in this thread's log prefix (-1 = none). Set by the code running a rank.
void SetLogRank(int rank);
int LogRank();

// For tests: re-read the environment (level, file, subsystems).
void LogReinit();

// One call site's rate limit (HLOG_LIMITED): at most one line per interval; the next line that
// goes out says how many were suppressed meanwhile. Lock-free; a static per call site.
class LogRateLimit {
 public:
  // True when a line may go out now; *suppressed = lines dropped since the last one that did.
  bool Allow(uint64_t interval_ms, uint64_t* suppressed);

 private:
  std::atomic<uint64_t> next_ns_{0};
  std::atomic<uint64_t> suppressed_{0};
};
void LogWriteLimited(LogRateLimit* limit, uint64_t interval_ms, LogLevel level, Subsys subsys, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

}  // namespace hostccl

#define HLOG(level, subsys, ...)                                                   \
  do {                                                                             \
    if (::hostccl::LogEnabled(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys)) \
      ::hostccl::LogWrite(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys, __VA_ARGS__); \
  } while (0)

// A line that can repeat fast (a failing accept() in a loop): at most one per `interval_ms` from
// this call site, with the number suppressed appended to the next one.
#define HLOG_LIMITED(level, subsys, interval_ms, ...)                                            \
  do {                                                                                           \
    static ::hostccl::LogRateLimit hlog_limit_;                                                  \
    if (::hostccl::LogEnabled(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys))            \
      ::hostccl::LogWriteLimited(&hlog_limit_, interval_ms, ::hostccl::LogLevel::level,          \
                                 ::hostccl::Subsys::subsys, __VA_ARGS__);                        \
  } while (0)

#define HLOG_ERROR(subsys, ...) HLOG(kError, subsys, __VA_ARGS__)
#define HLOG_WARN(subsys, ...) HLOG(kWarn, subsys, __VA_ARGS__)
#define HLOG_INFO(subsys, ...) HLOG(kInfo, subsys, __VA_ARGS__)
#define HLOG_DEBUG(subsys, ...) HLOG(kDebug, subsys, __VA_ARGS__)
#define HLOG_TRACE(subsys, ...) HLOG(kTrace, subsys, __VA_ARGS__)
