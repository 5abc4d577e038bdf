#include "transport/tcp/tcp_transport.h"

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "common/wait_note.h"

namespace hostccl::net {
namespace {

constexpr int kMaxIov = 64;

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

namespace {
std::vector<std::vector<Fd>> OneLane(std::vector<Fd> fds) {
  std::vector<std::vector<Fd>> lanes(fds.size());
  for (size_t p = 0; p < fds.size(); ++p)
    if (fds[p].valid()) lanes[p].push_back(std::move(fds[p]));
  return lanes;
}
}  // namespace

TcpTransport::TcpTransport(int rank, int size, std::vector<Fd> fds, std::vector<std::string> addrs)
    : TcpTransport(rank, size, OneLane(std::move(fds)), std::move(addrs)) {}

TcpTransport::TcpTransport(int rank, int size, std::vector<std::vector<Fd>> lanes, std::vector<std::string> addrs)
    : rank_(rank), size_(size), peers_(static_cast<size_t>(size)) {
  for (int p = 0; p < size; ++p) {
    if (p < static_cast<int>(lanes.size())) {
      for (auto& fd : lanes[p]) {
        if (!fd.valid()) break;  // lanes are dense: lane i exists only with lanes 0..i-1
        peers_[p].lanes.emplace_back();
        peers_[p].lanes.back().fd = std::move(fd);
      }
    }
    if (p < static_cast<int>(addrs.size())) peers_[p].addr = addrs[p];
  }
  event_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_fd_.valid()) Fail(MakeStatus(Code::kSyscall, "eventfd: %s", strerror(errno)));
}

TcpTransport::~TcpTransport() {
  // Tell peers this is an orderly close, so a peer still waiting on others does not take our
  // disconnect for a crash. Skipped where a frame is half written (the peer sees the close).
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    for (int l = 0; l < static_cast<int>(peers_[p].lanes.size()); ++l) SendControl(p, l, FrameType::kClose, Code::kSuccess, "");
  }
  // Close only once the peer has acknowledged every byte we sent, reading and dropping its input
  // meanwhile; bounded as FinishThenAbort is (a peer that acknowledges nothing for kAbortStallMs,
  // kAbortFlushMs in all). A socket closed with bytes still in flight answers any segment the
  // peer sends after the close (a stall PROBE while it reads our last frame) with a reset, and the
  // kernel then drops the bytes not yet delivered: the tail of a frame an abort just finished, and
  // the ABORT after it.
  uint8_t sink[16 << 10];
  const Deadline deadline = Deadline::AfterMs(kAbortFlushMs);
  Deadline stall = Deadline::AfterMs(kAbortStallMs);  // for all lanes together, as the deadline
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    for (Lane& ln : peers_[p].lanes) {
      const int fd = ln.fd.get();
      int unacked = 0, last = -1;
      while (fd >= 0 && ::ioctl(fd, SIOCOUTQ, &unacked) == 0 && unacked > 0 && !deadline.Expired()) {
        if (last >= 0 && unacked < last) stall = Deadline::AfterMs(kAbortStallMs);  // still reading
        if (stall.Expired()) break;
        last = unacked;
        pollfd pf{fd, POLLIN, 0};
        if (::poll(&pf, 1, 1) > 0 && (pf.revents & POLLIN) &&
            ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) == 0)
          break;  // the peer closed: nothing more will be acknowledged
      }
    }
  }
}

Status TcpTransport::CheckPeer(int peer, const char* what) const {
  if (peer == rank_)
    return MakeStatus(Code::kInternal, "rank %d: %s to itself is not supported by the TCP transport", rank_, what);
  if (peer < 0 || peer >= size_)
    return MakeStatus(Code::kPara, "rank %d: %s peer %d outside [0, %d)", rank_, what, peer, size_);
  if (peers_[peer].lanes.empty())
    return MakeStatus(Code::kInternal, "rank %d: no connection to rank %d", rank_, peer);
  return Status::Ok();
}

RequestId TcpTransport::NewRequest(int peer, bool send, size_t len) {
  RequestId id = next_id_++;
  reqs_.emplace(id, ReqInfo{peer, send, len, 1, false});
  return id;
}

int TcpTransport::Stripes(int peer, size_t len) const {
  const int k = static_cast<int>(peers_[peer].lanes.size());
  return k > 1 && len >= kStripeMinBytes ? k : 1;
}

void TcpTransport::StripeRange(size_t len, int n, int i, size_t* off, size_t* plen) {
  // Equal stripes in whole cache lines; the last one takes the rest.
  const size_t base = len / static_cast<size_t>(n) / 64 * 64;
  *off = base * static_cast<size_t>(i);
  *plen = i == n - 1 ? len - *off : base;
}

void TcpTransport::PartDone(RequestId id) {
  ReqInfo& r = reqs_.at(id);
  if (--r.parts_left == 0) r.done = true;
}

Status TcpTransport::BeginRequest(const Fingerprint& fp) {
  if (!status_.ok()) return status_;
  current_fp_ = fp;  // first: an abort relayed from here must name this (later) operation
  if (!deferred_abort_.ok() && fp.seq >= deferred_seq_) Fail(deferred_abort_);
  return status_;
}

Status TcpTransport::Isend(int peer, const void* buf, size_t len, const Fingerprint& fp, RequestId* id) {
  HOSTCCL_RETURN_IF_ERROR(BeginRequest(fp));
  HOSTCCL_RETURN_IF_ERROR(CheckPeer(peer, "send"));
  if (buf == nullptr && len > 0) return MakeStatus(Code::kPtr, "rank %d: send of %zu bytes from a null buffer", rank_, len);
  if (len > kMaxDataPayload) return MakeStatus(Code::kPara, "rank %d: send of %zu bytes is too large", rank_, len);
  const int n = Stripes(peer, len);
  const RequestId rid = NewRequest(peer, true, len);
  reqs_.at(rid).parts_left = n;
  for (int i = 0; i < n; ++i) {
    size_t off = 0, plen = len;
    if (n > 1) StripeRange(len, n, i, &off, &plen);
    PendingSend s{};
    FrameHeader h;
    h.type = FrameType::kData;
    h.payload_len = plen;
    h.fp = fp;
    h.part = static_cast<uint16_t>(n > 1 ? i : 0);
    h.parts = static_cast<uint16_t>(n > 1 ? n : 0);
    EncodeFrameHeader(h, s.hdr);
    s.buf = static_cast<const uint8_t*>(buf) + off;
    s.len = plen;
    s.done = 0;
    s.id = rid;
    peers_[peer].lanes[static_cast<size_t>(i)].sends.push_back(s);
  }
  // A small message is written at once where nothing is queued ahead (no poll() first): it
  // usually leaves here and its wait finds it done. Large ones are written by the waits, in step
  // with the receives (writing megabytes here delayed the pipelined plans' receives: 64 MiB
  // across hosts was ~10% slower). A failure is sticky and reported by the wait.
  if (len <= kEagerWriteMaxBytes) {
    Lane& ln = peers_[peer].lanes[0];
    if (ln.sends.size() == 1 && ln.rx != Rx::kClosed) WriteLane(peer, 0);
  }
  *id = rid;
  return Status::Ok();
}

