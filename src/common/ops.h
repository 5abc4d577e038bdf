// The one list of operators. Every per-operator fact that is not an algorithm lives in this row:
// the fingerprint kind (its value travels on the wire, so values never change), the C API name,
// the HOSTCCL_ALGO name, whether hostccl implements it yet, what the argument check does
// (reduction or data movement, root/peer, which buffers are required) and how large each buffer
// is. The API entry points, the argument checks (api/arg_check.cc), the profiles
// (core/profiles.cc), the selector (core/selector.cc) and hccl_info read it; docs/algorithms.md
// has a row per implemented operator's algorithms.
//
// Adding an operator: set its row's `impl` to true, add its algorithms (algo/<op>/), its default
// selection rules (core/selector.cc) and its API entry (api/hccl_ops_api.cc); see
// docs/architecture.md "Adding an operator".
#pragma once

#include <cstdint>
#include <string_view>

// Buffer size rules (elements of dataType, per rank): what the argument check and the
// size-in-device-memory check use.
//   kNone   no such buffer            kCount   `count`
//   kNCount n x count                 kV       from the V arrays (checked by the operator)
//   kSame   the same buffer as send (Broadcast: one buffer, in place by definition)
// Root rules: kNoRoot, kRoot (root < n), kPeer (peer < n; Send/Recv).
//
// X(Id, kindValue (< 32), "HcclName", "algoName", impl, reduces, root, sendSize, recvSize)
#define HOSTCCL_FOR_EACH_OP(X)                                                             \
  X(Reduce, 1, "HcclReduce", "reduce", true, true, kRoot, kCount, kCount)                   \
  X(AllReduce, 2, "HcclAllReduce", "allreduce", true, true, kNoRoot, kCount, kCount)        \
  X(Broadcast, 3, "HcclBroadcast", "broadcast", true, false, kRoot, kCount, kSame)         \
  X(Barrier, 4, "HcclBarrier", "barrier", true, false, kNoRoot, kNone, kNone)               \
  X(AllGather, 5, "HcclAllGather", "allgather", true, false, kNoRoot, kCount, kNCount)      \
  X(ReduceScatter, 6, "HcclReduceScatter", "reducescatter", true, true, kNoRoot, kNCount, kCount) \
  X(Scatter, 7, "HcclScatter", "scatter", true, false, kRoot, kRootNCount, kCount)          \
  X(Send, 8, "HcclSend", "send", true, false, kPeer, kCount, kNone)                        \
  X(AlltoAll, 9, "HcclAlltoAll", "alltoall", true, false, kNoRoot, kNCount, kNCount)        \
  X(AllGatherV, 11, "HcclAllGatherV", "allgatherv", true, false, kNoRoot, kCount, kV)       \
  X(ReduceScatterV, 12, "HcclReduceScatterV", "reducescatterv", true, true, kNoRoot, kV, kCount) \
  X(AlltoAllV, 13, "HcclAlltoAllV", "alltoallv", true, false, kNoRoot, kV, kV)             \
  X(AlltoAllVC, 14, "HcclAlltoAllVC", "alltoallvc", true, false, kNoRoot, kV, kV)          \
  X(Recv, 15, "HcclRecv", "recv", true, false, kPeer, kNone, kCount)                       \
  X(BatchSendRecv, 16, "HcclBatchSendRecv", "batchsendrecv", true, false, kNoRoot, kV, kV)

namespace hostccl {

enum class BufRule : uint8_t { kNone, kCount, kNCount, kV, kSame, kRootNCount };
enum class RootRule : uint8_t { kNoRoot, kRoot, kPeer };

// Fingerprint kinds. kNone and kInternal (shm/CMA setup arrivals) are not operators.
enum class CollKind : uint8_t {
  kNone = 0,
#define X(id, v, api, algo, impl, red, root, send, recv) k##id = v,
  HOSTCCL_FOR_EACH_OP(X)
#undef X
  kInternal = 10,
};

struct OpInfo {
  CollKind kind;
  const char* api;   // "HcclAllReduce"
  const char* algo;  // "allreduce": the HOSTCCL_ALGO collective name
  bool implemented;
  bool reduces;      // dtype/op checked as a reduction, op in the fingerprint
  RootRule root;
  BufRule send;
  BufRule recv;
};

inline constexpr OpInfo kOps[] = {
#define X(id, v, api, algo, impl, red, root, send, recv) \
  {CollKind::k##id, api, algo, impl, red, RootRule::root, BufRule::send, BufRule::recv},
    HOSTCCL_FOR_EACH_OP(X)
#undef X
};
inline constexpr int kNumOps = static_cast<int>(sizeof(kOps) / sizeof(kOps[0]));

namespace detail {
// Row index by kind value (-1: none), so FindOp is one load on every call.
struct OpIndex {
  int8_t at[32];
  constexpr OpIndex() : at() {
    for (auto& v : at) v = -1;
    for (int i = 0; i < static_cast<int>(sizeof(kOps) / sizeof(kOps[0])); ++i)
      at[static_cast<int>(kOps[i].kind)] = static_cast<int8_t>(i);
  }
};
inline constexpr OpIndex kOpIndex{};
}  // namespace detail

// The row of `k`, or nullptr for kNone/kInternal/unknown values.
constexpr const OpInfo* FindOp(CollKind k) {
  const unsigned v = static_cast<unsigned>(k);
  if (v >= 32 || detail::kOpIndex.at[v] < 0) return nullptr;
  return &kOps[detail::kOpIndex.at[v]];
}
// The row whose HOSTCCL_ALGO name is `algo`, or nullptr.
constexpr const OpInfo* FindOpByAlgoName(std::string_view algo) {
  for (const auto& o : kOps)
    if (algo == o.algo) return &o;
  return nullptr;
}
const char* CollKindName(CollKind k);  // "HcclReduce", "none", "internal", "?"

}  // namespace hostccl
