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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/random.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/job_identity.h"
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
// Connections that have not yet sent a valid HELLO; at the limit the oldest is evicted (an honest
// rank sends its HELLO at once, so only idle or hostile connections grow old). Joined ranks do not
// count (they are bounded by nRanks).
constexpr size_t kMaxPendingClients = 1024;
constexpr size_t kAcceptBatch = 64;  // at most half the pending cap per poll round
constexpr int kAcceptRestMs = 50;
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
  RootServerImpl(RootInfo info, Fd listener, std::string served)
      : info_(std::move(info)),
        listener_(std::move(listener)),
        served_(std::move(served)),
        self_(ThisProcessName()),
        job_(LauncherJobIdentity().Describe()) {}
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
    // Strangers may hold at most a quarter of this process's descriptors (it is also rank 0, which
    // needs its own for the mesh and shared memory).
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
      max_pending_ = std::clamp<size_t>(static_cast<size_t>(lim.rlim_cur / 4), 16, kMaxPendingClients);
    start_ns_ = NowNs();
    deadline_ns_ = start_ns_ + 2 * MsToNs(timeout_ms_);
    thread_ = std::thread([this] { Serve(); });
    return Status::Ok();
  }

  const RootInfo& info() const override { return info_; }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 private:
  std::string Name() const { return net::FormatHostPort(info_.ip, info_.port); }
  // What a rank with another token is told: "<served>, <job>, pid N on host H".
  std::string Describe() const {
    return StrFormat("%s, %s, %s", served_.empty() ? ("root info " + info_.identifier).c_str() : served_.c_str(),
                     job_.c_str(), self_.c_str());
  }
  static std::string Who(const RankInfo& r, const std::string& from) {
    std::string host = r.node_id.substr(0, r.node_id.find('/'));
    return StrFormat("pid %u on host %s (%s%s%s)", r.pid, host.empty() ? "?" : host.c_str(), from.c_str(),
                     r.job.empty() ? "" : ", ", r.job.c_str());
  }

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
      const bool resting = now < accept_rest_until_ns_;
      pfds.push_back(pollfd{listener_.get(), static_cast<short>(resting ? 0 : POLLIN), 0});
      uint64_t wake_at = resting ? std::min(deadline_ns_, accept_rest_until_ns_) : deadline_ns_;
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

  // Drops the oldest connection that has not sent a HELLO; false if there is none.
  bool EvictOldestPending(const char* why) {
    for (auto it = clients_.begin(); it != clients_.end(); ++it) {
      if (it->joined || it->read_deadline_ns == 0) continue;
      if (++evicted_ <= 3 || evicted_ % 1000 == 0)
        HLOG_WARN(kBoot, "root server %s: %s; evicted the oldest connection without a HELLO, %s (%llu evicted so far)",
                  Name().c_str(), why, it->from.c_str(), static_cast<unsigned long long>(evicted_));
      clients_.erase(it);
      return true;
    }
    return false;
  }

  // Accepts a bounded batch (so HELLOs are read between batches: a burst of strangers cannot push
  // an honest rank out before its HELLO is read). Unauthenticated connections are capped at
  // max_pending_ (a quarter of the descriptor limit, at most kMaxPendingClients); beyond it, and
  // when accept() runs out of descriptors, the oldest of them is evicted. With nothing to evict,
  // the listener rests for kAcceptRestMs instead of spinning.
  void AcceptAll() {
    const size_t batch_max = std::min<size_t>(kAcceptBatch, std::max<size_t>(1, max_pending_ / 2));
    for (size_t batch = 0; batch < batch_max; ++batch) {
      net::SockAddr peer;
      peer.len = sizeof(peer.ss);
      int raw = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&peer.ss), &peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (raw < 0) {
        int err = errno;
        if (err == EINTR || err == ECONNABORTED) continue;
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
          if (EvictOldestPending(err == EMFILE ? "out of file descriptors (RLIMIT_NOFILE)" : strerror(err))) continue;
          if (++fd_rests_ <= 3 || fd_rests_ % 100 == 0)
            HLOG_WARN(kBoot, "root server %s: accept: %s; nothing to evict, pausing accepts for %d ms (%llu times)",
                      Name().c_str(), strerror(err), kAcceptRestMs, static_cast<unsigned long long>(fd_rests_));
          accept_rest_until_ns_ = NowNs() + MsToNs(kAcceptRestMs);
        } else if (err != EAGAIN && err != EWOULDBLOCK) {
          HLOG_WARN(kBoot, "root server %s: accept: %s", Name().c_str(), strerror(err));
        }
        return;
      }
      Fd fd(raw);
      size_t pending = 0;
      for (const auto& o : clients_) pending += !o.joined;
      if (pending >= max_pending_) EvictOldestPending("too many connections without a HELLO");
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
      // Not ours: a root info from another run, or a rank of another job started from the same rank
      // table on the same port. Tell it who we are, so it fails (or waits for its own root) at once.
      // A rank of another job retries every 200 ms while it waits for its own root: log a few.
      if (++wrong_tokens_ <= 10 || wrong_tokens_ % 100 == 0)
        HLOG_WARN(kBoot, "root server %s: dropped connection from %s: wrong token (rank %u, %s: a root info from "
                  "another run or a rank of another job; %llu so far); told it this root serves %s",
                  Name().c_str(), c.from.c_str(), c.info.rank, Who(c.info, c.from).c_str(),
                  static_cast<unsigned long long>(wrong_tokens_), Describe().c_str());
      SendRaw(c, kRootErrorOtherJob, Describe());
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
      Fail(c, MakeStatus(Code::kPara, "duplicate rank id %u: %s and %s both claim it (two jobs started from the "
                         "same rank table or root info?)", r, joined_[r].c_str(), Who(c.info, c.from).c_str()));
      return false;
    }
    joined_[r] = Who(c.info, c.from);
    c.joined = true;
    HLOG_DEBUG(kBoot, "root server %s: rank %u of %u joined from %s", Name().c_str(), r, nranks_, c.from.c_str());
    if (joined_.size() == nranks_) SendTable();
    return true;
  }

  void SendError(Client& c, const Status& st) { SendRaw(c, static_cast<int32_t>(st.code()), st.message()); }

  void SendRaw(Client& c, int32_t code, const std::string& reason) {
    std::string frame = MakeRootFrame(static_cast<uint16_t>(FrameType::kRootError), code,
                                      reason.substr(0, net::kMaxReasonBytes));
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
  std::string served_;
  std::string self_;  // "pid N on host H"
  std::string job_;   // this process's launcher job id, read once (env is not read from the thread)
  uint64_t evicted_ = 0;
  uint64_t fd_rests_ = 0;
  uint64_t wrong_tokens_ = 0;
  uint64_t accept_rest_until_ns_ = 0;
  size_t max_pending_ = kMaxPendingClients;
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
  std::map<uint32_t, std::string> joined_;  // rank -> "pid N on host H (address)"
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

Status Launch(RootInfo info, Fd listener, std::unique_ptr<RootServer>* out, std::string served = "") {
  auto s = std::make_unique<RootServerImpl>(std::move(info), std::move(listener), std::move(served));
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
                         std::unique_ptr<RootServer>* out, const std::string& served) {
  RootInfo info;
  info.ip = ip_in;
  if (info.ip.empty()) HOSTCCL_RETURN_IF_ERROR(ChooseLocalAddress(&info.ip));
  memcpy(info.token, token, 16);
  Fd fd;
  HOSTCCL_RETURN_IF_ERROR(net::ListenOn(info.ip, port, &fd, &info.port));
  info.identifier = identifier.empty() ? StrFormat("%s_%u", info.ip.c_str(), info.port) : identifier;
  return Launch(std::move(info), std::move(fd), out, served);
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


namespace {

// The pid of the process listening on TCP `port` of this host (any address), or 0 when unknown
// (another network namespace, no permission, or a race): /proc/net/tcp{,6} give the socket's
// inode, /proc/<pid>/fd the process holding it.
int FindListenerPid(uint16_t port) {
  unsigned long inode = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(path);
    std::string line;
    std::getline(f, line);  // header
    while (inode == 0 && std::getline(f, line)) {
      char local[128] = {}, remote[128] = {};
      unsigned st = 0;
      unsigned long ino = 0;
      // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
      if (sscanf(line.c_str(), "%*s %127s %127s %x %*s %*s %*s %*s %*s %lu", local, remote, &st, &ino) != 4) continue;
      const char* colon = strrchr(local, ':');
      if (st == 0x0A && colon && strtoul(colon + 1, nullptr, 16) == port) inode = ino;
    }
  }
  if (inode == 0) return 0;
  const std::string want = "socket:[" + std::to_string(inode) + "]";
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::string fds = std::string("/proc/") + e->d_name + "/fd";
    DIR* d = opendir(fds.c_str());
    if (!d) continue;
    while (dirent* fe = readdir(d)) {
      char target[64] = {};
      ssize_t n = readlink((fds + "/" + fe->d_name).c_str(), target, sizeof(target) - 1);
      if (n > 0 && want == std::string(target, static_cast<size_t>(n))) {
        found = static_cast<int>(pid);
        break;
      }
    }
    closedir(d);
    if (found) break;
  }
  closedir(proc);
  return found;
}

enum class Holder { kGone, kOtherJob, kSameJob, kForeign };

// Asks the process listening on `addr` who it is, with a HELLO claiming rank 0 of this job.
Holder ProbeHolder(const RootInfo& root, const std::string& ip, uint32_t nranks, Deadline deadline, std::string* detail) {
  const std::string who = net::FormatHostPort(ip, root.port);
  net::SockAddr addr;
  if (!net::MakeSockAddr(ip, root.port, &addr).ok()) return Holder::kForeign;
  Deadline d = Deadline::AfterMs(3000);
  if (!deadline.infinite() && deadline.at_ns() < d.at_ns()) d = deadline;
  net::Fd fd;
  bool in_progress = false;
  Status st = net::StartConnect(addr, &fd, &in_progress);
  if (st.ok() && in_progress) {
    st = net::PollOne(fd.get(), POLLOUT, d, who);
    if (st.ok()) st = net::ConnectResult(fd.get(), addr);
  }
  if (!st.ok()) {
    *detail = st.message();
    return st.code() == Code::kTimeout ? Holder::kForeign : Holder::kGone;
  }
  RankInfo me;
  me.rank = 0;
  me.pid = static_cast<uint32_t>(getpid());
  me.node_id = LocalNodeId();
  me.proc_id = LocalProcId() + "/root-probe";
  JobIdentity job = LauncherJobIdentity();
  if (!job.empty()) me.job = job.Describe();
  std::string hello = MakeRootFrame(static_cast<uint16_t>(FrameType::kRootHello), 0, EncodeRootHello(root.token, nranks, me));
  st = net::WriteFully(fd.get(), hello.data(), hello.size(), d, who);
  uint8_t hdr[kFrameHeaderBytes];
  if (st.ok()) st = net::ReadFully(fd.get(), hdr, sizeof(hdr), d, who);
  if (st.code() == Code::kRemote) return Holder::kGone;  // closed: it is going away
  FrameHeader h;
  if (st.ok()) st = net::DecodeFrameHeader(hdr, sizeof(hdr), &h);
  if (!st.ok()) {
    *detail = "it did not answer as a hostccl root (" + st.message() + ")";
    return Holder::kForeign;
  }
  std::vector<uint8_t> payload(h.payload_len);
  if (!net::ReadFully(fd.get(), payload.data(), payload.size(), d, who).ok()) return Holder::kGone;
  detail->assign(payload.begin(), payload.end());
  for (char& c : *detail)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  if (h.type == FrameType::kRootError && h.code == kRootErrorOtherJob) return Holder::kOtherJob;
  if (h.type == FrameType::kRootError) return Holder::kSameJob;
  *detail = "a root of this rank table and job already formed a communicator with this process as rank 0";
  return Holder::kSameJob;
}

}  // namespace

