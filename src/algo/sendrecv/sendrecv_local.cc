// P2P `local`: HcclSend / HcclRecv / HcclBatchSendRecv between thread ranks of one process.
//
// What: every transfer of the call's list (OpArgs::items) moves count elements from the
// sender's buffer into the receiver's, in place: the sender posts its buffer in the LocalGroup
// mailbox of the ordered pair (sender, receiver); the receiver takes the posts of that pair in
// issue order, compares the message fingerprint (dtype, count, pair number), copies straight out
// of the sender's buffer (one memcpy, no staging) and completes the post; the sender's call
// completes when all its posts are completed (rendezvous: a Send never completes before its Recv
// took the data).
// Preconditions: ctx.local; items numbered by core; self items paired (argument check).
// Steps and bytes per rank: post every send (no copy); receive every receive in list order (the
// receiver copies `bytes` per transfer); wait for the sends. Sends never wait for receives of
// the same rank, so any set of pairwise-matching items completes in any item order.
// In-place safety: a transfer's source and destination are different ranks' buffers; self items
// copy with memmove (send == recv allowed).
// Example: ring of 3, each rank {send to r+1, recv from r-1}: rank 0 posts its buffer for rank 1,
// then copies rank 2's posted buffer into its recvBuf, then waits until rank 1 copied its own.
#include <cstring>
#include <span>

#include "algo/sendrecv/sendrecv_algorithms.h"
#include "common/dtype.h"

namespace hostccl::algo {

Status P2PSelfCopies(const Context& ctx, const OpArgs& a) {
  std::vector<const P2PItem*> sends, recvs;
  for (const auto& it : a.Transfers()) {
    if (it.peer != ctx.rank) continue;
    (it.send ? sends : recvs).push_back(&it);
  }
  if (sends.size() != recvs.size())
    return MakeStatus(Code::kPara, "%zu send item(s) but %zu receive item(s) to this rank itself", sends.size(),
                      recvs.size());
  for (size_t k = 0; k < sends.size(); ++k) {
    const uint64_t bytes = sends[k]->bytes();
    if (bytes > 0 && sends[k]->buf != recvs[k]->buf) std::memmove(recvs[k]->buf, sends[k]->buf, bytes);
  }
  return Status::Ok();
}

Fingerprint P2PMessageFp(const Context& ctx, const P2PItem& it, uint8_t op) {
  Fingerprint f;
  f.kind = static_cast<uint8_t>(CollKind::kSend);
  f.op = op;
  f.seq = ctx.fp.seq;
  f.root = static_cast<uint32_t>(it.pair_seq);
  // Always (even with HOSTCCL_CHECK_ARGS=0): the receiver's buffer size depends on it, and a
  // direct write or a copy out of the sender's buffer must never exceed either buffer.
  f.dtype = static_cast<uint8_t>(it.dtype);
  f.count = it.count;
  return f;
}

Status P2PTimeout(const Context& ctx, const P2PItem& it, SendStall stall, const Status& detail) {
  std::string msg;
  const unsigned long long k = static_cast<unsigned long long>(it.pair_seq);
  if (it.send && stall == SendStall::kBothSend) {
    msg = StrFormat("rank %d and rank %d are both in HcclSend to each other (each waits for the other's HcclRecv: "
                    "a deadlock; send and receive in opposite orders, or use HcclBatchSendRecv)",
                    ctx.rank, it.peer);
  } else if (it.send && stall == SendStall::kNotTaken) {
    msg = StrFormat("rank %d did not take the payload of rank %d's HcclSend #%llu to it (count=%llu %s) within the "
                    "exec timeout (its HcclRecv was posted)",
                    it.peer, ctx.rank, k, static_cast<unsigned long long>(it.count), DataTypeName(it.dtype));
  } else if (it.send) {
    msg = StrFormat("rank %d did not post the HcclRecv matching rank %d's HcclSend #%llu to it (count=%llu %s) "
                    "within the exec timeout",
                    it.peer, ctx.rank, k, static_cast<unsigned long long>(it.count), DataTypeName(it.dtype));
  } else {
    msg = StrFormat("rank %d did not send the message #%llu that rank %d waits to receive (count=%llu %s) within "
                    "the exec timeout",
                    it.peer, k, ctx.rank, static_cast<unsigned long long>(it.count), DataTypeName(it.dtype));
  }
  if (!detail.message().empty()) msg += " [" + detail.message() + "]";
  Status st(Code::kTimeout, msg);
  st.WithPeer(it.peer);
  return st;
}

Status P2PLocal(Context& ctx, const OpArgs& a) {
  net::LocalGroup* g = ctx.local;
  HOSTCCL_RETURN_IF_ERROR(P2PSelfCopies(ctx, a));
  const auto items = a.Transfers();
  std::vector<net::P2PSendPost> posts(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const P2PItem& it = items[i];
    if (!it.send || it.peer == ctx.rank) continue;
    posts[i].buf = it.buf;
    posts[i].bytes = it.bytes();
    posts[i].fp = P2PMessageFp(ctx, it, kP2PData);
    g->P2PPost(ctx.rank, it.peer, &posts[i]);
  }
  Status st;
  for (size_t i = 0; i < items.size() && st.ok(); ++i) {
    const P2PItem& it = items[i];
    if (it.send || it.peer == ctx.rank) continue;
    st = g->P2PRecv(it.peer, ctx.rank, P2PMessageFp(ctx, it, kP2PData), it.buf, it.bytes(), ctx.deadline);
    // The group's own timeout has no text; an abort (whatever its code) keeps the aborter's.
    if (st.code() == Code::kTimeout && st.message().empty()) st = P2PTimeout(ctx, it, SendStall::kNoRecv, Status::Ok());
  }
  // Wait for (or, after a failure, withdraw) every post: they live on this stack.
  for (size_t i = 0; i < items.size(); ++i) {
    const P2PItem& it = items[i];
    if (!it.send || it.peer == ctx.rank) continue;
    bool peer_sends = false;
    Status s = g->P2PWaitSent(ctx.rank, it.peer, &posts[i], st.ok() ? ctx.deadline : Deadline::AtNs(0), &peer_sends);
    if (s.code() == Code::kTimeout && s.message().empty() && st.ok())
      s = P2PTimeout(ctx, it, peer_sends ? SendStall::kBothSend : SendStall::kNoRecv, Status::Ok());
    if (st.ok() && !s.ok()) st = s;
  }
  return st;
}

}  // namespace hostccl::algo
