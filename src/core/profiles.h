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
};
const std::vector<ProfileInfo>& ListProfiles();

// Canonical name of the active profile (a static string), nullptr for the host default (no chip
// limits).
const char* ActiveProfile();

// HCCL_E_NOT_SUPPORT (with a message naming the profile and the rule) when the profile's chip
// does not have operator `op` or cannot run it with this dtype (and reduce op, for reductions);
// `multi_node` tells whether the communicator spans hosts (for rules that restrict 64-bit types
// to intra-node use). profile nullptr = host: always ok.
Status CheckProfile(const char* profile, CollKind op, DataType dtype, RedOp rop, bool multi_node);
// The HcclReduce rule of the active / a given profile.
Status CheckReduceProfile(DataType dtype, RedOp op, bool multi_node);
// The same for a given profile (a name from ActiveProfile(), nullptr = host: always ok).
Status CheckReduceProfile(const char* profile, DataType dtype, RedOp op, bool multi_node);

}  // namespace hostccl::core
