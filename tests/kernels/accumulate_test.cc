// kern::FoldAcc32 (HOSTCCL_ACCUMULATE=fp32): fp16/bf16 sum and prod folded in fp32 in source
// order and rounded once, at every dispatch level, against a scalar loop written here; a chain's
// fp32 partial continued over later sources gives the same bits as the whole fold; rounding a
// partial in place; types and ops that do not widen are the ordinary FoldN.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/reduce.h"

namespace hostccl::kern {
namespace {

constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

float ToF(DataType t, uint16_t v) { return t == DataType::kFp16 ? HalfToFloat(v) : Bf16ToFloat(v); }
uint16_t FromF(DataType t, float f) { return t == DataType::kFp16 ? FloatToHalf(f) : FloatToBf16(f); }

// Moderate values (sums and products that need more than 11/8 bits), some negative.
std::vector<std::vector<uint16_t>> Inputs(DataType t, RedOp op, int k, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> sum(-100.f, 100.f), prod(0.5f, 1.9f);
  std::vector<std::vector<uint16_t>> in(static_cast<size_t>(k), std::vector<uint16_t>(n));
  // Every 13th element a special value: subnormal, -0, Inf, NaN (exact widening, no flush).
  const uint16_t special16[] = {0x0001, 0x8000, 0x7c00, 0x7e01, 0x03ff};
  const uint16_t specialbf[] = {0x0001, 0x8000, 0x7f80, 0x7fc1, 0x007f};
  // NaN only in source 0, so no element folds two NaNs (whose payload order is not the contract).
  size_t s = 0;
  for (size_t j = 0; j < in.size(); ++j)
    for (size_t i = 0; i < n; ++i) {
      size_t pick = s++ % 5;
      if (pick == 3 && j > 0) pick = 4;
      in[j][i] = i % 13 == 12 ? (t == DataType::kFp16 ? special16 : specialbf)[pick]
                              : FromF(t, op == RedOp::kProd ? prod(rng) : sum(rng));
    }
  return in;
}

std::vector<uint16_t> Reference(DataType t, RedOp op, const std::vector<std::vector<uint16_t>>& in, size_t n) {
  std::vector<uint16_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    float acc = ToF(t, in[0][i]);
    for (size_t j = 1; j < in.size(); ++j) acc = op == RedOp::kProd ? acc * ToF(t, in[j][i]) : acc + ToF(t, in[j][i]);
    out[i] = in.size() == 1 ? in[0][i] : FromF(t, acc);
  }
  return out;
}

std::vector<const void*> Ptrs(const std::vector<std::vector<uint16_t>>& in, size_t from = 0) {
  std::vector<const void*> p;
  for (size_t j = from; j < in.size(); ++j) p.push_back(in[j].data());
  return p;
}

TEST(FoldAcc32, EveryLevelMatchesTheFp32Fold) {
  for (Isa isa : kIsas) {
    if (ForceIsa(isa) != isa) continue;
    for (DataType t : {DataType::kFp16, DataType::kBf16})
      for (RedOp op : {RedOp::kSum, RedOp::kProd})
        for (int k : {1, 2, 3, 9, 17})
          for (size_t n : {size_t{1}, size_t{5}, size_t{1500}}) {
            const auto in = Inputs(t, op, k, n, static_cast<uint32_t>(k * 7919 + n));
            const auto want = Reference(t, op, in, n);
            std::vector<uint16_t> got(n, 0xdead);
            const auto p = Ptrs(in);
            FoldAcc32(t, op, got.data(), false, nullptr, p.data(), k, n);
            ASSERT_EQ(got, want) << DataTypeName(t) << " " << RedOpName(op) << " " << IsaName(isa) << " k=" << k
                                 << " n=" << n;
          }
  }
  ResetIsa();
}

TEST(FoldAcc32, DiffersFromPerStepRounding) {
  // The test above could not tell the modes apart if the inputs were too easy: with 9 moderate
  // inputs, some element differs from FoldN's rounding after every step.
  for (DataType t : {DataType::kFp16, DataType::kBf16})
    for (RedOp op : {RedOp::kSum, RedOp::kProd}) {
      const size_t n = 1000;
      const auto in = Inputs(t, op, 9, n, 42);
      const auto p = Ptrs(in);
      std::vector<uint16_t> wide(n), native(n);
      FoldAcc32(t, op, wide.data(), false, nullptr, p.data(), 9, n);
      FoldN(t, op, native.data(), p.data(), 9, n);
      EXPECT_NE(wide, native) << DataTypeName(t) << " " << RedOpName(op);
    }
}

TEST(FoldAcc32, ContinuedPartialEqualsTheWholeFold) {
  // A chain: the first m sources folded into an fp32 partial (kept fp32), then the rest
  // continued from it and rounded once; also rounding the partial in place (dst == partial).
  for (DataType t : {DataType::kFp16, DataType::kBf16})
    for (RedOp op : {RedOp::kSum, RedOp::kProd}) {
      const size_t n = 2100;
      const int k = 6;
      const auto in = Inputs(t, op, k, n, 7);
      const auto want = Reference(t, op, in, n);
      for (int m = 1; m < k; ++m) {
        std::vector<float> partial(n);
        const auto head = Ptrs(in);
        FoldAcc32(t, op, partial.data(), true, nullptr, head.data(), m, n);
        const auto tail = Ptrs(in, static_cast<size_t>(m));
        std::vector<uint16_t> got(n);
        FoldAcc32(t, op, got.data(), false, partial.data(), tail.data(), k - m, n);
        ASSERT_EQ(got, want) << DataTypeName(t) << " " << RedOpName(op) << " m=" << m;
        // One link at a time, fp32 kept in place, the last link rounding in place.
        std::vector<float> run(n);
        WidenToFp32(t, in[0].data(), run.data(), n);
        for (int j = 1; j < k; ++j) {
          const void* one[1] = {in[static_cast<size_t>(j)].data()};
          FoldAcc32(t, op, run.data(), j < k - 1, run.data(), one, 1, n);
        }
        std::vector<uint16_t> chained(n);
        std::memcpy(chained.data(), run.data(), n * sizeof(uint16_t));
        ASSERT_EQ(chained, want) << DataTypeName(t) << " " << RedOpName(op) << " chained";
      }
    }
}

TEST(FoldAcc32, MaxMinAndOtherTypesAreTheOrdinaryFold) {
  EXPECT_FALSE(WidensToFp32(DataType::kFp16, RedOp::kMax));
  EXPECT_FALSE(WidensToFp32(DataType::kBf16, RedOp::kMin));
  EXPECT_FALSE(WidensToFp32(DataType::kFp32, RedOp::kSum));
  EXPECT_TRUE(WidensToFp32(DataType::kBf16, RedOp::kProd));
  const size_t n = 777;
  const auto in = Inputs(DataType::kFp16, RedOp::kSum, 5, n, 3);
  const auto p = Ptrs(in);
  for (RedOp op : {RedOp::kMax, RedOp::kMin}) {
    std::vector<uint16_t> a(n), b(n);
    FoldAcc32(DataType::kFp16, op, a.data(), false, nullptr, p.data(), 5, n);
    FoldN(DataType::kFp16, op, b.data(), p.data(), 5, n);
    EXPECT_EQ(a, b);
  }
}

}  // namespace
}  // namespace hostccl::kern
