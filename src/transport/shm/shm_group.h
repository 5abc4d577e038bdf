// ShmGroup: the ranks of one communicator that are processes (or threads) of ONE host, joined by a
// small shared control segment, and able to read each other's device buffers in place.
//
// Device memory from aclrtMalloc is backed by memfds. A rank publishes, per operation, a
// descriptor of its buffers (owner pid, memfd number, allocation serial, offsets); a peer maps the
// owner's memfd once through /proc/<pid>/fd/<n> and caches the mapping by (rank, serial), so the
// steady state costs no system call and no page fault. Buffers that did not come from aclrtMalloc
// are not shareable; algorithms see that in the descriptors and copy them with process_vm_readv/
// writev when the group's CMA probe passed (cma()), or through Staging() (identically on every
// rank, since every rank reads the same descriptors and the same verdict).
//
// Creation is collective over the communicator's transport: rank 0 creates the segment (a memfd:
// nothing ever appears in /dev/shm) and tells the others its pid and fd number; every rank maps it
// and reports success; rank 0 broadcasts the verdict, so either every rank has the group or none.
// Peer death: each rank holds a pidfd per peer; waits poll them every 100 ms while sleeping, so a
// killed peer fails the operation within about a second.
// Threads: one thread per rank uses the group at a time; Abort() may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"
#include "transport/peer_memory.h"
#include "transport/sync/group_barrier.h"
#include "transport/transport.h"

namespace hostccl::net {

struct ShmSegment;  // layout private to shm_group.cc

// One slot of a point-to-point mailbox (ShmGroup::Mail): the sender fills the first part and
// publishes it with `full`. The receiver writes the second cache line only when the fingerprints
// differ, and the third when its HcclRecv waits for a message not published yet (`posted`: a
// sender that finds its message's Recv posted checks the match itself instead of waiting for the
// answer), so neither side writes the other's lines; what it took is counted per ordered pair in a
// MailAnswer. Message numbers count from 1 per ordered pair.
struct alignas(64) MailSlot {
  static constexpr size_t kInline = 472;  // payload bytes carried in the slot itself
  std::atomic<uint64_t> full;   // sender: the message number this slot holds (release, written last)
  Fingerprint fp;               // sender's message fingerprint (algo::P2PMessageFp)
  uint64_t ack;                 // sender: the last message of the reverse pair it took (piggybacked)
  char payload[kInline];
  alignas(64) uint64_t bad;     // receiver: the number of a message whose fingerprints differed
  Fingerprint rfp;              // receiver's fingerprint of message `bad`
  alignas(64) std::atomic<uint64_t> posted;  // receiver: the message its HcclRecv waits for (release)
  Fingerprint pfp;                           // receiver's fingerprint of message `posted`
};

// Per ordered pair (from, to): the last message the receiver took (release, after its copy and any
// `bad`). The receiver writes it on every take; the sender reads it only when it does not know
// the slot it is about to reuse to be free (ShmGroup::MailKnownTaken caches what it read and what
// the receiver's own messages carried back in MailSlot::ack), i.e. at most once per ring of
// messages back to back (ShmGroup::MailSlots), and when it waits for an answer. So the line stays
// in the receiver's cache between those reads, where one answer line per slot used to be read by
// the sender and written by the receiver once per message each (two cross-core misses).
struct alignas(64) MailAnswer {
  std::atomic<uint64_t> taken;
};

class ShmGroup : public PeerMemory {
 public:
  // `members` are the transport ranks of the group (rank `index` is this process's entry);
  // pids[i] is the pid of members[i]. `staging_bytes` of shared scratch follow the control data
  // (Staging()); every member sees the same bytes.
  static Status Create(int index, const std::vector<int>& members, Transport* transport,
                       const std::vector<uint32_t>& pids, size_t staging_bytes, Deadline deadline,
                       std::unique_ptr<ShmGroup>* out);
  // The same for `size` members that are threads of this process with no transport between
  // them: the first member to come maps the segment and offers it to the others in a table of
  // this process under `key` (the communicator's key); nobody waits. No staging, no CMA (every
  // buffer is read in place). Every member gets the group or the same error (kNotSupport when
  // the segment could not be mapped). `deadline`: when an offer left untaken may be dropped.
  static Status CreateInProcess(int index, int size, const std::string& key, Deadline deadline,
                                std::unique_ptr<ShmGroup>* out);
  // Shared scratch of `staging_bytes` (64-byte aligned), or nullptr when none was requested.
  char* Staging() const { return staging_; }
  size_t staging_bytes() const { return staging_bytes_; }
  ~ShmGroup() override;
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  int size() const { return size_; }
  int rank() const { return rank_; }
  // The segment's address: one for every member in this process (members that are threads share
  // one mapping).
  const void* segment() const { return seg_; }

