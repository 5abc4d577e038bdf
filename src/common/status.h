// Status: the error value used everywhere inside hostccl (no exceptions cross layers).
// Codes are numerically identical to HcclResult so the api layer maps them 1:1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace hostccl {

enum class Code : int {
  kSuccess = 0,
  kPara = 1,         // HCCL_E_PARA
  kPtr = 2,          // HCCL_E_PTR
  kMemory = 3,       // HCCL_E_MEMORY
  kInternal = 4,     // HCCL_E_INTERNAL
  kNotSupport = 5,   // HCCL_E_NOT_SUPPORT
  kNotFound = 6,     // HCCL_E_NOT_FOUND
  kUnavail = 7,      // HCCL_E_UNAVAIL
  kSyscall = 8,      // HCCL_E_SYSCALL
  kTimeout = 9,      // HCCL_E_TIMEOUT
  kOpenFile = 10,    // HCCL_E_OPEN_FILE_FAILURE
  kTcpConnect = 11,  // HCCL_E_TCP_CONNECT
  kTcpTransfer = 13, // HCCL_E_TCP_TRANSFER
  kRuntime = 15,     // HCCL_E_RUNTIME
  kAgain = 20,       // HCCL_E_AGAIN
  kRemote = 21,      // HCCL_E_REMOTE
  kOom = 24,         // HCCL_E_OOM
};

const char* CodeName(Code c);  // "HCCL_E_PARA", ...

// A [[nodiscard]] error value: code, message and context (rank, peer, op sequence).
// An ok Status is a code and a null pointer: every call passes several up and down its path, so
// constructing, moving and destroying one costs a few instructions (the message and the context
// live out of line, allocated only for an error).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string msg) : code_(code), rep_(new Rep{std::move(msg)}) {}
  Status(const Status& o) : code_(o.code_), rep_(o.rep_ ? new Rep(*o.rep_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) {
      code_ = o.code_;
      rep_.reset(o.rep_ ? new Rep(*o.rep_) : nullptr);
    }
    return *this;
  }
  Status(Status&& o) noexcept = default;
  Status& operator=(Status&& o) noexcept = default;
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kSuccess; }
  Code code() const { return code_; }
  const std::string& message() const { return rep_ ? rep_->msg : Empty(); }

  // Set once the failure has been written to the log at error level (by the place that knows the
  // operator and the rank), so layers it passes through (the stream, the api) do not print it again.
  bool logged() const { return rep_ && rep_->logged; }
  Status& MarkLogged() { Mut().logged = true; return *this; }

  int rank() const { return rep_ ? rep_->rank : -1; }
  int peer() const { return rep_ ? rep_->peer : -1; }
  Status& WithRank(int r) { Mut().rank = r; return *this; }
  Status& WithPeer(int p) { Mut().peer = p; return *this; }

  // "HCCL_E_PARA: <message>"
  std::string ToString() const;

 private:
  struct Rep {
    std::string msg;
    int rank = -1;
    int peer = -1;
    bool logged = false;
  };
  static const std::string& Empty();
  Rep& Mut() {
    if (!rep_) rep_.reset(new Rep());
    return *rep_;
  }
  Code code_ = Code::kSuccess;
  std::unique_ptr<Rep> rep_;
};

// The EI error code HCCL reports for the same cause (docs/logging.md has the table), or nullptr:
// EI0002 execution timeout, EI0003 invalid operator argument, EI0004 rank table, EI0005 arguments
// differ between ranks, EI0006 connection setup timeout, EI0007/EI0011 allocation, EI0013 a peer
// failed or vanished mid-operation, EI0019 bind/listen failure. Derived from the code and message.
const char* EiCode(const Status& st);

// "EI0005: HCCL_E_PARA: <message>" (without the EI part when there is none): the form written to
// the log and kept for aclGetRecentErrMsg.
std::string ReportString(const Status& st);

// printf-style constructor: MakeStatus(Code::kPara, "root %u >= rankSize %u", root, n)
Status MakeStatus(Code code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Formats like printf into a std::string.
std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace hostccl

#define HOSTCCL_RETURN_IF_ERROR(expr)        \
  do {                                       \
    ::hostccl::Status _st = (expr);          \
    if (!_st.ok()) return _st;               \
  } while (0)
