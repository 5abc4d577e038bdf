#include "transport/tcp/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <net/if.h>
#include <dirent.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "common/log.h"

namespace hostccl::net {
namespace {

constexpr int kSocketBufferBytes = 4 << 20;
constexpr int kListenBacklog = 512;

std::string ErrnoText(int err) { return strerror(err); }

// Errors after which a connect attempt is worth repeating: the peer is not listening yet.
bool RetryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == EAGAIN || err == ECONNABORTED;
}

}  // namespace

bool OutOfDescriptors(int err) { return err == EMFILE || err == ENFILE; }

namespace {
// Descriptors open in this process (entries of /proc/self/fd, less the one the listing uses);
// -1 when it cannot be read (which itself happens when none is left).
int64_t OpenDescriptors() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int64_t n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;
}

int64_t SoftDescriptorLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<int64_t>(rl.rlim_cur);
}
}  // namespace

int64_t FreeDescriptors() {
  const int64_t limit = SoftDescriptorLimit();
  const int64_t open = OpenDescriptors();
  if (limit < 0) return INT64_MAX;
  if (open < 0) return 0;
  return std::max<int64_t>(0, limit - open);
}

std::string DescriptorUsage() {
  const int64_t limit = SoftDescriptorLimit();
  const int64_t open = OpenDescriptors();
  std::string s = limit < 0 ? std::string("RLIMIT_NOFILE is unlimited")
                            : StrFormat("RLIMIT_NOFILE is %lld (soft limit)", static_cast<long long>(limit));
  if (open >= 0) s += StrFormat(" and %lld descriptors are open in this process", static_cast<long long>(open));
  return s;
}

namespace {
constexpr const char kDescriptorMark[] = "out of file descriptors";
}

bool IsDescriptorError(const Status& st) {
  return st.code() == Code::kUnavail && st.message().find(kDescriptorMark) != std::string::npos;
}

Status DescriptorError(const char* call, int err) {
  if (err == ENFILE)
    return MakeStatus(Code::kUnavail, "%s: %s: %s, the system's file table is full (%s)", call, strerror(err),
                      kDescriptorMark, DescriptorUsage().c_str());
  return MakeStatus(Code::kUnavail, "%s: %s: %s: %s; raise it (ulimit -n)", call, strerror(err), kDescriptorMark,
                    DescriptorUsage().c_str());
}

void Fd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);  // close() is not retried on EINTR on Linux: the fd is gone.
  fd_ = fd;
}

Status MakeSockAddr(const std::string& ip_in, uint16_t port, SockAddr* out) {
  *out = SockAddr{};
  std::string ip = ip_in;
  std::string scope;
  if (auto pct = ip.find('%'); pct != std::string::npos) {
    scope = ip.substr(pct + 1);
    ip.resize(pct);
  }
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out->ss);
  if (scope.empty() && inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out->len = sizeof(sockaddr_in);
    return Status::Ok();
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out->ss);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    if (!scope.empty()) v6->sin6_scope_id = if_nametoindex(scope.c_str());
    out->len = sizeof(sockaddr_in6);
    return Status::Ok();
  }
  return MakeStatus(Code::kPara, "'%s' is not a numeric IPv4 or IPv6 address", ip_in.c_str());
}

bool IsNumericIp(const std::string& ip) {
  SockAddr a;
  return MakeSockAddr(ip, 0, &a).ok();
}

bool IsLoopbackIp(const std::string& ip) {
  SockAddr a;
  return MakeSockAddr(ip, 0, &a).ok() && IsLoopback(a);
}

bool IsLoopback(const SockAddr& a) {
  if (a.family() == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr.s_addr) >> 24) == 127;
  const in6_addr* v6 = &reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(v6) || (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
}

std::string LoopbackOf(const std::string& ip) {
  SockAddr a;
  return MakeSockAddr(ip, 0, &a).ok() && a.family() == AF_INET6 ? "::1" : "127.0.0.1";
}