  // Arrivals. Members call Arrive/Post/Barrier in the same order; each call takes this rank's next
  // ticket (1, 2, ...). Arrive writes `fp` and up to kInlineBytes of `payload` into this rank's
  // slot for the ticket, announces it, and returns when every member has arrived at that ticket
  // (or with the abort/timeout/peer-death status). Each rank has a ring of RingSlots(n) slots
  // (ticket t in slot t % ring), each starting with one cache line that holds the ticket, the
  // fingerprint and the first 32 payload bytes, so a small operation costs the reader one
  // cache-line transfer per peer and there is no shared counter to contend on. The slots of
  // ticket t stay readable (ArrivedFp/ArrivedPayload) until this rank's next arrival or MarkDone:
  // a member reuses its slot of ticket t only at ticket t + ring, after every member arrived past
  // t or marked t done (flow control: a member gets at most ring tickets ahead of the slowest;
  // with a ring of 8 or more, one that finds its ring full waits until half of it is free).
  static constexpr size_t kInlineBytes = 4096;
  // How long an inline attempt spins for the other members before it gives up (BeginAttempt):
  // as long as an arrival's own spin phase (transport/sync/group_barrier.cc).
  static constexpr uint64_t kAttemptSpinNs = 2000;
  // An attempt that finds its ring full (it ran a whole ring ahead of the slowest member) waits
  // up to this long for half of it to free up, looking once per kRingPollNs (AwaitRingAttempt).
  static constexpr uint64_t kAttemptRingWaitNs = 20000;
  static constexpr uint64_t kRingPollNs = 1000;
  // Slots per rank: 64 up to 8 ranks, 32 up to 16, 8 up to 64, else 2 (at most ~2 MiB of slots
  // per group). Deep enough that a rank descheduled on a busy host still finds work queued.
  static constexpr int RingSlots(int n) { return n <= 8 ? 64 : n <= 16 ? 32 : n <= 64 ? 8 : 2; }
  struct ArrivalSlot;  // layout private to shm_group.cc, as are the three below
  struct SlotData;
  struct DoneLine;
  struct FpEntry;
  // An inline attempt that gives up, when the group fits the cores: if a member with a lower
  // index last arrived on this thread's CPU, move this thread to another CPU; if only higher ones
  // did, yield to them (transport/sync/shared_cpu.h). Either at most once per millisecond.
  void LeaveSharedCpu();
  // At the end of an operation: asks for this rank's lines of its next arrival (the slot's first
  // lines, as many as the last arrival's payload filled, at most kPrefetchLines: the first line
  // and 2 KiB of payload after it, since the whole 4 KiB slowed rooted 4 KiB calls; and its history
  // entry), so that the next Announce finds them owned instead of waiting for the peers that read
  // them to give them back (transport/sync/prefetch_write.h); and, after an Arrive (which read
  // every member's slot), the first line of every member's next slot, for reading: a member that
  // runs ahead has written it already, and the transfer overlaps this rank's return and next call
  // (docs/performance.md "The next arrival's lines, asked for early"). Nothing while that slot is
  // not known to be released (a full ring: its lines still hold data a peer has to read). A hint:
  // changes nothing.
  static constexpr size_t kPrefetchLines = 33;
  void PrefetchNextArrival() const;
  // `also_check`, when given, runs with the peer-death check while this rank sleeps (every 100 ms):
  // e.g. Transport::Progress, so peers on other hosts that wait on this rank get their probes
  // answered; a non-ok status ends the wait with it.
  Status Arrive(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq,
                uint64_t* ticket, const std::function<Status()>* also_check = nullptr);
  // Running ahead (pipelined completion of small operations): Post announces this rank's next
  // ticket like Arrive (same flow control) and returns at once, without waiting for the others;
  // this rank must read none of that ticket's slots (it marks the ticket done). Its fingerprint
  // is compared later, with `check`: against the others' as they publish them (each rank keeps
  // its last 4 x ring fingerprints in the segment), at its later Posts and arrivals, and at Settle.
  // A mismatch found there aborts the group (naming both ranks) and is returned.
  // With `reads` (a non-root of a small Broadcast or Scatter) the rank will still read other
  // members' slots of the ticket: it is not marked done (MarkDone, once read); AwaitArrival waits
  // for the member it reads. With `wake` (a root whose members wait for it alone, not for all)
  // sleepers are woken whether or not every member arrived.
  Status Post(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq, bool check,
              uint64_t* ticket, bool reads = false, bool wake = false);
  // Inline attempts (rt::Stream::EnqueueAttempt: a small operation run on the calling thread while
  // its stream is idle, which must not wait): after BeginAttempt(seq), the first Arrive or Post of
  // operation `seq` gives up with kAgain instead of waiting longer than a short spin (only when
  // this host's members fit on its cores; else one look). Either before announcing (the ring is
  // still full after AwaitRingAttempt's wait: nothing changed) or after (not every member
  // arrived: the ticket is kept, and the next Arrive or Post of `seq` — the operation run again
  // from the stream, which may run ahead now — takes that ticket without announcing again).
  // Later arrivals of the operation wait as usual.
  // With `look_once` (a thread that drives several members: the ones it has yet to call cannot
  // arrive while it spins) the attempt looks once instead of spinning, and giving up never moves
  // the thread off its CPU (LeaveSharedCpu).
  // EndAttempt clears it.
  void BeginAttempt(uint64_t seq, bool look_once = false) {
    attempt_seq_ = seq;
    attempting_ = true;
    attempt_spin_ = spin_ok_ && !look_once;
  }
  void EndAttempt() { attempting_ = false; }
  // Whether the last attempt could spin (not `look_once`, and the members fit the cores): one that
  // gave up then spun its whole wait first.
  bool attempt_spun() const { return attempt_spin_; }
  // Takes the attempt flag for operation `seq` (only its first wait is an attempt's). Arrive and
  // Post take it; so does a point-to-point transfer's first wait (algo/sendrecv/sendrecv_mailbox.cc).
  // (`seq` is the fingerprint's: a point-to-point transfer's is the collective count so far, 0
  // before the first collective.)
  bool TakeAttempt(uint64_t seq) {
    const bool a = Attempting(seq);
    attempting_ = false;
    return a;
  }
  bool Attempting(uint64_t seq) const { return attempting_ && attempt_seq_ == seq; }
  // An attempt's wait for a condition of WaitFor's kind: ready(arg) within the attempt's spin
  // (kAttemptSpinNs; one look when this host's members outnumber its cores).
  bool SpinFor(bool (*ready)(const void*), const void* arg) const;
  // Operation `seq` announced its arrival in an attempt and resumes it.
  bool Resuming(uint64_t seq) const { return resume_seq_ == seq && seq != 0; }
  // An attempt's announced arrival not resumed yet (no other operation may attempt meanwhile).
  bool resume_pending() const { return resume_seq_ != 0; }
  // After Post(reads): waits until member r arrived at `ticket` (or with the abort/timeout/peer-
  // death status); its slot stays readable until this rank's MarkDone(ticket). With `attempt` (the
  // Post was an inline attempt's) it waits only as an attempt does, then gives up with kAgain
  // keeping the ticket: the next Post of `seq` resumes it.
  Status AwaitArrival(int r, uint64_t ticket, Deadline deadline, uint64_t seq, bool attempt = false);
  // A member that reads slots of `ticket` after a Post of others (the root of a small Reduce):
  // it is done with them; members that ran ahead may reuse them and settle.
  void MarkDone(uint64_t ticket);
  // Waits until every member is done with this rank's last Post (marked it done or arrived
  // later; for a Post with `reads` or `wake`: arrived at it), then compares the remaining fingerprints; the abort's status when the group gave up
  // on one of them, a dead peer's, or kTimeout at the deadline. Ok at once when nothing ran ahead.
  Status Settle(Deadline deadline);
  // Something to settle: arrivals posted ahead (Settle) or eager mailbox sends whose answers
  // were not collected yet (mail_ahead(), settled by algo::SettleRanAhead).
  bool ran_ahead() const { return ran_ahead_ || mail_ahead_; }
  bool posted_ahead() const { return ran_ahead_; }
  // How often an arrival waited for a slot to be released (flow control; tests, diagnostics).
  uint64_t flow_waits() const { return flow_waits_; }
  uint64_t ring() const { return ring_; }
  const Fingerprint& ArrivedFp(int r, uint64_t ticket) const;
  const char* ArrivedPayload(int r, uint64_t ticket) const;
  // First member whose fingerprint for `ticket` differs from member 0's, or -1.
  int FirstMismatch(uint64_t ticket) const;
  // Buffer descriptors for the operation about to arrive (read by peers after the arrival).
  void Publish(int rank, const BufDesc& send, const BufDesc& recv);
  const BufDesc& SendDesc(int r) const;
  const BufDesc& RecvDesc(int r) const;
  // After the arrival: the lowest member whose published sendBuf (and, with `recv_too`, recvBuf)
  // peers cannot map (not aclrtMalloc memory), or -1. The same answer on every member.
  int FirstUnmappable(bool recv_too) const;
  // Whether member r's published buffer `d` can be used in place by every member: aclrtMalloc
  // memory (its memfd is mapped), or any memory when every member is a thread of one process
  // (thread ranks over shared memory share the address space). The same answer on every member.
  bool Shareable(const BufDesc& d) const { return d.serial != 0 || one_process_; }

