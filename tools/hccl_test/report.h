// Output of the hccl_test tools: hccl_test's exact table (classic), nccl-tests style wide rows,
// and JSON. Pure formatting; the root rank prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hostccl::tools {

enum class CheckState { kNull, kSuccess, kFailed };
const char* CheckStateName(CheckState s);  // "NULL", "success", "failed"

struct Row {
  uint64_t bytes = 0;  // hccl_test's data_size: the sweep size D (the count is ceil(D / type))
  uint64_t count = 0;  // elements
  int dtype = 4;
  int op = 0;     // HcclReduceOp value; -1 for data movement (printed "none")
  int root = 0;   // -1 for a collective without a root
  int64_t iters = 0;   // timed iterations (differs from -n with --time-budget)
  double time_us = 0;  // the root's average (back-to-back) or median (isolated) time per call
  double min_us = 0;   // min / max of that time over ranks
  double max_us = 0;
  double algbw = 0;  // GB/s (1e9), bytes / time_us
  double busbw = 0;  // algbw x the collective's bus factor (collective.h)
  CheckState check = CheckState::kNull;
  uint64_t wrong = 0;  // wrong elements at the root + guard/sendBuf violations on every rank
};

// hccl_test: "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:" and rows
// with the size as an integer, time with 2 decimals and bandwidth with 5, padded to the labels.
std::string ClassicHeader();
std::string ClassicRow(const Row& r);

struct Options;
// The line before the table: "the minbytes is MIN, maxbytes is MAX, iters is N, warmup_iters is
// W\n", from options already aligned (SweepOptions); with --sizes, the list's ends. With -T the
// iterations are calibrated per size, so "iters is calibrated to about SEC s per size", and W is
// the warm-up count actually run (at least 2).
std::string ParamsLine(const Options& o);

// nccl-tests style: size count type redop root time min max algbw busbw #wrong check.
std::string WideHeader();
std::string WideRow(const Row& r);

struct RunInfo {
  std::string test;  // "reduce_test"
  int ranks = 0;
  int64_t iters = 0;
  int64_t warmup_iters = 0;
  bool isolated = false;
  bool in_place = false;
};
std::string RowsToJson(const RunInfo& info, const std::vector<Row>& rows);

}  // namespace hostccl::tools
