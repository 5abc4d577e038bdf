// TcpStore: a one-thread poll() server holding the key/value map, and blocking clients.
// Wire (little-endian): request = magic u32 "HCS1", op u8, key_len u32, value_len u32, key, value;
// reply = status u8 (0 ok, 1 absent, 2 error), len u32, payload. Lengths are bounded before any
// allocation; a connection sending a bad magic, op or length is dropped and logged.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/store.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

constexpr uint32_t kMagic = 0x31534348;  // "HCS1"
constexpr size_t kHeaderBytes = 13;
constexpr size_t kMaxClients = 1024;
constexpr size_t kMaxPendingOut = 64u << 20;  // a client that stops reading is dropped
enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kDelete = 4, kCheck = 5 };
enum Reply : uint8_t { kOk = 0, kAbsent = 1, kError = 2 };

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
std::string EncodeI64(int64_t v) {
  std::string s;
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(u >> (8 * i)));
  return s;
}
int64_t DecodeI64(const std::string& s) {
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * i);
  return static_cast<int64_t>(u);
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string Endpoint(const std::string& host, uint16_t port) {
  return host.find(':') != std::string::npos ? StrFormat("[%s]:%u", host.c_str(), port)
                                             : StrFormat("%s:%u", host.c_str(), port);
}

class Server final : public TcpStoreServer {
 public:
  ~Server() override {
    stop_.store(true);
    if (wake_[1] >= 0) {
      char c = 0;
      (void)!write(wake_[1], &c, 1);
    }
    if (thread_.joinable()) thread_.join();
    for (auto& [fd, conn] : conns_) close(fd);
    if (listen_fd_ >= 0) close(listen_fd_);
    if (wake_[0] >= 0) close(wake_[0]);
    if (wake_[1] >= 0) close(wake_[1]);
  }

  Status Start(const std::string& host, uint16_t port) {
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
      return MakeStatus(Code::kSyscall, "tcp store: pipe failed: %s", strerror(errno));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    std::string port_text = std::to_string(port);
    int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
    if (rc != 0)
      return MakeStatus(Code::kPara, "tcp store: cannot resolve '%s': %s", host.c_str(),
                        gai_strerror(rc));
    int last_err = 0;
    for (addrinfo* ai = res; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
      int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        last_err = errno;
        continue;
      }
      int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        last_err = errno;
        close(fd);
        continue;
      }
      listen_fd_ = fd;
    }
    freeaddrinfo(res);
    if (listen_fd_ < 0) {
      return MakeStatus(Code::kTcpConnect, "tcp store: cannot listen on %s: %s",
                        Endpoint(host, port).c_str(), strerror(last_err));
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    SetNonBlocking(listen_fd_);
    thread_ = std::thread([this] { Loop(); });
    HLOG_INFO(kBoot, "tcp store server listening on %s", Endpoint(host, port_).c_str());
    return Status::Ok();
  }

  uint16_t port() const override { return port_; }

 private:
  struct Conn {
    std::string in, out;
  };

  void Loop() {
    pthread_setname_np(pthread_self(), "hccl-store");
    std::vector<pollfd> fds;
    while (!stop_.load()) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, conn] : conns_)
        fds.push_back({fd, static_cast<short>(POLLIN | (conn.out.empty() ? 0 : POLLOUT)), 0});
      int n = poll(fds.data(), fds.size(), 500);
      if (n <= 0) continue;
      if (fds[1].revents & POLLIN) Accept();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = conns_.find(fds[i].fd);
        if (it == conns_.end()) continue;
        if (!Service(fds[i].fd, it->second, fds[i].revents)) {
          close(fds[i].fd);
          conns_.erase(it);
        }
      }
    }
  }

  void Accept() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      if (conns_.size() >= kMaxClients) {
        HLOG_WARN(kBoot, "tcp store: %zu connections open; refusing another", conns_.size());
        close(fd);
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      conns_.emplace(fd, Conn{});
    }
  }

  // Returns false when the connection must be closed.
  bool Service(int fd, Conn& c, short revents) {
    if (revents & POLLIN) {
      char buf[65536];
      for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n > 0) {
          c.in.append(buf, static_cast<size_t>(n));
          if (!Process(fd, c)) return false;
          continue;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return false;
      }
    } else if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
      return false;
    }
    while (!c.out.empty()) {
      ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return false;
    }
    return c.out.size() <= kMaxPendingOut;
  }

  // Handles every complete request in c.in; false = protocol violation.
  bool Process(int fd, Conn& c) {
    size_t off = 0;
    bool ok = true;
    while (c.in.size() - off >= kHeaderBytes) {
      const char* h = c.in.data() + off;
      uint32_t magic = GetU32(h);
      uint8_t op = static_cast<uint8_t>(h[4]);
      uint32_t klen = GetU32(h + 5), vlen = GetU32(h + 9);
      if (magic != kMagic || op < kSet || op > kCheck || klen == 0 || klen > kMaxStoreKeyBytes ||
          vlen > kMaxStoreValueBytes || (op == kAdd && vlen != 8)) {
        HLOG_WARN(kBoot,
                  "tcp store: dropping connection fd %d: bad request header (magic 0x%08x op %u "
                  "key %u bytes value %u bytes)",
                  fd, magic, op, klen, vlen);
        ok = false;
        break;
      }
      if (c.in.size() - off < kHeaderBytes + klen + vlen) break;
      std::string key(h + kHeaderBytes, klen), value(h + kHeaderBytes + klen, vlen);
      off += kHeaderBytes + klen + vlen;
      Handle(static_cast<Op>(op), key, value, &c.out);
    }
    c.in.erase(0, off);
    return ok;
  }

  static void Respond(std::string* out, Reply r, const std::string& payload) {
    out->push_back(static_cast<char>(r));
    PutU32(out, static_cast<uint32_t>(payload.size()));
    out->append(payload);
  }

  void Handle(Op op, const std::string& key, const std::string& value, std::string* out) {
    switch (op) {
      case kSet:
        map_[key] = value;
        Respond(out, kOk, "");
        return;
      case kGet: {
        auto it = map_.find(key);
        if (it == map_.end())
          Respond(out, kAbsent, "");
        else
          Respond(out, kOk, it->second);
        return;
      }
      case kAdd: {
        int64_t v = 0;
        auto it = map_.find(key);
        if (it != map_.end()) {
          auto parsed = ParseInt(it->second);
          if (!parsed) {
            Respond(out, kError, "value is not an integer");
            return;
          }
          v = *parsed;
        }
        v += DecodeI64(value);
        map_[key] = std::to_string(v);
        Respond(out, kOk, EncodeI64(v));
        return;
      }
      case kDelete:
        map_.erase(key);
        Respond(out, kOk, "");
        return;
      case kCheck:
        Respond(out, map_.count(key) ? kOk : kAbsent, "");
        return;
    }
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // Owned by the server thread after Start().
  std::map<int, Conn> conns_;
  std::map<std::string, std::string> map_;
};

