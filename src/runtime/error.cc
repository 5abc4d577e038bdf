// Thread-local recent error message behind aclGetRecentErrMsg.
#include "runtime/error.h"

#include <cstdarg>
#include <cstdio>

#include "common/log.h"
#include "common/thread_state.h"
#include "runtime/runtime.h"

namespace hostccl::rt {
namespace {
thread_local ExitMarked<std::string> tl_recent_error;
}  // namespace

void SetRecentError(const std::string& msg) { tl_recent_error = msg; }

const char* RecentError() { return tl_recent_error.c_str(); }

int Fail(int code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  HLOG_ERROR(kRuntime, "%s (error %d)", buf, code);
  tl_recent_error = StrFormat("%s (error %d)", buf, code);
  return code;
}

}  // namespace hostccl::rt
