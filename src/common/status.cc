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

const std::string& Status::Empty() {
  static const std::string* empty = new std::string();  // leaked: used from atexit handlers
  return *empty;
}

std::string Status::ToString() const {
  if (ok()) return "HCCL_SUCCESS";
  return std::string(CodeName(code_)) + ": " + message();
}

const char* EiCode(const Status& st) {
  const std::string& m = st.message();
  auto has = [&](const char* w) { return m.find(w) != std::string::npos; };
  switch (st.code()) {
    case Code::kSuccess: return nullptr;
    case Code::kTimeout:  // an operation's messages start with its name; others are from setup
      if (m.rfind("Hccl", 0) == 0) return "EI0002";
      return has("connect") || has("mesh") || has("rendezvous") || has("root") || has("joined") ? "EI0006"
                                                                                               : "EI0002";
    case Code::kPara:
      if (has(" mismatch: ") || has("differ")) return "EI0005";
      if (has("rank table")) return "EI0004";
      return "EI0003";
    case Code::kPtr:
    case Code::kNotSupport: return "EI0003";
    case Code::kTcpConnect: return "EI0006";
    case Code::kRemote:
    case Code::kTcpTransfer: return "EI0013";
    case Code::kMemory: return "EI0007";
    case Code::kOom: return "EI0011";
    case Code::kUnavail:
    case Code::kSyscall: return has("bind") || has("listen") || has("port") ? "EI0019" : nullptr;
    default: return nullptr;
  }
}

std::string ReportString(const Status& st) {
  const char* ei = EiCode(st);
  return ei != nullptr ? std::string(ei) + ": " + st.ToString() : st.ToString();
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
