// CreateTcpListener and CreateTcpMesh: building the full mesh of authenticated connections.
// One event loop per call (the caller's thread): nonblocking connects to higher ranks with retry,
// accepts from lower ranks, HELLO exchange both ways; stray connections never block real ones.
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <set>

#include "common/env.h"
#include "common/log.h"
#include "transport/tcp/tcp_listener.h"
#include "transport/tcp/tcp_transport.h"

namespace hostccl::net {
namespace {

constexpr size_t kHelloFrameBytes = kFrameHeaderBytes + kHelloBytes;
constexpr uint64_t kIncomingHelloMs = 10000;  // ms  // a real peer sends HELLO right after connecting
constexpr size_t kMaxIncoming = 128;          // unauthenticated connections held at once
constexpr uint64_t kLoopSliceMs = 100;            // bounds how late a stashed connection is noticed

void MakeHelloFrame(const uint8_t token[16], uint64_t tag, uint32_t rank, uint32_t nranks, int socket, int sockets,
                    uint8_t out[kHelloFrameBytes]) {
  FrameHeader h;
  h.type = FrameType::kHello;
  h.payload_len = kHelloBytes;
  h.part = static_cast<uint16_t>(socket);
  h.parts = static_cast<uint16_t>(sockets);
  EncodeFrameHeader(h, out);
  Hello hello;
  memcpy(hello.token, token, 16);
  hello.comm_tag = tag;
  hello.rank = rank;
  hello.nranks = nranks;
  EncodeHello(hello, out + kFrameHeaderBytes);
}

// Reads toward a full HELLO frame; returns true when complete. Sets *err on garbage or close.
bool ReadHelloFrame(int fd, uint8_t* buf, size_t* got, Hello* hello, std::string* err) {
  while (*got < kHelloFrameBytes) {
    ssize_t n = ::recv(fd, buf + *got, kHelloFrameBytes - *got, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n <= 0) {
      *err = n == 0 ? "closed before HELLO" : StrFormat("recv: %s", strerror(errno));
      return false;
    }
    size_t before = *got;
    *got += static_cast<size_t>(n);
    if (before < kFrameHeaderBytes && *got >= kFrameHeaderBytes) {
      FrameHeader h;
      Status st = DecodeFrameHeader(buf, kFrameHeaderBytes, &h);
      if (st.ok() && h.type != FrameType::kHello) st = MakeStatus(Code::kPara, "%s frame instead of HELLO", FrameTypeName(h.type));
      if (!st.ok()) {
        *err = st.message();
        return false;
      }
    }
  }
  DecodeHello(buf + kFrameHeaderBytes, hello);
  FrameHeader h;
  if (DecodeFrameHeader(buf, kFrameHeaderBytes, &h).ok()) {
    hello->socket = h.part;
    hello->sockets = std::max<uint16_t>(h.parts, 1);
  }
  return true;
}

// Failures of mesh builders of this process, by mesh (comm tag and the members' addresses): the
// ranks of one communicator that are threads of one process learn at once that a sibling gave up
// (ran out of descriptors, say) instead of waiting for its connections until the deadline. Tags
// are unique per communicator (they hash the root's random token) and listener ports are fresh,
// so an entry never matches a later mesh; the oldest entries go.
class LocalMeshFailures {
 public:
  static LocalMeshFailures& Get() {
    static LocalMeshFailures f;
    return f;
  }
  static uint64_t Key(uint64_t tag, const std::vector<std::string>& addrs) {
    uint64_t h = 1469598103934665603ull ^ tag;
    for (const auto& a : addrs)
      for (unsigned char c : a + ",") h = (h ^ c) * 1099511628211ull;
    return h;
  }
  void Publish(uint64_t tag, int rank, const Status& st) {
    std::lock_guard<std::mutex> lk(mu_);
    if (list_.size() >= 64) list_.pop_front();
    list_.push_back({tag, rank, st});
  }
  // The first failure recorded for `tag` by a rank other than `me`, if any.
  bool Find(uint64_t tag, int me, int* rank, Status* st) {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& e : list_)
      if (e.tag == tag && e.rank != me) {
        *rank = e.rank;
        *st = e.st;
        return true;
      }
    return false;
  }