Status TcpTransport::Irecv(int peer, void* buf, size_t len, const Fingerprint& fp, RequestId* id) {
  HOSTCCL_RETURN_IF_ERROR(BeginRequest(fp));
  HOSTCCL_RETURN_IF_ERROR(CheckPeer(peer, "receive"));
  if (buf == nullptr && len > 0) return MakeStatus(Code::kPtr, "rank %d: receive of %zu bytes into a null buffer", rank_, len);
  const int n = Stripes(peer, len);
  const RequestId rid = NewRequest(peer, false, len);
  reqs_.at(rid).parts_left = n;
  for (int i = 0; i < n; ++i) {
    size_t off = 0, plen = len;
    if (n > 1) StripeRange(len, n, i, &off, &plen);
    PendingRecv r{rid, static_cast<uint8_t*>(buf) + off, plen, fp, static_cast<uint16_t>(n > 1 ? i : 0),
                  static_cast<uint16_t>(n > 1 ? n : 0), len};
    Lane& ln = peers_[peer].lanes[static_cast<size_t>(i)];
    ln.recvs.push_back(r);
    ln.hup = false;  // reading again will surface a real close
    if (!ln.early.empty()) MatchEarly(peer, i);
  }
  *id = rid;
  return status_;
}

void TcpTransport::MatchEarly(int p, int l) {
  Lane& ln = peers_[p].lanes[static_cast<size_t>(l)];
  while (status_.ok() && !ln.early.empty() && ln.early.front().complete && !ln.recvs.empty()) {
    Early& e = ln.early.front();
    PendingRecv& r = ln.recvs.front();
    if (e.fp != r.fp) {
      Fail(MakeStatus(Code::kPara, "%s", FormatMismatch(r.fp, rank_, e.fp, p).c_str()));
      return;
    }
    if (r.parts != 0 || e.body.size() != r.len) {
      Fail(MakeStatus(Code::kPara, "message size mismatch: rank %d expects %zu bytes from rank %d, which sent %zu bytes (%s)",
                      rank_, r.total, p, e.body.size(), DescribeFingerprint(r.fp).c_str()));
      return;
    }
    if (r.len) memcpy(r.buf, e.body.data(), r.len);
    PartDone(r.id);
    ln.recvs.pop_front();
    ln.early.pop_front();
  }
}

Status TcpTransport::Wait(RequestId id, Deadline deadline) { return WaitAll(&id, 1, deadline); }

Status TcpTransport::WaitAll(const RequestId* ids, size_t n, Deadline deadline) {
  waiting_ids_ = ids;  // replies to probes tell whom this wait is stuck on
  waiting_n_ = n;
  Status st = WaitLoop(ids, n, deadline);
  waiting_ids_ = nullptr;
  waiting_n_ = 0;
  return st;
}

Status TcpTransport::WaitAny(const RequestId* ids, size_t n, Deadline deadline, size_t* which) {
  waiting_ids_ = ids;
  waiting_n_ = n;
  Status st = WaitLoop(ids, n, deadline, which);
  waiting_ids_ = nullptr;
  waiting_n_ = 0;
  return st;
}

Status TcpTransport::WaitLoop(const RequestId* ids, size_t n, Deadline deadline, size_t* any) {
  for (size_t i = 0; i < n; ++i) {
    if (!reqs_.count(ids[i])) {
      if (!status_.ok()) return status_;
      return MakeStatus(Code::kPara, "rank %d: unknown request id %llu", rank_, Ull(ids[i]));
    }
  }
  const uint64_t start = NowNs();
  const uint64_t spin_until = busy_poll_ns_ > 0 ? start + busy_poll_ns_ : 0;
  uint64_t probe_at = start + kProbeAfterMs * 1000000;
  bool noted = false;
  struct Unnote {  // cleared when the wait succeeds; a failed wait leaves it for the dump
    bool& on;
    const Status& st;
    ~Unnote() { if (on && st.ok()) fr::NoteWaiting(-1); }
  } unnote{noted, status_};
  for (;;) {
    // Completed requests succeed even if a later frame (e.g. an ABORT read in the same poll) has
    // failed the transport since: their bytes did arrive / leave.
    if (any != nullptr) {
      for (size_t i = 0; i < n; ++i) {
        if (reqs_.at(ids[i]).done) {
          reqs_.erase(ids[i]);
          *any = i;
          return Status::Ok();
        }
      }
    }
    bool all = any == nullptr;
    for (size_t i = 0; i < n && all; ++i) all = reqs_.at(ids[i]).done;
    if (all) {
      for (size_t i = 0; i < n; ++i) reqs_.erase(ids[i]);
      return Status::Ok();
    }
    if (!status_.ok()) return status_;
    const uint64_t now = NowNs();
    if (deadline.Expired()) {
      stuck_on_ = FirstPendingPeer(ids, n);
      int culprit = -1;
      const std::string blame = Blame(ids, n, now, &culprit);
      if (culprit >= 0) {
        fr::NoteWaiting(culprit);  // the rank that really stopped, for the flight recorder
        noted = true;
        Status st = MakeStatus(Code::kTimeout, "rank %d: timed out after %llu ms: %s; this rank waits for %s", rank_,
                               Ull((now - start) / 1000000), blame.c_str(), DescribePending(ids, n).c_str());
        st.WithPeer(culprit);
        Fail(std::move(st));
      } else {
        Fail(MakeStatus(Code::kTimeout, "rank %d: timed out after %llu ms waiting for %s", rank_,
                        Ull((now - start) / 1000000), DescribePending(ids, n).c_str()));
      }
      return status_;
    }
    if (now >= probe_at) {
      ProbeTick(ids, n, now);
      probe_at = now + kProbeEveryMs * 1000000;
      if (!status_.ok()) continue;
    }
    // First poll without blocking for a while (busy_poll_ns_): a reply within a round trip then
    // costs no wake-up; after that, block in poll() (until the deadline or the next probe).
    int timeout_ms = 0;
    if (spin_until == 0 || now >= spin_until) {
      if (fr::Noting()) {  // about to block: the flight recorder's "waiting for"
        if (const int peer = FirstPendingPeer(ids, n); peer >= 0) {
          fr::NoteWaiting(peer);
          noted = true;
        }
      }
      timeout_ms = deadline.RemainingMsForPoll();
      const int to_probe = static_cast<int>((probe_at - now + 999999) / 1000000);
      if (timeout_ms < 0 || timeout_ms > to_probe) timeout_ms = to_probe;
    }
    PollOnce(timeout_ms);
  }
}

