// Algorithm selection: a table (collective x size x ranks x placement -> algorithm) that
// HOSTCCL_ALGO overrides. Syntax: "reduce=chain" (always), or rules separated by '#':
// "reduce:0-64K:gather#reduce:64K-inf:chain" (byte ranges, K/M/G suffixes, end exclusive).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algo/reduce/reduce_algorithms.h"
#include "common/status.h"

namespace hostccl::core {

struct AlgoRule {
  std::string collective;  // "reduce"
  uint64_t min_bytes = 0;
  uint64_t max_bytes = UINT64_MAX;  // exclusive
  std::string algorithm;
};

// Parses a HOSTCCL_ALGO value; kPara naming the bad part otherwise.
Status ParseAlgoRules(const std::string& text, std::vector<AlgoRule>* rules);

struct Placement {
  int nranks = 1;
  bool all_local = false;     // every rank is a thread of this process
  bool shm = false;           // every rank is on this host and a shared segment exists
  bool has_transport = false;
  bool node_groups = false;   // several hosts, contiguous ranks per host, per-host segments
};

// Picks the Reduce algorithm for `bytes` per rank. Forced rules win when the algorithm can run
// with this placement (otherwise the default is used and a warning logged once).
const algo::ReduceAlgorithm* SelectReduce(const std::vector<AlgoRule>& forced, uint64_t bytes,
                                          const Placement& where, std::string* why);

}  // namespace hostccl::core
