// Correctness cases for the collectives beyond HcclReduce (HcclAllReduce, HcclBroadcast), run
// collectively by every rank of a RunRanks body, and what their results must be:
//   AllReduce: every rank's recvBuf[0, count) is bitwise the rank-order reference fold
//              ((x0 ⊕ x1) ⊕ ...) (NaN == NaN here; bit identity across ranks, NaN payloads
//              included, is checked by ResultBoard); recvBuf's guard tail is untouched; sendBuf
//              (and its guard tail) is unchanged when not in place.
//   Broadcast: every rank's buf[0, count) is bitwise the root's input (no NaN allowance: a copy
//              must not canonicalise anything); the root's whole buffer is unchanged; guard tails
//              are untouched everywhere.
// Count 0 returns HCCL_SUCCESS and changes nothing. Inputs are regenerated locally from
// (seed, rank), so no rank needs another's data to know the expected result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/dtypes.h"
#include "harness/run_ranks.h"

namespace hostccl::test {

// The 17 data types HCCL can move (hccl_types.h values 0..12 and 14..17; 13 is not a type), in
// enum order, with their sizes. INT128 and the 8-bit floats are raw bits to the harness
// (kind kUnsigned); only Broadcast-like data movement uses them.
const std::vector<DtypeDesc>& MovableDtypes();
// Lookup by enum value among the 17; aborts on anything else (a test bug).
const DtypeDesc& MovableDesc(HcclDataType type);

struct AllReduceCase {
  HcclDataType dtype;
  HcclReduceOp op;
  uint64_t count;
  bool in_place;
  uint64_t seed;
  // Buffers from plain malloc instead of aclrtMalloc (not shareable between processes).
  bool host_send = false;
  bool host_recv = false;
};

struct BroadcastCase {
  HcclDataType dtype;  // any of MovableDtypes()
  uint64_t count;
  uint32_t root;
  uint64_t seed;
  bool host_buf = false;  // malloc'd buffer instead of aclrtMalloc
};

std::string CaseName(const AllReduceCase& c);   // "allreduce fp32 sum count=7 in-place seed=0x..."
std::string CaseName(const BroadcastCase& c);   // "broadcast int128 count=7 root=2 seed=0x..."

// The expected result of an AllReduce case on n ranks (the same on every rank).
void ExpectedAllReduce(const AllReduceCase& c, int nranks, void* out);
// The root's input of a Broadcast case (random bits, every encoding of every type); the expected
// result on every rank.
void BroadcastInput(const BroadcastCase& c, void* out);

// Collects, per case, a digest of the bits each rank got, and compares them across ranks once
// every rank has published (files in a directory shared by the ranks; see MakeBoardDir). Used by
// the AllReduce grid for "identical on every rank" beyond the NaN allowance of the fold compare.
class ResultBoard {
 public:
  void Add(const std::string& case_name, const void* data, size_t bytes);
  // Rank r writes its digests; rank 0 waits (bounded) for every rank's and records a failure on
  // ctx for the first case whose bits differ between ranks. Call once at the end of the body.
  void Compare(RankContext& ctx, const std::string& dir, const std::string& tag) const;

 private:
  std::vector<std::pair<std::string, uint64_t>> digests_;
};

// A directory for ResultBoard: made by the test process and passed to rank children in the
// environment variable HOSTCCL_TEST_BOARD_DIR (children re-running the test reuse it). Put
// BoardEnv(dir) into RunOptions::env; RemoveBoardDir in the parent only (children: no-op).
std::string MakeBoardDir();
std::pair<std::string, std::string> BoardEnv(const std::string& dir);
void RemoveBoardDir(const std::string& dir);

// Run one case on ctx's rank (HcclAllReduce / HcclBroadcast, then aclrtSynchronizeStream, then
// every check above). Data mismatches are recorded with ctx.Fail and the sequence can go on;
// false only when a call failed and the ranks may be out of step (stop the body). board may be
// null.
bool RunAllReduceCase(RankContext& ctx, const AllReduceCase& c, ResultBoard* board = nullptr);
bool RunBroadcastCase(RankContext& ctx, const BroadcastCase& c);

// True: both operators are implemented, and these probes make sure of it once per process — a
// one-rank call with valid arguments that returns HCCL_E_NOT_SUPPORT ends the process with a
// failure message instead of letting the tests skip (they skipped only while the operators were
// stubs). The call sites' branches on the answer are therefore always taken.
bool AllReduceImplemented();
bool BroadcastImplemented();

}  // namespace hostccl::test
