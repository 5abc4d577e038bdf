// The AlltoAll family's algorithms: HcclAlltoAll, HcclAlltoAllV and HcclAlltoAllVC run the same
// algorithms (their rows in algo/registry.cc, default rules in core/selector.cc), written against
// Blocks below, which gives every block's count and displacement whichever operator it is.
// Data is moved as bytes (never interpreted); bytes of recvBuf outside every receive block are
// never written; sendBuf is only read. Not in place (the argument check rejects sendBuf ==
// recvBuf and any overlap of the two extents).
#pragma once

#include <cstdint>

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status AlltoAllDirect(Context& ctx, const OpArgs& args);    // threads: each rank pulls its blocks from its peers
Status AlltoAllShm(Context& ctx, const OpArgs& args);       // processes of one host: the same over mapped buffers
Status AlltoAllPairwise(Context& ctx, const OpArgs& args);  // TCP: pairwise exchange, several steps in flight

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

// AlltoAllV only: every rank's (sendCounts, sdispls, recvCounts) as published by it (`rows[i]`
// points at rank i's 3n words), checked pair by pair: rank i's sendCounts[j] must equal rank j's
// recvCounts[i]. Every rank sees the same rows, so every rank returns the same kPara message
// naming both ranks and the index (first by sender, then receiver).
Status CheckPairs(const Context& ctx, const uint64_t* const* rows);

}  // namespace hostccl::algo
