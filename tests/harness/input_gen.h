// Seeded, reproducible inputs for reduction tests. Value i of rank r depends only on
// (seed, rank, dtype, op, i), so any process can regenerate every rank's input to compute the
// expected result without communication. Each element index belongs to a "column class" that is
// the same on every rank (so e.g. a whole column is subnormal and a flush-to-zero shows up):
//   integers: full-range random bits;
//   floats, max/min: random bit patterns, ±0 ties, subnormals, NaNs (quiet and signalling), ±Inf;
//   floats, sum/prod: moderate values, plus columns of subnormals, ±0, NaN/Inf and near-overflow.
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/dtypes.h"

namespace hostccl::test {

// splitmix64 finaliser: a good 64-bit mix of x.
uint64_t Mix64(uint64_t x);

// Fills out[0..count) (count elements of d) with rank's input for this case.
void GenerateInput(const DtypeDesc& d, HcclReduceOp op, uint64_t seed, int rank, size_t count, void* out);

// A guard pattern that no reduce result is likely to reproduce: byte i = f(salt, i).
void FillGuard(void* out, size_t bytes, uint64_t salt);

}  // namespace hostccl::test
