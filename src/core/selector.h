// Algorithm selection: per operator an ordered list of rules in the HOSTCCL_ALGO syntax,
// "reduce=chain" (always) or "reduce:0-64K:gather" (bytes per rank in [0, 64K); K/M/G suffixes,
// end exclusive), rules separated by '#'. The user's HOSTCCL_ALGO rules come first, then the
// operator's default rules (DefaultRuleText); the first rule whose range holds the size and whose
// algorithm can run on this placement (algo::Needs) and take this size (algo::Algorithm::max_bytes)
// wins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algo/registry.h"
#include "common/status.h"

namespace hostccl::core {

struct AlgoRule {
  std::string collective;  // "reduce": the operator's HOSTCCL_ALGO name (common/ops.h)
  CollKind op = CollKind::kNone;
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
  bool staging = false;       // the shared segment has staging (processes of one host, not thread ranks)
};

// The default rules of `op` (HOSTCCL_ALGO syntax; "" when the operator has none yet).
const char* DefaultRuleText(CollKind op);

// Picks the algorithm of `op` for `bytes` per rank: the forced rules first (a forced algorithm
// that cannot run here, or not at this size, is skipped with a warning, logged once per operator
// and reason), then the default rules. *why is
// "HOSTCCL_ALGO" or "default rule '<rule>'". nullptr when no rule matches (an operator without
// algorithms).
const algo::Algorithm* Select(CollKind op, const std::vector<AlgoRule>& forced, uint64_t bytes,
                              const Placement& where, const char** why);

}  // namespace hostccl::core
