// TcpStore: a one-thread poll() server holding the key/value map, and blocking clients.
// Wire (little-endian): request = magic u32 "HCS1", op u8, key_len u32, value_len u32, key, value;
// reply = status u8 (0 ok, 1 absent, 2 error), len u32, payload. Lengths are bounded before any
// allocation; a connection sending a bad magic, op or length is dropped and logged.
//
// With a secret (HOSTCCL_STORE_SECRET; hcclrun always sets one) every connection first runs a
// mutual challenge-response, and the server answers no request before it succeeded:
//   client -> server  "HCA1" u32, client nonce (16 random bytes)
//   server -> client  "HCA1" u32, server nonce (16), HMAC-SHA256(secret, "hostccl-store-server" |
//                     client nonce | server nonce)
//   client -> server  HMAC-SHA256(secret, "hostccl-store-client" | client nonce | server nonce)
//   server -> client  'Y' (accepted; a wrong proof is answered by closing the connection)
// The secret never travels. A client checks the server's proof before it sends its own or any key
// (a squatter on the port gets nothing). Connections that have not proved the secret within
// kAuthDeadlineMs are dropped, and at most kMaxUnauthenticated wait at once (a new one evicts the
// oldest), so idle or hostile connections never lock the ranks out.
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
#include "bootstrap/store_auth.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

