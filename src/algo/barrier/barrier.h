#pragma once
#include "algo/context.h"
namespace hostccl::algo {
// Barrier: every rank returns only after every rank entered.
// Local group: the group's adaptive barrier. Transport: fan-in of 1-byte tokens to rank 0, then
// fan-out (2 message steps; rank 0 receives and sends n-1 one-byte messages).
Status Barrier(Context& ctx);
}  // namespace hostccl::algo
