// The Reduce algorithms (their rows are in algo/registry.cc) and their shared constants.
#pragma once


#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status ReduceDirect(Context& ctx, const ReduceArgs& args);
Status ReduceGather(Context& ctx, const ReduceArgs& args);
Status ReduceChain(Context& ctx, const ReduceArgs& args);
Status ReduceShm(Context& ctx, const ReduceArgs& args);
Status ReduceNodeChain(Context& ctx, const ReduceArgs& args);
// node_chain that also leaves the result in the recvBuf of the last host's leader (it folds into
// that recvBuf and sends the root's copy from there): AllReduce "node" (allreduce_node.cc).
Status ReduceNodeChainKeepLast(Context& ctx, const ReduceArgs& args);

// "shm" when a sendBuf (or the root's recvBuf) is not shareable (reduce_shm_unshared.cc); called
// by ReduceShm after its first barrier, on every rank alike.
Status ReduceShmUnshared(Context& ctx, const ReduceArgs& args);
// Those re-plans as algorithms of their own ("shm_cma", "shm_staging": forced with HOSTCCL_ALGO,
// any buffers): the same arrival, then that plan.
Status ReduceShmCma(Context& ctx, const ReduceArgs& args);
Status ReduceShmStaging(Context& ctx, const ReduceArgs& args);

// Bytes of a non-shareable peer input read per process_vm_readv (and folded while in cache).
constexpr uint64_t kCmaChunkBytes = 256 << 10;
// Inputs larger than this go through the segment's staging even when CMA is allowed: here
// process_vm_readv costs ~1.5 us per 4 KiB page and staging wins from about 1 MiB on
// (docs/performance.md, "Buffers not from aclrtMalloc").
constexpr uint64_t kCmaMaxBytes = 1 << 20;
// The single-host segment's staging for "shm" without CMA: two input slots per rank, two output slots.
constexpr uint64_t kShmStagingSlotBytes = 256 << 10;
constexpr size_t ShmStagingBytes(int ranks) { return (2 * static_cast<size_t>(ranks) + 2) * kShmStagingSlotBytes; }


// Pipeline slots per direction in the node chain's shared staging (input and output).
constexpr uint64_t kNodeChainSlots = 4;

// Above this many bytes per rank, gathering raw inputs at the root costs more than the chain.
constexpr uint64_t kGatherMaxBytes = 256 << 10;

}  // namespace hostccl::algo