class Client final : public Store {
 public:
  Client(int fd, std::string endpoint) : fd_(fd), endpoint_(std::move(endpoint)) {}
  ~Client() override { close(fd_); }

  Status Set(const std::string& key, const std::string& value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    HOSTCCL_RETURN_IF_ERROR(CheckStoreValue(key, value.size()));
    Reply r;
    std::string payload;
    return Call(kSet, key, value, Deadline::AfterMs(kStoreOpTimeoutMs), &r, &payload);
  }

  Status Get(const std::string& key, Deadline deadline, std::string* value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    int sleep_us = 500;
    for (;;) {
      Reply r;
      // One request's own bound: the caller's deadline, but never less than a short grace.
      Deadline op_deadline = deadline.infinite() ? Deadline::AfterMs(kStoreOpTimeoutMs) : deadline;
      if (op_deadline.Expired()) op_deadline = Deadline::AfterMs(1000);
      HOSTCCL_RETURN_IF_ERROR(Call(kGet, key, "", op_deadline, &r, value));
      if (r == kOk) return Status::Ok();
      if (deadline.Expired())
        return MakeStatus(Code::kTimeout,
                          "tcp store %s: key '%s' did not appear before the deadline",
                          endpoint_.c_str(), key.c_str());
      StoreBackoff(deadline, &sleep_us);
    }
  }

  Status Add(const std::string& key, int64_t delta, int64_t* new_value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    Reply r;
    std::string payload;
    HOSTCCL_RETURN_IF_ERROR(
        Call(kAdd, key, EncodeI64(delta), Deadline::AfterMs(kStoreOpTimeoutMs), &r, &payload));
    if (payload.size() != 8)
      return MakeStatus(Code::kTcpTransfer, "tcp store %s: malformed Add reply", endpoint_.c_str());
    if (new_value != nullptr) *new_value = DecodeI64(payload);
    return Status::Ok();
  }

