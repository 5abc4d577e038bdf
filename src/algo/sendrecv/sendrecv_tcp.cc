// P2P `tcp`, `shm`, `node`: HcclSend / HcclRecv / HcclBatchSendRecv over the transport.
//
// What: every transfer of the call's list (OpArgs::items) moves count elements from the sender's
// buffer into the receiver's. Rendezvous by notice: the receiver posts its receive and sends the
// sender a NOTICE (transport.h; it travels outside the order of data messages, so it never waits
// behind one) carrying the message fingerprint (dtype, count, pair number) and its buffer's
// address; the sender's call completes only when that notice arrived and its fingerprint matched
// (a mismatch fails both ranks naming both). So a Send never completes before the matching Recv
// is posted, and two ranks that both Send first wait for each other (reported at the exec timeout
// naming both, from the peers' answers to stall probes).
// Payload (a pair's DATA messages always leave in issue order, as the receiving transport takes
// them in order; a group call may hold several per pair): up to kP2PEarlyMaxBytes (16 KiB), and
// when every earlier send of the call to that peer left at once, it leaves at once, inline in one DATA frame (one
// hand-off): it lands in the posted receive, or the receiver's transport keeps it aside until the
// Recv is posted (one copy; the socket is never held up). Larger payloads leave when the notice
// arrives, as one DATA message into the posted receive (striped over the pair's sockets), or, for
// `shm` and `node` with a peer on this host, written straight into the receiver's buffer with
// process_vm_writev (one copy, any memory) followed by an empty DATA message that completes the
// receive.
// Preconditions: ctx.transport (a 1-rank communicator has only self items); items numbered by core.
// Steps and bytes per rank: post every receive + its NOTICE (16 bytes); send every inline payload;
// as NOTICEs arrive (any order), check them and write each direct payload; wait for everything. Sends never wait for
// this rank's receives, so any set of pairwise-matching items completes in any item order.
// In-place safety: self items copy with memmove; other transfers join different ranks' buffers.
// Example: ring of 2, each rank {send to peer, recv from peer}, 1 MiB on one host: both post their
// receive and NOTICE at once, then each writes its payload into the other's buffer on the other's
// NOTICE and sends the empty DATA; both complete after one exchange.
#include <cstring>
#include <span>

#include "algo/sendrecv/sendrecv_algorithms.h"
#include "transport/shm/cma.h"

