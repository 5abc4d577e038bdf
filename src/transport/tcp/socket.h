// Socket helpers shared by the TCP transport and the bootstrap: an owning fd, address parsing
// and formatting ("ip:port", "[v6]:port"), listening, connecting with retry, and bounded
// read/write of whole buffers on nonblocking sockets.
// Contract: every socket made here is nonblocking and close-on-exec; every call that waits
// takes a Deadline and returns kTimeout when it passes; EINTR is retried everywhere.
// Thread-safety: free functions are reentrant; an Fd is owned by one thread at a time.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace hostccl::net {

// Owns one file descriptor; closes it on destruction. Move-only.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& o) noexcept : fd_(o.Release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) Reset(o.Release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family() const { return ss.ss_family; }
};

// Parses a numeric IPv4/IPv6 address (an IPv6 "%scope" suffix is accepted) and a port.
Status MakeSockAddr(const std::string& ip, uint16_t port, SockAddr* out);
// Parses "1.2.3.4:80" or "[::1]:80".
Status ParseHostPort(const std::string& text, SockAddr* out);
// "1.2.3.4:80" or "[::1]:80".
std::string FormatSockAddr(const SockAddr& addr);
std::string FormatHostPort(const std::string& ip, uint16_t port);
uint16_t SockAddrPort(const SockAddr& addr);
// True when `ip` is a numeric IPv4 or IPv6 address.
bool IsNumericIp(const std::string& ip);
// True for 127.0.0.0/8, ::1 and ::ffff:127.x.y.z.
bool IsLoopbackIp(const std::string& ip);
bool IsLoopback(const SockAddr& addr);
// The loopback address of ip's family: "127.0.0.1" or "::1".
std::string LoopbackOf(const std::string& ip);

// Out of file descriptors (EMFILE: this process's RLIMIT_NOFILE; ENFILE: the system's table).
bool OutOfDescriptors(int err);
// "RLIMIT_NOFILE is 64 (soft) and 61 descriptors are open in this process": the numbers a user
// needs to fix an EMFILE.
std::string DescriptorUsage();
// kUnavail "<call>: Too many open files: RLIMIT_NOFILE is ..., raise it (ulimit -n)".
Status DescriptorError(const char* call, int err);
// True for a status made by DescriptorError.
bool IsDescriptorError(const Status& st);
// Descriptors this process may still open (soft RLIMIT_NOFILE minus those open now).
int64_t FreeDescriptors();

// Large buffers and TCP_NODELAY for a data connection (best effort; failures are logged).
void TuneDataSocket(int fd);

// A nonblocking listening socket bound to ip:port (port 0 = ephemeral). *bound_port receives the
// actual port. EADDRINUSE is reported as kUnavail so callers can try another port; so is running
// out of descriptors (DescriptorError).
Status ListenOn(const std::string& ip, uint16_t port, Fd* out, uint16_t* bound_port);

// accept4() with CLOEXEC|NONBLOCK; returns an invalid Fd when nothing is pending (or on a
// transient error such as ECONNABORTED, which is logged, rate-limited). *err (optional) gets the
// errno of a failure, 0 when nothing was pending. Out of descriptors, the pending connection
// stays queued and the listener stays readable: AcceptOne then sleeps kAcceptBackoffMs so a
// caller's poll loop backs off instead of spinning, and callers should stop (or fail).
Fd AcceptOne(int listen_fd, SockAddr* peer, int* err = nullptr);
constexpr int kAcceptBackoffMs = 20;

// Starts a nonblocking connect. *in_progress tells whether completion must be awaited (POLLOUT,
// then ConnectResult). Errors that mean "peer not there yet" return kAgain; no descriptor left
// for the socket is kUnavail (DescriptorError), not worth retrying.
Status StartConnect(const SockAddr& addr, Fd* out, bool* in_progress);
// After POLLOUT on a connecting socket: OK, kAgain (refused/unreachable: retry) or an error.
Status ConnectResult(int fd, const SockAddr& addr);
// Connects, retrying refused/unreachable attempts with a small backoff until `deadline`.
Status ConnectWithRetry(const SockAddr& addr, Deadline deadline, Fd* out);

// Writes / reads exactly `len` bytes on a nonblocking socket, waiting with poll() until the
// deadline. A closed or reset connection is kRemote naming `who`; the deadline is kTimeout.
Status WriteFully(int fd, const void* buf, size_t len, Deadline deadline, const std::string& who);
Status ReadFully(int fd, void* buf, size_t len, Deadline deadline, const std::string& who);

// Waits until fd has `events` (POLLIN/POLLOUT) or the deadline passes (kTimeout).
Status PollOne(int fd, short events, Deadline deadline, const std::string& who);

}  // namespace hostccl::net
