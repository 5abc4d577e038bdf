// P2P `mailbox`: HcclSend / HcclRecv / HcclBatchSendRecv between processes of one host through
// the mailboxes of the shared segment (net::ShmGroup::Mail), with no TCP and no system call for
// small messages.
//
// What: every transfer of the call's list (OpArgs::items) moves count elements from the sender's
// buffer into the receiver's. Per ordered pair (sender, receiver) a ring of MailSlots(n) slots (16
// up to 16 ranks, else 4) in the segment carries the pair's messages in issue order: the sender
// writes the message fingerprint (dtype, count, pair number), the last message of the reverse
// pair it took (`ack`) and, up to MailSlot::kInline (472) bytes, the payload itself (larger
// payloads: the buffer's address and descriptor instead, Split), then publishes the slot (`full`
// = message number). The receiver compares the fingerprint with its own, copies the payload (out
// of the slot, or for larger payloads straight out of the sender's buffer: through the mapping of
// its device memory when the descriptor allows, else process_vm_readv; one copy, any memory) and
// answers: the pair's `taken` count (net::MailAnswer, one line per ordered pair, which the sender
// reads only when it does not know its next slot to be free), and, only when the fingerprints
// differ, `bad` and its own fingerprint in the slot's second line. A rank that takes a message
// learns from its `ack` which of its own messages the peer took (MailKnownTaken), so after a
// reply it never reads the answer line, which then stays in the receiver's cache (a store there
// that the sender had read costs the receiver an invalidation round trip, and its later stores
// queue behind it).
// Split copies: a single HcclSend of at least HOSTCCL_P2P_SPLIT_BYTES (1 MiB) flags its slot; the
// receiver publishes its buffer's descriptor (`claim`), and both ends take 256 KiB chunks from
// one counter: the receiver reads chunks, the sender writes chunks into the receiver's buffer
// (mapped, or process_vm_writev). The receiver answers `taken` only when every chunk is done, so
// nothing is written into its buffer after its Recv completed.
// Posted receives: a single HcclRecv whose message is not published yet first writes its own
// message fingerprint into the slot's third line (`pfp`, then `posted` = m). A single HcclSend
// whose payload travels inline reads that line after publishing: a post for its message decides
// at once (agreeing: complete, no answer needed; differing: the same HCCL_E_PARA both ranks
// report), so the rank that answers a ping-pong does not wait for its reply to be taken.
// Eager and rendezvous: without a post, a single HcclSend whose payload travels inline (<= 472
// bytes) completes once its slot is published (the data is copied out; the stream moves on:
// ctx.ran_ahead); its answer is collected later: before the pair's slot is reused (message m +
// MailSlots(n) waits until m was taken anyway, and looks at m's `bad` first) and at the stream's
// synchronize (P2PMailboxSettle, through Communicator::Settle), which first accepts the messages
// posted since and otherwise waits until the receiver took every message and reports a mismatch,
// a dead receiver or, at the exec timeout, the missing HcclRecv.
// Every other send (larger, or in a HcclBatchSendRecv list) completes only when the pair's `taken`
// reached it, so it does not complete before its Recv took the data. A fingerprint that differs is
// answered with `bad` = the message's number and the receiver's fingerprint, so both ranks fail with the same
// HCCL_E_PARA message naming both (an eager sender: at its next send on the pair that reuses the
// slot, or its synchronize, at the latest).
// Waiting: whenever nothing can progress, one adaptive wait (spin ~2 us, yield, then the segment's
// futex) for any slot this call watches; bounded by the exec timeout, peer death (pidfds) and an
// abort of the communicator.
// Preconditions: ctx.shm with mailboxes (at most 32 ranks) and the CMA probe passed; otherwise it
// re-plans to `shm`, or for thread ranks with no transport to `local` (the same verdict on every
// rank, so both ends of a pair always agree). Items
// numbered by core.
// Steps and bytes per rank: repeat until every item completed: post every send whose slot is free
// (in list order per peer; a full ring waits for the receiver to free a slot), take every receive
// whose slot is published (in list order per peer), collect answers. The receiver copies `bytes`
// per transfer (once; a split message: the two ends copy disjoint chunks, `bytes` in all). Sends never wait for this rank's receives (posts, takes and answers progress
// together), so any set of pairwise-matching items completes in any item order.
// In-place safety: self items copy with memmove; other transfers join different ranks' buffers.
// Example: ping-pong of 8 bytes, rank 0 {send to 1} then {recv from 1}, rank 1 the other way
// round: rank 0 writes one cache line (message 1 in slot 0 of ring 0->1) and its send completes
// (eager, or at once if rank 1's receive was posted), then posts its receive in slot 0 of ring
// 1->0; rank 1 sees `full` == 1, copies 8 bytes, writes the pair's `taken` = 1, publishes its reply
// (`ack` = 1) and finds rank 0's post agreeing: its send completes without an answer; rank 0
// takes the reply and knows from its `ack` that message 1 was taken (its synchronize, and its
// post of message 17 into slot 0 again, need not read rank 1's answer line).
// 64 MiB instead: rank 0 flags the slot split and waits for `claim`; rank 1 claims, both take
// chunk numbers 0..255 from the counter (say rank 1 copies 0, 2, 3, ... and rank 0 copies 1, ...),
// rank 1 waits until `done` = 256 and answers.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "algo/sendrecv/sendrecv_algorithms.h"
#include "common/env.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/copy.h"
#include "transport/shm/cma.h"
#include "transport/shm/shm_group.h"