  // A pointer in this process to peer r's published buffer (maps on first use); nullptr when the
  // buffer is not shareable or cannot be mapped (*why says why).
  const void* PeerSend(int r, std::string* why) override;
  void* PeerRecv(int r, std::string* why) override;

  // PeerMemory: Publish + Arrive (no payload) + FirstMismatch; Barrier(deadline, seq).
  Status Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc& sd,
                  const BufDesc& rd, Deadline deadline, bool check, const void* payload = nullptr,
                  size_t payload_bytes = 0) override;
  // The payload travels inline in the arrival slot (kInlineBytes at most).
  const void* PeerPayload(int r) override { return ArrivedPayload(r, exchange_ticket_); }
  size_t PayloadLimit() const override { return kInlineBytes; }
  Status Barrier(int rank, Deadline deadline, uint64_t seq) override { (void)rank; return Barrier(deadline, seq); }

  // Peer r's buffer described by `d` when a message carries the descriptor instead of a slot
  // (point-to-point): a pointer in this process (mapped and cached as PeerSend's), or nullptr and
  // *why when it is not shareable. Drops mappings of allocations their owners freed first.
  void* MapPeer(int r, const BufDesc& d, std::string* why) {
    DropFreedMappings();
    return Resolve(r, d, why, /*write=*/true);
  }

