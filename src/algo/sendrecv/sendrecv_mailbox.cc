// P2P `mailbox`: HcclSend / HcclRecv / HcclBatchSendRecv between processes of one host through
// the mailboxes of the shared segment (net::ShmGroup::Mail), with no TCP and no system call for
// small messages.
//
// What: every transfer of the call's list (OpArgs::items) moves count elements from the sender's
// buffer into the receiver's. Per ordered pair (sender, receiver) a ring of kMailSlots slots in the
// segment carries the pair's messages in issue order: the sender writes the message fingerprint
// (dtype, count, pair number), its buffer's address and, up to MailSlot::kInline (472) bytes, the
// payload itself, then publishes the slot (`full` = message number). The receiver compares the
// fingerprint with its own, copies the payload (out of the slot, or for larger payloads straight
// out of the sender's buffer with process_vm_readv, one copy, any memory) and answers `taken`.
// Rendezvous: a send completes only when its `taken` arrived, so no Send completes before its Recv
// took the data. A fingerprint that differs is answered with verdict 1 and the receiver's
// fingerprint, so both ranks fail with the same HCCL_E_PARA message naming both.
// Waiting: whenever nothing can progress, one adaptive wait (spin ~2 us, yield, then the segment's
// futex) for any slot this call watches; bounded by the exec timeout, peer death (pidfds) and an
// abort of the communicator.
// Preconditions: ctx.shm with mailboxes (at most 32 ranks) and the CMA probe passed; otherwise it
// re-plans to `shm` (the same verdict on every rank, so both ends of a pair always agree). Items
// numbered by core.
// Steps and bytes per rank: repeat until every item completed: post every send whose slot is free
// (in list order per peer; a full ring waits for the receiver to free a slot), take every receive
// whose slot is published (in list order per peer), collect answers. The receiver copies `bytes`
// per transfer (once). Sends never wait for this rank's receives (posts, takes and answers progress
// together), so any set of pairwise-matching items completes in any item order.
// In-place safety: self items copy with memmove; other transfers join different ranks' buffers.
// Example: ping-pong of 8 bytes, rank 0 {send to 1}, rank 1 {recv from 0}: rank 0 writes one cache
// line (message 1 in slot 0 of ring 0->1) and spins on the answer line; rank 1 sees `full` == 1,
// copies 8 bytes, writes `taken` = 1; both calls complete.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "algo/sendrecv/sendrecv_algorithms.h"
#include "common/log.h"
#include "transport/shm/cma.h"
#include "transport/shm/shm_group.h"