 private:
  struct Entry {
    uint64_t tag;
    int rank;
    Status st;
  };
  std::mutex mu_;
  std::deque<Entry> list_;
};

struct Outgoing {
  enum class St { kIdle, kConnecting, kSending, kAwaitReply, kDone };
  int peer = -1;
  int socket = 0;  // which of the pair's sockets
  SockAddr addr;
  std::string addr_text;
  Fd fd;
  St st = St::kIdle;
  uint64_t retry_at_ns = 0;
  int backoff_ms = 5;
  uint8_t out[kHelloFrameBytes];
  size_t sent = 0;
  uint8_t in[kHelloFrameBytes];
  size_t got = 0;
  std::string last_error = "not attempted";
};

struct Incoming {
  Fd fd;
  std::string from;
  uint8_t in[kHelloFrameBytes];
  size_t got = 0;
  uint64_t deadline_ns = 0;
};

class MeshBuilder {
 public:
  MeshBuilder(int me, int n, TcpListenerImpl* listener, std::vector<std::string> addrs, const uint8_t token[16],
              uint64_t tag, Deadline deadline, int sockets)
      : me_(me), n_(n), listener_(listener), addrs_(std::move(addrs)), tag_(tag), deadline_(deadline),
        sockets_(sockets), fds_(static_cast<size_t>(n)) {
    memcpy(token_, token, 16);
    for (auto& f : fds_) f.resize(static_cast<size_t>(sockets_));
  }

  Status Run(std::unique_ptr<Transport>* out) {
    Status st = Build(out);
    if (!st.ok()) LocalMeshFailures::Get().Publish(LocalMeshFailures::Key(tag_, addrs_), me_, st);
    return st;
  }

 private:
  Status Build(std::unique_ptr<Transport>* out) {
    uint64_t start = NowNs();
    const uint64_t failure_key = LocalMeshFailures::Key(tag_, addrs_);
    for (int j = me_ + 1; j < n_; ++j) {
      for (int k = 0; k < sockets_; ++k) {
        Outgoing o;
        o.peer = j;
        o.socket = k;
        o.addr_text = addrs_[j];
        HOSTCCL_RETURN_IF_ERROR(ParseHostPort(addrs_[j], &o.addr));
        MakeHelloFrame(token_, tag_, static_cast<uint32_t>(me_), static_cast<uint32_t>(n_), k, sockets_, o.out);
        out_.push_back(std::move(o));
      }
    }
    for (;;) {
      for (auto& s : listener_->TakeStashed(tag_)) Admit(std::move(s.fd), s.hello, s.from);
      HOSTCCL_RETURN_IF_ERROR(fatal_);
      int sibling = -1;
      Status failed;
      if (LocalMeshFailures::Get().Find(failure_key, me_, &sibling, &failed))
        return MakeStatus(failed.code(), "rank %d: rank %d of this communicator, in this process, could not build "
                          "its TCP mesh: %s", me_, sibling, failed.message().c_str());
      HOSTCCL_RETURN_IF_ERROR(StartDueConnects());
      if (Complete()) break;
      if (deadline_.Expired()) {
        return MakeStatus(Code::kTimeout, "rank %d: TCP mesh (tag %llx) not complete after %llu ms; missing %s", me_,
                          static_cast<unsigned long long>(tag_),
                          static_cast<unsigned long long>((NowNs() - start) / 1000000), Missing().c_str());
      }
      HOSTCCL_RETURN_IF_ERROR(PollRound());
      HOSTCCL_RETURN_IF_ERROR(fatal_);
    }
    // Unauthenticated connections still pending (half-open, slow) are closed with the builder.
    for (const auto& inc : in_)
      HLOG_WARN(kTcp, "rank %d: dropped connection from %s: no complete HELLO before the mesh was complete", me_,
                inc.from.c_str());
    in_.clear();
    std::vector<std::string> addrs = addrs_;
    *out = std::make_unique<TcpTransport>(me_, n_, std::move(fds_), std::move(addrs));
    HLOG_DEBUG(kTcp, "rank %d: TCP mesh of %d ranks (%d socket(s) per peer) ready in %llu ms", me_, n_, sockets_,
               static_cast<unsigned long long>((NowNs() - start) / 1000000));
    return Status::Ok();
  }

  bool Complete() const {
    for (int p = 0; p < n_; ++p)
      for (const Fd& fd : fds_[p])
        if (p != me_ && !fd.valid()) return false;
    return true;
  }