  // Point-to-point mailboxes (groups of at most kMailMaxRanks members; none above, identically on
  // every member): per ordered pair (from, to) a ring of MailSlots(n) slots in the segment; message
  // m (1, 2, ...) of the pair uses slot (m - 1) % MailSlots(n). nullptr when the group has none.
  // 16 slots up to 16 members (~2.4 MiB of mailboxes at 16), else 4 (16 would take ~9.4 MiB at
  // 32): a sender reads its pair's answer line once per ring of messages, and the receiver's next
  // write of it then waits for the line to come back (docs/performance.md "Send/Recv: both ends
  // copy; one answer line per pair").
  static constexpr int kMailMaxRanks = 32;
  static constexpr uint64_t MailSlots(int n) { return n <= 16 ? 16 : 4; }
  uint64_t mail_slots() const { return MailSlots(size_); }
  bool has_mail() const { return mail_ != nullptr; }
  MailSlot* Mail(int from, int to, uint64_t m) const {
    const uint64_t slots = mail_slots();
    return mail_ + (static_cast<size_t>(from) * static_cast<size_t>(size_) + static_cast<size_t>(to)) * slots +
           ((m - 1) & (slots - 1));
  }
  // This rank's message counts per peer (process memory; one thread uses the group at a time).
  uint64_t& MailSent(int peer) { return mail_sent_[static_cast<size_t>(peer)]; }
  uint64_t& MailTaken(int peer) { return mail_taken_[static_cast<size_t>(peer)]; }
  // While an HcclRecv waits for message `m` from `peer` (count, dtype), the ranks of a collective
  // that wait for this rank can see it (BlockedPeer); cleared when the wait ends.
  void SetRecvWait(int peer, uint64_t m, uint64_t count, uint8_t dtype);
  void ClearRecvWait();
  // The same for a sender that waits for `peer` to take its message `m` (a synchronize after
  // eager sends, a batch, a send above the inline size); cleared when the wait ends.
  void SetSendWait(int peer, uint64_t m);
  void ClearSendWait();
  // The answer line of the ordered pair (from, to), and this rank's last reading of its own
  // pairs' lines (as a sender, per peer).
  std::atomic<uint64_t>& MailTakenWord(int from, int to) const {
    return answers_[static_cast<size_t>(from) * static_cast<size_t>(size_) + static_cast<size_t>(to)].taken;
  }
  uint64_t& MailKnownTaken(int peer) { return mail_known_taken_[static_cast<size_t>(peer)]; }
  // Eager sends (complete once published, answered later): the last message to `peer` whose
  // answer (verdict) this rank looked at, and whether some answers are still to be collected.
  uint64_t& MailChecked(int peer) { return mail_checked_[static_cast<size_t>(peer)]; }
  bool& mail_ahead() { return mail_ahead_; }
  // Waits (spin, yield, futex, as arrivals do) until ready() holds; bounded by the deadline, and
  // by the death or failure (Abort, communicator destroyed) of one of `peers` (group indices) only,
  // so a rank that leaves fails only transfers with itself. `missing` names whom it waits for.
  // ready(arg) is called often: a plain function (no allocation per call); missing(arg) only at
  // the timeout.
  Status WaitFor(bool (*ready)(const void*), const void* arg, Deadline deadline, const int* peers, size_t npeers,
                 std::string (*missing)(const void*));
  // Peer r's failure as it published it (Abort), or ok.
  Status PeerGone(int r) const;
  // After writing a mailbox word: wakes members sleeping in WaitFor or an arrival (no system call
  // when none sleeps).
  void Notify() { WakeSleepers(); }

