// The AllReduce algorithms (their rows are in algo/registry.cc, their default rules in
// core/selector.cc). Every one produces, on every rank, exactly the canonical rank-order fold
// ((x0 ⊕ x1) ⊕ ...) ⊕ x(n-1): whoever folds an element folds all n inputs of it in rank order.
#pragma once

#include "algo/context.h"
#include "algo/registry.h"

namespace hostccl::algo {

Status AllReduceDirect(Context& ctx, const OpArgs& args);     // threads: slices, one pass
Status AllReduceShm(Context& ctx, const OpArgs& args);        // processes of one host: slices, one pass
Status AllReduceShmInline(Context& ctx, const OpArgs& args);  // processes, <= 4 KiB: one arrival
Status AllReduceFlat(Context& ctx, const OpArgs& args);       // TCP, small: everyone folds everything
Status AllReduceRsAg(Context& ctx, const OpArgs& args);       // TCP: reduce-scatter by owner + allgather
Status AllReduceNode(Context& ctx, const OpArgs& args);       // several hosts: node_chain + broadcast

// Bytes of one folded piece before it is copied into the other ranks' recvBufs (kept in cache).
constexpr uint64_t kAllReducePieceBytes = 128 << 10;

}  // namespace hostccl::algo
