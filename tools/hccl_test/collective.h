// The library-free half of an hccl_test tool: what one collective does to the buffers, described
// as data so that the shared driver (driver.cc) runs and checks any collective the same way.
//   - buffer sizes for a per-rank count;
//   - which rank starts with its input in the (single) buffer of an in-place-only collective;
//   - the expected output of each rank: a list of segments, each a slice of one rank's input or of
//     the rank-order fold (check.h), starting at some element of that pattern; every byte of the
//     output buffer outside the segments must keep the guard byte;
//   - the bus factor of the wide/JSON busbw column.
// A new operator is one model here (a few lines) plus one tool file with its library call.
// Pure functions, unit-tested in tests/tools/hccl_test_collective_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace hostccl::tools {

// One call as seen by one rank.
struct Point {
  uint64_t count = 0;  // the call's count (from C = ceil(bytes / element size))
  int dtype = 4;       // HcclDataType value
  int op = 0;          // HcclReduceOp value (0 for data-movement collectives)
  int root = 0;
  int rank = 0;
  int ranks = 1;
  bool in_place = false;  // --in-place: sendBuf lies inside recvBuf (see in_place_send_offset)
};

struct Segment {
  enum class Pattern { kFold, kInput };
  Pattern pattern = Pattern::kFold;  // kFold: rank-order fold of all inputs; kInput: one input
  int source = 0;                    // kInput: whose input
  uint64_t offset = 0;               // first element in the output buffer
  uint64_t count = 0;                // elements
  uint64_t phase = 0;                // element index of the pattern at `offset`
};
using Expectation = std::vector<Segment>;  // empty: the whole buffer keeps the guard

struct CollectiveModel {
  const char* name = "";     // executable name ("all_reduce_test")
  const char* call = "";     // library entry point ("HcclAllReduce"), for messages
  bool reduction = true;     // -o matters; -d all = the reducible types
  bool rooted = true;        // -r is the collective's root (else only the printing rank)
  bool one_buffer = false;   // one buffer is input and output (Broadcast): no recvBuf
  uint64_t (*send_count)(uint64_t count, int ranks) = nullptr;
  uint64_t (*recv_count)(uint64_t count, int ranks) = nullptr;  // unused when one_buffer
  // one_buffer only: whether this rank's buffer holds its input before the call.
  bool (*has_input)(const Point& p) = nullptr;
  Expectation (*expect)(const Point& p) = nullptr;
  // --in-place: where sendBuf lies inside recvBuf, in elements (HCCL's accepted in-place forms);
  // nullptr = the collective has no in-place form (or is in place by definition: one_buffer).
  uint64_t (*in_place_send_offset)(const Point& p) = nullptr;
  // hccl_test's size arithmetic (collectives.md section 4 tables). Each is optional (nullptr):
  //   align_size  the alignment hccl_test's check_data_count applies ONCE to the options, before
  //               the sweep (min and max bytes, our --sizes entries; the additive step is rounded
  //               up to a multiple of n): RankSizeAlignedSize for the tools that split buffers
  //               into n blocks; the rows themselves are never re-aligned (SweepOptions);
  //   call_count  the count passed to the call from C = ceil(D / type size), D the row's size
  //               (AllGather: ceil(C / n)); default: C;
  //   alg_bytes   the bytes alg_bandwidth divides by, from that count (AllGather:
  //               n x count x type size); default: count x type size (never the raw D).
  uint64_t (*align_size)(uint64_t size, int ranks) = nullptr;
  uint64_t (*call_count)(uint64_t elements, int ranks) = nullptr;
  uint64_t (*alg_bytes)(uint64_t count, uint64_t type_bytes, int ranks) = nullptr;
  // busbw = algbw x this (the nccl-tests factor).
  double (*bus_factor)(int ranks) = nullptr;
};

// hccl_test's alignment of a size option for the tools that split buffers into n blocks
// (check_data_count): < n -> n; <= 16 MiB -> floor to a multiple of n; above -> floor to a
// multiple of n x 512.
uint64_t RankSizeAlignedSize(uint64_t size, int ranks);

// The options with the model's alignment applied (hccl_test's check_data_count, once, before the
// sweep): min_bytes, max_bytes and every --sizes entry through align_size, and the additive step
// rounded up to a multiple of the rank count (at least one rank count, except -i 0). Options of
// a model without align_size come back unchanged. The header's min/max and the sweep use these.
Options SweepOptions(const CollectiveModel& m, const Options& o, int ranks);

// The numbers of one row, from the row's size D (already a sweep size: not re-aligned):
// data_size = D (the printed size), the call's count from C = ceil(D / type size), and the
// alg_bandwidth bytes (count-based).
struct RowSizes {
  uint64_t data_size = 0;
  uint64_t count = 0;
  uint64_t alg_bytes = 0;
};
RowSizes SizesFor(const CollectiveModel& m, uint64_t size, int type_bytes, int ranks);

const CollectiveModel& ReduceModel();
const CollectiveModel& AllReduceModel();
const CollectiveModel& BroadcastModel();
// The AlltoAll family (alltoall_test, alltoallv_test, alltoallvc_test): the same buffers and
// results (every block count = the call's count; V: packed displacements, VC: a uniform matrix).
const CollectiveModel& AlltoAllModel();
const CollectiveModel& AlltoAllVModel();
const CollectiveModel& AlltoAllVCModel();
// hccl_test's count of the AlltoAll family: C rounded up to a multiple of n x 128 when C >= n x 128,
// else of n, divided by n (the elements each rank sends to each rank).
uint64_t AlltoAllCallCount(uint64_t elements, int ranks);
const CollectiveModel& ReduceScatterModel();
const CollectiveModel& ReduceScatterVModel();
const CollectiveModel& AllGatherModel();
const CollectiveModel& AllGatherVModel();
const CollectiveModel& ScatterModel();

// The data types a tool runs for -d all: the reducible ones for reductions, every type the check
// knows (all of hccl_test's names) for data movement.
std::vector<int> AllTypesFor(const CollectiveModel& m);

// Whether the tool prints kOpIgnoredWarning: -o was given and the operator does not reduce.
inline bool OpOptionIgnored(const CollectiveModel& m, const Options& o) { return o.op_set && !m.reduction; }

// Fills the output image of one rank before the checked call: guard bytes everywhere, and the
// bitwise complement of the expected data in every segment (an element the library never writes
// cannot pass).
void PrepareOutput(const Point& p, const Expectation& e, void* buf, uint64_t bytes);

// The image before an in-place call: PrepareOutput, then the rank's input (`input`, `input_bytes`)
// written at the send offset. Outside the segments this input must survive the call.
void PrepareInPlace(const Point& p, const Expectation& e, uint64_t send_offset, const void* input,
                    uint64_t input_bytes, void* buf, uint64_t bytes);

// Number of wrong elements in the segments plus bytes changed outside them: compared with the
// guard byte, or with `before` (the image before the call, for in-place calls) when given. With
// `report`, appends up to 8 lines per segment ("index i: expected X, got Y") and a summary of the
// bytes changed outside.
uint64_t CheckOutput(const Point& p, const Expectation& e, const void* buf, uint64_t bytes,
                     std::string* report, const void* before = nullptr);

}  // namespace hostccl::tools