  // Process identity and the group's cross-memory-attach verdict (cma.h; the same on every
  // member), for buffers that are not shareable.
  uint32_t Pid(int r) const { return pids_[static_cast<size_t>(r)]; }
  bool SameProcess(int r) const { return pids_[static_cast<size_t>(r)] == own_pid_; }
  bool cma() const { return cma_; }
  // True the first time `site` (a string literal naming a log site, compared by address) is
  // passed (per group, any thread): "log on first use". Only re-plan paths call it.
  bool FirstUse(const char* site);

  // Called (any thread of the owner) when one of this rank's allocations is freed: peers drop
  // their mapping of it at their next Publish, so freed device memory is not kept alive.
  void NoteFreed(uint64_t serial);

  // An arrival without fingerprint or payload (steps inside an operation). `seq` is the
  // operation the caller is in: an arrival that completes into an operation that was aborted
  // (seq >= the abort's) still fails, since the others gave up on it.
  Status Barrier(Deadline deadline, uint64_t seq = 0, const std::function<Status()>* also_check = nullptr);
  // Fails operations numbered `from_seq` and later on every member (0 = every operation).
  void Abort(Code code, const std::string& reason, uint64_t from_seq = 0) override;
  // Between the steps of a long computation inside operation `seq`: the abort's status if the
  // group was aborted for it, or a dead peer's (then the group is aborted too), else ok. A load,
  // plus one poll() per peer's pidfd.
  Status Check(uint64_t seq) override;
  std::atomic<uint64_t>* WorkWord(int i) override;
  // min(size, WorkerLimit()).
  int Workers() const override { return workers_; }
  // The most processes of one host that claim pieces: HOSTCCL_SHM_WORKERS when set, else one per
  // online CPU; at most kMaxWorkers.
  static int WorkerLimit();

