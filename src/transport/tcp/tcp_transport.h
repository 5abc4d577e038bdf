// TcpTransport: net::Transport over k connected TCP sockets ("lanes") per peer (see transport.h
// for the semantics and docs/transport.md for the wire format and progress model).
// Built by CreateTcpMesh from already-authenticated sockets; owns them and closes them (after a
// best-effort CLOSE frame on each so peers can tell a destroyed communicator from a dead process).
// Lanes: a message shorter than kStripeMinBytes (or any message when k = 1) travels whole on lane
// 0; a longer one is cut into k stripes, stripe i on lane i, each a DATA frame with the message's
// fingerprint and "stripe i of k" in its header. Each lane is FIFO, and sender and receiver cut a
// message of the same length the same way, so stripes match in posting order; a request
// completes when all its stripes have. Different lengths show up as a stripe mismatch.
// Progress: poll() over the peer sockets and an eventfd, run only by the thread inside
// Wait/WaitAll/Test; a small Isend writes at once when its socket has nothing queued, and each
// socket is read through a small buffer (one recv() per burst of small frames, not one per
// header and payload). Thread-safety: one thread at a time, except Interrupt() (any thread).
// Stall probes: a wait that has lasted kProbeAfterMs sends a PROBE (its fingerprint, no payload)
// to every peer it waits on, and again every kProbeEveryMs once answered. Whoever reads a PROBE
// (any wait, or Progress()) compares fingerprints — the same sequence number with other arguments
// is a mismatch, reported naming both ranks' arguments — and answers with a PROBE_REPLY: its own
// fingerprint and the rank its wait is stuck on. So ranks that took different algorithms (a count
// on both sides of a selection threshold) meet within ~100 ms, and the fast path pays nothing.
// Replies also let a timeout name the rank that really stopped: the prober follows the replies'
// "waits for" ranks, probes those too, and blames a rank that leaves a written probe unanswered.
#pragma once

#include <poll.h>

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"
#include "transport/transport.h"

namespace hostccl::net {

class TcpTransport final : public Transport {
 public:
  // Messages at least this long are striped across the lanes when a peer has more than one.
  static constexpr size_t kStripeMinBytes = 128 << 10;
  // Each lane reads through a buffer this large, so one recv() takes a small frame's header and
  // payload (and any frames behind it) at once; payload still missing when the buffer is empty
  // goes straight into the posted buffer once at least kDirectReadMinBytes are missing.
  static constexpr size_t kLaneBufferBytes = 8 << 10;
  static constexpr size_t kDirectReadMinBytes = 2 << 10;
  // Isend writes a message up to this long at once when its socket has nothing queued. Such a
  // message is never striped, so it always travels on lane 0.
  static constexpr size_t kEagerWriteMaxBytes = 16 << 10;
  static_assert(kEagerWriteMaxBytes < kStripeMinBytes, "eager sends must fit on lane 0");
  // Stall probes (see above). A peer that leaves a written probe unanswered this long is "silent".
  static constexpr uint64_t kProbeAfterMs = 100;
  static constexpr uint64_t kProbeEveryMs = 100;
  static constexpr uint64_t kSilentMs = 500;

  // fds[peer] is the connection to `peer` (invalid for rank itself); addrs[peer] names it.
  TcpTransport(int rank, int size, std::vector<Fd> fds, std::vector<std::string> addrs);
  // lanes[peer] holds the k connections to `peer` (lane 0 first; empty for rank itself); every
  // peer has the same k, and its own side agrees (CreateTcpMesh checks it).
  TcpTransport(int rank, int size, std::vector<std::vector<Fd>> lanes, std::vector<std::string> addrs);
  ~TcpTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Isend(int peer, const void* buf, size_t len, const Fingerprint& fp, RequestId* id) override;
  Status Irecv(int peer, void* buf, size_t len, const Fingerprint& fp, RequestId* id) override;
  Status Wait(RequestId id, Deadline deadline) override;
  Status WaitAll(const RequestId* ids, size_t n, Deadline deadline) override;
  Status WaitAny(const RequestId* ids, size_t n, Deadline deadline, size_t* which) override;
  Status Test(RequestId id, bool* done) override;
  void Abort(const std::string& reason, Code code, uint64_t seq = 0) override;
  void Interrupt() override;
  std::string PeerAddress(int peer) const override;
  void SetBusyPollNs(uint64_t ns) override { busy_poll_ns_ = ns; }
  Status Progress(const Fingerprint& fp) override;
  Status SendNotice(int peer, const Fingerprint& fp, const uint8_t payload[16]) override;
  Status IrecvNotice(int peer, const Fingerprint& fp, uint8_t payload[16], RequestId* id) override;
  bool PeerWaitsFor(int peer, Fingerprint* fp, int* waits_for) const override;
  int StuckOn() const override { return stuck_on_; }

