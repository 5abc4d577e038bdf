// Internal: the per-ISA tables of kernels, indexed [DataType value][RedOp value]. Each table
// lives in the .cc compiled for its ISA and is constant-initialised (no code of that ISA runs
// before dispatch has checked the CPU). dispatch.cc picks one.
#pragma once

#include "kernels/reduce.h"

namespace hostccl::kern {

constexpr int kNumReducible = 12;  // the reducible DataType values are exactly 0..11

struct KernelEntry {
  BinaryFn binary;
  FoldFn fold;
};

struct KernelTable {
  KernelEntry entry[kNumReducible][kNumRedOps];
};

extern const KernelTable kScalarTable;
extern const KernelTable kAvx2Table;
extern const KernelTable kAvx512Table;

// fp16 <-> fp32 over n elements with F16C (reduce_avx2.cc; the AVX2 and AVX-512 levels both have
// it): the bits of scalar_math.h's conversions. For accumulate.cc, only at those levels.
void WidenHalfF16c(const uint16_t* src, float* out, size_t n);
void NarrowHalfF16c(const float* in, uint16_t* out, size_t n);

}  // namespace hostccl::kern
