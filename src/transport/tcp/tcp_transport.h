// TcpTransport: net::Transport over one connected TCP socket per peer (see transport.h for the
// semantics and docs/transport.md for the wire format and progress model).
// Built by CreateTcpMesh from already-authenticated sockets; owns them and closes them (after a
// best-effort CLOSE frame so peers can tell a destroyed communicator from a dead process).
// Progress: poll() over the peer sockets and an eventfd, run only by the thread inside
// Wait/WaitAll/Test. Thread-safety: one thread at a time, except Interrupt() (any thread).
#pragma once

#include <poll.h>

#include <atomic>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"
#include "transport/transport.h"

namespace hostccl::net {

class TcpTransport final : public Transport {
 public:
  // fds[peer] is the connection to `peer` (invalid for rank itself); addrs[peer] names it.
  TcpTransport(int rank, int size, std::vector<Fd> fds, std::vector<std::string> addrs);
  ~TcpTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Isend(int peer, const void* buf, size_t len, const Fingerprint& fp, RequestId* id) override;
  Status Irecv(int peer, void* buf, size_t len, const Fingerprint& fp, RequestId* id) override;
  Status Wait(RequestId id, Deadline deadline) override;
  Status WaitAll(const RequestId* ids, size_t n, Deadline deadline) override;
  Status Test(RequestId id, bool* done) override;
  void Abort(const std::string& reason, Code code) override;
  void Interrupt() override;
  std::string PeerAddress(int peer) const override;

 private:
  struct PendingSend {
    RequestId id;
    uint8_t hdr[kFrameHeaderBytes];
    const uint8_t* buf;
    size_t len;
    size_t done;  // bytes of header + payload already written
  };
  struct PendingRecv {
    RequestId id;
    uint8_t* buf;
    size_t len;
    Fingerprint fp;
  };
  enum class Rx { kHeader, kDataPending, kDataBody, kAbortBody, kClosed };
  struct Peer {
    Fd fd;
    std::string addr;
    std::deque<PendingSend> sends;
    std::deque<PendingRecv> recvs;
    Rx rx = Rx::kHeader;
    uint8_t hdr[kFrameHeaderBytes] = {};
    size_t hdr_got = 0;
    FrameHeader cur;
    size_t body_got = 0;
    std::string reason;
    bool hup = false;  // hang-up seen while not reading: stop polling until a receive is posted
  };
  struct ReqInfo {
    int peer;
    bool send;
    size_t len;
    bool done;
  };

  Status CheckPeer(int peer, const char* what) const;
  RequestId NewRequest(int peer, bool send, size_t len);
  // One round: poll (up to timeout_ms) and move bytes. Sets status_ on error.
  void PollOnce(int timeout_ms);
  void WritePeer(int p);
  void ReadPeer(int p);
  void MatchPending(int p);  // a DATA header is pending and a receive is posted: check and start
  void Fail(Status st);
  Status PeerClosed(int p, const char* detail);
  std::string DescribePending(const RequestId* ids, size_t n) const;
  bool SendControl(int p, FrameType type, Code code, const std::string& text);

  const int rank_;
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
  bool CheckUnexpected(int p);                 // a conflicting frame for this operation: mismatch
  uint64_t deferred_seq_ = 0;
  Fd event_fd_;
  std::atomic<bool> interrupted_{false};
  std::vector<pollfd> pfds_;  // scratch, reused across rounds
  std::vector<int> pfd_peer_;
};

}  // namespace hostccl::net