Status TcpTransport::Progress(const Fingerprint& fp) {
  HOSTCCL_RETURN_IF_ERROR(BeginRequest(fp));
  PollOnce(0);
  return status_;
}

Status TcpTransport::Test(RequestId id, bool* done) {
  *done = false;
  if (!status_.ok()) return status_;
  auto it = reqs_.find(id);
  if (it == reqs_.end()) return MakeStatus(Code::kPara, "rank %d: unknown request id %llu", rank_, Ull(id));
  if (!it->second.done) PollOnce(0);
  if (!status_.ok()) return status_;
  it = reqs_.find(id);
  if (it->second.done) {
    *done = true;
    reqs_.erase(it);
  }
  return Status::Ok();
}

int TcpTransport::FirstPendingPeer(const RequestId* ids, size_t n) const {
  for (size_t i = 0; i < n; ++i)
    if (const ReqInfo& r = reqs_.at(ids[i]); !r.done) return r.peer;
  return -1;
}

std::string TcpTransport::DescribePending(const RequestId* ids, size_t n) const {
  // One entry per peer: "rank 3 (10.0.0.4:41233) (recv 4096 bytes, +2 more)".
  std::vector<int> count(size_, 0);
  std::vector<const ReqInfo*> first(size_, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const ReqInfo& r = reqs_.at(ids[i]);
    if (r.done) continue;
    if (!first[r.peer]) first[r.peer] = &r;
    ++count[r.peer];
  }
  std::string out;
  for (int p = 0; p < size_; ++p) {
    if (!first[p]) continue;
    if (!out.empty()) out += ", ";
    out += StrFormat("rank %d at %s (%s %zu bytes", p, peers_[p].addr.c_str(), first[p]->send ? "send" : "recv",
                     first[p]->len);
    if (count[p] > 1) out += StrFormat(", +%d more", count[p] - 1);
    out += ")";
  }
  return out;
}

void TcpTransport::Fail(Status st) {
  if (status_.ok()) {
    status_ = std::move(st);
    status_.WithRank(rank_);
    HLOG_DEBUG(kTcp, "transport failed: %s", status_.ToString().c_str());
  }
}

Status TcpTransport::PeerClosed(int p, const char* detail) {
  std::string others;
  int more = 0;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_ || q == p) continue;
    for (const Lane& ln : peers_[q].lanes) {
      if (ln.rx == Rx::kClosed || !ln.fd.valid()) continue;
      pollfd pf{ln.fd.get(), POLLRDHUP, 0};  // the peer's FIN or reset, also behind unread bytes
      if (::poll(&pf, 1, 0) <= 0 || (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) continue;
      if (others.size() < 200)
        others += StrFormat("; rank %d (%s) has closed its connection too", q, peers_[q].addr.c_str());
      else
        ++more;
      break;
    }
  }
  if (more > 0) others += StrFormat(" (+%d more ranks)", more);
  return MakeStatus(Code::kRemote, "rank %d (%s) closed the connection%s%s", p, peers_[p].addr.c_str(), detail,
                    others.c_str());
}

// A data frame nobody here has asked for yet, for the very operation in progress, but describing
// it differently (e.g. its sender believes in another root, or is in another collective, such as
// an HcclBarrier token reaching a rank in HcclReduce #seq) is a mismatch that would otherwise only
// surface as a timeout. Checked when the header arrives and on every poll (it may have arrived
// while we were still in the previous operation). False when it failed the transport.
//
// Also a collective's DATA on socket 0 while this rank waits for the same peer's NOTICE (it is in
// HcclSend to the peer): a message starts on socket 0, where the NOTICE would have come first had
// the peer posted the matching HcclRecv before entering that collective. (The peer's own probe
// answers queue behind the frame, unread: without this both would wait for the exec timeout.)
bool TcpTransport::CheckUnexpected(int p, int l) {
  Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
  const Fingerprint& f = pe.cur.fp;
  if (!pe.recvs.empty()) return true;
  if (l == 0 && !peers_[p].notice_waits.empty() && IsP2PKind(current_fp_.kind) && !IsP2PKind(f.kind)) {
    FailTransferAgainst(p, f);
    return false;
  }
  if (current_fp_.seq == 0 || !SameCollective(f, current_fp_) || f == current_fp_) return true;
  Fail(Status(Code::kPara, FormatMismatch(current_fp_, rank_, f, p)));
  return false;
}

void TcpTransport::PollOnce(int timeout_ms) {
  if (interrupted_.load(std::memory_order_acquire)) {
    Fail(MakeStatus(Code::kRemote, "communicator destroyed"));
    return;
  }
  pfds_.clear();
  pfd_lane_.clear();
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    for (int l = 0; l < static_cast<int>(peers_[p].lanes.size()); ++l) {
      Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
      if (pe.rx == Rx::kDataPending && !pe.recvs.empty()) MatchPending(p, l);
      if (!status_.ok()) return;
      // Bytes already read (behind a frame that waited for its receive) produce no POLLIN.
      if (pe.Buffered() && pe.rx != Rx::kDataPending && pe.rx != Rx::kClosed) {
        ReadLane(p, l);
        if (!status_.ok()) return;
        timeout_ms = 0;
      }
      if (pe.rx == Rx::kDataPending && !CheckUnexpected(p, l)) return;
      if (pe.rx == Rx::kClosed) {
        // (A notice this rank waits for would have come on socket 0.)
        if (!pe.sends.empty() || !pe.recvs.empty() || (l == 0 && !peers_[p].notice_waits.empty())) {
          Fail(PeerClosed(p, " (its communicator was destroyed)"));
          return;
        }
        continue;
      }
      short ev = 0;
      bool reading = pe.rx != Rx::kDataPending;
      if (reading) ev |= POLLIN;
      if (!pe.sends.empty()) ev |= POLLOUT;
      if (!reading && pe.sends.empty() && pe.hup) continue;  // nothing to learn until a receive is posted
      pfds_.push_back(pollfd{pe.fd.get(), ev, 0});
      pfd_lane_.emplace_back(p, l);
    }
  }
  pfds_.push_back(pollfd{event_fd_.get(), POLLIN, 0});
  int rc = ::poll(pfds_.data(), pfds_.size(), timeout_ms);
  if (rc < 0) {
    if (errno != EINTR) Fail(MakeStatus(Code::kSyscall, "rank %d: poll: %s", rank_, strerror(errno)));
    return;
  }
  if (rc == 0) return;
  if (pfds_.back().revents & POLLIN || interrupted_.load(std::memory_order_acquire)) {
    Fail(MakeStatus(Code::kRemote, "communicator destroyed"));
    return;
  }
  for (size_t i = 0; i + 1 < pfds_.size() && status_.ok(); ++i) {
    short re = pfds_[i].revents;
    if (re == 0) continue;
    const int p = pfd_lane_[i].first, l = pfd_lane_[i].second;
    Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
    if (re & POLLOUT) WriteLane(p, l);
    if (!status_.ok()) return;
    bool reading = pe.rx != Rx::kDataPending && pe.rx != Rx::kClosed;
    if (reading && (re & (POLLIN | POLLHUP | POLLERR))) {
      ReadLane(p, l);
    } else if (re & POLLERR) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(pe.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      Fail(PeerClosed(p, StrFormat(" (%s)", strerror(err ? err : ECONNRESET)).c_str()));
    } else if (re & POLLHUP) {
      pe.hup = true;  // unread data may remain: report the close once its receive is posted
    }
  }
}

