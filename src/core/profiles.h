// Hardware profiles: emulate the documented operator limits of Ascend chips (semantics.md §6;
// per operator: which chips have it, which dtypes and ops it takes there)
// so code developed on a host fails here the way it would fail on the target chip.
// Selected by HOSTCCL_SOC: a communicator reads it once, when it is created (no environment
// lookup per call); the free functions below read it at each call (tests switch it).
#pragma once

#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/ops.h"
#include "common/status.h"

namespace hostccl::core {

struct ProfileInfo {
  const char* name;
  const char* reduce_rule;     // human-readable summary of the HcclReduce rule
  const char* allreduce_rule;  // ... of the HcclAllReduce (and ReduceScatter) rule
  const char* unavailable;     // operators the chip does not have
  const char* move_rule;       // dtypes of the data-movement operators
  const char* topology_rule;   // servers, ranks and devices the operators need
};
const std::vector<ProfileInfo>& ListProfiles();

// Canonical name of the active profile (a static string), nullptr for the host default (no chip
// limits).
const char* ActiveProfile();

// A communicator's shape, for the chips' topology rules (collectives.md 5.1 in the spec's words:
// single server, NPU count, symmetric servers, whole 4-device clusters).
struct Topology {
  int ranks = 1;            // communicator size
  int hosts = 1;            // distinct hosts (node ids)
  bool symmetric = true;    // every host holds the same number of ranks
  bool whole_quads = true;  // on every host the ranks' devices are whole groups 4k..4k+3, one rank each
  std::string devices;      // the devices per host, for messages: "0,1" or "host 0: 0,1; host 1: 0,1"
  bool multi_node() const { return hosts > 1; }
};
// The shape of a communicator whose rank i runs on host node[i] with device device[i] (-1: none).
Topology MakeTopology(const std::vector<std::string>& node, const std::vector<int>& device);
// One host, `ranks` ranks, or (multi_node) two hosts: for callers that know no more.
Topology SimpleTopology(bool multi_node);

// HCCL_E_NOT_SUPPORT (with a message naming the profile and the rule) when the profile's chip
// does not have operator `op`, cannot run it on a communicator of this shape (servers, ranks,
// devices), or cannot run it with this dtype (and reduce op, for reductions).
// profile nullptr = host: always ok.
Status CheckProfile(const char* profile, CollKind op, DataType dtype, RedOp rop, const Topology& topo);
// The HcclReduce rule of the active / a given profile.
Status CheckReduceProfile(DataType dtype, RedOp op, bool multi_node);
// The same for a given profile (a name from ActiveProfile(), nullptr = host: always ok).
Status CheckReduceProfile(const char* profile, DataType dtype, RedOp op, bool multi_node);

}  // namespace hostccl::core