Status StartRankTableRoot(const RootInfo& root, uint32_t nranks, const std::string& served, Deadline deadline,
                          std::unique_ptr<RootServer>* out) {
  std::string ip = root.ip;
  if (ip.empty()) HOSTCCL_RETURN_IF_ERROR(ChooseLocalAddress(&ip));
  const std::string where = net::FormatHostPort(ip, root.port);
  const std::string job = LauncherJobIdentity().Describe();
  const uint64_t start = NowNs();
  std::string other;
  int gone = 0;
  for (;;) {
    Status st = StartRootServerAt(ip, root.port, root.token, root.identifier, out, served);
    if (st.ok()) {
      if (!other.empty())
        HLOG_INFO(kBoot, "rank 0: bound the rank table's root port %s after another job's root (%s) released it",
                  where.c_str(), other.c_str());
      return st;
    }
    if (st.code() != Code::kUnavail) return st;
    std::string detail;
    Holder holder = ProbeHolder(root, ip, nranks, deadline, &detail);
    const auto waited_ms = static_cast<unsigned long long>((NowNs() - start) / 1000000);
    // Refused or closed again and again for a second: bound by something that does not serve it.
    if (holder == Holder::kGone && ++gone > 50) holder = Holder::kForeign;
    if (holder == Holder::kForeign) {
      int pid = FindListenerPid(root.port);
      return MakeStatus(Code::kUnavail, "rank 0: cannot listen on the rank table's root port %s: it is in use by %s, "
                        "which is not a hostccl root (%s); choose another port with HCCL_IF_BASE_PORT",
                        where.c_str(), pid > 0 ? StrFormat("pid %d", pid).c_str() : "another process",
                        detail.c_str());
    }
    if (holder == Holder::kSameJob) {
      return MakeStatus(Code::kPara, "rank 0: the rank table's root port %s is held by another root of this same rank "
                        "table and job (%s): two processes claim rank 0, or two jobs without a launcher job id were "
                        "started from the same rank table. Its answer: %s", where.c_str(), job.c_str(),
                        detail.c_str());
    }
    if (holder == Holder::kOtherJob && other != detail) {
      HLOG_WARN(kBoot, "rank 0: the rank table's root port %s is held by another job's root (%s); this job (%s) "
                "waits for it to finish its init", where.c_str(), detail.c_str(), job.c_str());
      other = detail;
    }
    if (deadline.Expired()) {
      return MakeStatus(Code::kTimeout, "rank 0: for %llu ms the rank table's root port %s was held by %s; this job "
                        "(%s) could not start its root: two jobs started from the same rank table on the same port; "
                        "give each its own HCCL_IF_BASE_PORT", waited_ms, where.c_str(),
                        other.empty() ? "a root that kept closing connections" : ("another job's root (" + other + ")").c_str(),
                        job.c_str());
    }
    int wait_ms = std::min(holder == Holder::kGone ? 20 : 200, std::max(0, deadline.RemainingMsForPoll()));
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

}  // namespace hostccl::boot