namespace hostccl::algo {
namespace {

// Split copies (a single HcclSend of at least HOSTCCL_P2P_SPLIT_BYTES, 1 MiB by default, and
// above kInline): the receiver copies chunks out of the sender's buffer while the sender copies
// chunks into the receiver's buffer, both taking chunk numbers from one counter in the slot, so
// two cores move one message. The sender decides (Split::split), so ranks with different settings
// still agree.
constexpr uint64_t kChunkBytes = 256 << 10;
constexpr uint64_t kStreamMinBytes = 4 << 20;  // whole messages from this size: streaming stores

// Lives in MailSlot::payload (unused by payloads above kInline). The sender writes sdesc and
// zeroes the counters before publishing `full`; the receiver writes rdesc before `claim` = m.
struct Split {
  net::BufDesc sdesc;  // the sender's buffer (serial 0: not shareable, read with CMA)
  net::BufDesc rdesc;  // the receiver's buffer (serial 0: written with CMA)
  uint64_t split;      // sender: the message number when this message is split (else 0)
  uint64_t claim;      // receiver: message number whose rdesc is valid (copying started)
  uint64_t next;       // chunks handed out (both ends)
  uint64_t done;       // chunks copied (both ends)
  uint64_t failed;     // message number whose sender-side copy failed
};
static_assert(sizeof(Split) <= net::MailSlot::kInline, "the split record fits the slot's payload");
static_assert(offsetof(net::MailSlot, payload) % alignof(uint64_t) == 0, "the split record's words are aligned");

Split* SplitOf(net::MailSlot* s) { return reinterpret_cast<Split*>(s->payload); }

// The sender's choice for a payload of `bytes` (single HcclSend only).
bool SplitSend(uint64_t bytes) {
  static const uint64_t min_bytes = static_cast<uint64_t>(std::max<int64_t>(0, EnvInt(Knob::kP2PSplitBytes, 1 << 20)));
  return min_bytes > 0 && bytes >= min_bytes && bytes > net::MailSlot::kInline;
}
std::atomic_ref<uint64_t> Word(uint64_t& w) { return std::atomic_ref<uint64_t>(w); }
uint64_t Chunks(uint64_t bytes) { return (bytes + kChunkBytes - 1) / kChunkBytes; }

// Peer r's buffer `d` as a pointer in this process, or nullptr (copy with CMA).
char* PeerPtr(net::ShmGroup* g, int r, const net::BufDesc& d) {
  if (g->SameProcess(r)) return reinterpret_cast<char*>(d.addr);
  if (d.serial == 0) return nullptr;
  std::string why;
  return static_cast<char*>(g->MapPeer(r, d, &why));
}

void CopyChunk(char* dst, const char* src, uint64_t len, bool stream) {
  if (stream)
    kern::CopyStreaming(dst, src, len);
  else
    std::memcpy(dst, src, len);
}

// The chunks one end takes until none are left. `remote` is the peer's buffer mapped here, or
// nullptr: `send` writes it with CMA at `remote_addr`, a receiver reads it with CMA. A failed
// chunk is still counted as done (the peer must not wait for it) and reported through *st.
void CopyChunks(net::ShmGroup* g, int peer, Split* sp, bool send, char* local, char* remote, uint64_t remote_addr,
                uint64_t bytes, uint64_t m, Status* st) {
  const uint64_t n = Chunks(bytes);
  const bool stream = bytes >= kStreamMinBytes;
  while (true) {
    const uint64_t k = Word(sp->next).fetch_add(1, std::memory_order_acq_rel);
    if (k >= n) return;
    const uint64_t off = k * kChunkBytes, len = std::min(kChunkBytes, bytes - off);
    if (st->ok()) {
      if (remote != nullptr)
        CopyChunk(send ? remote + off : local + off, send ? local + off : remote + off, len, stream);
      else if (send)
        *st = net::CmaWrite(g->Pid(peer), peer, remote_addr + off, local + off, len);
      else
        *st = net::CmaRead(g->Pid(peer), peer, remote_addr + off, local + off, len);
      if (!st->ok() && send) Word(sp->failed).store(m, std::memory_order_relaxed);
    }
    if (Word(sp->done).fetch_add(1, std::memory_order_acq_rel) + 1 == n) g->Notify();
  }
}

struct SplitWait {
  net::ShmGroup* g;
  Split* sp;
  uint64_t n;
  int peer;
};
bool AllChunksDone(const void* a) {
  const SplitWait* w = static_cast<const SplitWait*>(a);
  return Word(w->sp->done).load(std::memory_order_acquire) >= w->n;
}
std::string SplitPeer(const void* a) { return std::to_string(static_cast<const SplitWait*>(a)->peer); }

struct ItemState {
  uint64_t m = 0;  // message number in its ring (sends: once posted)
  bool done = false;
};

// One call's state, shared with the wait's plain-function callbacks. The vectors are reused by
// the thread's next call (no allocation per call in the steady state).
struct Call {
  Context* ctx;
  net::ShmGroup* g;
  std::span<const P2PItem> items;
  std::vector<ItemState> st;
  std::vector<char> blocked_send, blocked_recv;  // per peer, in the current pass (keeps per-peer order)
  std::vector<int> peers;                         // of the items not completed
  size_t left = 0;
};

Status Mismatch(const P2PItem& it, const Fingerprint& recv_fp, int recv_rank, const Fingerprint& send_fp,
                int send_rank) {
  Status s(Code::kPara, FormatMismatch(recv_fp, recv_rank, send_fp, send_rank));
  s.WithPeer(it.peer);
  return s;
}

// Writes message m of (me -> it.peer) into its (free) slot and publishes it.
// `desc`: the sender's buffer when core described it (a single HcclSend), else nullptr. `split`:
// this sender will help copy (RunOne).
void Post(Context& ctx, net::ShmGroup* g, const P2PItem& it, uint64_t m, const net::BufDesc* desc = nullptr,
          bool split = false) {
  net::MailSlot* s = g->Mail(ctx.rank, it.peer, m);
  const uint64_t bytes = it.bytes();
  s->fp = P2PMessageFp(ctx, it, kP2PData);
  s->ack = g->MailTaken(it.peer);
  if (bytes > 0 && bytes <= net::MailSlot::kInline) std::memcpy(s->payload, it.buf, bytes);
  if (bytes > net::MailSlot::kInline) {
    const uint64_t addr = reinterpret_cast<uint64_t>(it.buf);
    Split* sp = SplitOf(s);
    sp->sdesc = desc != nullptr && desc->addr == addr ? *desc : net::BufDesc{};
    sp->sdesc.addr = addr;
    sp->split = split ? m : 0;
    if (split) sp->claim = sp->next = sp->done = sp->failed = 0;
  }
  s->full.store(m, std::memory_order_release);
  g->MailSent(it.peer) = m;
}

// The last message of (from -> to) the receiver took.
uint64_t TakenUpTo(const net::ShmGroup* g, int from, int to) {
  return g->MailTakenWord(from, to).load(std::memory_order_acquire);
}

// Whether message m of (me -> peer) may use its slot: message m - MailSlots(n) was taken. The
// pair's answer line is read only when what this rank read last does not say so.
bool SlotFree(net::ShmGroup* g, int me, int peer, uint64_t m) {
  const uint64_t slots = g->mail_slots();
  if (m <= slots) return true;
  uint64_t& known = g->MailKnownTaken(peer);
  if (known >= m - slots) return true;
  known = TakenUpTo(g, me, peer);
  return known >= m - slots;
}

// The answers of messages to `peer` up to `upto` (all taken; none of their slots reused yet) that
// this rank has not looked at: the first that says the fingerprints differed, as the receiver
// reported it. Runs before every post that reuses a slot (upto = m - MailSlots(n)) and at the
// settle.
Status CollectAnswers(net::ShmGroup* g, int me, int peer, uint64_t upto) {
  uint64_t& checked = g->MailChecked(peer);
  for (; checked < upto; ++checked) {
    const net::MailSlot* s = g->Mail(me, peer, checked + 1);
    if (s->bad == checked + 1) {
      Status st(Code::kPara, FormatMismatch(s->rfp, peer, s->fp, me));
      st.WithPeer(peer);
      return st;
    }
  }
  return Status::Ok();
}

// Whether message m of (me -> peer), published, found its HcclRecv posted (MailSlot::posted):
// then *st says whether they agree, as the receiver will find when it takes the message. Only
// while message m + MailSlots(n) - 1 is not published: until then the receiver cannot post the
// slot's next message (receives are in order), so pfp holds message m's post.
bool PostedMatch(net::ShmGroup* g, int me, int peer, uint64_t m, Status* st) {
  const net::MailSlot* s = g->Mail(me, peer, m);
  if (s->posted.load(std::memory_order_acquire) != m) return false;
  if (s->pfp != s->fp) {
    *st = Status(Code::kPara, FormatMismatch(s->pfp, peer, s->fp, me));
    st->WithPeer(peer);
  }
  return true;
}

// Messages to `peer` up to `upto` (published) whose HcclRecv was posted and agrees: checked now,
// without their answers; stops at the first that was not posted.
Status CollectPosted(net::ShmGroup* g, int me, int peer, uint64_t upto) {
  uint64_t& checked = g->MailChecked(peer);
  if (checked + g->mail_slots() <= upto) return Status::Ok();  // PostedMatch's bound
  for (Status st; checked < upto; ++checked) {
    if (!PostedMatch(g, me, peer, checked + 1, &st)) break;
    HOSTCCL_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

// The receiver's side of a split message: publishes its buffer, copies chunks, waits for the
// sender's chunks in flight.
Status TakeSplit(Context& ctx, net::ShmGroup* g, const P2PItem& it, net::MailSlot* s, uint64_t m,
                 const net::BufDesc* desc) {
  Split* sp = SplitOf(s);
  const uint64_t bytes = it.bytes();
  sp->rdesc = desc != nullptr && desc->addr == reinterpret_cast<uint64_t>(it.buf) ? *desc : net::BufDesc{};
  sp->rdesc.addr = reinterpret_cast<uint64_t>(it.buf);
  Word(sp->claim).store(m, std::memory_order_release);
  g->Notify();
  Status st;
  CopyChunks(g, it.peer, sp, false, static_cast<char*>(it.buf), PeerPtr(g, it.peer, sp->sdesc), sp->sdesc.addr, bytes,
             m, &st);
  SplitWait w{g, sp, Chunks(bytes), it.peer};
  Status waited = g->WaitFor(&AllChunksDone, &w, ctx.deadline, &it.peer, 1, &SplitPeer);
  if (st.ok() && !waited.ok()) st = waited;
  if (st.ok() && Word(sp->failed).load(std::memory_order_relaxed) == m)
    st = MakeStatus(Code::kRemote, "rank %d could not write its part of message #%llu into rank %d's buffer", it.peer,
                    static_cast<unsigned long long>(it.pair_seq), ctx.rank);
  return st;
}

// Takes message m of (it.peer -> me) (published): compares, copies, answers. `desc`: this rank's
// buffer when core described it (a single HcclRecv), else nullptr.
Status Take(Context& ctx, net::ShmGroup* g, const P2PItem& it, uint64_t m, const net::BufDesc* desc = nullptr) {
  net::MailSlot* s = g->Mail(it.peer, ctx.rank, m);
  const Fingerprint mine = P2PMessageFp(ctx, it, kP2PData);
  // What the peer took of this rank's messages when it posted this one: answers that need not be
  // read from the pair's answer line (a reply in a ping-pong brings the ping's answer with it).
  uint64_t& known = g->MailKnownTaken(it.peer);
  if (s->ack > known) known = s->ack;
  Status copied;
  if (s->fp != mine) {
    s->rfp = mine;
    s->bad = m;
    copied = Mismatch(it, mine, ctx.rank, s->fp, it.peer);
  } else {
    const uint64_t bytes = it.bytes();
    if (bytes > 0 && bytes <= net::MailSlot::kInline) {
      std::memcpy(it.buf, s->payload, bytes);
    } else if (bytes > net::MailSlot::kInline && SplitOf(s)->split == m) {
      copied = TakeSplit(ctx, g, it, s, m, desc);
    } else if (const char* src = bytes > 0 ? PeerPtr(g, it.peer, SplitOf(s)->sdesc) : nullptr) {
      std::memcpy(it.buf, src, bytes);  // the sender's device buffer, mapped (or this process's)
    } else if (bytes > 0) {
      copied = net::CmaRead(g->Pid(it.peer), it.peer, SplitOf(s)->sdesc.addr, it.buf, bytes);
    }
  }
  // Answered even after a failed copy: the sender must not wait for the timeout (a failed read
  // of a live peer fails this rank, whose departure reaches the sender).
  g->MailTakenWord(it.peer, ctx.rank).store(m, std::memory_order_release);
  g->MailTaken(it.peer) = m;
  return copied;
}

// Publishes that this rank's HcclRecv waits for message m of (it.peer -> me), not published yet:
// its sender, when it finds the post, checks the match itself and completes without an answer.
// This rank took message m - 1 (receives are in order), so the sender no longer reads the slot's
// previous post (PostedMatch's bound).
void PostRecv(Context& ctx, net::ShmGroup* g, const P2PItem& it, uint64_t m) {
  net::MailSlot* s = g->Mail(it.peer, ctx.rank, m);
  if (s->posted.load(std::memory_order_relaxed) == m) return;  // an attempt run again
  s->pfp = P2PMessageFp(ctx, it, kP2PData);
  s->posted.store(m, std::memory_order_release);
}

// A timeout's wording: is the peer of a send itself waiting in a send to this rank (its message to
// us is published and not taken)?
Status Timeout(Context& ctx, net::ShmGroup* g, const P2PItem& it) {
  const uint64_t m = g->MailTaken(it.peer) + 1;
  const bool both = it.send && g->Mail(it.peer, ctx.rank, m)->full.load(std::memory_order_acquire) == m;
  return P2PTimeout(ctx, it, both ? SendStall::kBothSend : SendStall::kNoRecv, Status::Ok());
}

// HcclSend / HcclRecv: one transfer, no list bookkeeping.
struct One {
  net::ShmGroup* g;
  int from, to;
  uint64_t m;
};
bool OneFree(const void* a) {
  const One* o = static_cast<const One*>(a);
  return SlotFree(o->g, o->from, o->to, o->m);
}
bool OneTaken(const void* a) {
  const One* o = static_cast<const One*>(a);
  return o->g->MailKnownTaken(o->to) >= o->m || TakenUpTo(o->g, o->from, o->to) >= o->m;
}
bool OneClaimedOrTaken(const void* a) {
  const One* o = static_cast<const One*>(a);
  net::MailSlot* s = o->g->Mail(o->from, o->to, o->m);
  return Word(SplitOf(s)->claim).load(std::memory_order_acquire) == o->m || TakenUpTo(o->g, o->from, o->to) >= o->m;
}
bool OneFull(const void* a) {
  const One* o = static_cast<const One*>(a);
  return o->g->Mail(o->from, o->to, o->m)->full.load(std::memory_order_acquire) == o->m;
}
std::string OnePeer(const void* a) {
  const One* o = static_cast<const One*>(a);
  return std::to_string(o->from == o->g->rank() ? o->to : o->from);
}

// Waits until ready(o) while publishing that this rank waits for o.to to take message m: a
// collective's ranks that wait for this rank see it (ShmGroup::BlockedPeer).
Status WaitForReceiver(const One& o, bool (*ready)(const void*), uint64_t m, Deadline deadline) {
  if (ready(&o)) return Status::Ok();
  o.g->SetSendWait(o.to, m);
  Status w = o.g->WaitFor(ready, &o, deadline, &o.to, 1, &OnePeer);
  o.g->ClearSendWait();
  return w;
}
// Until the receiver took message o.m (this rank -> o.to).
Status WaitTaken(const One& o, Deadline deadline) { return WaitForReceiver(o, &OneTaken, o.m, deadline); }
// Until message o.m has a free slot: the receiver took message o.m - MailSlots(n).
Status WaitFree(const One& o, Deadline deadline) {
  return WaitForReceiver(o, &OneFree, o.m - o.g->mail_slots(), deadline);
}

Status RunOne(Context& ctx, net::ShmGroup* g, const OpArgs& a, const P2PItem& it) {
  const int me = ctx.rank;
  // An inline attempt (a small transfer issued on an idle stream, rt::Stream::EnqueueAttempt)
  // waits only a short spin: for a free slot or a message it gives up having changed nothing
  // (run again from the stream, it starts over); a message it posted completes eagerly, answered
  // later (as a send that runs ahead): spinning here for the receiver's answer would put this
  // rank's read of the answer line in the path of the receiver's write to it.
  const bool attempt = g->TakeAttempt(ctx.fp.seq);
  if (it.send) {
    One o{g, me, it.peer, g->MailSent(it.peer) + 1};
    if (attempt) {
      if (!OneFree(&o) && !g->SpinFor(&OneFree, &o)) {  // a look first: the slot is mostly free
        g->LeaveSharedCpu();
        return Status(Code::kAgain, "the receiver's mailbox is full");
      }
    } else {
      Status w = WaitFree(o, ctx.deadline);
      if (!w.ok()) return w.code() == Code::kTimeout ? Timeout(ctx, g, it) : w;
    }
    Status w;
    if (o.m > g->mail_slots()) HOSTCCL_RETURN_IF_ERROR(CollectAnswers(g, me, it.peer, o.m - g->mail_slots()));
    const bool split = SplitSend(it.bytes());
    Post(ctx, g, it, o.m, &a.send_desc, split);
    g->Notify();
    // A payload in the slot whose HcclRecv was posted needs no answer: this rank checks the match
    // itself (the receiver checks it again when it takes the message).
    if (it.bytes() <= net::MailSlot::kInline) {
      Status st;
      if (PostedMatch(g, me, it.peer, o.m, &st)) {
        if (st.ok() && g->MailChecked(it.peer) + 1 == o.m) g->MailChecked(it.peer) = o.m;
        return st;
      }
    }
    if ((ctx.may_run_ahead || attempt) && it.bytes() <= net::MailSlot::kInline) {
      g->mail_ahead() = true;  // eager: answered later (CollectAnswers, settle)
      ctx.ran_ahead = g;
      return Status::Ok();
    }
    Status copied;
    if (split) {
      // Help: once the receiver published its buffer, copy chunks into it alongside.
      w = g->WaitFor(&OneClaimedOrTaken, &o, ctx.deadline, &it.peer, 1, &OnePeer);
      if (!w.ok()) return w.code() == Code::kTimeout ? Timeout(ctx, g, it) : w;
      net::MailSlot* s = g->Mail(me, it.peer, o.m);
      Split* sp = SplitOf(s);
      if (Word(sp->claim).load(std::memory_order_acquire) == o.m)
        CopyChunks(g, it.peer, sp, true, static_cast<char*>(it.buf), PeerPtr(g, it.peer, sp->rdesc), sp->rdesc.addr,
                   it.bytes(), o.m, &copied);
    }
    // Even after a failed copy: the receiver may still read this buffer until it answers.
    w = WaitTaken(o, ctx.deadline);
    if (!copied.ok()) return copied;
    if (!w.ok()) return w.code() == Code::kTimeout ? Timeout(ctx, g, it) : w;
    const net::MailSlot* s = g->Mail(me, it.peer, o.m);
    if (s->bad == o.m) return Mismatch(it, s->rfp, it.peer, P2PMessageFp(ctx, it, kP2PData), me);
    return Status::Ok();
  }
  One o{g, it.peer, me, g->MailTaken(it.peer) + 1};
  const bool full = OneFull(&o);
  if (!full) PostRecv(ctx, g, it, o.m);
  if (attempt) {
    if (!full && !g->SpinFor(&OneFull, &o)) {
      g->LeaveSharedCpu();
      return Status(Code::kAgain, "no message yet");
    }
  } else {
    g->SetRecvWait(it.peer, o.m, it.count, static_cast<uint8_t>(it.dtype));  // a collective's ranks see it
    Status w = g->WaitFor(&OneFull, &o, ctx.deadline, &it.peer, 1, &OnePeer);
    g->ClearRecvWait();
    if (!w.ok()) return w.code() == Code::kTimeout ? Timeout(ctx, g, it) : w;
  }
  Status st = Take(ctx, g, it, o.m, &a.recv_desc);
  g->Notify();
  return st;
}

// A list: can some step be made now (the wait's condition; reads only)?
bool ListReady(const void* a) {
  const Call& c = *static_cast<const Call*>(a);
  const int me = c.ctx->rank;
  for (size_t i = 0; i < c.items.size(); ++i) {
    if (c.st[i].done) continue;
    const P2PItem& it = c.items[i];
    if (it.send && c.st[i].m == 0) {
      if (SlotFree(c.g, me, it.peer, c.g->MailSent(it.peer) + 1)) return true;
    } else if (it.send) {
      if (TakenUpTo(c.g, me, it.peer) >= c.st[i].m) return true;
    } else {
      const uint64_t m = c.g->MailTaken(it.peer) + 1;
      if (c.g->Mail(it.peer, me, m)->full.load(std::memory_order_acquire) == m) return true;
    }
  }
  return false;
}

size_t FirstOpen(const Call& c) {
  for (size_t i = 0; i < c.st.size(); ++i)
    if (!c.st[i].done) return i;
  return 0;
}
std::string ListPeer(const void* a) {
  const Call& c = *static_cast<const Call*>(a);
  return std::to_string(c.items[FirstOpen(c)].peer);
}

// One pass over the list: every step that can be made now. *moved: something was written.
Status Pass(Call& c, bool* moved) {
  Context& ctx = *c.ctx;
  net::ShmGroup* g = c.g;
  const int me = ctx.rank;
  std::fill(c.blocked_send.begin(), c.blocked_send.end(), 0);
  std::fill(c.blocked_recv.begin(), c.blocked_recv.end(), 0);
  for (size_t i = 0; i < c.items.size(); ++i) {
    if (c.st[i].done) continue;
    const P2PItem& it = c.items[i];
    const size_t p = static_cast<size_t>(it.peer);
    if (it.send && c.st[i].m == 0) {  // post
      if (c.blocked_send[p]) continue;
      const uint64_t m = g->MailSent(it.peer) + 1;
      if (!SlotFree(g, me, it.peer, m)) {
        c.blocked_send[p] = 1;
        continue;
      }
      if (m > g->mail_slots()) HOSTCCL_RETURN_IF_ERROR(CollectAnswers(g, me, it.peer, m - g->mail_slots()));
      Post(ctx, g, it, m);
      c.st[i].m = m;
      *moved = true;
    } else if (it.send) {  // answer
      if (TakenUpTo(g, me, it.peer) < c.st[i].m) continue;
      const net::MailSlot* s = g->Mail(me, it.peer, c.st[i].m);
      if (s->bad == c.st[i].m) return Mismatch(it, s->rfp, it.peer, P2PMessageFp(ctx, it, kP2PData), me);
      c.st[i].done = true;
      --c.left;
    } else {  // take
      if (c.blocked_recv[p]) continue;
      const uint64_t m = g->MailTaken(it.peer) + 1;
      if (g->Mail(it.peer, me, m)->full.load(std::memory_order_acquire) != m) {
        c.blocked_recv[p] = 1;
        continue;
      }
      *moved = true;
      HOSTCCL_RETURN_IF_ERROR(Take(ctx, g, it, m));
      c.st[i].done = true;
      --c.left;
    }
  }
  return Status::Ok();
}

bool HasSelfItems(const Context& ctx, std::span<const P2PItem> items) {
  for (const auto& it : items)
    if (it.peer == ctx.rank) return true;
  return false;
}

}  // namespace

Status P2PMailboxSettle(net::ShmGroup* g, Deadline deadline) {
  const int me = g->rank();
  for (int p = 0; p < g->size(); ++p) {
    const uint64_t sent = p == me ? 0 : g->MailSent(p);
    if (g->MailChecked(p) >= sent) continue;
    HOSTCCL_RETURN_IF_ERROR(CollectPosted(g, me, p, sent));
    if (g->MailChecked(p) >= sent) continue;
    One o{g, me, p, sent};
    Status w = WaitTaken(o, deadline);
    if (!w.ok() && w.code() == Code::kTimeout) {
      // Name the first message the peer did not take, as the send itself would have.
      const uint64_t m = std::min(sent, std::max(g->MailChecked(p), TakenUpTo(g, me, p)) + 1);
      const Fingerprint& fp = g->Mail(me, p, m)->fp;
      Context ctx;
      ctx.rank = me;
      P2PItem it;
      it.send = true;
      it.peer = p;
      it.count = fp.count;
      it.dtype = static_cast<DataType>(fp.dtype);
      it.pair_seq = fp.root;
      return P2PTimeout(ctx, it, SendStall::kNoRecv, Status::Ok());
    }
    HOSTCCL_RETURN_IF_ERROR(w);
    HOSTCCL_RETURN_IF_ERROR(CollectAnswers(g, me, p, sent));
  }
  g->mail_ahead() = false;
  return Status::Ok();
}

Status P2PMailboxOne(Context& ctx, const OpArgs& a) { return RunOne(ctx, ctx.shm, a, a.one); }

Status P2PMailbox(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (!g->has_mail() || !g->cma()) {
    if (g->Attempting(ctx.fp.seq)) return Status(Code::kAgain, "no mailbox");  // may wait: from the stream
    // Thread ranks have no transport for P2PShm's clear-to-send: their in-process mailboxes.
    const bool threads = ctx.transport == nullptr && ctx.local != nullptr;
    if (g->FirstUse("send/recv mailbox -> shm"))
      HLOG_INFO(kAlgo, "send/recv: %s; re-plan mailbox -> %s",
                g->has_mail() ? "cross-memory attach is not available" : "more than 32 ranks have no mailboxes",
                threads ? "local" : "shm");
    return threads ? P2PLocal(ctx, a) : P2PShm(ctx, a);
  }
  const auto items = a.Transfers();
  // Only a single transfer with a peer runs as an inline attempt; anything else is run from the
  // stream (given up before doing anything).
  const bool one = items.size() == 1 && items[0].peer != ctx.rank;
  if (!one && g->Attempting(ctx.fp.seq)) return Status(Code::kAgain, "not a single transfer");
  if (HasSelfItems(ctx, items)) HOSTCCL_RETURN_IF_ERROR(P2PSelfCopies(ctx, a));
  if (one) return RunOne(ctx, g, a, items[0]);
  thread_local ExitMarked<Call> c;
  c.ctx = &ctx;
  c.g = g;
  c.items = items;
  c.st.assign(items.size(), ItemState{});
  c.blocked_send.assign(static_cast<size_t>(g->size()), 0);
  c.blocked_recv.assign(static_cast<size_t>(g->size()), 0);
  c.left = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].peer == ctx.rank) c.st[i].done = true;
    else ++c.left;
  }
  while (true) {
    bool moved = false;
    Status s = Pass(c, &moved);
    if (moved) g->Notify();
    if (!s.ok()) return s;
    if (c.left == 0) return Status::Ok();
    if (moved) continue;
    c.peers.clear();
    for (size_t i = 0; i < items.size(); ++i)
      if (!c.st[i].done && std::find(c.peers.begin(), c.peers.end(), items[i].peer) == c.peers.end())
        c.peers.push_back(items[i].peer);
    // The first receive still open is published, as for a single HcclRecv: a collective's ranks
    // that this rank waits for see it (ShmGroup::BlockedPeer).
    const P2PItem* rx = nullptr;
    for (size_t i = 0; i < items.size() && rx == nullptr; ++i)
      if (!c.st[i].done && !items[i].send) rx = &items[i];
    if (rx != nullptr) g->SetRecvWait(rx->peer, g->MailTaken(rx->peer) + 1, rx->count, static_cast<uint8_t>(rx->dtype));
    // So is the first posted send still waiting for its answer, or else the first send waiting
    // for a free slot (for the answer to the message in that slot).
    size_t tx = items.size();
    uint64_t tx_m = 0;
    for (size_t i = 0; i < items.size() && tx == items.size(); ++i)
      if (!c.st[i].done && items[i].send && c.st[i].m != 0) {
        tx = i;
        tx_m = c.st[i].m;
      }
    for (size_t i = 0; i < items.size() && tx == items.size(); ++i)
      if (!c.st[i].done && items[i].send && c.blocked_send[static_cast<size_t>(items[i].peer)]) {
        tx = i;
        tx_m = g->MailSent(items[i].peer) + 1 - g->mail_slots();
      }
    if (tx < items.size()) g->SetSendWait(items[tx].peer, tx_m);
    s = g->WaitFor(&ListReady, &c, ctx.deadline, c.peers.data(), c.peers.size(), &ListPeer);
    if (rx != nullptr) g->ClearRecvWait();
    if (tx < items.size()) g->ClearSendWait();
    if (s.ok()) continue;
    if (s.code() != Code::kTimeout) return s;
    return Timeout(ctx, g, items[FirstOpen(c)]);
  }
}

}  // namespace hostccl::algo