 private:
  enum class Ctl : uint8_t { kNone, kProbe, kReply, kNotice };  // what a queued frame is (kNone = DATA)
  struct PendingSend {
    RequestId id;  // 0 for a control frame
    uint8_t hdr[kFrameHeaderBytes];
    const uint8_t* buf;  // DATA payload (a control frame's payload is `ctl_payload`)
    size_t len;   // of this stripe's payload
    size_t done;  // bytes of header + payload already written
    Ctl ctl;
    uint8_t ctl_payload[kProbeReplyBytes];
    const uint8_t* Payload() const { return ctl == Ctl::kNone ? buf : ctl_payload; }
  };
  struct PendingRecv {
    RequestId id;
    uint8_t* buf;    // where this stripe lands
    size_t len;      // of this stripe
    Fingerprint fp;
    uint16_t part;   // stripe index and count as the header must carry them (0, 0 = whole)
    uint16_t parts;
    size_t total;    // of the whole message, for messages
  };
  enum class Rx { kHeader, kDataPending, kDataBody, kAbortBody, kReplyBody, kNoticeBody, kEarlyBody, kClosed };
  // A point-to-point message (<= kP2PEarlyMaxBytes) that arrived before its receive was posted.
  struct Early {
    Fingerprint fp;
    std::vector<uint8_t> body;
    bool complete = false;
  };
  // One socket to a peer: its own send queue, receive queue and frame parser.
  struct Lane {
    Fd fd;
    std::deque<PendingSend> sends;
    std::deque<PendingRecv> recvs;
    Rx rx = Rx::kHeader;
    uint8_t hdr[kFrameHeaderBytes] = {};
    size_t hdr_got = 0;
    FrameHeader cur;
    size_t body_got = 0;
    std::string reason;
    uint8_t notice_buf[kNoticeBytes] = {};
    std::deque<Early> early;  // in arrival order; matched before anything newer
    bool hup = false;  // hang-up seen while not reading: stop polling until a receive is posted
    std::unique_ptr<uint8_t[]> rbuf;  // kLaneBufferBytes, allocated at the first read
    size_t rpos = 0, rlen = 0;        // unparsed bytes are rbuf[rpos, rlen)
    bool Buffered() const { return rpos < rlen; }
  };
  struct Peer {
    std::string addr;
    std::vector<Lane> lanes;  // empty for this rank
    // Stall probes: this rank's view of the peer.
    bool probe_out = false;       // our latest PROBE is queued or in flight and not answered
    uint64_t probe_sent_ns = 0;   // when it was fully written (0 = still queued behind data)
    uint64_t reply_ns = 0;        // when the peer last answered
    Fingerprint reply_fp;         // its operation then
    ProbeReply reply;             // and whom it waited for
    uint8_t reply_buf[kProbeReplyBytes] = {};
    // Point-to-point notices: arrived and not yet asked for, and the requests waiting for one.
    struct Notice {
      Fingerprint fp;
      uint8_t payload[kNoticeBytes];
    };
    struct NoticeWait {
      RequestId id;
      Fingerprint fp;
      uint8_t* out;
    };
    std::deque<Notice> notices;
    std::deque<NoticeWait> notice_waits;
  };
  struct ReqInfo {
    int peer;
    bool send;
    size_t len;
    int parts_left;  // stripes still in flight
    bool done;
  };