namespace hostccl::algo {
namespace {

constexpr uint32_t kLogReplan = 1u << 20;

struct ItemState {
  uint64_t m = 0;  // message number in its ring (sends: once posted)
  bool done = false;
};

}  // namespace

Status P2PMailbox(Context& ctx, const OpArgs& a) {
  net::ShmGroup* g = ctx.shm;
  if (!g->has_mail() || !g->cma()) {
    if (g->FirstUse(kLogReplan))
      HLOG_INFO(kAlgo, "send/recv: %s; re-plan mailbox -> shm",
                g->has_mail() ? "cross-memory attach is not available" : "more than 32 ranks have no mailboxes");
    return P2PShm(ctx, a);
  }
  HOSTCCL_RETURN_IF_ERROR(P2PSelfCopies(ctx, a));
  const auto& items = *a.items;
  const size_t n = items.size();
  const int me = ctx.rank;
  std::vector<ItemState> st(n);
  size_t left = 0;
  for (size_t i = 0; i < n; ++i) {
    if (items[i].peer == me) st[i].done = true;
    else ++left;
  }
  // The peers whose next post / take is blocked in the current pass (keeps per-peer order).
  std::vector<char> blocked_send(static_cast<size_t>(g->size()), 0), blocked_recv(static_cast<size_t>(g->size()), 0);
  auto mismatch = [&](const P2PItem& it, const Fingerprint& recv_fp, int recv_rank, const Fingerprint& send_fp,
                      int send_rank) {
    Status s(Code::kPara, FormatMismatch(recv_fp, recv_rank, send_fp, send_rank));
    s.WithPeer(it.peer);
    return s;
  };
  // One pass: every step that can be made now. *moved: something was written (peers to wake).
  auto pass = [&](bool* moved) -> Status {
    std::fill(blocked_send.begin(), blocked_send.end(), 0);
    std::fill(blocked_recv.begin(), blocked_recv.end(), 0);
    for (size_t i = 0; i < n; ++i) {
      if (st[i].done) continue;
      const P2PItem& it = items[i];
      const size_t p = static_cast<size_t>(it.peer);
      if (it.send && st[i].m == 0) {  // post
        if (blocked_send[p]) continue;
        const uint64_t m = g->MailSent(it.peer) + 1;
        net::MailSlot* s = g->Mail(me, it.peer, m);
        if (m > net::ShmGroup::kMailSlots && s->taken.load(std::memory_order_acquire) < m - net::ShmGroup::kMailSlots) {
          blocked_send[p] = 1;
          continue;
        }
        const uint64_t bytes = it.bytes();
        s->fp = P2PMessageFp(ctx, it, kP2PData);
        s->addr = reinterpret_cast<uint64_t>(it.buf);
        if (bytes > 0 && bytes <= net::MailSlot::kInline) std::memcpy(s->payload, it.buf, bytes);
        s->full.store(m, std::memory_order_release);
        g->MailSent(it.peer) = m;
        st[i].m = m;
        *moved = true;
      } else if (it.send) {  // answer
        net::MailSlot* s = g->Mail(me, it.peer, st[i].m);
        if (s->taken.load(std::memory_order_acquire) < st[i].m) continue;
        if (s->verdict != 0) return mismatch(it, s->rfp, it.peer, P2PMessageFp(ctx, it, kP2PData), me);
        st[i].done = true;
        --left;
      } else {  // take
        if (blocked_recv[p]) continue;
        const uint64_t m = g->MailTaken(it.peer) + 1;
        net::MailSlot* s = g->Mail(it.peer, me, m);
        if (s->full.load(std::memory_order_acquire) != m) {
          blocked_recv[p] = 1;
          continue;
        }
        const Fingerprint mine = P2PMessageFp(ctx, it, kP2PData);
        Status copied;
        if (s->fp != mine) {
          s->rfp = mine;
          s->verdict = 1;
          copied = mismatch(it, mine, me, s->fp, it.peer);
        } else {
          const uint64_t bytes = it.bytes();
          if (bytes > 0 && bytes <= net::MailSlot::kInline) {
            std::memcpy(it.buf, s->payload, bytes);
          } else if (bytes > 0 && g->SameProcess(it.peer)) {
            std::memcpy(it.buf, reinterpret_cast<const void*>(s->addr), bytes);
          } else if (bytes > 0) {
            copied = net::CmaRead(g->Pid(it.peer), it.peer, s->addr, it.buf, bytes);
          }
          s->verdict = 0;
        }
        // Answered even after a failed copy: the sender must not wait for the timeout (a failed
        // read of a live peer fails this rank, whose abort reaches the sender).
        s->taken.store(m, std::memory_order_release);
        g->MailTaken(it.peer) = m;
        *moved = true;
        if (!copied.ok()) return copied;
        st[i].done = true;
        --left;
      }
    }
    return Status::Ok();
  };
  // Can some step be made now (the wait's condition; reads only)?
  auto ready = [&]() {
    for (size_t i = 0; i < n; ++i) {
      if (st[i].done) continue;
      const P2PItem& it = items[i];
      if (it.send && st[i].m == 0) {
        const uint64_t m = g->MailSent(it.peer) + 1;
        if (m <= net::ShmGroup::kMailSlots ||
            g->Mail(me, it.peer, m)->taken.load(std::memory_order_acquire) >= m - net::ShmGroup::kMailSlots)
          return true;
      } else if (it.send) {
        if (g->Mail(me, it.peer, st[i].m)->taken.load(std::memory_order_acquire) >= st[i].m) return true;
      } else {
        const uint64_t m = g->MailTaken(it.peer) + 1;
        if (g->Mail(it.peer, me, m)->full.load(std::memory_order_acquire) == m) return true;
      }
    }
    return false;
  };
  // The first item not completed (whom the timeout names).
  auto first_open = [&]() -> size_t {
    for (size_t i = 0; i < n; ++i)
      if (!st[i].done) return i;
    return 0;
  };
  std::vector<int> peers;  // of the items not completed: the wait fails only when one of them leaves
  while (true) {
    bool moved = false;
    Status s = pass(&moved);
    if (moved) g->Notify();
    if (!s.ok()) return s;
    if (left == 0) return Status::Ok();
    if (moved) continue;
    peers.clear();
    for (size_t i = 0; i < n; ++i)
      if (!st[i].done && std::find(peers.begin(), peers.end(), items[i].peer) == peers.end())
        peers.push_back(items[i].peer);
    s = g->WaitFor(ready, ctx.deadline, peers, [&] { return std::to_string(items[first_open()].peer); });
    if (s.ok()) continue;
    if (s.code() != Code::kTimeout) return s;
    // The timeout's wording: is the peer of a send itself waiting in a send to this rank (its
    // message to us is published and not taken)?
    const P2PItem& it = items[first_open()];
    const uint64_t m = g->MailTaken(it.peer) + 1;
    const bool both = it.send && g->Mail(it.peer, me, m)->full.load(std::memory_order_acquire) == m;
    return P2PTimeout(ctx, it, both, Status::Ok());
  }
}

}  // namespace hostccl::algo
