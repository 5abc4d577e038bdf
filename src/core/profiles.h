// Hardware profiles: emulate the documented HcclReduce limits of Ascend chips (semantics.md §6)
// so code developed on a host fails here the way it would fail on the target chip.
// Selected by HOSTCCL_SOC: a communicator reads it once, when it is created (no environment
// lookup per call); the free functions below read it at each call (tests switch it).
#pragma once

#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace hostccl::core {

struct ProfileInfo {
  const char* name;
  const char* reduce_rule;  // human-readable summary of the HcclReduce rule
};
const std::vector<ProfileInfo>& ListProfiles();

// Canonical name of the active profile (a static string), nullptr for the host default (no chip
// limits).
const char* ActiveProfile();

// HCCL_E_NOT_SUPPORT (with a message naming the profile and the rule) when the active profile's
// chip cannot run HcclReduce with this dtype/op; `multi_node` tells whether the communicator spans
// hosts (for rules that restrict 64-bit types to intra-node use).
Status CheckReduceProfile(DataType dtype, RedOp op, bool multi_node);
// The same for a given profile (a name from ActiveProfile(), nullptr = host: always ok).
Status CheckReduceProfile(const char* profile, DataType dtype, RedOp op, bool multi_node);

}  // namespace hostccl::core
