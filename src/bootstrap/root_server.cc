// The root-info server: a background thread ("hccl-root") that collects every rank's RankInfo
// and sends all of them the table, or every connected rank one error. Untrusted clients (no
// token, garbage, slow, half-open) are dropped without delaying the others: one poll loop over
// all sockets, a bounded read deadline per unauthenticated connection, bounded sizes.
// Lifetime: until done (table sent, failure sent and the deadline passed) or destroyed; the
// destructor wakes the thread through an eventfd and joins it. A done server closes its listener,
// client sockets and eventfd itself; only the joinable thread handle waits for the registry reap.
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/local_address.h"
#include "bootstrap/root_wire.h"
#include "common/env.h"
#include "common/log.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

using net::Fd;
using net::FrameHeader;
using net::FrameType;
using net::kFrameHeaderBytes;

constexpr uint64_t kClientHelloMs = 10000;  // an honest rank sends HELLO right after connecting
constexpr size_t kMaxPendingClients = 1024;
constexpr int kReplyWriteMs = 5000;

uint64_t MsToNs(int64_t ms) { return static_cast<uint64_t>(ms) * 1000000ull; }

struct Client {
  Fd fd;
  std::string from;
  std::vector<uint8_t> buf;  // header, then payload
  size_t got = 0;
  bool have_header = false;
  size_t need = kFrameHeaderBytes;
  uint64_t read_deadline_ns = 0;
  bool joined = false;
  RankInfo info;
};

class RootServerImpl final : public RootServer {
 public:
  RootServerImpl(RootInfo info, Fd listener) : info_(std::move(info)), listener_(std::move(listener)) {}
  ~RootServerImpl() override {
    {
      // The thread closes wake_ under wake_mu_ when it finishes; a finished server has nothing to wake.
      std::lock_guard<std::mutex> lock(wake_mu_);
      if (wake_.valid()) {
        uint64_t one = 1;
        ssize_t n;
        do {
          n = ::write(wake_.get(), &one, sizeof(one));
        } while (n < 0 && errno == EINTR);
      }
    }
    if (thread_.joinable()) thread_.join();
  }

