// Logging with levels and subsystems, in CANN's line format (docs/logging.md):
//   [LEVEL] MODULE(pid,process):YYYY-MM-DD-hh:mm:ss.mmm.uuu [file.cc:line] [tid] [rank r] [SUBSYS] message
// LEVEL is ERROR, WARNING, INFO or DEBUG (TRACE lines say DEBUG); MODULE is HCCL, or RUNTIME for the
// acl runtime; "[rank -]" before a rank is known.
// Level: HOSTCCL_LOG_LEVEL = ERROR|WARN|INFO|DEBUG|TRACE|0..4 wins; else ASCEND_GLOBAL_LOG_LEVEL
// 0 debug, 1 info, 2 warning, 3 error, 4 null (nothing); default WARN.
// Destination: HOSTCCL_LOG_FILE = path (%h -> host, %p -> pid) wins; else ASCEND_SLOG_PRINT_TO_STDOUT=1
// -> stdout; else ASCEND_PROCESS_LOG_PATH -> <path>/debug/plog/plog-<pid>_<YYYYMMDDhhmmssmmm>.log;
// else stderr. HOSTCCL_LOG_SUBSYS = comma list to keep (default all).
// A bad value of any of these: one warning naming the variable, the value and what is allowed
// (code EI0001), and the default is used.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <string>

namespace hostccl {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

enum class Subsys : int { kInit, kBoot, kColl, kAlgo, kShm, kTcp, kRuntime, kEnv, kCall, kKernel, kTool };

namespace detail {
// LogEnabled's answers, one bit each (level x kLogGateStride + subsystem), and bit kLogGateReady
// once the environment was read: every log site (several per operator call) costs one load.
inline constexpr int kLogGateStride = 12;
inline constexpr int kLogGateReady = 63;
static_assert(static_cast<int>(LogLevel::kTrace) * kLogGateStride + static_cast<int>(Subsys::kTool) < kLogGateReady,
              "the log gate holds every level and subsystem");
extern std::atomic<uint64_t> g_log_gate;
bool LogEnabledSlow(LogLevel level, Subsys subsys);  // reads the environment first
}  // namespace detail

inline bool LogEnabled(LogLevel level, Subsys subsys) {
  const uint64_t gate = detail::g_log_gate.load(std::memory_order_acquire);
  if ((gate >> detail::kLogGateReady & 1u) == 0) return detail::LogEnabledSlow(level, subsys);
  return gate >> (static_cast<int>(level) * detail::kLogGateStride + static_cast<int>(subsys)) & 1u;
}
// file = __FILE__ of the call site (its base name is printed), line = __LINE__.
void LogWrite(LogLevel level, Subsys subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

// The rank shown in this thread's log prefix (-1 = none). Set by the code running a rank.
void SetLogRank(int rank);
int LogRank();

// For tests: re-read the environment (level, file, subsystems).
void LogReinit();

// The file lines go to now ("" for stdout/stderr): the plog file under ASCEND_PROCESS_LOG_PATH or
// the expanded HOSTCCL_LOG_FILE.
std::string LogFilePath();

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
void LogWriteLimited(LogRateLimit* limit, uint64_t interval_ms, LogLevel level, Subsys subsys, const char* file,
                     int line, const char* fmt, ...) __attribute__((format(printf, 7, 8)));

}  // namespace hostccl

#define HLOG(level, subsys, ...)                                                   \
  do {                                                                             \
    if (::hostccl::LogEnabled(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys)) \
      ::hostccl::LogWrite(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

// A line that can repeat fast (a failing accept() in a loop): at most one per `interval_ms` from
// this call site, with the number suppressed appended to the next one.
#define HLOG_LIMITED(level, subsys, interval_ms, ...)                                            \
  do {                                                                                           \
    static ::hostccl::LogRateLimit hlog_limit_;                                                  \
    if (::hostccl::LogEnabled(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys))            \
      ::hostccl::LogWriteLimited(&hlog_limit_, interval_ms, ::hostccl::LogLevel::level,          \
                                 ::hostccl::Subsys::subsys, __FILE__, __LINE__, __VA_ARGS__);    \
  } while (0)

#define HLOG_ERROR(subsys, ...) HLOG(kError, subsys, __VA_ARGS__)
#define HLOG_WARN(subsys, ...) HLOG(kWarn, subsys, __VA_ARGS__)
#define HLOG_INFO(subsys, ...) HLOG(kInfo, subsys, __VA_ARGS__)
#define HLOG_DEBUG(subsys, ...) HLOG(kDebug, subsys, __VA_ARGS__)
#define HLOG_TRACE(subsys, ...) HLOG(kTrace, subsys, __VA_ARGS__)