namespace hostccl::algo {
namespace {

constexpr uint64_t kDirectFlag = 1;

// The pid of `peer` when it is a process of this host that this rank may write with CMA.
bool DirectPeer(const Context& ctx, bool direct, int peer, uint32_t* pid) {
  if (!direct) return false;
  if (ctx.shm != nullptr) {
    if (!ctx.shm->cma() || ctx.shm->SameProcess(peer)) return false;
    *pid = ctx.shm->Pid(peer);
    return true;
  }
  if (ctx.node_shm != nullptr && ctx.nodes != nullptr && ctx.nodes->nodes() > 0 && ctx.node_shm->cma()) {
    const int lo = ctx.nodes->first[static_cast<size_t>(ctx.nodes->mine)];
    const int hi = ctx.nodes->first[static_cast<size_t>(ctx.nodes->mine) + 1];
    if (peer < lo || peer >= hi || ctx.node_shm->SameProcess(peer - lo)) return false;
    *pid = ctx.node_shm->Pid(peer - lo);
    return true;
  }
  return false;
}

// A timeout's final wording. `noticed`: the wait was for the data, every receiver's notice had
// arrived (its receive is posted; a send stuck there is a payload the peer did not take). Else a
// send waited for the notice: is its peer itself in HcclSend to this rank (it answered a stall
// probe saying it waits for this rank)?
Status Reword(const Context& ctx, const P2PItem& it, const Status& st, bool noticed) {
  // Only this rank's own timeout (a peer's abort keeps the peer's words, whatever its code).
  if (st.code() != Code::kTimeout || st.message().rfind(StrFormat("rank %d: timed out", ctx.rank), 0) != 0) return st;
  if (noticed) return P2PTimeout(ctx, it, SendStall::kNotTaken, st);
  Fingerprint f;
  int waits_for = -1;
  const bool both = it.send && ctx.transport->PeerWaitsFor(it.peer, &f, &waits_for) &&
                    f.kind == static_cast<uint8_t>(CollKind::kSend) && waits_for == ctx.rank;
  return P2PTimeout(ctx, it, both ? SendStall::kBothSend : SendStall::kNoRecv, st);
}

// The transfer a failed wait is worded for: the first of `waited` with the peer this rank was
// stuck on (a stalled send to it, not a receive that had completed), else with the peer the
// transport blamed, else the first.
const P2PItem& Stalled(const net::Transport* t, std::span<const P2PItem> items, const std::vector<size_t>& waited,
                       const Status& st) {
  for (const int peer : {t->StuckOn(), st.peer()})
    for (size_t i : waited)
      if (peer >= 0 && items[i].peer == peer) return items[i];
  return items[waited.empty() ? 0 : waited[0]];
}

Status RunOverTransport(Context& ctx, const OpArgs& a, bool direct) {
  HOSTCCL_RETURN_IF_ERROR(P2PSelfCopies(ctx, a));
  net::Transport* t = ctx.transport;
  const auto items = a.Transfers();
  const size_t n = items.size();
  std::vector<uint8_t> notes(n * 16);
  std::vector<net::RequestId> all;        // data receives and sends: waited for at the end
  std::vector<net::RequestId> cts;        // clear-to-send notices still awaited
  std::vector<size_t> cts_item;
  std::vector<size_t> all_item;
  // 1. Receives: post, then tell the sender.
  for (size_t i = 0; i < n; ++i) {
    const P2PItem& it = items[i];
    if (it.send || it.peer == ctx.rank) continue;
    uint32_t pid = 0;
    const uint64_t bytes = it.bytes();
    const bool dir = bytes >= kP2PDirectMinBytes && DirectPeer(ctx, direct, it.peer, &pid);
    net::RequestId id;
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(it.peer, dir ? nullptr : it.buf, dir ? 0 : bytes,
                                     P2PMessageFp(ctx, it, kP2PData), &id));
    all.push_back(id);
    all_item.push_back(i);
    uint8_t* note = &notes[i * 16];
    const uint64_t addr = reinterpret_cast<uint64_t>(it.buf), flags = dir ? kDirectFlag : 0;
    std::memcpy(note, &addr, 8);
    std::memcpy(note + 8, &flags, 8);
    HOSTCCL_RETURN_IF_ERROR(t->SendNotice(it.peer, P2PMessageFp(ctx, it, kP2PAck), note));
  }
  // 2. Sends. A payload of at most kP2PEarlyMaxBytes leaves at once (it lands in the posted
  // receive, or is kept aside by the receiver's transport until the receive is posted); the call
  // still completes only with the receiver's notice (rendezvous), whose fingerprint is checked.
  // Larger payloads leave on the notice, into a posted receive (or written directly).
  // The receiver's transport takes a peer's DATA messages in order, so they must leave in issue
  // order per peer (a group may send several messages to one peer in one call): a payload leaves
  // at once only while every earlier send to that peer did, and the others leave in list order
  // (a notice that arrives early waits for the earlier ones' notices).
  std::vector<char> eager(n, 0), noticed(n, 0);
  std::vector<std::vector<size_t>> later(static_cast<size_t>(ctx.size));  // per peer, list order
  std::vector<size_t> next_later(static_cast<size_t>(ctx.size), 0);
  for (size_t i = 0; i < n; ++i) {
    const P2PItem& it = items[i];
    if (!it.send || it.peer == ctx.rank) continue;
    net::RequestId id;
    HOSTCCL_RETURN_IF_ERROR(t->IrecvNotice(it.peer, P2PMessageFp(ctx, it, kP2PAck), &notes[i * 16], &id));
    cts.push_back(id);
    cts_item.push_back(i);
    auto& mine = later[static_cast<size_t>(it.peer)];
    if (it.bytes() > net::kP2PEarlyMaxBytes || !mine.empty()) {  // sent on the notice (the receive is posted then)
      mine.push_back(i);
      continue;
    }
    eager[i] = 1;
    HOSTCCL_RETURN_IF_ERROR(t->Isend(it.peer, it.buf, it.bytes(), P2PMessageFp(ctx, it, kP2PData), &id));
    all.push_back(id);
    all_item.push_back(i);
  }
  while (!cts.empty()) {
    size_t w = 0;
    Status st = t->WaitAny(cts.data(), cts.size(), ctx.deadline, &w);
    if (!st.ok()) return Reword(ctx, Stalled(t, items, cts_item, st), st, false);
    const size_t i = cts_item[w];
    cts.erase(cts.begin() + static_cast<long>(w));
    cts_item.erase(cts_item.begin() + static_cast<long>(w));
    const P2PItem& it = items[i];
    uint64_t addr = 0, flags = 0;
    std::memcpy(&addr, &notes[i * 16], 8);
    std::memcpy(&flags, &notes[i * 16 + 8], 8);
    if (eager[i]) {
      if (flags & kDirectFlag)
        return MakeStatus(Code::kInternal, "rank %d asked for a direct write of message #%llu, which rank %d sent "
                          "inline", it.peer, static_cast<unsigned long long>(it.pair_seq), ctx.rank);
      continue;
    }
    noticed[i] = 1;
    const size_t p = static_cast<size_t>(it.peer);
    for (; next_later[p] < later[p].size() && noticed[later[p][next_later[p]]]; ++next_later[p]) {
      const size_t j = later[p][next_later[p]];
      const P2PItem& jt = items[j];
      std::memcpy(&addr, &notes[j * 16], 8);
      std::memcpy(&flags, &notes[j * 16 + 8], 8);
      const uint64_t bytes = jt.bytes();
      net::RequestId id;
      if (flags & kDirectFlag) {
        uint32_t pid = 0;
        if (!DirectPeer(ctx, direct, jt.peer, &pid))
          return MakeStatus(Code::kInternal, "rank %d asked for a direct write that rank %d cannot make", jt.peer,
                            ctx.rank);
        HOSTCCL_RETURN_IF_ERROR(net::CmaWrite(pid, jt.peer, addr, jt.buf, bytes));
        HOSTCCL_RETURN_IF_ERROR(t->Isend(jt.peer, nullptr, 0, P2PMessageFp(ctx, jt, kP2PData), &id));
      } else {
        HOSTCCL_RETURN_IF_ERROR(t->Isend(jt.peer, jt.buf, bytes, P2PMessageFp(ctx, jt, kP2PData), &id));
      }
      all.push_back(id);
      all_item.push_back(j);
    }
  }
  // 3. Everything sent and received.
  if (all.empty()) return Status::Ok();
  Status st = t->WaitAll(all.data(), all.size(), ctx.deadline);
  return st.ok() ? st : Reword(ctx, Stalled(t, items, all_item, st), st, true);
}

}  // namespace

Status P2PTcp(Context& ctx, const OpArgs& a) { return RunOverTransport(ctx, a, false); }
Status P2PShm(Context& ctx, const OpArgs& a) { return RunOverTransport(ctx, a, true); }
Status P2PNode(Context& ctx, const OpArgs& a) { return RunOverTransport(ctx, a, true); }

}  // namespace hostccl::algo
