// The AllGather algorithms (their rows are in algo/registry.cc, their default rules in
// core/selector.cc). Every rank's recvBuf gets rank i's sendCount elements at block i
// (recv[i*S .. (i+1)*S) = send_i, S = sendCount x element size), bitwise (bytes are moved, never
// interpreted). In place (collectives.md 1.6): sendBuf == recvBuf + r*S (the own block is already
// in place) or sendBuf == recvBuf; every algorithm first turns the second form into the first
// (AllGatherInPlace), so they all handle one form.
#pragma once

#include <cstdint>
#include <vector>

#include "transport/peer_memory.h"

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status AllGatherDirect(Context& ctx, const OpArgs& args);     // threads: claimed pieces, each into every recvBuf
Status AllGatherShm(Context& ctx, const OpArgs& args);        // processes of one host: the same over mapped buffers
Status AllGatherShmPull(Context& ctx, const OpArgs& args);    // processes: each rank pulls every block into its recvBuf
Status AllGatherShmInline(Context& ctx, const OpArgs& args);  // processes, S <= 4 KiB: blocks travel in the arrival
Status AllGatherFlat(Context& ctx, const OpArgs& args);       // TCP, small: every rank sends its block to all
Status AllGatherRing(Context& ctx, const OpArgs& args);       // TCP: pipelined ring, chunk by chunk
Status AllGatherNode(Context& ctx, const OpArgs& args);       // several hosts: ring of host leaders + shm inside

// HcclAllGatherV (allgatherv.cc): rank i's sendCount = recvCounts[i] elements land at
// recvDispls[i] of every recvBuf; nothing else of recvBuf is written (gaps stay as they were).
Status AllGatherVDirect(Context& ctx, const OpArgs& args);     // threads: each rank copies every peer's block
Status AllGatherVShm(Context& ctx, const OpArgs& args);        // processes of one host: the same, mapped
Status AllGatherVShmPull(Context& ctx, const OpArgs& args);    // processes: each rank pulls every block
Status AllGatherVShmInline(Context& ctx, const OpArgs& args);  // processes, blocks <= 4 KiB: in the arrival
Status AllGatherVFlat(Context& ctx, const OpArgs& args);       // TCP, small: every rank sends its block to all
Status AllGatherVRing(Context& ctx, const OpArgs& args);       // TCP: pipelined ring over the V blocks
Status AllGatherVNode(Context& ctx, const OpArgs& args);       // several hosts: leaders exchange blocks + shm inside

// The V blocks in bytes: rank r's block is len[r] bytes at recv + off[r].
void VBlocks(const Context& ctx, const OpArgs& a, std::vector<uint64_t>* off, std::vector<uint64_t>* len);

// The operation with sendBuf == recvBuf rewritten to sendBuf == recvBuf + r*S: rank r != 0 first
// moves its input (at block 0) to block r, which no other rank writes. Local; call it before any
// peer can see this rank's buffers.
OpArgs AllGatherInPlace(const Context& ctx, const OpArgs& a);

// The largest piece of the claimed push: read once from memory, then written n times out of the
// cache (a few of them in flight per core fit L2).
constexpr uint64_t kAllGatherPieceBytes = 256 << 10;

// After Exchange on `g`, every recvBuf mapped: block q (len[q] bytes of q's sendBuf; `send` for
// this rank) goes to every rank's recvBuf + off[q], in pieces the ranks claim (CopyClaimed,
// algo/peer_fold.h); zero-length blocks are not touched; a destination equal to its source (in
// place) is skipped. Ends with the closing barrier.
Status PushBlocks(Context& ctx, net::PeerMemory* g, const void* send, char* recv, const uint64_t* off,
                  const uint64_t* len);

// After Exchange on `g`: copies every rank q's block (len[q] bytes of q's sendBuf; `send` for this
// rank) to recv + off[q], peers in the order rank+1, rank+2, ..., own block last (skipped when
// already in place; zero-length blocks are not touched), with an abort/peer-death check every
// 4 MiB; then the closing barrier (peers' sendBufs stay in use until every rank is done).
Status PullBlocks(Context& ctx, net::PeerMemory* g, const void* send, char* recv, const uint64_t* off,
                  const uint64_t* len);

// Ring allgather of `m` blocks among ranks members[0..m) (this rank is members[me]): block b is
// len[b] bytes at recv + off[b] on every member, and block `me` is already in place. Block b
// travels members[b] -> members[b+1] -> ... (m-1 hops), cut into chunks of `chunk` bytes; each
// chunk is forwarded as soon as it has landed (straight into recv: no staging). Every member sends
// and receives m-1 blocks.
Status RingGather(Context& ctx, const int* members, int m, int me, const uint64_t* off, const uint64_t* len,
                  char* recv, uint64_t chunk);

}  // namespace hostccl::algo