Status ParseHostPort(const std::string& text, SockAddr* out) {
  std::string host, port_text;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return MakeStatus(Code::kPara, "address '%s' is not '[ipv6]:port'", text.c_str());
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos)
      return MakeStatus(Code::kPara, "address '%s' is not 'ip:port'", text.c_str());
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return MakeStatus(Code::kPara, "address '%s' has an invalid port", text.c_str());
  unsigned long port = std::stoul(port_text);
  if (port == 0 || port > 65535)
    return MakeStatus(Code::kPara, "address '%s' has port %lu outside [1, 65535]", text.c_str(), port);
  return MakeSockAddr(host, static_cast<uint16_t>(port), out);
}

uint16_t SockAddrPort(const SockAddr& addr) {
  if (addr.family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr.ss)->sin_port);
  if (addr.family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr.ss)->sin6_port);
  return 0;
}

std::string FormatHostPort(const std::string& ip, uint16_t port) {
  if (ip.find(':') != std::string::npos) return StrFormat("[%s]:%u", ip.c_str(), port);
  return StrFormat("%s:%u", ip.c_str(), port);
}

std::string FormatSockAddr(const SockAddr& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr.ss)->sin_addr, buf, sizeof(buf));
  } else if (addr.family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr.ss)->sin6_addr, buf, sizeof(buf));
  } else {
    return "?";
  }
  return FormatHostPort(buf, SockAddrPort(addr));
}

void TuneDataSocket(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    HLOG_WARN(kTcp, "setsockopt(TCP_NODELAY) on fd %d: %s", fd, strerror(errno));
  int bytes = kSocketBufferBytes;
  // The kernel clamps to net.core.{w,r}mem_max; a smaller buffer only costs throughput.
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes)) != 0)
    HLOG_DEBUG(kTcp, "setsockopt(SO_SNDBUF %d): %s", bytes, strerror(errno));
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) != 0)
    HLOG_DEBUG(kTcp, "setsockopt(SO_RCVBUF %d): %s", bytes, strerror(errno));
}

Status ListenOn(const std::string& ip, uint16_t port, Fd* out, uint16_t* bound_port) {
  SockAddr addr;
  HOSTCCL_RETURN_IF_ERROR(MakeSockAddr(ip, port, &addr));
  Fd fd(::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    if (OutOfDescriptors(errno)) return DescriptorError("socket() for a listener", errno);
    return MakeStatus(Code::kSyscall, "socket(): %s", strerror(errno));
  }
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  // Buffer sizes are inherited by accepted sockets only when set before listen().
  TuneDataSocket(fd.get());
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr.ss), addr.len) != 0) {
    int err = errno;
    return MakeStatus(err == EADDRINUSE ? Code::kUnavail : Code::kSyscall, "bind(%s): %s",
                      FormatHostPort(ip, port).c_str(), strerror(err));
  }
  if (::listen(fd.get(), kListenBacklog) != 0)
    return MakeStatus(Code::kSyscall, "listen(%s): %s", FormatHostPort(ip, port).c_str(), strerror(errno));
  SockAddr bound;
  bound.len = sizeof(bound.ss);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound.ss), &bound.len) != 0)
    return MakeStatus(Code::kSyscall, "getsockname: %s", strerror(errno));
  if (bound_port) *bound_port = SockAddrPort(bound);
  *out = std::move(fd);
  return Status::Ok();
}

Fd AcceptOne(int listen_fd, SockAddr* peer, int* err_out) {
  if (err_out) *err_out = 0;
  for (;;) {
    SockAddr a;
    a.len = sizeof(a.ss);
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&a.ss), &a.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      if (peer) *peer = a;
      return Fd(fd);
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return Fd();
    if (err_out) *err_out = err;
    if (OutOfDescriptors(err)) {
      HLOG_LIMITED(kWarn, kTcp, 1000, "accept on fd %d: %s (%s); backing off", listen_fd, strerror(err),
                   DescriptorUsage().c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(kAcceptBackoffMs));
    } else {
      HLOG_LIMITED(kWarn, kTcp, 1000, "accept on fd %d: %s", listen_fd, strerror(err));
    }
    return Fd();
  }
}