 private:
  ShmGroup() = default;
  // Create's parts: the group's fields from its members; the segment's header (rank 0, then
  // Locate); staging, mailboxes and pidfds once the segment is mapped.
  static std::unique_ptr<ShmGroup> NewGroup(int rank, const std::vector<int>& members,
                                            const std::vector<uint32_t>& pids, size_t staging_bytes);
  void WriteHeader();
  void AttachShared();
  ArrivalSlot* Slot(int r, uint64_t ticket) const;
  void Locate();                      // the arrays below, from seg_ (Create)
  FpEntry* History(int r) const;  // member r's fingerprint history
  void PublishCpu();  // this thread's CPU into this member's DoneLine, when it changed
  void PrefetchPeerSlots(const ArrivalSlot* first) const;  // PrefetchNextArrival's read part
  bool AllArrived(uint64_t ticket) const;
  // Every other member is done with ticket u (arrived later or marked it done): the slots of
  // ticket u + ring may be written.
  bool Released(uint64_t u) const;
  // Every other member is done with ticket t (marked it done or arrived later).
  bool Settled(uint64_t t) const;
  // Takes the next ticket, waits for its slot (flow control) and publishes fp, payload and the
  // fingerprint history entry; *known: fingerprints of tickets <= *known are published by all.
  // `attempt`: a full ring gives up (kAgain, no ticket taken) after a short spin.
  Status Announce(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq,
                  uint64_t* ticket, const std::function<Status()>* also_check, uint64_t* known,
                  bool attempt = false);
  // An attempt's wait: (this->*ready)(arg) within ~2 us of spinning, or one look when this
  // host's members outnumber its cores.
  bool SpinBriefly(bool (ShmGroup::*ready)(uint64_t) const, uint64_t arg) const;
  // An attempt whose ring is full at ticket t (a rank that runs ring tickets ahead of the
  // slowest): waits until half the ring is free, looking once per kRingPollNs, for at most
  // kAttemptRingWaitNs; then true when at least the one slot of t is free. False at once when
  // this host's members outnumber its cores.
  bool AwaitRingAttempt(uint64_t t) const;

  // Waits until (this->*ready)(arg) holds without a waker (flow control, Settle); bounded by the
  // deadline, abort and peer death. `missing_ticket`: for the timeout message. `seq`: the
  // operation it waits for; an abort that applies only from a later operation (a peer that
  // destroyed its communicator after its last call) does not end the wait.
  Status PollUntil(bool (ShmGroup::*ready)(uint64_t) const, uint64_t arg, Deadline deadline,
                   const std::function<Status()>* also_check, uint64_t missing_ticket, uint64_t seq);
  // Compares this rank's posted fingerprints up to `upto` with the others' history entries.
  Status VerifyUpTo(uint64_t upto);
  BarrierOptions WaitOptions(const std::function<Status()>* also_check);
  // Members late for ticket t (done_too: not yet done with it), for timeout messages.
  std::string Missing(uint64_t t, bool done_too) const;
  // After this rank saw every ticket of an arrival: wakes ranks sleeping on the futex, if any.
  void WakeSleepers();
  Status AfterWait(Status st, uint64_t seq);
  // The reason another member published with its abort (complete: its code is set), if any.
  bool PublishedAbort(std::string* reason) const;
  // `write`: this rank will write the buffer (its pages are touched for writing once per mapping;
  // otherwise for reading, shm_group.cc "TouchPages").
  void* Resolve(int r, const BufDesc& d, std::string* why, bool write);
  void DropFreedMappings();
  void Unmap(int r, uint64_t serial);
  Status CheckPeersAlive();