void TcpTransport::WriteLane(int p, int l) {
  Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
  while (!pe.sends.empty()) {
    iovec iov[kMaxIov];
    int cnt = 0;
    for (auto it = pe.sends.begin(); it != pe.sends.end() && cnt + 2 <= kMaxIov; ++it) {
      size_t off = it->done;
      if (off < kFrameHeaderBytes) {
        iov[cnt++] = iovec{it->hdr + off, kFrameHeaderBytes - off};
        off = kFrameHeaderBytes;
      }
      size_t poff = off - kFrameHeaderBytes;
      if (poff < it->len) iov[cnt++] = iovec{const_cast<uint8_t*>(it->Payload()) + poff, it->len - poff};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(cnt);
    ssize_t n = ::sendmsg(pe.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      const int err = errno;
      // The peer may have said why before it went (an ABORT or CLOSE still unread): that is the
      // better error. So is another peer's ABORT already here: a rank that failed first, whose
      // abort made this peer leave (its failure is not this peer's to name).
      if (!draining_) {
        draining_ = true;
        if (pe.rx != Rx::kDataPending && pe.rx != Rx::kClosed) ReadLane(p, l);
        for (int q = 0; q < size_ && status_.ok(); ++q) {
          if (q == rank_ || q == p) continue;
          Lane& other = peers_[q].lanes[0];
          if (other.rx == Rx::kDataPending || other.rx == Rx::kClosed || !other.fd.valid()) continue;
          pollfd pf{other.fd.get(), POLLIN, 0};
          if (other.Buffered() || (::poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN))) ReadLane(q, 0);
        }
        draining_ = false;
        if (!status_.ok()) return;
      }
      Fail(PeerClosed(p, pe.rx == Rx::kClosed ? " (its communicator was destroyed)"
                                              : StrFormat(" (send: %s)", strerror(err)).c_str()));
      return;
    }
    size_t left = static_cast<size_t>(n);
    while (left > 0) {
      PendingSend& s = pe.sends.front();
      size_t need = kFrameHeaderBytes + s.len - s.done;
      size_t take = std::min(need, left);
      s.done += take;
      left -= take;
      if (s.done == kFrameHeaderBytes + s.len) {
        if (s.id != 0) PartDone(s.id);
        if (s.ctl == Ctl::kProbe && peers_[p].probe_out) peers_[p].probe_sent_ns = NowNs();
        pe.sends.pop_front();
      } else {
        break;
      }
    }
  }
}

void TcpTransport::MatchPending(int p, int l) {
  Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
  PendingRecv& r = pe.recvs.front();
  if (pe.cur.fp != r.fp) {
    Fail(MakeStatus(Code::kPara, "%s", FormatMismatch(r.fp, rank_, pe.cur.fp, p).c_str()));
    return;
  }
  if (pe.cur.parts == 0 && r.parts == 0 && pe.cur.payload_len != r.len) {
    Fail(MakeStatus(Code::kPara, "message size mismatch: rank %d expects %zu bytes from rank %d, which sent %llu bytes (%s)",
                    rank_, r.len, p, Ull(pe.cur.payload_len), DescribeFingerprint(r.fp).c_str()));
    return;
  }
  if (pe.cur.parts != r.parts || pe.cur.part != r.part || pe.cur.payload_len != r.len) {
    // Both sides cut a message by its length alone, so differing stripes mean differing lengths.
    Fail(MakeStatus(Code::kPara,
                    "message size mismatch: rank %d expects %zu bytes from rank %d, which sent another size "
                    "(socket %d carries stripe %u of %u, %llu bytes, where stripe %u of %u, %zu bytes, was due) (%s)",
                    rank_, r.total, p, l, pe.cur.part, pe.cur.parts, Ull(pe.cur.payload_len), r.part, r.parts, r.len,
                    DescribeFingerprint(r.fp).c_str()));
    return;
  }
  pe.body_got = 0;
  if (r.len == 0) {
    PartDone(r.id);
    pe.recvs.pop_front();
    pe.rx = Rx::kHeader;
  } else {
    pe.rx = Rx::kDataBody;
  }
}

