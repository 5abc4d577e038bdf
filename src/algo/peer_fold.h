// Slice-parallel folds over PeerMemory (thread ranks: LocalGroup; process ranks of one host:
// ShmGroup), shared by the Reduce and AllReduce algorithms "direct" and "shm".
#pragma once

#include "algo/context.h"
#include "transport/peer_memory.h"

namespace hostccl::algo {

// Output bytes folded between two abort/peer-death checks (one load, plus a poll() per peer for
// processes: ~1 us against ~1 ms of folding).
constexpr uint64_t kPeerFoldCheckBytes = 4 << 20;

// Publishes this rank's buffers and fingerprint in `g` and waits for every rank, comparing
// fingerprints (PeerMemory::Exchange): the first step of every algorithm over peer memory, before
// anything can diverge. `g` null (the placement has no such group): kInternal with `missing`.
Status ExchangeArgs(Context& ctx, net::PeerMemory* g, const OpArgs& a, const char* missing);

// A shared-memory algorithm's re-plan when rank `who`'s `buffer` ("sendBuf", "buffers") cannot be
// mapped by its peers (every rank reads the same descriptors, so every rank takes it): logs it
// once per group and runs `fallback` over TCP, or fails with kNotSupport when there is no TCP
// path. `plan` ("shm -> ring") is a string literal: the log line's text and its log-once key.
Status ReplanOverTransport(Context& ctx, net::ShmGroup* g, const OpArgs& a, int who, const char* buffer,
                           const char* plan, Status (*fallback)(Context&, const OpArgs&));

// A single pass over peer memory (after ExchangeArgs, on either group) and its two entries:
// "direct" (thread ranks, ctx.local) and "shm" (process ranks of one host, ctx.shm). `missing`
// names the group a placement lacks ("direct allreduce needs every rank in this process"). The
// shm entry first checks that the peers can map the buffers the pass uses (`needs`); when a rank's
// cannot, every rank (all read the same descriptors) re-plans to `fallback` over the transport
// (ReplanOverTransport with `buffer` and `plan`).
using PeerPass = Status (*)(Context&, net::PeerMemory*, const OpArgs&);
enum class PeerBuffers { kSendBufs, kAllBuffers, kRootSendBuf };
struct ShmReplan {
  PeerBuffers needs;
  const char* buffer;  // "sendBuf", "buffers": the log line's and the error's name for them
  const char* plan;    // "allreduce shm -> rs_ag" (a string literal: also the log-once key)
  Status (*fallback)(Context&, const OpArgs&);
};
Status DirectPass(Context& ctx, const OpArgs& a, const char* missing, PeerPass pass);
Status ShmPass(Context& ctx, const OpArgs& a, const char* missing, PeerPass pass, const ShmReplan& replan);

// After Exchange: folds elements [begin, end) of every rank's sendBuf, in rank order (the
// canonical fold), into dst + begin (dst = element 0 of the output), checking g between pieces.
// kRemote when a peer's sendBuf cannot be mapped.
Status FoldPeers(Context& ctx, net::PeerMemory* g, const OpArgs& a, uint64_t begin, uint64_t end, char* dst);
// The same with the result of element `begin` at out[0] (ReduceScatter: sendBuf's block r folds
// into recvBuf's element 0).
Status FoldPeersTo(Context& ctx, net::PeerMemory* g, const OpArgs& a, uint64_t begin, uint64_t end, char* out);

// The one-arrival fold of small inputs over a ShmGroup ("shm_inline" of AllReduce and
// ReduceScatter): every rank arrives with the first in_bytes (<= ShmGroup::kInlineBytes) of its
// sendBuf inline in its arrival slot, compares fingerprints, and folds elements
// [begin, begin + a.count) of all n slots in rank order into its recvBuf. The slots stay readable
// until their owners' next arrival, so nothing else is needed; in place is safe (inputs are read
// from the slots). Larger inputs: kInternal naming `what` (callers re-plan before).
Status ShmInlineFold(Context& ctx, const OpArgs& a, uint64_t in_bytes, uint64_t begin, const char* what);

// The one-arrival rooted copy over a ShmGroup ("shm_inline" of Broadcast and Scatter): the root's
// arrival carries `payload_bytes` (<= ShmGroup::kInlineBytes) of `payload`; every rank copies
// a.bytes() from offset rank x stride of the root's payload into its recvBuf (the root out of
// `payload` itself, skipped when that is its recvBuf). With ctx.may_run_ahead the root posts and
// returns and each other rank waits for the root's slot only (pipelined completion, settled at the
// synchronize); otherwise every rank arrives and compares every fingerprint before it copies.
Status ShmInlineRooted(Context& ctx, const OpArgs& a, const void* payload, uint64_t payload_bytes, uint64_t stride);

// Dynamic sharing of one operation's pieces 0 .. pieces-1 among the workers of g (ranks
// 0 .. W-1, W = g->Workers(); after Exchange, before the operation's last Barrier): returns a
// piece nobody has claimed, or `pieces` when all are taken. The pieces are cut into W contiguous
// ranges; worker w claims its own range in order first (so each worker touches about 1/W of
// every buffer: fewer pages, fewer translations), then the ranges w+1, w+2, ... Each piece goes
// to exactly one rank, whichever asks first, so a rank that runs while a peer waits for a core
// does the peer's share (the result does not depend on who folds a piece). Each range's word
// (PeerMemory::WorkWord) is tagged with `seq` (ctx.fp.seq, equal on every rank): the first claim
// of an operation starts at the range's first piece, with no reset step. pieces < 2^24
// (kMaxClaimPieces).
constexpr uint64_t kMaxClaimPieces = (uint64_t{1} << 24) - 1;
uint64_t ClaimPiece(const Context& ctx, net::PeerMemory* g, uint64_t pieces);
// The end of this rank's part of a pass over peer memory: a failure (st) aborts the group, so that
// peers waiting in the closing barrier fail with the same status, and is returned; otherwise the
// closing Barrier, after which no rank reads another's buffers.
Status EndPass(Context& ctx, net::PeerMemory* g, const Status& st);
// Whether this rank claims pieces at all (rank < PeerMemory::Workers(); rank 0 always does): a
// rank that does not maps no peer buffer and goes straight to the operation's closing Barrier.
inline bool TakesPieces(const Context& ctx, net::PeerMemory* g) { return ctx.rank < g->Workers(); }

// Claimed copies after Exchange (AllGather(V), AlltoAll(VC) over peer memory): item k copies
// items[k].bytes from items[k].src to each of its ndst destinations. The items are cut into
// pieces of `piece` bytes (a multiple of 64; about L2-sized so that a piece read once from memory
// is written ndst times out of cache), which the ranks claim (ClaimPiece) in item order: on idle
// cores each rank does about 1/n of the pieces; a rank that waits for a core leaves its share to
// the running ones. `stream`: non-temporal stores (kern::StreamStores). Checks g for an abort or a
// dead peer every kPeerFoldCheckBytes written; then the closing Barrier (a failure aborts the
// group first). Every rank passes the same item sizes and piece (the claims index them), with
// pointers of its own process.
struct ClaimCopy {
  const char* src = nullptr;
  char* const* dst = nullptr;  // ndst destinations; one equal to src is skipped (in place)
  uint32_t ndst = 0;
  uint64_t bytes = 0;
};
Status CopyClaimed(Context& ctx, net::PeerMemory* g, const ClaimCopy* items, size_t count, uint64_t piece, bool stream);

// The piece size of CopyClaimed for `total` bytes of items among n ranks: about 4 pieces per rank
// for small totals, at least 4 KiB, at most `max_piece`, and no more than kMaxClaimPieces pieces.
uint64_t ClaimPieceBytes(uint64_t total, int n, uint64_t max_piece);

// Reduce after Exchange: each rank folds its 64-byte-aligned slice into the root's recvBuf, then
// one Barrier. A failure aborts the group (peers in the barrier fail with the same status).
Status ReduceSlices(Context& ctx, net::PeerMemory* g, const OpArgs& a);

}  // namespace hostccl::algo
