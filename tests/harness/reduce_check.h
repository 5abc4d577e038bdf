// One HcclReduce correctness case, run collectively by every rank of a RunRanks body, with every
// check of semantics.md §2:
//   - the root's recvBuf[0, count) is bitwise the rank-order reference fold (NaN == NaN);
//   - the root's recvBuf beyond count, and every non-root recvBuf, keep their guard pattern;
//   - sendBuf is unchanged except when it is the root's recvBuf (in place on every rank);
//   - count 0 returns HCCL_SUCCESS and changes nothing anywhere.
// Buffers come from aclrtMalloc (or malloc: host_send / host_recv) and move with aclrtMemcpy; the reduce is HcclReduce followed by
// aclrtSynchronizeStream. Inputs come from GenerateInput(seed, rank), so the root recomputes every
// rank's input locally.
#pragma once

#include <cstdint>
#include <string>

#include "harness/dtypes.h"
#include "harness/run_ranks.h"

namespace hostccl::test {

struct ReduceCase {
  HcclDataType dtype;
  HcclReduceOp op;
  uint64_t count;
  uint32_t root;
  bool in_place;
  uint64_t seed;
  // Buffers from plain malloc instead of aclrtMalloc (not shareable between processes): sendBuf
  // (also recvBuf when in place) and/or recvBuf.
  bool host_send = false;
  bool host_recv = false;
};

// "fp32 sum count=7 root=2 in-place seed=0x..." (+ " malloc-send" / " malloc-recv")
std::string CaseName(const ReduceCase& c);

// Runs c on ctx's rank. Data mismatches are recorded with ctx.Fail (the case sequence can go on);
// returns false only when a call failed and the ranks may be out of step (stop the body).
bool RunReduceCase(RankContext& ctx, const ReduceCase& c);

// The expected root result: the fold over GenerateInput(seed, r) for r = 0..nranks-1.
void ExpectedReduce(const ReduceCase& c, int nranks, void* out);

}  // namespace hostccl::test
