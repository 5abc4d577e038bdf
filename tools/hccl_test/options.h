// hccl_test command line: the options of Huawei's hccl_test (same letters, defaults, K/M/G
// suffixes and validation) plus hostccl's extensions (-d all, -o all, wide rows, JSON, isolated
// timing). Pure functions, no library calls: unit-tested in tests/tools/hccl_test_options_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostccl::tools {

// The data types hccl_test knows, by HCCL enum value; `reducible` = accepted by HcclReduce.
struct TestType {
  int value;         // HcclDataType value
  const char* name;  // hccl_test -d name
  int bytes;
  bool reducible;
};
const std::vector<TestType>& AllTestTypes();
const TestType* FindTestType(int value);
const TestType* FindTestTypeByName(const std::string& name);

// Reduction ops by HcclReduceOp value (sum 0, prod 1, max 2, min 3).
const char* OpName(int op);
std::optional<int> ParseOpName(const std::string& name);

struct Options {
  uint64_t min_bytes = 64ull << 20;
  uint64_t max_bytes = 64ull << 20;
  uint64_t step_bytes = 0;  // additive step (used when step_factor is not set)
  bool step_bytes_set = false;
  double step_factor = 0.0;         // > 1.0 when -f was given (wins over -i)
  std::vector<uint64_t> size_list;  // --sizes a,b,c (our extension): exactly these sizes
  std::vector<int> dtypes{4};       // HcclDataType values; -d all = every reducible type
  bool all_dtypes = false;          // -d all was given (data-movement tools widen it to every type)
  std::vector<int> ops{0};          // HcclReduceOp values; -o all = sum prod max min
  bool op_set = false;              // -o was given (a non-reducing tool warns that it is ignored)
  int64_t root = 0;
  int64_t iters = 20;
  int64_t warmup_iters = 10;
  int64_t check = 1;      // 0 off, 1 quiet, 2 verbose (first errors printed)
  int64_t npus = -1;      // -1 = all devices of the node
  bool wide = false;      // -W 1 / --wide: nccl-tests style columns
  bool isolated = false;  // -I / --isolated: barrier before each call, median of single calls
  double time_budget_s =
      0;                  // -T / --time-budget: iterations calibrated to this many seconds (0 = -n)
  bool host_buffers = false;  // --host-buffers: malloc'd buffers instead of aclrtMalloc
  bool in_place = false;      // --in-place: sendBuf inside recvBuf (the collective's in-place form)
  bool zero_copy = false;     // -z 1: buffers in memory activated with HcclCommActivateCommMemory
  bool symmetric = false;     // -m 1: buffers in a window registered with HcclCommSymWinRegister
  std::string json_path;  // --json FILE
  bool skip_unimplemented = false;  // --skip-unimplemented: exit 77 if the operator does not exist
  std::vector<std::string> notes;  // accepted-but-ignored options, reported by the root
};

// The result of parsing: options, or help requested, or an error message (hccl_test wording
// where hccl_test has one). Rank-dependent checks (root < rank size, npus <= devices) are done
// later by ValidateForWorld because the world is not known while parsing.
struct ParseResult {
  Options options;
  bool help = false;
  std::string error;  // non-empty = invalid command line
};
ParseResult ParseOptions(int argc, char* const argv[]);

// The usage text printed by -h.
std::string UsageText(const char* prog);

// Checks that need the rank count and the device count; "" when fine.
std::string ValidateForWorld(const Options& o, int64_t rank_size, int64_t device_count);

// hccl_test's size syntax: integer (strtol base 0) with an optional single K/M/G suffix
// (case-insensitive, x1024^n). nullopt for a malformed value or a value <= 0.
std::optional<uint64_t> ParseSize(const std::string& text);

// The sizes the sweep visits, in order (hccl_test's loop: size *= factor, or size += step;
// -i 0 means the single size -b). Capped at 4096 entries.
std::vector<uint64_t> SizeSweep(const Options& o);

// The warning a tool whose operator does not reduce prints (once, from the printing rank) when
// -o was given; the run goes on.
inline constexpr const char* kOpIgnoredWarning =
    "Warning: The -o,--op <sum/prod/min/max> option does not take effect. Check the cmd parameter.";

// Iterations for a time budget from the measured time per call (warm-up): budget / t, within [1,
// 5000] (the peers' benchmarks use the same rule).
int64_t CalibratedIters(double budget_s, double per_call_us);
// Warm-up calls per size: -w, and with -T at least 2 (the first may pay one-time costs; the
// calibration times the others).
inline int64_t WarmupIters(const Options& o) {
  return o.time_budget_s > 0 && o.warmup_iters < 2 ? 2 : o.warmup_iters;
}

// Element count for a size in bytes: rounded UP, as hccl_test does (a 7-byte fp32 row is 2
// elements); the buffers are sized from this count, so they may exceed the row's size.
inline uint64_t CountForBytes(uint64_t bytes, int type_bytes) {
  const uint64_t tb = type_bytes > 0 ? static_cast<uint64_t>(type_bytes) : 1;
  return (bytes + tb - 1) / tb;
}

// hccl_test's formulas (hccl-api-facts.md §9.5).
inline double AvgTimeUs(double elapsed_ms, int64_t iters) {
  return iters > 0 ? elapsed_ms * 1000.0 / static_cast<double>(iters) : 0.0;
}
inline double AlgBandwidthGBs(uint64_t bytes, double avg_time_us) {
  return avg_time_us > 0 ? static_cast<double>(bytes) / avg_time_us * 1e6 / 1e9 : 0.0;
}

}  // namespace hostccl::tools