  std::string Missing() const {
    std::string s;
    for (int p = 0; p < me_; ++p) {
      int have = 0;
      for (const Fd& fd : fds_[p]) have += fd.valid() ? 1 : 0;
      if (have == sockets_) continue;
      if (!s.empty()) s += ", ";
      s += StrFormat("rank %d (%s: never connected to %s)", p, addrs_[p].c_str(), listener_->address().c_str());
      if (sockets_ > 1) s += StrFormat(" [%d of %d sockets]", have, sockets_);
    }
    for (const auto& o : out_) {
      if (o.st == Outgoing::St::kDone) continue;
      if (!s.empty()) s += ", ";
      s += StrFormat("rank %d (%s: %s)", o.peer, o.addr_text.c_str(), o.last_error.c_str());
      if (sockets_ > 1) s += StrFormat(" [socket %d of %d]", o.socket, sockets_);
    }
    return s;
  }

  void Retry(Outgoing& o, std::string why) {
    o.last_error = std::move(why);
    o.fd.Reset();
    o.st = Outgoing::St::kIdle;
    o.sent = o.got = 0;
    o.retry_at_ns = NowNs() + static_cast<uint64_t>(o.backoff_ms) * 1000000ull;
    o.backoff_ms = std::min(o.backoff_ms * 2, 200);
  }

  Status StartDueConnects() {
    uint64_t now = NowNs();
    for (auto& o : out_) {
      if (o.st != Outgoing::St::kIdle || now < o.retry_at_ns) continue;
      bool in_progress = false;
      Status st = StartConnect(o.addr, &o.fd, &in_progress);
      if (st.code() == Code::kAgain) {
        Retry(o, st.message());
        continue;
      }
      HOSTCCL_RETURN_IF_ERROR(st);
      o.st = in_progress ? Outgoing::St::kConnecting : Outgoing::St::kSending;
    }
    return Status::Ok();
  }

  void Admit(Fd fd, const Hello& h, const std::string& from) {
    if (!TokenEqual(h.token, token_)) {
      HLOG_WARN(kTcp, "rank %d: dropped connection from %s: wrong token", me_, from.c_str());
      return;
    }
    if (h.comm_tag == tag_ && h.nranks == 0 && h.rank < static_cast<uint32_t>(n_) && h.rank != static_cast<uint32_t>(me_)) {
      // AbandonTcpMesh: that rank will never connect; waiting would only end in the timeout.
      fatal_ = MakeStatus(Code::kRemote, "rank %d: rank %u (%s) gave up building the TCP mesh (its own error, e.g. "
                          "out of file descriptors, is in its log)", me_, h.rank, addrs_[h.rank].c_str());
      return;
    }
    if (h.comm_tag != tag_) {
      HLOG_DEBUG(kTcp, "rank %d: stashing connection from %s for comm tag %llx", me_, from.c_str(),
                 static_cast<unsigned long long>(h.comm_tag));
      listener_->Stash({std::move(fd), h, from});
      return;
    }
    if (h.nranks != static_cast<uint32_t>(n_) || h.rank >= static_cast<uint32_t>(me_)) {
      HLOG_ERROR(kTcp, "rank %d: dropped connection from %s claiming rank %u of %u (expected a rank below %d of %d)",
                 me_, from.c_str(), h.rank, h.nranks, me_, n_);
      return;
    }
    if (h.sockets != sockets_) {
      // The right communicator configured differently: waiting would only end in a timeout.
      fatal_ = MakeStatus(Code::kPara,
                          "rank %d: rank %u (%s) connects with %u socket(s) per peer but this rank uses %d; "
                          "HOSTCCL_SOCKETS_PER_PEER must be the same on every rank",
                          me_, h.rank, from.c_str(), h.sockets, sockets_);
      return;
    }
    Fd& slot = fds_[h.rank][h.socket];
    if (slot.valid()) {
      HLOG_WARN(kTcp, "rank %d: dropped duplicate connection from %s for rank %u (socket %u)", me_, from.c_str(),
                h.rank, h.socket);
      return;
    }
    uint8_t reply[kHelloFrameBytes];
    MakeHelloFrame(token_, tag_, static_cast<uint32_t>(me_), static_cast<uint32_t>(n_), h.socket, sockets_, reply);
    // A fresh socket's send buffer takes 80 bytes at once; the bound only guards a broken peer.
    Status st = WriteFully(fd.get(), reply, sizeof(reply), deadline_.Earlier(Deadline::AfterMs(1000)), from);
    if (!st.ok()) {
      HLOG_WARN(kTcp, "rank %d: HELLO reply to rank %u (%s) failed: %s", me_, h.rank, from.c_str(), st.message().c_str());
      return;
    }
    slot = std::move(fd);
  }

