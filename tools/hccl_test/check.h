// Result checking for the hccl_test tools: rank-dependent inputs, and expected results computed on
// the host, for reductions by an independent scalar left fold in rank order (fp16/bf16 rounded to
// nearest-even after every step, integers wrapping), compared bit for bit (all NaNs equal).
// collective.h says which of these patterns each rank's output must hold.
//
// Inputs depend on the rank and on the element index modulo kPeriod (a prime, so a chunk taken
// from a power-of-two offset shows up as wrong data). They are chosen so that a dropped, doubled or
// swapped rank changes the result where the op allows it: sums use distinct small integers per rank
// (scaled by rank-dependent powers of two for floats, so fp16/bf16 sums round and depend on the
// fold order), products use odd integers / short binary fractions, max/min use a per-index
// permutation, and every 16th element of a floating max/min is -0 on even ranks and +0 on odd
// ranks, so only the left-operand-wins tie rule of the rank-order fold gives -0.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hostccl::tools {

constexpr uint64_t kPeriod = 1021;
constexpr uint8_t kGuardByte = 0xA5;  // non-root recvBuf must keep this pattern

// Half and bfloat16 conversions (round to nearest even; NaN stays NaN).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float Bf16ToFloat(uint16_t b);
uint16_t FloatToBf16(float f);

// Types the check knows: the 12 reducible types, plus int128, hif8 and the fp8 types, which only
// move (their inputs are byte patterns compared bytewise; they are never folded).
bool IsCheckableType(int dtype);
bool IsFoldableType(int dtype);
int TypeBytes(int dtype);  // 0 for an unknown type

// Writes `count` elements of rank `rank`'s input for (dtype, op) to `out`.
// dtype is an HcclDataType value of a checkable type, op an HcclReduceOp value (data-movement
// collectives use op 0).
void FillInput(int dtype, int op, int rank, uint64_t count, void* out);

// The expected Reduce/AllReduce result for one period: min(kPeriod, count) elements, as raw bytes
// (empty for a type that is not foldable).
std::vector<uint8_t> ExpectedPeriod(int dtype, int op, int rank_size, uint64_t count);

// The same periods seen from element `phase` on (a slice that starts at element `phase` of the
// whole pattern, e.g. rank r's block of a ReduceScatter or Scatter): min(kPeriod, count) elements.
std::vector<uint8_t> InputPeriod(int dtype, int op, int rank, uint64_t count, uint64_t phase = 0);
std::vector<uint8_t> FoldPeriod(int dtype, int op, int rank_size, uint64_t count,
                                uint64_t phase = 0);

// Writes the bitwise complement of the expected result (tiled) into `out`, so that an element the
// library forgets to write can never look right.
void FillAntiExpected(const std::vector<uint8_t>& period, int dtype, uint64_t count, void* out);

// Compares `count` elements of `result` with the tiled expected period; returns the number of wrong
// elements (all of them when the period is empty). When `report` is given, appends up to
// `max_report` lines "index i: expected X, got Y", i counted from `first_index`.
uint64_t CompareWithExpected(int dtype, const void* result, uint64_t count,
                             const std::vector<uint8_t>& period, int max_report,
                             std::string* report, uint64_t first_index = 0);

// Number of bytes of `buf` that differ from kGuardByte.
uint64_t CountGuardViolations(const void* buf, uint64_t bytes);

// Printable value of one element (for reports).
std::string FormatElement(int dtype, const void* elem);

}  // namespace hostccl::tools