void TcpTransport::ReadLane(int p, int l) {
  Peer& peer = peers_[p];
  Lane& pe = peer.lanes[static_cast<size_t>(l)];
  bool drained = false;  // the last read into the lane buffer came short: the socket is empty
  for (;;) {
    uint8_t* dst = nullptr;
    size_t want = 0;
    switch (pe.rx) {
      case Rx::kHeader: dst = pe.hdr + pe.hdr_got; want = kFrameHeaderBytes - pe.hdr_got; break;
      case Rx::kDataBody: dst = pe.recvs.front().buf + pe.body_got; want = pe.recvs.front().len - pe.body_got; break;
      case Rx::kAbortBody: dst = reinterpret_cast<uint8_t*>(pe.reason.data()) + pe.body_got; want = pe.reason.size() - pe.body_got; break;
      case Rx::kReplyBody: dst = peer.reply_buf + pe.body_got; want = kProbeReplyBytes - pe.body_got; break;
      case Rx::kNoticeBody: dst = pe.notice_buf + pe.body_got; want = kNoticeBytes - pe.body_got; break;
      case Rx::kEarlyBody: dst = pe.early.back().body.data() + pe.body_got; want = pe.early.back().body.size() - pe.body_got; break;
      case Rx::kDataPending:
        if (pe.recvs.empty()) return;  // stop reading until a receive is posted
        MatchPending(p, l);
        if (!status_.ok()) return;
        continue;
      case Rx::kClosed: return;
    }
    size_t got = 0;
    if (pe.Buffered()) {
      got = std::min(want, pe.rlen - pe.rpos);
      memcpy(dst, pe.rbuf.get() + pe.rpos, got);
      pe.rpos += got;
    } else {
      if (drained) return;
      // A large remainder of a payload goes straight into the posted buffer; anything else
      // through the lane buffer, which then usually holds the whole frame (or several).
      const bool direct = pe.rx == Rx::kDataBody && want >= kDirectReadMinBytes;
      if (!direct && !pe.rbuf) pe.rbuf = std::make_unique<uint8_t[]>(kLaneBufferBytes);
      uint8_t* into = direct ? dst : pe.rbuf.get();
      const size_t ask = direct ? want : kLaneBufferBytes;
      ssize_t n = ::recv(pe.fd.get(), into, ask, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        Fail(PeerClosed(p, StrFormat(" (recv: %s)", strerror(errno)).c_str()));
        return;
      }
      if (n == 0) {
        Fail(PeerClosed(p, pe.rx == Rx::kHeader && pe.hdr_got == 0 ? "" : " in the middle of a message"));
        return;
      }
      // Only a short read into the lane buffer ends the round: while a large payload streams in,
      // more bytes arrive during each copy, and another recv() is cheaper than a poll().
      drained = !direct && static_cast<size_t>(n) < ask;
      if (!direct) {
        pe.rpos = 0;
        pe.rlen = static_cast<size_t>(n);
        continue;  // parse from the buffer
      }
      got = static_cast<size_t>(n);
    }
    switch (pe.rx) {
      case Rx::kHeader: {
        pe.hdr_got += got;
        if (pe.hdr_got < kFrameHeaderBytes) break;
        pe.hdr_got = 0;
        Status st = DecodeFrameHeader(pe.hdr, kFrameHeaderBytes, &pe.cur);
        if (!st.ok()) {
          Fail(MakeStatus(Code::kTcpTransfer, "rank %d (%s) sent a malformed frame: %s", p, peer.addr.c_str(),
                          st.message().c_str()));
          return;
        }
        pe.body_got = 0;
        if (pe.cur.type == FrameType::kData && pe.recvs.empty() && IsP2PKind(pe.cur.fp.kind) &&
            pe.cur.parts == 0 && pe.cur.payload_len <= kP2PEarlyMaxBytes) {
          // A point-to-point message before its receive: kept aside, the socket keeps being read.
          pe.early.push_back(Early{pe.cur.fp, std::vector<uint8_t>(pe.cur.payload_len), false});
          if (pe.cur.payload_len == 0) {
            pe.early.back().complete = true;
          } else {
            pe.rx = Rx::kEarlyBody;
          }
        } else if (pe.cur.type == FrameType::kData) {
          pe.rx = Rx::kDataPending;
          if (!CheckUnexpected(p, l)) return;
        } else if (pe.cur.type == FrameType::kAbort) {
          pe.reason.assign(pe.cur.payload_len, '\0');
          pe.rx = Rx::kAbortBody;
          if (pe.cur.payload_len == 0) {
            Fail(Status(static_cast<Code>(pe.cur.code), StrFormat("rank %d aborted", p)).WithPeer(p));
            return;
          }
        } else if (pe.cur.type == FrameType::kProbe) {
          OnProbe(p, l);
          if (!status_.ok()) return;
        } else if (pe.cur.type == FrameType::kProbeReply) {
          pe.rx = Rx::kReplyBody;
        } else if (pe.cur.type == FrameType::kNotice) {
          pe.rx = Rx::kNoticeBody;
        } else if (pe.cur.type == FrameType::kClose) {
          pe.rx = Rx::kClosed;
          HLOG_DEBUG(kTcp, "rank %d (%s) closed its communicator (socket %d)", p, peer.addr.c_str(), l);
          return;
        } else {
          Fail(MakeStatus(Code::kTcpTransfer, "rank %d (%s) sent an unexpected %s frame", p, peer.addr.c_str(),
                          FrameTypeName(pe.cur.type)));
          return;
        }
        break;
      }
      case Rx::kDataBody: {
        pe.body_got += got;
        PendingRecv& r = pe.recvs.front();
        if (pe.body_got == r.len) {
          PartDone(r.id);
          pe.recvs.pop_front();
          pe.rx = Rx::kHeader;
        }
        break;
      }
      case Rx::kAbortBody: {
        pe.body_got += got;
        if (pe.body_got == pe.reason.size()) {
          for (char& c : pe.reason) if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
          Status st = Status(static_cast<Code>(pe.cur.code), StrFormat("rank %d aborted: %s", p, pe.reason.c_str()));
          st.WithPeer(p);
          // Also while still in setup (sequence 0): peers that finished their part of it may
          // already have run, and failed, operation 1 (on a mismatch found among themselves).
          // Not when this rank is in a transfer that still needs p: p sent everything it had
          // for it before this ABORT, so the transfer can never complete.
          if (pe.cur.fp.seq > current_fp_.seq && !TransferWaitsOn(p)) {
            if (deferred_abort_.ok()) {
              deferred_abort_ = st;
              deferred_seq_ = pe.cur.fp.seq;
            }
            pe.rx = Rx::kHeader;  // keep reading: our own operation may still complete
            pe.body_got = 0;
            break;
          }
          Fail(st);
          return;
        }
        break;
      }
      case Rx::kEarlyBody: {
        pe.body_got += got;
        if (pe.body_got == pe.early.back().body.size()) {
          pe.early.back().complete = true;
          pe.rx = Rx::kHeader;
          pe.body_got = 0;
          MatchEarly(p, l);
          if (!status_.ok()) return;
        }
        break;
      }
      case Rx::kNoticeBody: {
        pe.body_got += got;
        if (pe.body_got == kNoticeBytes) {
          pe.rx = Rx::kHeader;
          pe.body_got = 0;
          OnNotice(p, l);
          if (!status_.ok()) return;
        }
        break;
      }
      case Rx::kReplyBody: {
        pe.body_got += got;
        if (pe.body_got == kProbeReplyBytes) {
          pe.rx = Rx::kHeader;
          pe.body_got = 0;
          OnProbeReply(p, l);
          if (!status_.ok()) return;
        }
        break;
      }
      default: return;
    }
  }
}

