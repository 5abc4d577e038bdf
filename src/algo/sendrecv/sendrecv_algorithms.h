// Point-to-point algorithms: HcclSend, HcclRecv and HcclBatchSendRecv share them (one transfer
// list, algo::OpArgs::items, numbered per ordered pair by core). Matching, blocking and error
// rules: docs/semantics.md "Point-to-point".
#pragma once

#include "algo/context.h"

namespace hostccl::algo {

// Threads of one process: mailboxes in the LocalGroup; the receiver copies straight out of the
// sender's buffer (sendrecv_local.cc).
Status P2PLocal(Context& ctx, const OpArgs& args);
// Over the transport with clear-to-send notices (sendrecv_tcp.cc): `tcp` moves every payload in
// TCP frames; `shm` (processes of one host) and `node` (several hosts: for peers on this host)
// write payloads of at least kP2PDirectMinBytes straight into the receiver's buffer with
// process_vm_writev when the group's CMA probe passed.
Status P2PTcp(Context& ctx, const OpArgs& args);
// Processes of one host through the shared segment's per-pair mailboxes (sendrecv_mailbox.cc);
// re-plans to P2PShm without CMA or mailboxes.
Status P2PMailbox(Context& ctx, const OpArgs& args);
// P2PMailbox for a single HcclSend/HcclRecv (args.one) with another rank, on a group with
// mailboxes and CMA (core's short path for prepared transfers, Communicator::RunPreparedAttempt).
Status P2PMailboxOne(Context& ctx, const OpArgs& args);
Status P2PShm(Context& ctx, const OpArgs& args);
// Eager mailbox sends (payload inline, <= MailSlot::kInline) complete once published; their
// answers are collected at later sends on the pair and here (called by SettleRanAhead): waits
// until every peer took every message this rank sent it, then reports the first answer that
// says the fingerprints differed (naming both ranks), a dead peer, or kTimeout naming the peer.
Status P2PMailboxSettle(net::ShmGroup* g, Deadline deadline);
Status P2PNode(Context& ctx, const OpArgs& args);

inline constexpr uint64_t kP2PDirectMinBytes = 32 << 10;
static_assert(kP2PDirectMinBytes > net::kP2PEarlyMaxBytes, "a direct write is always announced by a notice");

// Shared by both files: the self transfers of a batch (k-th send to this rank with the k-th
// receive from it) as local copies; the message fingerprint of a transfer; timeout wording.
Status P2PSelfCopies(const Context& ctx, const OpArgs& args);
Fingerprint P2PMessageFp(const Context& ctx, const P2PItem& it, uint8_t op);
// What a send that timed out waited for (its wording): the peer's receive (kNoRecv), which the
// peer never posts because it is itself in HcclSend to this rank (kBothSend), or, the receive
// posted, the peer taking the payload (kNotTaken: the peer stopped or stalled in the middle).
enum class SendStall : uint8_t { kNoRecv, kBothSend, kNotTaken };
// kTimeout for transfer `it` (`stall` words a send; a receive ignores it).
Status P2PTimeout(const Context& ctx, const P2PItem& it, SendStall stall, const Status& detail);

}  // namespace hostccl::algo