constexpr uint32_t kMagic = 0x31534348;  // "HCS1"
constexpr size_t kHeaderBytes = 13;
constexpr size_t kMaxClients = 1024;
constexpr size_t kMaxPendingOut = 64u << 20;  // a client that stops reading is dropped
constexpr uint32_t kAuthMagic = 0x31414348;   // "HCA1"
constexpr size_t kNonceBytes = 16;
constexpr size_t kHelloBytes = 4 + kNonceBytes;                     // client's hello
constexpr size_t kChallengeBytes = 4 + kNonceBytes + kSha256Bytes;  // server's answer
constexpr char kAccepted = 'Y';
constexpr size_t kMaxUnauthenticated = 128;
const char kServerLabel[] = "hostccl-store-server";
const char kClientLabel[] = "hostccl-store-client";
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

  Status Start(const std::string& host, uint16_t port, const std::string& secret) {
    if (!secret.empty()) HOSTCCL_RETURN_IF_ERROR(CheckStoreSecret(secret, "the store secret"));
    secret_ = secret;
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
    HLOG_INFO(kBoot, "tcp store server listening on %s (%s)", Endpoint(host, port_).c_str(),
              secret_.empty() ? "no secret: any local process may use it" : "secret required");
    return Status::Ok();
  }

  uint16_t port() const override { return port_; }

 private:
  struct Conn {
    std::string in, out;
    bool authed = false;      // proved the secret (always true without one)
    bool challenged = false;  // got the hello, sent the challenge; the proof is due
    uint64_t accepted_ns = 0;
    std::string nonces;  // client nonce | server nonce, once challenged
  };

  void Loop() {
    pthread_setname_np(pthread_self(), "hccl-store");
    std::vector<pollfd> fds;
    while (!stop_.load()) {
      DropLateConnections();
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, conn] : conns_)
        fds.push_back({fd, static_cast<short>(POLLIN | (conn.out.empty() ? 0 : POLLOUT)), 0});
      // Wake up at least every 500 ms (the stop flag, the handshake deadline).
      int n = poll(fds.data(), fds.size(), 500);
      if (n <= 0) continue;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = conns_.find(fds[i].fd);
        if (it == conns_.end()) continue;
        if (!Service(fds[i].fd, it->second, fds[i].revents)) Drop(it);
      }
      // After the loop above: Accept may evict connections whose fds that loop still held.
      if (fds[1].revents & POLLIN) Accept();
    }
  }

  void Drop(std::map<int, Conn>::iterator it) {
    if (!it->second.authed) --unauthenticated_;
    close(it->first);
    conns_.erase(it);
  }

  // Rate-limited: a hostile peer may make many of these.
  void LogRefusal(int fd, const char* why) {
    ++refusals_;
    if (refusals_ <= 10 || refusals_ % 1000 == 0) {
      HLOG_WARN(kBoot, "tcp store: dropping connection fd %d: %s (%llu such so far)", fd, why,
                static_cast<unsigned long long>(refusals_));
    }
  }

  // Connections that have not proved the secret within kStoreAuthDeadlineMs.
  void DropLateConnections() {
    if (unauthenticated_ == 0) return;
    uint64_t now = NowNs();
    for (auto it = conns_.begin(); it != conns_.end();) {
      auto next = std::next(it);
      if (!it->second.authed &&
          now - it->second.accepted_ns > static_cast<uint64_t>(kStoreAuthDeadlineMs) * 1000000) {
        LogRefusal(it->first, "no proof of the store secret before the deadline");
        Drop(it);
      }
      it = next;
    }
  }

  void Accept() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      if (!secret_.empty() && unauthenticated_ >= kMaxUnauthenticated) {
        // The oldest connection still without a proof makes room; first those that did not even
        // say hello (a real client's hello is usually read as it is accepted, see below).
        auto oldest = conns_.end();
        for (auto it = conns_.begin(); it != conns_.end(); ++it) {
          if (it->second.authed) continue;
          if (oldest == conns_.end() || it->second.challenged < oldest->second.challenged ||
              (it->second.challenged == oldest->second.challenged &&
               it->second.accepted_ns < oldest->second.accepted_ns))
            oldest = it;
        }
        if (oldest != conns_.end()) {
          LogRefusal(oldest->first, "evicted: too many connections without a proof of the secret");
          Drop(oldest);
        }
      }
      if (conns_.size() >= kMaxClients) {
        HLOG_WARN(kBoot, "tcp store: %zu connections open; refusing another", conns_.size());
        close(fd);
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Conn c;
      c.authed = secret_.empty();
      c.accepted_ns = NowNs();
      if (!c.authed) ++unauthenticated_;
      auto it = conns_.emplace(fd, std::move(c)).first;
      // A client sends its hello right after connecting: answer it now, before a flood of
      // newer connections can evict this one.
      if (!it->second.authed && !Service(fd, it->second, POLLIN)) Drop(it);
    }
  }

  // The server's half of the handshake; consumes what it reads from c.in. False = drop.
  bool Authenticate(int fd, Conn& c) {
    if (!c.challenged) {
      if (c.in.size() < 4) return true;
      if (GetU32(c.in.data()) != kAuthMagic) {
        LogRefusal(fd,
                   "it did not open with the authentication hello (this store requires the "
                   "job's secret, HOSTCCL_STORE_SECRET)");
        return false;
      }
      if (c.in.size() < kHelloBytes) return true;
      std::string server_nonce;
      if (!RandomBytes(kNonceBytes, &server_nonce).ok()) return false;
      c.nonces = c.in.substr(4, kNonceBytes) + server_nonce;
      c.in.erase(0, kHelloBytes);
      PutU32(&c.out, kAuthMagic);
      c.out += server_nonce;
      c.out += HmacSha256(secret_, kServerLabel + c.nonces);
      c.challenged = true;
    }
    if (c.in.size() < kSha256Bytes) return true;
    if (!ConstantTimeEqual(c.in.substr(0, kSha256Bytes),
                           HmacSha256(secret_, kClientLabel + c.nonces))) {
      LogRefusal(fd, "wrong proof of the store secret");
      return false;
    }
    c.in.erase(0, kSha256Bytes);
    c.out.push_back(kAccepted);
    c.authed = true;
    --unauthenticated_;
    return true;
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
    if (!c.authed) {
      if (!Authenticate(fd, c)) return false;
      if (!c.authed) return true;
    }
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

  std::string secret_;  // empty: no handshake
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // Owned by the server thread after Start().
  std::map<int, Conn> conns_;
  size_t unauthenticated_ = 0;  // conns_ entries not yet authed
  uint64_t refusals_ = 0;
  std::map<std::string, std::string> map_;
};

class Client final : public Store {
 public:
  Client(int fd, std::string endpoint) : fd_(fd), endpoint_(std::move(endpoint)) {}
  ~Client() override { close(fd_); }

  bool hello_unanswered() const { return hello_unanswered_; }