  Status WaitLoop(const RequestId* ids, size_t n, Deadline deadline, size_t* any = nullptr);
  Status CheckPeer(int peer, const char* what) const;
  RequestId NewRequest(int peer, bool send, size_t len);
  // How a message of `len` bytes to/from `peer` is cut: *n stripes (1 = whole, on lane 0).
  int Stripes(int peer, size_t len) const;
  static void StripeRange(size_t len, int n, int i, size_t* off, size_t* plen);
  void PartDone(RequestId id);
  // One round: poll (up to timeout_ms) and move bytes. Sets status_ on error.
  void PollOnce(int timeout_ms);
  void WriteLane(int p, int l);
  // Parses buffered bytes and reads the socket until it has nothing more (or a frame waits for a
  // receive to be posted). At most one recv() that finds nothing.
  void ReadLane(int p, int l);
  void MatchPending(int p, int l);  // a DATA header is pending and a receive is posted: check and start
  void Fail(Status st);
  // "rank p (addr) closed the connection<detail>", naming also the other peers whose connections
  // have hung up unread: a rank that aborts in the middle of a frame to a reader that is busy
  // elsewhere can only close, and the reader then sees that close first, while the rank whose
  // death the abort passes on is the other hang-up.
  Status PeerClosed(int p, const char* detail);
  std::string DescribePending(const RequestId* ids, size_t n) const;
  // The peer of the first of `ids` not done yet (the one a wait is stuck on), or -1.
  int FirstPendingPeer(const RequestId* ids, size_t n) const;
  bool SendControl(int p, int l, FrameType type, Code code, const std::string& text);
  void FinishThenAbort(const std::vector<std::pair<int, int>>& lanes, Code code, const std::string& reason);
  // Stall probes.
  void QueueControl(int p, Ctl ctl);  // a PROBE or PROBE_REPLY on lane 0, ahead of unstarted DATA
  void ProbeTick(const RequestId* ids, size_t n, uint64_t now);
  void OnProbe(int p, int l);
  void OnProbeReply(int p, int l);
  void CheckP2PAgainstCollective(int p, const Fingerprint& f);  // on a reply: mismatch (Fail)
  // Fails with the transfer this rank waits on p for (a notice, else a message's first part)
  // against p's collective `coll`; nothing when it waits for neither.
  void FailTransferAgainst(int p, const Fingerprint& coll);
  // The current operation is a transfer that still needs p: a notice, a message, or p's reading
  // of this rank's message.
  bool TransferWaitsOn(int p) const;
  void OnNotice(int p, int l);
  void MatchNotices(int p);
  void MatchEarly(int p, int l);
  bool Silent(int p, uint64_t now) const;
  ProbeReply WhomWeWaitFor(uint64_t now) const;
  // The rank this wait is really stuck on, as probes tell ("" when none is known).
  std::string Blame(const RequestId* ids, size_t n, uint64_t now, int* culprit) const;

  const int rank_;
  int stuck_on_ = -1;  // StuckOn()
  const int size_;
  std::vector<Peer> peers_;
  std::unordered_map<RequestId, ReqInfo> reqs_;
  RequestId next_id_ = 1;
  Status status_;  // sticky first error
  Fingerprint current_fp_;  // fingerprint of the latest posted request: the operation in progress
  // An ABORT for a later operation than ours: its sender finished our operation, so it fails us
  // only once we move on (posting a request of a later operation).
  Status deferred_abort_;
  Status BeginRequest(const Fingerprint& fp);  // records the operation; applies a deferred abort
  bool CheckUnexpected(int p, int l);          // a conflicting frame for this operation: mismatch
  uint64_t deferred_seq_ = 0;
  Fd event_fd_;
  std::atomic<bool> interrupted_{false};
  std::vector<pollfd> pfds_;  // scratch, reused across rounds
  std::vector<std::pair<int, int>> pfd_lane_;  // (peer, lane) of pfds_[i]
  uint64_t busy_poll_ns_ = 0;  // waits poll(0) this long before blocking in poll()
  const RequestId* waiting_ids_ = nullptr;  // the requests of the wait in progress (for replies)
  size_t waiting_n_ = 0;
  std::vector<char> probe_want_;  // scratch for ProbeTick
  // Abort's bounds for finishing half-written frames before their ABORT (FinishThenAbort): a
  // lane's reader that takes nothing for kAbortStallMs has stopped; a slow one that keeps taking
  // bytes gets at most kAbortFlushMs in all.
  static constexpr int kAbortStallMs = 250;
  static constexpr int kAbortFlushMs = 2000;
  bool draining_ = false;         // WriteLane reads a failed socket's last frames (no recursion)
};

}  // namespace hostccl::net