  void AcceptAll() {
    for (;;) {
      SockAddr peer;
      int err = 0;
      Fd fd = AcceptOne(listener_->fd(), &peer, &err);
      if (OutOfDescriptors(err)) {
        // The peer's connection stays queued and the listener readable: waiting would spin until
        // the deadline while the peer believes it is connected. Fail now, naming the limit.
        if (fatal_.ok())
          fatal_ = MakeStatus(Code::kUnavail, "rank %d: cannot accept the TCP mesh connections of %d peers "
                              "(%d socket(s) each): %s", me_, me_, sockets_,
                              DescriptorError("accept", err).message().c_str());
        return;
      }
      if (!fd.valid()) return;
      if (in_.size() >= kMaxIncoming) {
        HLOG_WARN(kTcp, "rank %d: too many unauthenticated connections; dropping the oldest from %s", me_,
                  in_.front().from.c_str());
        in_.erase(in_.begin());
      }
      TuneDataSocket(fd.get());
      Incoming inc;
      inc.fd = std::move(fd);
      inc.from = FormatSockAddr(peer);
      inc.deadline_ns = std::min<uint64_t>(NowNs() + kIncomingHelloMs * 1000000ull, deadline_.at_ns());
      in_.push_back(std::move(inc));
    }
  }

  Status PollRound() {
    std::vector<pollfd> pfds;
    pfds.push_back(pollfd{listener_->fd(), POLLIN, 0});
    for (auto& inc : in_) pfds.push_back(pollfd{inc.fd.get(), POLLIN, 0});
    uint64_t wake = deadline_.at_ns();
    uint64_t now = NowNs();
    wake = std::min<uint64_t>(wake, now + kLoopSliceMs * 1000000ull);
    for (auto& inc : in_) wake = std::min(wake, inc.deadline_ns);
    std::vector<Outgoing*> polled;
    for (auto& o : out_) {
      short ev = 0;
      if (o.st == Outgoing::St::kConnecting || o.st == Outgoing::St::kSending) ev = POLLOUT;
      if (o.st == Outgoing::St::kAwaitReply) ev = POLLIN;
      if (o.st == Outgoing::St::kIdle) wake = std::min(wake, o.retry_at_ns);
      if (!ev) continue;
      pfds.push_back(pollfd{o.fd.get(), ev, 0});
      polled.push_back(&o);
    }
    int timeout_ms = wake <= now ? 0 : static_cast<int>((wake - now + 999999) / 1000000);
    int rc = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (rc < 0 && errno != EINTR) return MakeStatus(Code::kSyscall, "rank %d: poll: %s", me_, strerror(errno));
    if (rc <= 0) {
      ExpireIncoming();
      return Status::Ok();
    }
    size_t idx = 1;
    // Incoming connections: read HELLO; admit, stash, or drop.
    std::vector<size_t> finished;
    for (size_t i = 0; i < in_.size(); ++i, ++idx) {
      if (!pfds[idx].revents) continue;
      Incoming& inc = in_[i];
      Hello h;
      std::string err;
      if (ReadHelloFrame(inc.fd.get(), inc.in, &inc.got, &h, &err)) {
        Admit(std::move(inc.fd), h, inc.from);
        finished.push_back(i);
      } else if (!err.empty()) {
        HLOG_WARN(kTcp, "rank %d: dropped connection from %s: %s", me_, inc.from.c_str(), err.c_str());
        finished.push_back(i);
      }
    }
    for (size_t k = finished.size(); k-- > 0;) in_.erase(in_.begin() + static_cast<long>(finished[k]));
    ExpireIncoming();
    // Outgoing connections.
    for (size_t k = 0; k < polled.size(); ++k, ++idx) {
      if (!pfds[idx].revents) continue;
      HOSTCCL_RETURN_IF_ERROR(ProgressOutgoing(*polled[k]));
    }
    if (pfds[0].revents) AcceptAll();
    return Status::Ok();
  }

