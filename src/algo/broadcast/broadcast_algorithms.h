// The Broadcast algorithms (their rows are in algo/registry.cc, their default rules in
// core/selector.cc). Broadcast has one buffer (OpArgs::send == OpArgs::recv): the root's is only
// read, every other rank's is overwritten with it, bitwise (any dtype: bytes are moved, never
// interpreted). Every algorithm keeps the root's buffer alive until every rank has its copy.
#pragma once

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status BroadcastDirect(Context& ctx, const OpArgs& args);     // threads: slices copied from the root, one pass
Status BroadcastShm(Context& ctx, const OpArgs& args);        // processes of one host: the same over mapped buffers
Status BroadcastShmInline(Context& ctx, const OpArgs& args);  // processes, <= 4 KiB: the root's arrival carries it
Status BroadcastFlat(Context& ctx, const OpArgs& args);       // TCP, small: the root sends to every rank
Status BroadcastChain(Context& ctx, const OpArgs& args);      // TCP: pipelined chain root -> root+1 -> ...
Status BroadcastNode(Context& ctx, const OpArgs& args);       // several hosts: chain of host leaders + shm inside

// Bytes of one piece of the root's slice, read once (into cache) and written to every other rank.
constexpr uint64_t kBroadcastPieceBytes = 256 << 10;

}  // namespace hostccl::algo
