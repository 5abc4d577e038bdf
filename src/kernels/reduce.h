// Reduction kernels: a ⊕ b for the 12 reducible types x 4 ops, with the exact rules of
// semantics.md §2 (wrapping integers; NaN-propagating max/min keeping the left operand on
// ties; fp16/bf16 computed in fp32 and rounded to nearest-even once per ⊕; no FTZ/DAZ).
// Vectorised with runtime dispatch (AVX-512 incl. BF16, AVX2+F16C, scalar), bit-identical
// across levels. No I/O, no threads, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/dtype.h"

namespace hostccl::kern {

enum class Isa : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };
const char* IsaName(Isa isa);

// Best level this CPU supports; the active level (HOSTCCL_KERNEL_ISA may lower it); and a
// test hook to force a level (clamped to what the CPU supports; returns the level set).
Isa DetectedIsa();
Isa ActiveIsa();
Isa ForceIsa(Isa isa);

// dst[i] = a[i] ⊕ b[i] for i in [0, n) elements. dst may alias a or b exactly (same index).
using BinaryFn = void (*)(void* dst, const void* a, const void* b, size_t n);
BinaryFn GetBinary(DataType t, RedOp op);  // nullptr if t is not reducible or op invalid

// Left fold in source order, one pass: dst[i] = ((src[0][i] ⊕ src[1][i]) ⊕ ...) ⊕ src[k-1][i].
// k >= 1 (k == 1 is a copy). dst may alias any src exactly. Every source is read once and
// dst written once per element (cache-blocked internally), so an n-rank reduce costs n reads
// and one write. Bitwise identical to applying GetBinary() k-1 times.
void FoldN(DataType t, RedOp op, void* dst, const void* const* srcs, int k, size_t n);

// FoldN as a function pointer for one (type, op) at the active level: lets a hot loop skip the
// per-call lookup. nullptr if t is not reducible or op invalid.
using FoldFn = void (*)(void* dst, const void* const* srcs, int k, size_t n);
FoldFn GetFold(DataType t, RedOp op);

// fp32 accumulation (HOSTCCL_ACCUMULATE=fp32; accumulate.cc): fp16/bf16 sum and prod folded in an
// fp32 accumulator and rounded once. WidensToFp32: whether (t, op) folds differently in that mode
// (MAX/MIN and the other types never do).
bool WidensToFp32(DataType t, RedOp op);
// The left fold of FoldN with an fp32 accumulator, continuing `partial` (fp32, n elements) when it
// is not null: acc = partial[i] or fp32(srcs[0][i]), then acc ⊕= fp32(srcs[j][i]) in fp32 for the
// remaining sources in order; dst[i] = acc as fp32 (dst_fp32) or rounded once to t. k >= 1 without
// a partial, k >= 0 with one. dst may alias a source exactly, or start where partial starts (an
// fp32 partial rounded in place). For a (t, op) that does not widen: FoldN (no partial, no fp32).
void FoldAcc32(DataType t, RedOp op, void* dst, bool dst_fp32, const float* partial, const void* const* srcs, int k,
               size_t n);
// out[i] = fp32(src[i]) for fp16/bf16 (exact): a chain's first partial.
void WidenToFp32(DataType t, const void* src, float* out, size_t n);

// Back to the level chosen by detection and HOSTCCL_KERNEL_ISA (undoes ForceIsa).
Isa ResetIsa();

// Exact scalar conversions used by the kernels (round to nearest-even, subnormals kept, no
// FTZ/DAZ, NaN stays a quiet NaN). Safe to call from any thread.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float Bf16ToFloat(uint16_t b);
uint16_t FloatToBf16(float f);

}  // namespace hostccl::kern
