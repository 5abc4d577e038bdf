// Correctness cases for HcclReduceScatter and HcclReduceScatterV, run collectively by every rank of a RunRanks body:
// rank r's recvBuf[0, recvCount) must be bitwise the rank-order reference fold of block r
// (elements [r x recvCount, (r+1) x recvCount)) of every rank's input (NaN == NaN), every byte
// outside the output (guard tails; in place, the other blocks of the buffer) unchanged, and the
// sendBuf unchanged when not in place. Inputs are regenerated locally from (seed, rank) over the
// whole n x recvCount buffer, so no rank needs another's data to know the expected result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/dtypes.h"
#include "harness/run_ranks.h"

namespace hostccl::test {

enum class RsPlace : uint8_t {
  kSeparate,  // recvBuf disjoint from sendBuf
  kOwnBlock,  // recvBuf == sendBuf + r x recvCount (the NCCL in-place form)
  kSame,      // recvBuf == sendBuf
};

struct ReduceScatterCase {
  HcclDataType dtype;
  HcclReduceOp op;
  uint64_t recv_count;
  RsPlace place;
  uint64_t seed;
  bool host_send = false;  // malloc'd sendBuf (and recvBuf when in place)
  bool host_recv = false;  // malloc'd recvBuf
  // HcclReduceScatterV when non-empty: block j is [displs[j], + counts[j]) (n entries each, the
  // same on every rank; recv_count is ignored: rank r receives counts[r], a NULL recvBuf when 0).
  // Bytes of sendBuf in gaps and past the last block are filled and must stay unchanged.
  std::vector<uint64_t> counts = {}, displs = {};
};

// "reducescatter fp32 sum recvCount=7 own-block seed=0x..." (+ " malloc-send" / " malloc-recv")
std::string CaseName(const ReduceScatterCase& c);

// Expected rank-r output on n ranks.
void ExpectedReduceScatter(const ReduceScatterCase& c, int nranks, int rank, void* out);

// HcclReduceScatter(V), aclrtSynchronizeStream, every check above. Data mismatches are recorded with
// ctx.Fail; false only when a call failed (stop the body).
bool RunReduceScatterCase(RankContext& ctx, const ReduceScatterCase& c);

// True; a one-rank call returning HCCL_E_NOT_SUPPORT ends the process with a failure instead.
bool ReduceScatterImplemented();

}  // namespace hostccl::test