  Status Start() {
    wake_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_.valid()) return MakeStatus(Code::kSyscall, "eventfd: %s", strerror(errno));
    timeout_ms_ = ConnectTimeoutMs();
    start_ns_ = NowNs();
    deadline_ns_ = start_ns_ + 2 * MsToNs(timeout_ms_);
    thread_ = std::thread([this] { Serve(); });
    return Status::Ok();
  }

  const RootInfo& info() const override { return info_; }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 private:
  std::string Name() const { return net::FormatHostPort(info_.ip, info_.port); }

  void Serve() {
    pthread_setname_np(pthread_self(), "hccl-root");
    HLOG_INFO(kBoot, "root server %s (%s) serving", Name().c_str(), info_.identifier.c_str());
    for (;;) {
      uint64_t now = NowNs();
      if (now >= deadline_ns_) {
        OnDeadline();
        break;
      }
      std::vector<pollfd> pfds;
      pfds.push_back(pollfd{wake_.get(), POLLIN, 0});
      pfds.push_back(pollfd{listener_.get(), POLLIN, 0});
      uint64_t wake_at = deadline_ns_;
      for (auto& c : clients_) {
        pfds.push_back(pollfd{c.fd.get(), POLLIN, 0});
        if (!c.joined) wake_at = std::min(wake_at, c.read_deadline_ns);
      }
      int timeout_ms = wake_at <= now ? 0 : static_cast<int>(std::min<uint64_t>((wake_at - now + 999999) / 1000000, 1000000));
      int rc = ::poll(pfds.data(), pfds.size(), timeout_ms);
      if (rc < 0 && errno != EINTR) {
        HLOG_ERROR(kBoot, "root server %s: poll: %s", Name().c_str(), strerror(errno));
        break;
      }
      if (rc > 0 && pfds[0].revents) break;  // destroyed
      std::vector<bool> drop(clients_.size(), false);
      if (rc > 0) {
        for (size_t i = 0; i < clients_.size(); ++i)
          if (pfds[i + 2].revents) drop[i] = !ReadClient(clients_[i]);
      }
      now = NowNs();
      for (size_t i = 0; i < clients_.size(); ++i) {
        if (!drop[i] && !clients_[i].joined && now >= clients_[i].read_deadline_ns) {
          HLOG_WARN(kBoot, "root server %s: dropped connection from %s: no complete HELLO within %llu ms",
                    Name().c_str(), clients_[i].from.c_str(), static_cast<unsigned long long>(kClientHelloMs));
          drop[i] = true;
        }
      }
      for (size_t i = clients_.size(); i-- > 0;)
        if (drop[i]) clients_.erase(clients_.begin() + static_cast<long>(i));
      if (done_) break;
      if (rc > 0 && pfds[1].revents) AcceptAll();
    }
    for (const auto& c : clients_)
      if (!c.joined && c.read_deadline_ns != 0)  // (failed ranks were told and are not strays)
        HLOG_WARN(kBoot, "root server %s: dropped connection from %s: no complete HELLO before the server finished",
                  Name().c_str(), c.from.c_str());
    clients_.clear();
    listener_.Reset();
    {
      // Every fd is released as soon as the server is done, not when the registry reaps it (on
      // the next HcclGetRootInfo): a process that stops creating communicators keeps none open.
      std::lock_guard<std::mutex> lock(wake_mu_);
      wake_.Reset();
    }
    finished_.store(true, std::memory_order_release);
  }

  void AcceptAll() {
    for (;;) {
      net::SockAddr peer;
      Fd fd = net::AcceptOne(listener_.get(), &peer);
      if (!fd.valid()) return;
      if (clients_.size() >= kMaxPendingClients) {
        HLOG_WARN(kBoot, "root server %s: too many connections; refusing %s", Name().c_str(),
                  net::FormatSockAddr(peer).c_str());
        continue;
      }
      Client c;
      c.fd = std::move(fd);
      c.from = net::FormatSockAddr(peer);
      c.buf.resize(kFrameHeaderBytes);
      c.read_deadline_ns = std::min(NowNs() + MsToNs(kClientHelloMs), deadline_ns_);
      clients_.push_back(std::move(c));
    }
  }

  // Reads what is available; returns false when the client must be dropped.
  bool ReadClient(Client& c) {
    if (c.joined) {
      // A joined rank only waits; readable means it closed (or misbehaves).
      char b;
      ssize_t n = ::recv(c.fd.get(), &b, 1, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      HLOG_WARN(kBoot, "root server %s: rank %u (%s) left before the table was complete", Name().c_str(), c.info.rank,
                c.from.c_str());
      joined_.erase(c.info.rank);
      return false;
    }
    while (c.got < c.need) {
      ssize_t n = ::recv(c.fd.get(), c.buf.data() + c.got, c.need - c.got, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n <= 0) {
        HLOG_WARN(kBoot, "root server %s: dropped connection from %s: closed before HELLO", Name().c_str(), c.from.c_str());
        return false;
      }
      c.got += static_cast<size_t>(n);
      if (c.got == c.need && !c.have_header) {
        FrameHeader h;
        Status st = net::DecodeFrameHeader(c.buf.data(), kFrameHeaderBytes, &h);
        if (st.ok() && (h.type != FrameType::kRootHello || h.payload_len > kMaxRootHelloBytes))
          st = MakeStatus(Code::kPara, "%s frame of %llu bytes instead of ROOT_HELLO", net::FrameTypeName(h.type),
                          static_cast<unsigned long long>(h.payload_len));
        if (!st.ok()) {
          HLOG_WARN(kBoot, "root server %s: dropped connection from %s: %s", Name().c_str(), c.from.c_str(),
                    st.message().c_str());
          return false;
        }
        c.have_header = true;
        c.need = kFrameHeaderBytes + h.payload_len;
        c.buf.resize(c.need);
      }
    }
    return OnHello(c);
  }

  bool OnHello(Client& c) {
    uint8_t token[16];
    uint32_t nranks = 0;
    Status st = DecodeRootHello(c.buf.data() + kFrameHeaderBytes, c.need - kFrameHeaderBytes, token, &nranks, &c.info);
    if (!st.ok()) {
      HLOG_WARN(kBoot, "root server %s: dropped connection from %s: %s", Name().c_str(), c.from.c_str(), st.message().c_str());
      return false;
    }
    if (!net::TokenEqual(token, info_.token)) {
      HLOG_WARN(kBoot, "root server %s: dropped connection from %s: wrong token (a root info from another run?)",
                Name().c_str(), c.from.c_str());
      return false;
    }
    c.buf.clear();
    c.buf.shrink_to_fit();
    if (!failure_.ok()) {
      SendError(c, failure_);
      return false;
    }
    uint32_t r = c.info.rank;
    if (nranks == 0 || nranks > kMaxRanks) {
      SendError(c, MakeStatus(Code::kPara, "rank %u asked for %u ranks (valid: 1..%u)", r, nranks, kMaxRanks));
      return false;
    }
    if (r >= nranks) {
      SendError(c, MakeStatus(Code::kPara, "rank %u is not below nRanks %u", r, nranks));
      return false;
    }
    if (nranks_ == 0) {
      nranks_ = nranks;
      first_rank_ = r;
      // The connect timeout counts from the first rank's arrival (at most 2x from the start).
      deadline_ns_ = std::min(deadline_ns_, NowNs() + MsToNs(timeout_ms_));
    } else if (nranks != nranks_) {
      Fail(c, MakeStatus(Code::kPara, "ranks disagree on nRanks: rank %u passed %u, rank %u passed %u", first_rank_,
                         nranks_, r, nranks));
      return false;
    }
    if (joined_.count(r)) {
      Fail(c, MakeStatus(Code::kPara, "duplicate rank id %u: the ranks connecting from %s and %s both claim it", r,
                         joined_[r].c_str(), c.from.c_str()));
      return false;
    }
    joined_[r] = c.from;
    c.joined = true;
    HLOG_DEBUG(kBoot, "root server %s: rank %u of %u joined from %s", Name().c_str(), r, nranks_, c.from.c_str());
    if (joined_.size() == nranks_) SendTable();
    return true;
  }

  void SendError(Client& c, const Status& st) {
    std::string frame = MakeRootFrame(static_cast<uint16_t>(FrameType::kRootError), static_cast<int32_t>(st.code()),
                                      st.message().substr(0, net::kMaxReasonBytes));
    Status w = net::WriteFully(c.fd.get(), frame.data(), frame.size(), Deadline::AfterMs(kReplyWriteMs), c.from);
    if (!w.ok()) HLOG_WARN(kBoot, "root server %s: error to %s not delivered: %s", Name().c_str(), c.from.c_str(), w.message().c_str());
  }

  // Fails every joined rank (and `c`) with `st`; later arrivals get the same error.
  void Fail(Client& c, Status st) {
    HLOG_ERROR(kBoot, "root server %s: %s", Name().c_str(), st.message().c_str());
    failure_ = st;
    SendError(c, st);
    for (auto& o : clients_) {
      if (!o.joined) continue;  // still sending HELLO: gets failure_ once it has
      SendError(o, st);
      o.joined = false;
      o.read_deadline_ns = 0;  // dropped by the expiry pass
    }
    joined_.clear();
  }

  void SendTable() {
    std::vector<RankInfo> all(nranks_);
    for (auto& c : clients_)
      if (c.joined) all[c.info.rank] = c.info;
    std::string frame =
        MakeRootFrame(static_cast<uint16_t>(FrameType::kRootTable), 0, EncodeRankTable(all));
    for (auto& c : clients_) {
      if (!c.joined) continue;
      Status w = net::WriteFully(c.fd.get(), frame.data(), frame.size(), Deadline::AfterMs(kReplyWriteMs), c.from);
      if (!w.ok()) HLOG_WARN(kBoot, "root server %s: table to rank %u (%s) not delivered: %s", Name().c_str(), c.info.rank,
                             c.from.c_str(), w.message().c_str());
    }
    HLOG_INFO(kBoot, "root server %s: all %u ranks joined in %llu ms", Name().c_str(), nranks_,
              static_cast<unsigned long long>((NowNs() - start_ns_) / 1000000));
    done_ = true;
  }

  void OnDeadline() {
    if (!failure_.ok() || nranks_ == 0) return;  // nobody to tell, or already told
    std::string missing;
    int count = 0;
    for (uint32_t r = 0; r < nranks_; ++r) {
      if (joined_.count(r)) continue;
      if (++count <= 32) missing += StrFormat("%s%u", missing.empty() ? "" : ", ", r);
    }
    if (count > 32) missing += StrFormat(" and %d more", count - 32);
    Status st = MakeStatus(Code::kTimeout, "root %s: only %zu of %u ranks joined within %lld ms; missing rank%s %s",
                           Name().c_str(), joined_.size(), nranks_, static_cast<long long>(timeout_ms_),
                           count == 1 ? "" : "s", missing.c_str());
    HLOG_ERROR(kBoot, "%s", st.message().c_str());
    for (auto& c : clients_)
      if (c.joined) SendError(c, st);
  }

  RootInfo info_;
  Fd listener_;
  std::mutex wake_mu_;  // guards wake_: closed by the thread at exit, written by the destructor
  Fd wake_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  bool done_ = false;
  int64_t timeout_ms_ = 0;
  uint64_t start_ns_ = 0;
  uint64_t deadline_ns_ = 0;
  uint32_t nranks_ = 0;
  uint32_t first_rank_ = 0;
  std::vector<Client> clients_;
  std::map<uint32_t, std::string> joined_;  // rank -> remote address
  Status failure_;
};