bool TcpTransport::SendControl(int p, int l, FrameType type, Code code, const std::string& text) {
  Lane& pe = peers_[p].lanes[static_cast<size_t>(l)];
  // A half-written frame cannot be interrupted without corrupting the stream.
  if (!pe.sends.empty() && pe.sends.front().done > 0) return false;
  uint8_t buf[kFrameHeaderBytes + kMaxReasonBytes];
  size_t tlen = std::min<size_t>(text.size(), kMaxReasonBytes);
  FrameHeader h;
  h.type = type;
  h.payload_len = tlen;
  h.code = static_cast<int32_t>(code);
  h.fp = current_fp_;  // which operation the notice is about (receivers in an earlier one defer it)
  EncodeFrameHeader(h, buf);
  memcpy(buf + kFrameHeaderBytes, text.data(), tlen);
  size_t total = kFrameHeaderBytes + tlen;
  ssize_t n;
  do {
    n = ::send(pe.fd.get(), buf, total, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(total)) return true;
  if (n > 0) {
    // Partial control frame: the stream is unusable now; make the peer see a close instead.
    ::shutdown(pe.fd.get(), SHUT_RDWR);
  }
  return false;
}

void TcpTransport::Abort(const std::string& reason, Code code, uint64_t seq) {
  if (code == Code::kSuccess) code = Code::kRemote;
  if (seq > current_fp_.seq) {
    // The failed operation never reached this transport (e.g. a mismatch found in shared memory):
    // the ABORT must name it, not the setup or the operation before.
    current_fp_ = Fingerprint();
    current_fp_.seq = seq;
  }
  // On every lane: the peer may be reading any of them (or waiting on a header held back on one).
  // A lane in the middle of a DATA frame gets the ABORT once the frame is finished (below): its
  // reader is usually the very rank that waits for this frame and would otherwise see only our
  // close, without the reason.
  std::vector<std::pair<int, int>> half;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    for (int l = 0; l < static_cast<int>(peers_[p].lanes.size()); ++l) {
      Lane& ln = peers_[p].lanes[static_cast<size_t>(l)];
      if (ln.rx == Rx::kClosed || SendControl(p, l, FrameType::kAbort, code, reason)) continue;
      if (!ln.sends.empty() && ln.sends.front().done > 0)
        half.emplace_back(p, l);
      else
        HLOG_DEBUG(kTcp, "rank %d: ABORT to rank %d (%s) not sent (socket busy)", rank_, p, peers_[p].addr.c_str());
    }
  }
  if (!half.empty()) FinishThenAbort(half, code, reason);
  Fail(Status(code, StrFormat("rank %d aborted: %s", rank_, reason.c_str())));
}