  int rank_ = 0;
  int published_cpu_ = -1;     // the CPU in this member's DoneLine (PublishCpu)
  uint64_t last_share_ns_ = 0;  // LeaveSharedCpu's last move or yield
  uint64_t ticket_ = 0;         // this rank's arrivals so far
  size_t announced_bytes_ = 0;  // payload bytes of the last arrival (PrefetchNextArrival)
  bool read_all_ = false;       // the last announcement was an Arrive (PrefetchNextArrival)
  uint64_t ring_ = 2;           // arrival slots per rank (RingSlots)
  uint64_t all_arrived_ = 0;    // the last ticket this rank saw every member arrive at
  mutable uint64_t released_known_ = 0;  // Released(u) holds for every u up to this (monotonic)
  bool ran_ahead_ = false;      // a Post since the last Settle
  uint64_t last_post_ = 0, last_post_seq_ = 0;
  // The last Post was a root's or reader's (Broadcast, Scatter: `wake` or `reads`): Settle needs
  // every member's arrival at it, not its done-ness (nobody folds it; arriving at ticket t means
  // being done with every earlier ticket).
  bool settle_on_arrival_ = false;
  uint64_t verify_lo_ = 0, verify_hi_ = 0;  // posted tickets whose fingerprints are not compared yet
  uint64_t flow_waits_ = 0;
  uint64_t attempt_seq_ = 0;                    // BeginAttempt
  bool attempting_ = false;
  uint64_t resume_seq_ = 0, resume_ticket_ = 0;  // an attempt's announced arrival
  bool spin_ok_ = true;                         // this host's members fit on its cores
  bool attempt_spin_ = true;                    // this attempt spins (BeginAttempt: spin_ok_, not look_once)
  bool asym_wake_ = false;  // every member's process registered for membarrier: wakers run no fence (wake_fence.h)
  int workers_ = 1;                             // Workers()
  uint64_t exchange_ticket_ = 0;  // the last Exchange's arrival (PeerPayload)
  int size_ = 0;
  int memfd_ = -1;             // rank 0 keeps the segment's memfd
  size_t control_bytes_ = 0;   // the segment's control part (page-rounded); staging follows it
  std::shared_ptr<void> seg_map_;  // the mapping of seg_, shared by the members of one process
  char* staging_ = nullptr;
  size_t staging_bytes_ = 0;
  ShmSegment* seg_ = nullptr;
  // seg_'s arrays (Locate): member r's slot of ticket t is arrivals_[r * ring_ + (t & ring_mask_)],
  // its history entry of t History(r)[t & history_mask_]
  ArrivalSlot* arrivals_ = nullptr;
  SlotData* slot_data_ = nullptr;
  DoneLine* done_ = nullptr;
  char* history_ = nullptr;
  size_t history_bytes_ = 0;
  uint64_t ring_mask_ = 1, history_mask_ = 7;
  size_t seg_bytes_ = 0;
  std::vector<uint32_t> pids_;
  std::vector<int> members_;    // communicator rank of each member (for messages)
  uint32_t own_pid_ = 0;        // getpid() is a system call: cached
  bool one_process_ = false;    // every member is a thread of this process (Shareable)
  bool cma_ = false;
  std::mutex first_use_mu_;
  std::vector<const char*> first_used_;  // FirstUse's sites seen
  std::vector<int> pidfds_;
  struct Mapping {
    void* local = nullptr;
    size_t length = 0;
    uint64_t base = 0;
    bool written = false;  // its pages were touched for writing (TouchPages)
  };
  std::unordered_map<uint64_t, Mapping> maps_;  // key: rank << 48 ^ serial
  std::vector<uint64_t> freed_seen_;            // per peer: freed-ring entries already applied
  uint64_t arrival_wait_ = 0;  // the ticket Arrive or AwaitArrival waits for (0: none), for BlockedPeer
  int arrival_only_ = -1;      // AwaitArrival: the one member it waits for (-1: every member)
  // A member that has not arrived at ticket `t` (member `only`, when not -1) but waits in HcclSend
  // to this rank (a message above a mail slot's inline size, or one whose answer it published that
  // it waits for; untaken) or in HcclRecv from this rank (a message this rank never posted): kPara
  // naming both operations.
  Status BlockedPeer(uint64_t t, int only = -1) const;
  MailSlot* mail_ = nullptr;
  std::vector<uint64_t> mail_sent_, mail_taken_, mail_checked_, mail_known_taken_;
  MailAnswer* answers_ = nullptr;
  bool mail_ahead_ = false;
  SleepStats sleep_stats_;  // this rank's futex sleeps, logged at teardown (last: off the hot members' lines)
};

}  // namespace hostccl::net
