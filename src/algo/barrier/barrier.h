#pragma once
#include "algo/context.h"
namespace hostccl::algo {
// HcclBarrier: every rank returns only after every rank entered. Three algorithms (rows in
// algo/registry.cc), all with the OpArgs signature (no buffers):
//  "local": the LocalGroup's adaptive barrier (threads of one process);
//  "shm":   one arrival in the shared segment; the arrival carries the fingerprint, so a rank in a
//           different collective (or one that skipped a call) is named;
//  "tcp":   fan-in of 1-byte tokens to rank 0, then fan-out (2 message steps; rank 0 receives and
//           sends n-1 one-byte messages).
Status BarrierLocal(Context& ctx, const OpArgs& args);
Status BarrierShm(Context& ctx, const OpArgs& args);
Status BarrierTcp(Context& ctx, const OpArgs& args);
// Any placement: local, else tcp (used inside algorithms).
Status Barrier(Context& ctx);
}  // namespace hostccl::algo