  // The client's half of the handshake (see the top of this file).
  Status Authenticate(const std::string& secret, Deadline deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    authenticated_ = true;
    std::string client_nonce;
    HOSTCCL_RETURN_IF_ERROR(RandomBytes(kNonceBytes, &client_nonce));
    std::string hello;
    PutU32(&hello, kAuthMagic);
    hello += client_nonce;
    Status st = IoAll(true, hello.data(), hello.size(), deadline);
    std::string challenge(kChallengeBytes, '\0');
    if (st.ok()) st = IoAll(false, challenge.data(), challenge.size(), deadline);
    if (!st.ok()) {
      // A store without a secret closes at once; so does ours when a flood of connections
      // evicted this one before its hello was read: worth another try or two.
      hello_unanswered_ = st.code() != Code::kTimeout;
      return MakeStatus(st.code() == Code::kTimeout ? Code::kTimeout : Code::kTcpConnect,
                        "tcp store %s did not answer the authentication hello (%s): it has no "
                        "secret (not a store of this job?) or is not a hostccl store",
                        endpoint_.c_str(), st.message().c_str());
    }
    std::string nonces = client_nonce + challenge.substr(4, kNonceBytes);
    if (GetU32(challenge.data()) != kAuthMagic ||
        !ConstantTimeEqual(challenge.substr(4 + kNonceBytes),
                           HmacSha256(secret, kServerLabel + nonces))) {
      return MakeStatus(Code::kTcpConnect,
                        "tcp store %s could not prove it knows this job's secret "
                        "(HOSTCCL_STORE_SECRET): a store of another job, or another program on "
                        "that port; nothing was sent to it",
                        endpoint_.c_str());
    }
    std::string proof = HmacSha256(secret, kClientLabel + nonces);
    st = IoAll(true, proof.data(), proof.size(), deadline);
    char verdict = 0;
    if (st.ok()) st = IoAll(false, &verdict, 1, deadline);
    if (!st.ok() || verdict != kAccepted) {
      return MakeStatus(Code::kTcpConnect,
                        "tcp store %s refused this process's proof of the job's secret "
                        "(HOSTCCL_STORE_SECRET differs from the store's)%s%s",
                        endpoint_.c_str(), st.ok() ? "" : ": ",
                        st.ok() ? "" : st.message().c_str());
    }
    return Status::Ok();
  }

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
      if (!authenticated_ && !answered_ && st.code() == Code::kTcpTransfer) {
        return MakeStatus(st.code(),
                          "%s (a store that requires the job's secret drops clients that do not "
                          "prove it: is HOSTCCL_STORE_SECRET set in this process as in the "
                          "launcher's?)",
                          st.message().c_str());
      }
      return st;
    }
    answered_ = true;
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
  bool hello_unanswered_ = false;  // the handshake failed by a closed connection
  bool broken_ = false;            // guarded by mu_
  bool authenticated_ = false;     // guarded by mu_: ran the handshake
  bool answered_ = false;          // guarded by mu_: the server answered a request
  std::string endpoint_;
};

}  // namespace

Status StartTcpStoreServer(const std::string& host, uint16_t port,
                           std::unique_ptr<TcpStoreServer>* out, const std::string& secret) {
  auto server = std::make_unique<Server>();
  HOSTCCL_RETURN_IF_ERROR(server->Start(host, port, secret));
  *out = std::move(server);
  return Status::Ok();
}

Status ConnectTcpStore(const std::string& host, uint16_t port, Deadline deadline,
                       std::unique_ptr<Store>* out, const std::string& secret) {
  if (!secret.empty()) HOSTCCL_RETURN_IF_ERROR(CheckStoreSecret(secret, "the store secret"));
  std::string endpoint = Endpoint(host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error = "no attempt";
  uint64_t start = NowNs();
  constexpr int kHelloAttempts = 4;
  int unanswered_hellos = 0;
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
          res = nullptr;
          auto client = std::make_unique<Client>(fd, endpoint);
          if (!secret.empty()) {
            // A handshake is short: bound it even under an unbounded connect deadline.
            Deadline hs = Deadline::AfterMs(kStoreOpTimeoutMs);
            if (!deadline.infinite() && deadline.RemainingMsForPoll() < kStoreOpTimeoutMs)
              hs = deadline.Expired() ? Deadline::AfterMs(1000) : deadline;
            Status auth = client->Authenticate(secret, hs);
            if (!auth.ok()) {
              if (!client->hello_unanswered() || ++unanswered_hellos >= kHelloAttempts ||
                  deadline.Expired())
                return auth;
              last_error = auth.message();
              break;  // res is freed: connect again after the pause below
            }
          }
          *out = std::move(client);
          return Status::Ok();
        }
        last_error = strerror(errno);
        close(fd);
      }
      if (res != nullptr) freeaddrinfo(res);
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
