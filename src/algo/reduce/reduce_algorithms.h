// The Reduce algorithms and their registry (one row per algorithm). The selector in core/
// chooses among them by size, rank count and placement; HOSTCCL_ALGO forces one.
#pragma once

#include <string_view>
#include <vector>

#include "algo/context.h"

namespace hostccl::algo {

using ReduceFn = Status (*)(Context& ctx, const ReduceArgs& args);

struct ReduceAlgorithm {
  const char* name;
  const char* summary;     // one line: what it does and when it wins
  bool needs_local_group;  // every rank must be a thread of this process
  bool needs_shm_group;    // every rank must be on this host with a shared segment
  bool needs_node_groups;  // ranks on several hosts, contiguous per host, with per-host segments
  bool needs_transport;    // needs point-to-point messages between ranks
  ReduceFn run;
};

const std::vector<ReduceAlgorithm>& ReduceAlgorithms();
const ReduceAlgorithm* FindReduceAlgorithm(std::string_view name);

Status ReduceDirect(Context& ctx, const ReduceArgs& args);
Status ReduceGather(Context& ctx, const ReduceArgs& args);
Status ReduceChain(Context& ctx, const ReduceArgs& args);
Status ReduceShm(Context& ctx, const ReduceArgs& args);
Status ReduceNodeChain(Context& ctx, const ReduceArgs& args);

// "shm" when a sendBuf (or the root's recvBuf) is not shareable (reduce_shm_unshared.cc); called
// by ReduceShm after its first barrier, on every rank alike.
Status ReduceShmUnshared(Context& ctx, const ReduceArgs& args);

// Bytes of a non-shareable peer input read per process_vm_readv (and folded while in cache).
constexpr uint64_t kCmaChunkBytes = 256 << 10;
// Inputs larger than this go through the segment's staging even when CMA is allowed: here
// process_vm_readv costs ~1.5 us per 4 KiB page and staging wins from about 1 MiB on
// (docs/performance.md, "Buffers not from aclrtMalloc").
constexpr uint64_t kCmaMaxBytes = 1 << 20;
// The single-host segment's staging for "shm" without CMA: two input slots per rank, two output slots.
constexpr uint64_t kShmStagingSlotBytes = 256 << 10;
constexpr size_t ShmStagingBytes(int ranks) { return (2 * static_cast<size_t>(ranks) + 2) * kShmStagingSlotBytes; }

// "shm" folds a rank's slice in pieces of this many output bytes and checks for an abort or a dead
// peer between pieces (one load and a poll() per peer: ~1 us against ~1 ms of folding).
constexpr uint64_t kShmFoldCheckBytes = 4 << 20;

// Pipeline slots per direction in the node chain's shared staging (input and output).
constexpr uint64_t kNodeChainSlots = 4;

// Above this many bytes per rank, gathering raw inputs at the root costs more than the chain.
constexpr uint64_t kGatherMaxBytes = 256 << 10;

// Shared helper: element-aligned chunk length in elements for pipelined algorithms.
uint64_t ChunkElems(const Context& ctx, const ReduceArgs& args);

}  // namespace hostccl::algo
