// Logging with levels and subsystems.
// Line format: "host:pid:tid [rank r] LEVEL SUBSYS message" ("[rank -]" before a rank is known).
// HOSTCCL_LOG_LEVEL = ERROR|WARN|INFO|DEBUG|TRACE (default WARN); HOSTCCL_LOG_FILE = path
// (%h -> host, %p -> pid; default stderr); HOSTCCL_LOG_SUBSYS = comma list to keep (default all).
#pragma once

#include <cstdarg>

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

}  // namespace hostccl

#define HLOG(level, subsys, ...)                                                   \
  do {                                                                             \
    if (::hostccl::LogEnabled(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys)) \
      ::hostccl::LogWrite(::hostccl::LogLevel::level, ::hostccl::Subsys::subsys, __VA_ARGS__); \
  } while (0)

#define HLOG_ERROR(subsys, ...) HLOG(kError, subsys, __VA_ARGS__)
#define HLOG_WARN(subsys, ...) HLOG(kWarn, subsys, __VA_ARGS__)
#define HLOG_INFO(subsys, ...) HLOG(kInfo, subsys, __VA_ARGS__)
#define HLOG_DEBUG(subsys, ...) HLOG(kDebug, subsys, __VA_ARGS__)
#define HLOG_TRACE(subsys, ...) HLOG(kTrace, subsys, __VA_ARGS__)
