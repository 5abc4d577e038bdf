// The AlltoAll family's algorithms: HcclAlltoAll, HcclAlltoAllV and HcclAlltoAllVC run the same
// algorithms (their rows in algo/registry.cc, default rules in core/selector.cc), written against
// Blocks below, which gives every block's count and displacement whichever operator it is.
// Data is moved as bytes (never interpreted); bytes of recvBuf outside every receive block are
// never written; sendBuf is only read. Not in place (the argument check rejects sendBuf ==
// recvBuf and any overlap of the two extents).
#pragma once

#include <cstdint>
#include <functional>

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status AlltoAllDirect(Context& ctx, const OpArgs& args);    // threads: the ranks claim pieces of every block
Status AlltoAllShm(Context& ctx, const OpArgs& args);       // processes of one host: the same over mapped buffers
Status AlltoAllShmPull(Context& ctx, const OpArgs& args);   // processes: each rank pulls its blocks into its recvBuf
Status AlltoAllPairwise(Context& ctx, const OpArgs& args);  // TCP: pairwise exchange, several steps in flight
Status AlltoAllShmInline(Context& ctx, const OpArgs& args);  // processes of one host, small: blocks in the arrival
Status AlltoAllNode(Context& ctx, const OpArgs& args);       // several hosts: shm inside hosts, TCP across

// The calling rank's blocks in elements. AlltoAll: uniform (count / recv_count); AlltoAllV and
// AlltoAllVC: the arrays of OpArgs (for AlltoAllVC core derived them from the matrix).
struct Blocks {
  const OpArgs& a;
  uint64_t SendCount(int j) const { return a.send_counts ? a.send_counts[j] : a.count; }
  uint64_t SendDispl(int j) const { return a.send_displs ? a.send_displs[j] : static_cast<uint64_t>(j) * a.count; }
  uint64_t RecvCount(int i) const { return a.recv_counts ? a.recv_counts[i] : a.recv_count; }
  uint64_t RecvDispl(int i) const {
    return a.recv_displs ? a.recv_displs[i] : static_cast<uint64_t>(i) * a.recv_count;
  }
};

// Where rank i's block for rank r starts in i's sendBuf (elements), and its count. `row_i`:
// AlltoAllV only, rank i's published (sendCounts, sdispls, recvCounts).
inline void PeerBlock(const OpArgs& a, int n, int i, int r, const uint64_t* row_i, uint64_t* displ, uint64_t* count) {
  switch (a.kind) {
    case CollKind::kAlltoAllV:
      *count = row_i[r];
      *displ = row_i[n + r];
      return;
    case CollKind::kAlltoAllVC: {
      const uint64_t* m = a.matrix + static_cast<uint64_t>(i) * static_cast<uint64_t>(n);
      uint64_t d = 0;
      for (int k = 0; k < r; ++k) d += m[k];
      *displ = d;
      *count = m[r];
      return;
    }
    default:
      *count = a.count;
      *displ = static_cast<uint64_t>(r) * a.count;
      return;
  }
}

// The pull copy of "direct" / "shm": rank r copies the blocks of ranks [lo, hi) (g's members,
// member index = rank - lo) straight out of their sendBufs into its recvBuf, rotated from r.
// `rows`: AlltoAllV's published arrays by rank (else nullptr). Checks g for an abort or a dead peer
// every 4 MiB copied, and then calls `tick` if given (e.g. TCP progress). No barrier.
Status PullBlocks(Context& ctx, net::PeerMemory* g, const OpArgs& a, int lo, int hi, const uint64_t* const* rows,
                  const std::function<Status()>* tick);

// AlltoAllV's arrays as published in the exchange payload, in words: 4n (sendCounts, sdispls,
// recvCounts, rdispls: contiguous in the task's copy, core/communicator.cc CopyArrays) when they
// fit `room` bytes, else 3n (no rdispls: peers cannot write into this rank's recvBuf, so the
// claimed push is off and every rank pulls), else 0 (too many ranks for the slot). The same on
// every rank (it depends on n only).
size_t VPayloadWords(int n, size_t room);

// "shm" after its exchange (AlltoAllV's arrays, `v_words` of them, at `payload_offset` of each
// rank's payload): the claimed push when every recvBuf can be mapped (and AlltoAllV published its
// rdispls), else the pull ("shm_pull", logged once), or the re-plan to "pairwise" when a sendBuf
// cannot be mapped; ends with the closing barrier. `push` false: always the pull.
Status ShmCopyAfterExchange(Context& ctx, net::ShmGroup* g, const OpArgs& a, size_t payload_offset, size_t v_words,
                            bool push);

// AlltoAllV only: every rank's counts as published by it (`rows[i]` points at rank i's words:
// its sendCounts at 0, its recvCounts at `recv_at`; 64-bit words as the arrays are, recv_at = 2n
// after the sdispls, or shm_inline's 32-bit copies, recv_at = n), checked pair by pair: rank i's
// sendCounts[j] must equal rank j's recvCounts[i]. Every rank sees the same rows, so every rank
// returns the same kPara message naming both ranks and the index (first by sender, then receiver).
template <typename Word>
Status CheckPairs(const Context& ctx, const Word* const* rows, size_t recv_at);

}  // namespace hostccl::algo