// Finishes each listed lane's half-written DATA frame, drops what was queued behind it, and sends
// the ABORT. The frame's payload is the one the operation posted (still the caller's: Abort runs
// inside the failing operation), so a reader that completes its receive before it reads the ABORT
// received true data, never filler. Input on those lanes is read and dropped meanwhile, so two
// ranks aborting at each other both finish. The bound is on stalling, not on the frame's size: the
// lanes are given up once none of them took a byte for kAbortStallMs (their readers stopped), or
// after kAbortFlushMs in all (readers that keep reading, only slowly, as on an oversubscribed host
// or under a sanitizer, still learn the reason instead of seeing the close of a rank that is only
// passing on another rank's failure). A lane given up is shut down: its reader sees the close.
void TcpTransport::FinishThenAbort(const std::vector<std::pair<int, int>>& lanes, Code code, const std::string& reason) {
  uint8_t sink[16 << 10];
  // Each lane with its send queue as last seen (SIOCOUTQ; -1 before the first look).
  struct Half {
    int p, l, queued = -1;
  };
  std::vector<Half> left;
  for (auto [p, l] : lanes) {
    Lane& ln = peers_[p].lanes[static_cast<size_t>(l)];
    ln.sends.erase(ln.sends.begin() + 1, ln.sends.end());
    left.push_back(Half{p, l});
  }
  const Deadline deadline = Deadline::AfterMs(kAbortFlushMs);
  Deadline stall = Deadline::AfterMs(kAbortStallMs);
  // Progress: bytes the socket took, or bytes of its queue the reader acknowledged (a full send
  // queue reports writable only once a third of it has gone).
  while (!left.empty()) {
    std::vector<pollfd> pfds;
    for (const Half& h : left) pfds.push_back(pollfd{peers_[h.p].lanes[static_cast<size_t>(h.l)].fd.get(), POLLIN | POLLOUT, 0});
    const int ms = std::min(deadline.RemainingMsForPoll(), stall.RemainingMsForPoll());
    if (ms <= 0) break;
    int n = ::poll(pfds.data(), pfds.size(), std::min(ms, 10));
    if (n < 0 && errno != EINTR) break;
    for (size_t i = pfds.size(); i-- > 0;) {
      const int p = left[i].p, l = left[i].l;
      Lane& ln = peers_[p].lanes[static_cast<size_t>(l)];
      if (int q = 0; ::ioctl(ln.fd.get(), SIOCOUTQ, &q) == 0) {
        if (left[i].queued >= 0 && q < left[i].queued) stall = Deadline::AfterMs(kAbortStallMs);  // its reader reads
        left[i].queued = q;
      }
      bool gone = (pfds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0;
      if (!gone && (pfds[i].revents & POLLIN)) {
        ssize_t r = ::recv(ln.fd.get(), sink, sizeof(sink), MSG_DONTWAIT);
        ln.rx = Rx::kClosed;  // what it read is no longer parsed
        if (r == 0) gone = true;
      }
      if (!gone && (pfds[i].revents & POLLOUT)) {
        PendingSend& s = ln.sends.front();
        ssize_t w = 0;
        if (s.done < kFrameHeaderBytes) {
          w = ::send(ln.fd.get(), s.hdr + s.done, kFrameHeaderBytes - s.done, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
          const size_t poff = s.done - kFrameHeaderBytes;
          w = ::send(ln.fd.get(), s.Payload() + poff, s.len - poff, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) gone = true;
        if (w > 0) {
          s.done += static_cast<size_t>(w);
          stall = Deadline::AfterMs(kAbortStallMs);  // this reader still reads
        }
        if (!gone && s.done == kFrameHeaderBytes + s.len) {
          ln.sends.clear();
          if (!SendControl(p, l, FrameType::kAbort, code, reason))
            HLOG_DEBUG(kTcp, "rank %d: ABORT to rank %d (%s) not sent after its frame", rank_, p, peers_[p].addr.c_str());
          left.erase(left.begin() + static_cast<ptrdiff_t>(i));
          continue;
        }
      }
      if (gone) {
        ln.sends.clear();
        left.erase(left.begin() + static_cast<ptrdiff_t>(i));
      }
    }
  }
  for (const Half& h : left) {
    Lane& ln = peers_[h.p].lanes[static_cast<size_t>(h.l)];
    HLOG_DEBUG(kTcp, "rank %d: ABORT to rank %d (%s) not sent (frame unfinished: no progress for %d ms, or %d ms in all)",
               rank_, h.p, peers_[h.p].addr.c_str(), kAbortStallMs, kAbortFlushMs);
    ln.sends.clear();
    ::shutdown(ln.fd.get(), SHUT_RDWR);
  }
}

void TcpTransport::Interrupt() {
  interrupted_.store(true, std::memory_order_release);
  uint64_t one = 1;
  ssize_t n;
  do {
    n = ::write(event_fd_.get(), &one, sizeof(one));
  } while (n < 0 && errno == EINTR);
}

// ---- stall probes ----

void TcpTransport::QueueControl(int p, Ctl ctl) {
  Lane& ln = peers_[p].lanes[0];
  if (ln.rx == Rx::kClosed) return;  // the peer destroyed its communicator: nobody would answer
  FrameHeader h;
  h.type = ctl == Ctl::kProbe ? FrameType::kProbe : FrameType::kProbeReply;
  h.fp = current_fp_;
  h.payload_len = ctl == Ctl::kReply ? kProbeReplyBytes : 0;
  // One unstarted frame of a kind is enough: refresh it instead of queueing another.
  for (auto& q : ln.sends) {
    if (q.ctl == ctl && q.done == 0) {
      EncodeFrameHeader(h, q.hdr);
      if (ctl == Ctl::kReply) EncodeProbeReply(WhomWeWaitFor(NowNs()), q.ctl_payload);
      return;
    }
  }
  PendingSend s{};
  s.ctl = ctl;
  s.len = h.payload_len;
  EncodeFrameHeader(h, s.hdr);
  if (ctl == Ctl::kReply) EncodeProbeReply(WhomWeWaitFor(NowNs()), s.ctl_payload);
  // Frames are independent on the wire: ahead of DATA not yet started, behind a half-written one
  // (DATA keeps its order, so receives still match in posting order).
  auto pos = ln.sends.begin();
  if (pos != ln.sends.end() && pos->done > 0) ++pos;
  const bool front = pos == ln.sends.begin();
  ln.sends.insert(pos, s);
  if (front) WriteLane(p, 0);
}

bool TcpTransport::Silent(int p, uint64_t now) const {
  const Peer& pe = peers_[p];
  return pe.probe_out && pe.probe_sent_ns != 0 && now - pe.probe_sent_ns >= kSilentMs * 1000000;
}

ProbeReply TcpTransport::WhomWeWaitFor(uint64_t now) const {
  ProbeReply r;
  uint64_t longest = 0;
  for (size_t i = 0; i < waiting_n_; ++i) {
    auto it = reqs_.find(waiting_ids_[i]);
    if (it == reqs_.end() || it->second.done) continue;
    const int p = it->second.peer;
    if (r.waits_for < 0) r.waits_for = p;
    if (Silent(p, now) && now - peers_[p].probe_sent_ns > longest) {
      longest = now - peers_[p].probe_sent_ns;
      r.waits_for = p;
      r.waits_for_silent = true;
      r.silent_ms = longest / 1000000;
    }
  }
  return r;
}

void TcpTransport::ProbeTick(const RequestId* ids, size_t n, uint64_t now) {
  // Setup exchanges (sequence 0) are not probed; point-to-point operations before the first
  // collective are (their sequence number is the collective count so far).
  if (current_fp_.seq == 0 && !IsP2PKind(current_fp_.kind)) return;
  probe_want_.assign(static_cast<size_t>(size_), 0);
  for (size_t i = 0; i < n; ++i) {
    const ReqInfo& r = reqs_.at(ids[i]);
    if (!r.done) probe_want_[static_cast<size_t>(r.peer)] = 1;
  }
  // Whom those peers said they wait for (in this operation), and so on: probe them too, so a
  // timeout can name the rank at the end of the chain.
  for (bool grew = true; grew;) {
    grew = false;
    for (int p = 0; p < size_; ++p) {
      const Peer& pe = peers_[p];
      if (!probe_want_[static_cast<size_t>(p)] || pe.reply_ns == 0 || pe.reply_fp.seq != current_fp_.seq) continue;
      const int w = pe.reply.waits_for;
      if (w >= 0 && w < size_ && w != rank_ && !probe_want_[static_cast<size_t>(w)] && !peers_[w].lanes.empty()) {
        probe_want_[static_cast<size_t>(w)] = 1;
        grew = true;
      }
    }
  }
  for (int p = 0; p < size_ && status_.ok(); ++p) {
    if (p == rank_ || peers_[p].lanes.empty()) continue;
    Peer& pe = peers_[p];
    if (probe_want_[static_cast<size_t>(p)] && !pe.probe_out) {
      pe.probe_out = true;
      pe.probe_sent_ns = 0;
      QueueControl(p, Ctl::kProbe);
    }
    // A peer whose DATA waits here unread (no receive posted) is waiting for us, and its probes
    // are stuck behind that DATA: tell it unasked whom we wait for.
    for (const Lane& ln : pe.lanes) {
      if (ln.rx == Rx::kDataPending && ln.recvs.empty()) {
        if (status_.ok()) QueueControl(p, Ctl::kReply);
        break;
      }
    }
  }
}

void TcpTransport::OnProbe(int p, int l) {
  const Fingerprint f = peers_[p].lanes[static_cast<size_t>(l)].cur.fp;
  if (f.seq != 0 && SameCollective(f, current_fp_) && f != current_fp_) {
    Fail(Status(Code::kPara, FormatMismatch(current_fp_, rank_, f, p)));
    return;
  }
  QueueControl(p, Ctl::kReply);
}

void TcpTransport::OnProbeReply(int p, int l) {
  Peer& pe = peers_[p];
  const Fingerprint f = pe.lanes[static_cast<size_t>(l)].cur.fp;
  DecodeProbeReply(pe.reply_buf, &pe.reply);
  pe.reply_fp = f;
  pe.reply_ns = NowNs();
  pe.probe_out = false;
  pe.probe_sent_ns = 0;
  if (f.seq != 0 && SameCollective(f, current_fp_) && f != current_fp_)
    Fail(Status(Code::kPara, FormatMismatch(current_fp_, rank_, f, p)));
  else
    CheckP2PAgainstCollective(p, f);
}

bool TcpTransport::TransferWaitsOn(int p) const {
  if (!IsP2PKind(current_fp_.kind)) return false;
  const Peer& pe = peers_[p];
  if (!pe.notice_waits.empty()) return true;
  for (const Lane& ln : pe.lanes) {
    if (!ln.recvs.empty()) return true;
    for (const PendingSend& q : ln.sends)
      if (q.ctl == Ctl::kNone) return true;
  }
  return false;
}

// This rank is in a transfer with p and waits for p's notice, or for the first part of a message
// from p, while p answers from a collective that this rank issued after the transfer, or never.
// The reply came on lane 0 behind everything p wrote before it entered that collective, notices
// and every message's first part included, and p completed its earlier transfers first: what
// this rank waits for was never sent, and p waits for this rank in its collective. Different
// operations (p may be waiting in shared memory, where this rank's transfer cannot reach it).
void TcpTransport::CheckP2PAgainstCollective(int p, const Fingerprint& f) {
  if (!IsP2PKind(current_fp_.kind) || IsP2PKind(f.kind) || f.kind == static_cast<uint8_t>(CollKind::kInternal) ||
      f.kind == static_cast<uint8_t>(CollKind::kNone) || f.seq <= current_fp_.seq)
    return;
  FailTransferAgainst(p, f);
}

void TcpTransport::FailTransferAgainst(int p, const Fingerprint& coll) {
  const Peer& pe = peers_[p];
  if (!pe.notice_waits.empty())
    Fail(Status(Code::kPara, FormatP2PMismatch(pe.notice_waits.front().fp, rank_, false, coll, p, true)).WithPeer(p));
  else if (!pe.lanes[0].recvs.empty())
    Fail(Status(Code::kPara, FormatP2PMismatch(pe.lanes[0].recvs.front().fp, rank_, true, coll, p, true)).WithPeer(p));
}

std::string TcpTransport::Blame(const RequestId* ids, size_t n, uint64_t now, int* culprit) const {
  *culprit = -1;
  std::vector<int> via(static_cast<size_t>(size_), -2);  // -2 unseen, -1 waited on here, else who named it
  std::vector<int> order;
  for (size_t i = 0; i < n; ++i) {
    const ReqInfo& r = reqs_.at(ids[i]);
    if (!r.done && via[static_cast<size_t>(r.peer)] == -2) {
      via[static_cast<size_t>(r.peer)] = -1;
      order.push_back(r.peer);
    }
  }
  auto answered_lately = [&](int p) {
    const Peer& pe = peers_[p];
    return pe.reply_ns != 0 && pe.reply_fp.seq == current_fp_.seq && now - pe.reply_ns < kSilentMs * 1000000;
  };
  int found = -1;
  uint64_t silent_ms = 0;
  for (size_t i = 0; i < order.size() && found < 0; ++i) {
    const int p = order[i];
    const int from = via[static_cast<size_t>(p)];
    if (Silent(p, now)) {
      found = p;
      silent_ms = (now - peers_[p].probe_sent_ns) / 1000000;
    } else if (from >= 0 && peers_[from].reply.waits_for == p && peers_[from].reply.waits_for_silent &&
               !answered_lately(p)) {
      found = p;  // its waiter found it silent; our own probe has not had the time to
      silent_ms = peers_[from].reply.silent_ms;
    }
    if (found >= 0) break;
    const Peer& pe = peers_[p];
    if (pe.reply_ns == 0 || pe.reply_fp.seq != current_fp_.seq) continue;
    const int w = pe.reply.waits_for;
    if (w >= 0 && w < size_ && w != rank_ && via[static_cast<size_t>(w)] == -2) {
      via[static_cast<size_t>(w)] = p;
      order.push_back(w);
    }
  }
  if (found < 0) return "";
  *culprit = found;
  std::string out = StrFormat("rank %d (%s) has not answered for %llu ms (stopped, or busy outside this communicator)",
                              found, peers_[found].addr.c_str(), Ull(silent_ms));
  // How this wait leads there: "waits-for chain: rank 0 -> rank 3 -> rank 2".
  if (via[static_cast<size_t>(found)] >= 0) {
    std::string chain = StrFormat("rank %d", found);
    for (int w = via[static_cast<size_t>(found)]; w >= 0; w = via[static_cast<size_t>(w)])
      chain = StrFormat("rank %d -> ", w) + chain;
    out += StrFormat("; waits-for chain: rank %d -> ", rank_) + chain;
  }
  return out;
}

Status TcpTransport::SendNotice(int peer, const Fingerprint& fp, const uint8_t payload[16]) {
  if (!status_.ok()) return status_;
  HOSTCCL_RETURN_IF_ERROR(CheckPeer(peer, "notice"));
  Lane& ln = peers_[peer].lanes[0];
  if (ln.rx == Rx::kClosed) return PeerClosed(peer, "");
  FrameHeader h;
  h.type = FrameType::kNotice;
  h.fp = fp;
  h.payload_len = kNoticeBytes;
  PendingSend s{};
  s.ctl = Ctl::kNotice;
  s.len = kNoticeBytes;
  EncodeFrameHeader(h, s.hdr);
  memcpy(s.ctl_payload, payload, kNoticeBytes);
  // Ahead of DATA not yet started (behind a half-written frame and earlier notices, which keep
  // their order): the peer reads it even while its receive of that DATA is not posted.
  auto pos = ln.sends.begin();
  if (pos != ln.sends.end() && pos->done > 0) ++pos;
  while (pos != ln.sends.end() && pos->ctl != Ctl::kNone) ++pos;
  const bool front = pos == ln.sends.begin();
  ln.sends.insert(pos, s);
  if (front) WriteLane(peer, 0);
  return status_;
}

Status TcpTransport::IrecvNotice(int peer, const Fingerprint& fp, uint8_t payload[16], RequestId* id) {
  HOSTCCL_RETURN_IF_ERROR(BeginRequest(fp));
  HOSTCCL_RETURN_IF_ERROR(CheckPeer(peer, "notice"));
  const RequestId rid = NewRequest(peer, false, 0);
  peers_[peer].notice_waits.push_back({rid, fp, payload});
  *id = rid;
  MatchNotices(peer);
  return status_;
}

void TcpTransport::MatchNotices(int p) {
  Peer& pe = peers_[p];
  while (status_.ok() && !pe.notices.empty() && !pe.notice_waits.empty()) {
    const Peer::Notice& n = pe.notices.front();
    const Peer::NoticeWait& w = pe.notice_waits.front();
    if (n.fp != w.fp) {
      Fail(Status(Code::kPara, FormatMismatch(n.fp, p, w.fp, rank_)));
      return;
    }
    memcpy(w.out, n.payload, kNoticeBytes);
    ReqInfo& r = reqs_.at(w.id);
    r.parts_left = 0;
    r.done = true;
    pe.notices.pop_front();
    pe.notice_waits.pop_front();
  }
}

void TcpTransport::OnNotice(int p, int l) {
  Peer& pe = peers_[p];
  Peer::Notice n;
  n.fp = pe.lanes[static_cast<size_t>(l)].cur.fp;
  memcpy(n.payload, pe.lanes[static_cast<size_t>(l)].notice_buf, kNoticeBytes);
  pe.notices.push_back(n);
  MatchNotices(p);
}

bool TcpTransport::PeerWaitsFor(int peer, Fingerprint* fp, int* waits_for) const {
  if (peer < 0 || peer >= size_ || peer == rank_) return false;
  const Peer& pe = peers_[peer];
  // A point-to-point message of the peer waits here unreceived: it is in a send to this rank,
  // waiting for this rank to receive (its own probe answers may be stuck behind that message).
  for (const Lane& ln : pe.lanes) {
    if (!ln.early.empty()) {
      *fp = ln.early.front().fp;
      *waits_for = rank_;
      return true;
    }
    if (ln.rx == Rx::kDataPending && ln.recvs.empty() && IsP2PKind(ln.cur.fp.kind)) {
      *fp = ln.cur.fp;
      *waits_for = rank_;
      return true;
    }
  }
  // Its answer in this operation, unless it has since gone silent (a stopped peer's last answer
  // is stale: it may have waited for this rank then, in a transfer that has since moved on).
  if (pe.reply_ns == 0 || pe.reply_fp.seq != current_fp_.seq || Silent(peer, NowNs())) return false;
  *fp = pe.reply_fp;
  *waits_for = pe.reply.waits_for;
  return true;
}

std::string TcpTransport::PeerAddress(int peer) const {
  if (peer < 0 || peer >= size_) return "?";
  return peers_[peer].addr;
}

}  // namespace hostccl::net