  void ExpireIncoming() {
    uint64_t now = NowNs();
    for (size_t i = 0; i < in_.size();) {
      if (now >= in_[i].deadline_ns) {
        HLOG_WARN(kTcp, "rank %d: dropped connection from %s: no HELLO within %llu ms", me_, in_[i].from.c_str(),
                  static_cast<unsigned long long>(kIncomingHelloMs));
        in_.erase(in_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }

  Status ProgressOutgoing(Outgoing& o) {
    if (o.st == Outgoing::St::kConnecting) {
      Status st = ConnectResult(o.fd.get(), o.addr);
      if (st.code() == Code::kAgain) {
        Retry(o, st.message());
        return Status::Ok();
      }
      HOSTCCL_RETURN_IF_ERROR(st);
      o.st = Outgoing::St::kSending;
    }
    if (o.st == Outgoing::St::kSending) {
      while (o.sent < kHelloFrameBytes) {
        ssize_t n = ::send(o.fd.get(), o.out + o.sent, kHelloFrameBytes - o.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Status::Ok();
        if (n < 0) {
          Retry(o, StrFormat("send HELLO: %s", strerror(errno)));
          return Status::Ok();
        }
        o.sent += static_cast<size_t>(n);
      }
      o.st = Outgoing::St::kAwaitReply;
      return Status::Ok();
    }
    if (o.st == Outgoing::St::kAwaitReply) {
      Hello h;
      std::string err;
      if (!ReadHelloFrame(o.fd.get(), o.in, &o.got, &h, &err)) {
        if (!err.empty()) Retry(o, "HELLO reply: " + err);
        return Status::Ok();
      }
      if (!TokenEqual(h.token, token_) || h.comm_tag != tag_ || h.rank != static_cast<uint32_t>(o.peer) ||
          h.nranks != static_cast<uint32_t>(n_) || h.socket != o.socket || h.sockets != sockets_) {
        HLOG_WARN(kTcp, "rank %d: %s answered as rank %u of %u (tag %llx); expected rank %d of %d: retrying", me_,
                  o.addr_text.c_str(), h.rank, h.nranks, static_cast<unsigned long long>(h.comm_tag), o.peer, n_);
        Retry(o, "answered with the wrong identity");
        return Status::Ok();
      }
      fds_[o.peer][o.socket] = std::move(o.fd);
      o.st = Outgoing::St::kDone;
    }
    return Status::Ok();
  }

  const int me_;
  const int n_;
  TcpListenerImpl* listener_;
  std::vector<std::string> addrs_;
  uint8_t token_[16];
  const uint64_t tag_;
  const Deadline deadline_;
  const int sockets_;
  Status fatal_;                       // a misconfigured peer: fail at once
  std::vector<std::vector<Fd>> fds_;  // [peer][socket]
  std::vector<Outgoing> out_;
  std::vector<Incoming> in_;
};

}  // namespace

void TcpListenerImpl::Stash(Stashed s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stash_.size() >= kMaxStash) {
    HLOG_WARN(kTcp, "listener %s: stash full, dropping the connection from %s", address().c_str(),
              stash_.front().from.c_str());
    stash_.pop_front();
  }
  stash_.push_back(std::move(s));
}

std::deque<TcpListenerImpl::Stashed> TcpListenerImpl::TakeStashed(uint64_t comm_tag) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<Stashed> out;
  for (auto it = stash_.begin(); it != stash_.end();) {
    if (it->hello.comm_tag == comm_tag) {
      out.push_back(std::move(*it));
      it = stash_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Status CreateTcpListener(const std::string& ip, std::unique_ptr<TcpListener>* out, uint16_t want_port) {
  Fd fd;
  uint16_t port = 0;
  HOSTCCL_RETURN_IF_ERROR(ListenOn(ip, want_port, &fd, &port));
  std::string bare = ip.substr(0, ip.find('%'));
  *out = std::make_unique<TcpListenerImpl>(std::move(fd), ip, port);
  HLOG_DEBUG(kTcp, "data listener on %s", FormatHostPort(bare, port).c_str());
  return Status::Ok();
}

int SocketsPerPeer() {
  const int64_t v = EnvInt(Knob::kSocketsPerPeer, kDefaultSocketsPerPeer);
  if (v < 1 || v > kMaxLanes) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      HLOG_WARN(kTcp, "HOSTCCL_SOCKETS_PER_PEER=%lld is outside [1, %d]; using %d", static_cast<long long>(v),
                kMaxLanes, kDefaultSocketsPerPeer);
    return kDefaultSocketsPerPeer;
  }
  return static_cast<int>(v);
}

Status CreateTcpMesh(int rank, const std::vector<int>& members_in, TcpListener* listener,
                     const std::vector<std::string>& peer_addrs, const uint8_t token[16], uint64_t comm_tag,
                     Deadline deadline, std::unique_ptr<Transport>* out, int sockets_per_peer) {
  auto* impl = dynamic_cast<TcpListenerImpl*>(listener);
  if (impl == nullptr) return MakeStatus(Code::kPara, "rank %d: CreateTcpMesh needs a listener from CreateTcpListener", rank);
  if (token == nullptr || out == nullptr) return MakeStatus(Code::kPtr, "rank %d: CreateTcpMesh: null token or output", rank);
  std::vector<int> members = members_in;
  if (members.empty()) {
    for (int r = 0; r < static_cast<int>(peer_addrs.size()); ++r) members.push_back(r);
  }
  std::set<int> seen;
  int me = -1;
  std::vector<std::string> addrs;
  for (size_t i = 0; i < members.size(); ++i) {
    int g = members[i];
    if (g < 0 || g >= static_cast<int>(peer_addrs.size()))
      return MakeStatus(Code::kPara, "rank %d: mesh member %d outside [0, %zu)", rank, g, peer_addrs.size());
    if (!seen.insert(g).second) return MakeStatus(Code::kPara, "rank %d: mesh member %d listed twice", rank, g);
    if (g == rank) me = static_cast<int>(i);
    addrs.push_back(peer_addrs[g]);
  }
  if (me < 0) return MakeStatus(Code::kPara, "rank %d is not among the %zu mesh members", rank, members.size());
  if (sockets_per_peer == 0) sockets_per_peer = SocketsPerPeer();
  if (sockets_per_peer < 1 || sockets_per_peer > kMaxLanes)
    return MakeStatus(Code::kPara, "rank %d: %d sockets per peer is outside [1, %d]", rank, sockets_per_peer, kMaxLanes);
  Status st;
  {
    MeshBuilder b(me, static_cast<int>(members.size()), impl, addrs, token, comm_tag, deadline, sockets_per_peer);
    st = b.Run(out);
  }  // its sockets are closed: the descriptors are free for the announcement
  if (IsDescriptorError(st)) {
    std::vector<int> everyone;
    for (int i = 0; i < static_cast<int>(addrs.size()); ++i) everyone.push_back(i);
    AbandonTcpMesh(me, everyone, addrs, token, comm_tag, deadline);
  }
  return st;
}

void AbandonTcpMesh(int rank, const std::vector<int>& tell, const std::vector<std::string>& addrs,
                    const uint8_t token[16], uint64_t comm_tag, Deadline deadline) {
  uint8_t hello[kHelloFrameBytes];
  MakeHelloFrame(token, comm_tag, static_cast<uint32_t>(rank), 0, 0, 1, hello);
  for (int j : tell) {
    if (j == rank || j < 0 || j >= static_cast<int>(addrs.size()) || deadline.Expired()) continue;
    SockAddr a;
    if (!ParseHostPort(addrs[j], &a).ok()) continue;
    const Deadline each = deadline.Earlier(Deadline::AfterMs(500));
    Fd fd;
    bool in_progress = false;
    Status st = StartConnect(a, &fd, &in_progress);
    if (st.ok() && in_progress) st = PollOne(fd.get(), POLLOUT, each, addrs[j]);
    if (st.ok() && in_progress) st = ConnectResult(fd.get(), a);
    if (st.ok()) st = WriteFully(fd.get(), hello, sizeof(hello), each, addrs[j]);
    HLOG_DEBUG(kTcp, "rank %d: told rank %d (%s) this rank gives up the mesh: %s", rank, j, addrs[j].c_str(),
               st.ok() ? "sent" : st.message().c_str());
  }
}

Status CreateTcpMesh(int rank, int nranks, TcpListener* listener, const std::vector<std::string>& peer_addrs,
                     const uint8_t token[16], uint64_t comm_tag, Deadline deadline, std::unique_ptr<Transport>* out,
                     int sockets_per_peer) {
  if (nranks <= 0 || static_cast<size_t>(nranks) > peer_addrs.size())
    return MakeStatus(Code::kPara, "rank %d: mesh of %d ranks with %zu addresses", rank, nranks, peer_addrs.size());
  if (rank < 0 || rank >= nranks) return MakeStatus(Code::kPara, "rank %d outside [0, %d)", rank, nranks);
  std::vector<int> members(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) members[r] = r;
  return CreateTcpMesh(rank, members, listener, peer_addrs, token, comm_tag, deadline, out, sockets_per_peer);
}

}  // namespace hostccl::net
