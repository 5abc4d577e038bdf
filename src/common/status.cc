#include "common/status.h"

#include <cstdarg>
#include <cstdio>

namespace hostccl {

const char* CodeName(Code c) {
  switch (c) {
    case Code::kSuccess: return "HCCL_SUCCESS";
    case Code::kPara: return "HCCL_E_PARA";
    case Code::kPtr: return "HCCL_E_PTR";
    case Code::kMemory: return "HCCL_E_MEMORY";
    case Code::kInternal: return "HCCL_E_INTERNAL";
    case Code::kNotSupport: return "HCCL_E_NOT_SUPPORT";
    case Code::kNotFound: return "HCCL_E_NOT_FOUND";
    case Code::kUnavail: return "HCCL_E_UNAVAIL";
    case Code::kSyscall: return "HCCL_E_SYSCALL";
    case Code::kTimeout: return "HCCL_E_TIMEOUT";
    case Code::kOpenFile: return "HCCL_E_OPEN_FILE_FAILURE";
    case Code::kTcpConnect: return "HCCL_E_TCP_CONNECT";
    case Code::kTcpTransfer: return "HCCL_E_TCP_TRANSFER";
    case Code::kRuntime: return "HCCL_E_RUNTIME";
    case Code::kAgain: return "HCCL_E_AGAIN";
    case Code::kRemote: return "HCCL_E_REMOTE";
    case Code::kOom: return "HCCL_E_OOM";
  }
  return "HCCL_E_UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "HCCL_SUCCESS";
  return std::string(CodeName(code_)) + ": " + msg_;
}

static std::string VFormat(const char* fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char buf[512];
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  std::string out;
  if (n < 0) {
    out = fmt;
  } else if (static_cast<size_t>(n) < sizeof(buf)) {
    out.assign(buf, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n));
    vsnprintf(out.data(), static_cast<size_t>(n) + 1, fmt, ap2);
  }
  va_end(ap2);
  return out;
}

std::string StrFormat(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = VFormat(fmt, ap);
  va_end(ap);
  return s;
}

Status MakeStatus(Code code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string s = VFormat(fmt, ap);
  va_end(ap);
  return Status(code, std::move(s));
}

}  // namespace hostccl