Status StartConnect(const SockAddr& addr, Fd* out, bool* in_progress) {
  Fd fd(::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    if (OutOfDescriptors(errno))
      return DescriptorError(StrFormat("socket() to connect to %s", FormatSockAddr(addr).c_str()).c_str(), errno);
    return MakeStatus(Code::kSyscall, "socket(): %s", strerror(errno));
  }
  TuneDataSocket(fd.get());
  *in_progress = false;
  int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr.ss), addr.len);
  if (rc != 0) {
    int err = errno;
    if (err == EINPROGRESS || err == EINTR) {
      *in_progress = true;  // EINTR: the connect continues asynchronously, like EINPROGRESS.
    } else if (RetryableConnectError(err)) {
      return MakeStatus(Code::kAgain, "connect(%s): %s", FormatSockAddr(addr).c_str(), strerror(err));
    } else {
      return MakeStatus(Code::kTcpConnect, "connect(%s): %s", FormatSockAddr(addr).c_str(), strerror(err));
    }
  }
  *out = std::move(fd);
  return Status::Ok();
}

Status ConnectResult(int fd, const SockAddr& addr) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == 0) return Status::Ok();
  return MakeStatus(RetryableConnectError(err) ? Code::kAgain : Code::kTcpConnect, "connect(%s): %s",
                    FormatSockAddr(addr).c_str(), strerror(err));
}

Status ConnectWithRetry(const SockAddr& addr, Deadline deadline, Fd* out) {
  int backoff_ms = 5;
  uint64_t start = NowNs();
  std::string last = "no attempt";
  for (;;) {
    Fd fd;
    bool in_progress = false;
    Status st = StartConnect(addr, &fd, &in_progress);
    if (st.ok() && in_progress) {
      st = PollOne(fd.get(), POLLOUT, deadline, FormatSockAddr(addr));
      if (st.ok()) st = ConnectResult(fd.get(), addr);
    }
    if (st.ok()) {
      *out = std::move(fd);
      return Status::Ok();
    }
    if (st.code() != Code::kAgain && st.code() != Code::kTimeout) return st;
    if (st.code() == Code::kAgain) last = st.message();
    if (deadline.Expired() || st.code() == Code::kTimeout) {
      return MakeStatus(Code::kTimeout, "could not connect to %s within %llu ms (last error: %s)",
                        FormatSockAddr(addr).c_str(),
                        static_cast<unsigned long long>((NowNs() - start) / 1000000), last.c_str());
    }
    int wait_ms = std::min(backoff_ms, std::max(0, deadline.RemainingMsForPoll()));
    if (deadline.infinite()) wait_ms = backoff_ms;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    backoff_ms = std::min(backoff_ms * 2, 200);
  }
}

Status PollOne(int fd, short events, Deadline deadline, const std::string& who) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.RemainingMsForPoll());
    if (rc > 0) return Status::Ok();  // errors/hangups surface in the following read/write
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return MakeStatus(Code::kSyscall, "poll(%s): %s", who.c_str(), strerror(errno));
    if (deadline.Expired()) return MakeStatus(Code::kTimeout, "timed out waiting for %s", who.c_str());
  }
}

Status WriteFully(int fd, const void* buf, size_t len, Deadline deadline, const std::string& who) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      HOSTCCL_RETURN_IF_ERROR(PollOne(fd, POLLOUT, deadline, who));
      continue;
    }
    int err = errno;
    return MakeStatus(Code::kRemote, "%s closed the connection (send: %s)", who.c_str(), ErrnoText(err).c_str());
  }
  return Status::Ok();
}

Status ReadFully(int fd, void* buf, size_t len, Deadline deadline, const std::string& who) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::recv(fd, p, len, 0);
    if (n > 0) {
      p += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return MakeStatus(Code::kRemote, "%s closed the connection", who.c_str());
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      HOSTCCL_RETURN_IF_ERROR(PollOne(fd, POLLIN, deadline, who));
      continue;
    }
    int err = errno;
    return MakeStatus(Code::kRemote, "%s closed the connection (recv: %s)", who.c_str(), ErrnoText(err).c_str());
  }
  return Status::Ok();
}

}  // namespace hostccl::net