  Status Delete(const std::string& key) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    Reply r;
    std::string payload;
    return Call(kDelete, key, "", Deadline::AfterMs(kStoreOpTimeoutMs), &r, &payload);
  }

  Status Check(const std::string& key, bool* present) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    Reply r;
    std::string payload;
    HOSTCCL_RETURN_IF_ERROR(
        Call(kCheck, key, "", Deadline::AfterMs(kStoreOpTimeoutMs), &r, &payload));
    *present = r == kOk;
    return Status::Ok();
  }

 private:
  // One request/reply round trip. kError replies become kPara; transport failures kTcpTransfer.
  Status Call(Op op, const std::string& key, const std::string& value, Deadline deadline, Reply* r,
              std::string* payload) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_)
      return MakeStatus(Code::kTcpTransfer, "tcp store %s: connection already failed",
                        endpoint_.c_str());
    std::string req;
    PutU32(&req, kMagic);
    req.push_back(static_cast<char>(op));
    PutU32(&req, static_cast<uint32_t>(key.size()));
    PutU32(&req, static_cast<uint32_t>(value.size()));
    req += key;
    req += value;
    Status st = IoAll(true, req.data(), req.size(), deadline);
    char head[5];
    if (st.ok()) st = IoAll(false, head, sizeof(head), deadline);
    if (st.ok()) {
      uint32_t len = GetU32(head + 1);
      if (static_cast<uint8_t>(head[0]) > kError || len > kMaxStoreValueBytes) {
        st = MakeStatus(Code::kTcpTransfer, "tcp store %s: malformed reply (status %u, %u bytes)",
                        endpoint_.c_str(), static_cast<uint8_t>(head[0]), len);
      } else {
        payload->resize(len);
        st = IoAll(false, payload->data(), len, deadline);
      }
    }
    if (!st.ok()) {
      broken_ = true;  // a half-finished exchange leaves the stream unusable
      return st;
    }
    *r = static_cast<Reply>(head[0]);
    if (*r == kError)
      return MakeStatus(Code::kPara, "tcp store %s: key '%s': %s", endpoint_.c_str(), key.c_str(),
                        payload->c_str());
    return Status::Ok();
  }

  Status IoAll(bool sending, char* buf, size_t n, Deadline deadline) {
    return IoAll(sending, static_cast<const char*>(buf), n, deadline);
  }
  Status IoAll(bool sending, const char* buf, size_t n, Deadline deadline) {
    size_t done = 0;
    while (done < n) {
      pollfd p{fd_, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
      int rc = poll(&p, 1, deadline.RemainingMsForPoll());
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0)
        return MakeStatus(Code::kTimeout, "tcp store %s: no reply before the deadline",
                          endpoint_.c_str());
      ssize_t k = sending ? send(fd_, buf + done, n - done, MSG_NOSIGNAL)
                          : recv(fd_, const_cast<char*>(buf) + done, n - done, 0);
      if (k > 0) {
        done += static_cast<size_t>(k);
        continue;
      }
      if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      return MakeStatus(Code::kTcpTransfer, "tcp store %s: connection lost: %s", endpoint_.c_str(),
                        k == 0 ? "closed by the server" : strerror(errno));
    }
    return Status::Ok();
  }

  std::mutex mu_;
  int fd_;
  bool broken_ = false;  // guarded by mu_
  std::string endpoint_;
};

}  // namespace

Status StartTcpStoreServer(const std::string& host, uint16_t port,
                           std::unique_ptr<TcpStoreServer>* out) {
  auto server = std::make_unique<Server>();
  HOSTCCL_RETURN_IF_ERROR(server->Start(host, port));
  *out = std::move(server);
  return Status::Ok();
}

Status ConnectTcpStore(const std::string& host, uint16_t port, Deadline deadline,
                       std::unique_ptr<Store>* out) {
  std::string endpoint = Endpoint(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error = "no attempt";
  uint64_t start = NowNs();
  for (;;) {
    addrinfo* res = nullptr;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0) {
      last_error = StrFormat("cannot resolve '%s': %s", host.c_str(), gai_strerror(rc));
    } else {
      for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
          last_error = strerror(errno);
          continue;
        }
        int crc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (crc != 0 && errno == EINPROGRESS) {
          pollfd p{fd, POLLOUT, 0};
          int wait_ms = deadline.RemainingMsForPoll();
          if (wait_ms < 0 || wait_ms > 2000) wait_ms = 2000;
          int err = ETIMEDOUT;
          if (poll(&p, 1, wait_ms) == 1) {
            socklen_t len = sizeof(err);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          }
          crc = err == 0 ? 0 : -1;
          errno = err;
        }
        if (crc == 0) {
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          freeaddrinfo(res);
          *out = std::make_unique<Client>(fd, endpoint);
          return Status::Ok();
        }
        last_error = strerror(errno);
        close(fd);
      }
      freeaddrinfo(res);
    }
    if (deadline.Expired()) {
      return MakeStatus(Code::kTcpConnect, "cannot connect to the store at %s within %llu ms: %s",
                        endpoint.c_str(),
                        static_cast<unsigned long long>((NowNs() - start) / 1000000),
                        last_error.c_str());
    }
    // The server may not be up yet: retry until the deadline.
    int wait_ms = deadline.RemainingMsForPoll();
    if (wait_ms < 0 || wait_ms > 50) wait_ms = 50;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

}  // namespace hostccl::boot