Status MakeToken(uint8_t token[16]) {
  size_t got = 0;
  while (got < 16) {
    ssize_t n = getrandom(token + got, 16 - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeStatus(Code::kSyscall, "getrandom: %s", strerror(errno));
    got += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status Launch(RootInfo info, Fd listener, std::unique_ptr<RootServer>* out) {
  auto s = std::make_unique<RootServerImpl>(std::move(info), std::move(listener));
  HOSTCCL_RETURN_IF_ERROR(s->Start());
  *out = std::move(s);
  return Status::Ok();
}

std::mutex g_registry_mu;
std::vector<std::unique_ptr<RootServer>>& Registry() {
  static auto* servers = new std::vector<std::unique_ptr<RootServer>>();  // never destroyed: no exit-time join
  return *servers;
}

}  // namespace

Status StartRootServer(int device, std::unique_ptr<RootServer>* out) {
  RootInfo info;
  HOSTCCL_RETURN_IF_ERROR(ChooseLocalAddress(&info.ip));
  HOSTCCL_RETURN_IF_ERROR(MakeToken(info.token));
  Fd fd;
  uint16_t port = 0;
  if (auto base_raw = EnvRaw(Knob::kHcclIfBasePort)) {
    auto base = ParseInt(*base_raw);
    if (!base || *base < 1024 || *base > 65520)
      return MakeStatus(Code::kPara, "HCCL_IF_BASE_PORT='%s' is not an integer in [1024, 65520]", base_raw->c_str());
    Status st;
    for (int64_t p = *base; p < *base + 32; ++p) {  // HCCL's 32-port range
      st = net::ListenOn(info.ip, static_cast<uint16_t>(p), &fd, &port);
      if (st.ok() || st.code() != Code::kUnavail) break;
    }
    if (!st.ok())
      return MakeStatus(st.code(), "root server: no free port in [%lld, %lld] on %s: %s", static_cast<long long>(*base),
                        static_cast<long long>(*base + 31), info.ip.c_str(), st.message().c_str());
  } else {
    HOSTCCL_RETURN_IF_ERROR(net::ListenOn(info.ip, 0, &fd, &port));
  }
  info.port = port;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  info.identifier = StrFormat("%s_%u_%d_%lld%06ld", info.ip.c_str(), port, device, static_cast<long long>(ts.tv_sec),
                              ts.tv_nsec / 1000);
  return Launch(std::move(info), std::move(fd), out);
}

Status StartRootServerAt(const std::string& ip_in, uint16_t port, const uint8_t token[16], const std::string& identifier,
                         std::unique_ptr<RootServer>* out) {
  RootInfo info;
  info.ip = ip_in;
  if (info.ip.empty()) HOSTCCL_RETURN_IF_ERROR(ChooseLocalAddress(&info.ip));
  memcpy(info.token, token, 16);
  Fd fd;
  HOSTCCL_RETURN_IF_ERROR(net::ListenOn(info.ip, port, &fd, &info.port));
  info.identifier = identifier.empty() ? StrFormat("%s_%u", info.ip.c_str(), info.port) : identifier;
  return Launch(std::move(info), std::move(fd), out);
}

void AdoptRootServer(std::unique_ptr<RootServer> server) {
  std::vector<std::unique_ptr<RootServer>> reaped;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(g_registry_mu);
  auto& reg = Registry();
  for (auto it = reg.begin(); it != reg.end();) {
    auto* impl = dynamic_cast<RootServerImpl*>(it->get());
    if (impl && impl->finished()) {
      reaped.push_back(std::move(*it));
      it = reg.erase(it);
    } else {
      ++it;
    }
  }
  if (server) reg.push_back(std::move(server));
}

}  // namespace hostccl::boot
