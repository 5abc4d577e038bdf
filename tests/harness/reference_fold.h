// The independent scalar reference for HcclReduce (semantics.md §2): the rank-order left fold
// ((x0 ⊕ x1) ⊕ x2) ⊕ ... with the exact per-type rules, written without the library's kernels:
//   integers wrap modulo 2^bits; fp32/fp64 are IEEE ops in the type; fp16/bf16 are computed in
//   fp32 and rounded to nearest-even once per ⊕ (own conversions below); max/min return NaN if
//   either operand is NaN, else the larger/smaller, the LEFT operand when equal (-0 vs +0).
// Plus the bitwise comparison used by every test (any NaN equals any NaN).
// Pure functions, thread-safe. Compiled without fast-math, so subnormals are exact here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/dtypes.h"

namespace hostccl::test {

// Half / bfloat16 <-> fp32. To-float is exact; from-float rounds to nearest-even, NaN -> quiet NaN.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float Bf16ToFloat(uint16_t b);
uint16_t FloatToBf16(float f);

// acc[i] = acc[i] ⊕ x[i] for i < count (acc is the left operand).
void FoldInto(const DtypeDesc& d, HcclReduceOp op, void* acc, const void* x, size_t count);

// fp32 accumulation (HOSTCCL_ACCUMULATE=fp32, semantics.md "Accumulation"): fp16/bf16 sum and
// prod fold in fp32, ((x0 ⊕ x1) ⊕ x2) ... as fp32 IEEE operations, and round to nearest-even once.
// AccumulatesFp32: whether (d, op) folds that way when `knob_fp32` (MAX/MIN and the other types
// never do). KnobFp32(): HOSTCCL_ACCUMULATE=fp32 in this process's environment, as the library
// reads it (the grids set it per configuration; the expected results follow it).
bool AccumulatesFp32(const DtypeDesc& d, HcclReduceOp op);
bool KnobFp32();
// acc[i] = fp32(x[i]) (exact); acc[i] = acc[i] ⊕ fp32(x[i]) in fp32; out[i] = round(acc[i]).
void WidenTo(const DtypeDesc& d, const void* x, float* acc, size_t count);
void FoldIntoFp32(const DtypeDesc& d, HcclReduceOp op, float* acc, const void* x, size_t count);
void RoundFrom(const DtypeDesc& d, const float* acc, void* out, size_t count);

// True if the element at p is a NaN (always false for integer types).
bool IsNaNElem(const DtypeDesc& d, const void* p);

// "0x3c00 (1)" style rendering of one element: raw bits and value.
std::string FormatElem(const DtypeDesc& d, const void* p);

// Bitwise comparison of count elements, NaN == NaN. Empty string if equal, otherwise
// "<what>: N of M elements differ; first at index i: expected <e>, got <g>".
std::string CompareElems(const DtypeDesc& d, const void* expected, const void* got, size_t count,
                         const std::string& what);

// Byte comparison (guards, unchanged inputs). Empty if equal, else the first differing offset.
std::string CompareBytes(const void* expected, const void* got, size_t bytes, const std::string& what);

}  // namespace hostccl::test
