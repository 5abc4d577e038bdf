// The transport interface: ordered, matched point-to-point messages between the ranks of one
// communicator. Algorithms talk to peers only through this (via algo/primitives.h).
//
// Semantics:
//  - Per (sender, receiver) pair, messages match in posting order (FIFO). A receive must be
//    posted with the length and fingerprint the sender used; a different fingerprint fails with
//    kPara and FormatMismatch()'s text, a different length with kPara naming both lengths.
//  - Isend/Irecv never block. Progress happens inside Wait/WaitAll/Test, driven by the calling
//    thread (no progress thread, no hand-off); an Isend may also start writing at once.
//    Buffers must stay valid until completion. Large payloads land directly in the posted
//    buffer (no intermediate copy); TCP copies small frames out of a per-socket read buffer.
//  - Every wait is bounded by its Deadline; an expired deadline returns kTimeout naming the peers
//    whose requests are still pending.
//  - A closed or reset connection is an error (kRemote, naming the peer and its address), never a
//    spin. Errors are sticky: after the first one every call returns it.
//  - Abort(reason, code): best-effort, nonblocking notice to every peer; a peer that reads it
//    fails its current and later waits with `code` and "rank r aborted: <reason>".
//  - One thread uses a Transport at a time, except Interrupt(), which any thread may call to make
//    a blocked wait return kRemote("communicator destroyed") promptly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"

namespace hostccl::net {

using RequestId = uint64_t;

// Point-to-point messages (kind HcclSend/HcclRecv/HcclBatchSendRecv in the fingerprint) up to this
// size that arrive before their receive is posted are kept aside by the transport (one copy), so
// they never hold back what follows them from the same peer (notices, aborts, probe answers).
inline constexpr size_t kP2PEarlyMaxBytes = 16 << 10;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual Status Isend(int peer, const void* buf, size_t len, const Fingerprint& fp, RequestId* id) = 0;
  virtual Status Irecv(int peer, void* buf, size_t len, const Fingerprint& fp, RequestId* id) = 0;
  virtual Status Wait(RequestId id, Deadline deadline) = 0;
  virtual Status WaitAll(const RequestId* ids, size_t n, Deadline deadline) = 0;
  // Waits until at least one of `ids` completed; *which is its index (that request is finished
  // and forgotten, the others stay pending).
  virtual Status WaitAny(const RequestId* ids, size_t n, Deadline deadline, size_t* which) = 0;
  // Progresses without blocking; *done tells whether `id` completed.
  virtual Status Test(RequestId id, bool* done) = 0;

  // `seq`: the operation that failed, when the caller knows it (the transport may not have seen a
  // request of it yet); peers still in an earlier operation finish that one first.
  virtual void Abort(const std::string& reason, Code code, uint64_t seq = 0) = 0;
  virtual void Interrupt() = 0;
  // Human-readable peer address for messages ("10.0.0.4:41233").
  virtual std::string PeerAddress(int peer) const = 0;
  // Waits poll without blocking for up to `ns` before they block (0: block at once). Worth it when
  // this process has a core to itself: a blocked waiter's wake-up costs ~24 us on a VM.
  virtual void SetBusyPollNs(uint64_t ns) { (void)ns; }
  // Without blocking: reads what peers sent and answers their control frames (TCP stall probes)
  // as a rank in operation `fp` would. For algorithms that wait elsewhere (shared memory) while
  // peers on other hosts may wait on them; a mismatch found here is returned (and sticky).
  virtual Status Progress(const Fingerprint& fp) { (void)fp; return Status::Ok(); }
  // Point-to-point notices (HcclSend/HcclRecv clear-to-send): a small control message with a
  // fingerprint and kNoticeBytes (16) of payload, delivered outside the order of messages (it
  // never waits behind a message nobody has received yet) and matched per peer in arrival order
  // with IrecvNotice. A notice whose fingerprint differs from the one IrecvNotice expects fails
  // the transport with kPara and FormatMismatch(notice's, peer, expected, this rank).
  // IrecvNotice's request completes like any other (Wait/WaitAll/Test, probes, deadlines).
  virtual Status SendNotice(int peer, const Fingerprint& fp, const uint8_t payload[16]) {
    (void)peer; (void)fp; (void)payload;
    return Status(Code::kNotSupport, "this transport has no point-to-point notices");
  }
  virtual Status IrecvNotice(int peer, const Fingerprint& fp, uint8_t payload[16], RequestId* id) {
    (void)peer; (void)fp; (void)payload; (void)id;
    return Status(Code::kNotSupport, "this transport has no point-to-point notices");
  }
  // What `peer` last said (answering a stall probe) about its operation and the rank its wait is
  // stuck on, or, when a point-to-point message of the peer waits here unreceived, that message's
  // fingerprint and this rank; false when neither is known, and when the peer has left this
  // rank's latest probe unanswered (its earlier answer may be stale). For timeout messages (two
  // ranks both in HcclSend to each other).
  virtual bool PeerWaitsFor(int peer, Fingerprint* fp, int* waits_for) const {
    (void)peer; (void)fp; (void)waits_for;
    return false;
  }
  // After a wait that timed out: the peer of its first request still pending (the rank this rank
  // itself was stuck on, whoever the timeout's message blames down a chain), or -1.
  virtual int StuckOn() const { return -1; }
};

}  // namespace hostccl::net
