#include "algo/reduce/reduce_algorithms.h"

#include <algorithm>

namespace hostccl::algo {

const std::vector<ReduceAlgorithm>& ReduceAlgorithms() {
  static const std::vector<ReduceAlgorithm> table = {
      {"direct", "threads of one process: each rank folds its slice of every rank's input in one pass",
       true, false, false, false, &ReduceDirect},
      {"shm", "processes of one host: each rank folds its slice of every rank's device buffer, mapped in place",
       false, true, false, false, &ReduceShm},
      {"gather", "small messages: raw inputs sent to the root, folded there in rank order", false, false, false, true,
       &ReduceGather},
      {"chain", "large messages: pipelined chain 0 -> 1 -> ... -> n-1 -> root, each rank folds its input",
       false, false, false, true, &ReduceChain},
      {"node_chain", "several hosts: pipelined chain over hosts; each host folds its ranks onto the incoming partial in shared memory",
       false, false, true, true, &ReduceNodeChain},
  };
  return table;
}

const ReduceAlgorithm* FindReduceAlgorithm(std::string_view name) {
  for (const auto& a : ReduceAlgorithms())
    if (name == a.name) return &a;
  return nullptr;
}

uint64_t ChunkElems(const Context& ctx, const ReduceArgs& args) {
  const uint64_t es = DataTypeSize(args.dtype);
  uint64_t bytes = ctx.chunk_bytes;
  bytes = std::max<uint64_t>(bytes, 64);
  uint64_t elems = std::max<uint64_t>(1, bytes / es);
  return std::min<uint64_t>(elems, std::max<uint64_t>(args.count, 1));
}

}  // namespace hostccl::algo
