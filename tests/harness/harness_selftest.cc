// Self-tests of the harness's reference pieces (no library calls): fp16/bf16 conversions against
// the CPU's F16C instructions and a double-precision oracle, the fold's per-type rules, the NaN-aware
// comparison and the determinism of the input generator.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "harness/input_gen.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

__attribute__((target("f16c"))) uint16_t HwFloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float HwHalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(HarnessConvert, HalfToFloatMatchesF16cForAllHalves) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float a = HalfToFloat(static_cast<uint16_t>(h)), b = HwHalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << h;
    } else {
      ASSERT_EQ(Bits(a), Bits(b)) << "half 0x" << std::hex << h;
    }
  }
}

TEST(HarnessConvert, FloatToHalfMatchesF16c) {
  // Every float whose low 13 bits are one of the rounding-relevant patterns, across all exponents.
  const uint32_t lows[] = {0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x0800, 0x17ff};
  for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
    for (uint32_t low : lows) {
      float f = FromBits((hi << 13) | low);
      uint16_t a = FloatToHalf(f), b = HwFloatToHalf(f);
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(HalfToFloat(a)));
        continue;
      }
      ASSERT_EQ(a, b) << "float bits 0x" << std::hex << Bits(f);
    }
  }
}

TEST(HarnessConvert, FloatToBf16RoundsToNearestEven) {
  // Oracle: the nearer of the two bf16 neighbours, ties to the even one, computed in double.
  for (uint32_t i = 0; i < 2000000; ++i) {
    uint32_t u = static_cast<uint32_t>(Mix64(i));
    float f = FromBits(u);
    if (std::isnan(f) || std::isinf(f)) continue;
    uint16_t got = FloatToBf16(f);
    uint32_t lo = u & 0xffff0000u, hi_bits = lo + 0x10000u;
    double dl = std::fabs(static_cast<double>(FromBits(lo)) - f);
    double dh = std::isinf(FromBits(hi_bits)) ? std::fabs(std::copysign(std::ldexp(1.0, 128), f) - f)  // 2^128 is the rounding edge
                                              : std::fabs(static_cast<double>(FromBits(hi_bits)) - f);
    uint16_t want = (dl < dh || (dl == dh && ((lo >> 16) & 1) == 0)) ? static_cast<uint16_t>(lo >> 16)
                                                                      : static_cast<uint16_t>(hi_bits >> 16);
    ASSERT_EQ(got, want) << "float bits 0x" << std::hex << u;
  }
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(FromBits(0x7f800001u)))));  // sNaN stays NaN
}

template <typename T>
T Fold1(HcclDataType t, HcclReduceOp op, T a, T b) {
  FoldInto(Desc(t), op, &a, &b, 1);
  return a;
}

TEST(HarnessFold, IntegersWrap) {
  EXPECT_EQ(Fold1<int8_t>(HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, 127, 1), -128);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_UINT16, HCCL_REDUCE_PROD, 65535, 65535), 1);
  EXPECT_EQ(Fold1<int16_t>(HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD, -32768, -1), -32768);
  EXPECT_EQ(Fold1<int64_t>(HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, INT64_MAX, 1), INT64_MIN);
  EXPECT_EQ(Fold1<uint32_t>(HCCL_DATA_TYPE_UINT32, HCCL_REDUCE_MAX, 1, 0xffffffffu), 0xffffffffu);
  EXPECT_EQ(Fold1<int32_t>(HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MIN, 1, -1), -1);
}

TEST(HarnessFold, MaxMinNaNAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(Fold1<float>(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, 1.0f, nan)));
  EXPECT_TRUE(std::isnan(Fold1<float>(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN, nan, 1.0f)));
  EXPECT_EQ(Bits(Fold1<float>(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, -0.0f, 0.0f)), 0x80000000u);  // left on ties
  EXPECT_EQ(Bits(Fold1<float>(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN, 0.0f, -0.0f)), 0u);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x8000, 0x0000), 0x8000);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_MIN, 0x0000, 0x8000), 0x0000);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x3c00, 0x4000), 0x4000);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_MAX, 0x3c00, 0x7e00), 0x7e00);
}

TEST(HarnessFold, HalfArithmeticRoundsOncePerStep) {
  // 2048 + 1 is a tie in fp16 -> even (2048); 2048 + 3 -> 2052.
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x6800, 0x3c00), 0x6800);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x6800, 0x4200), 0x6802);
  // Smallest subnormals add exactly: 1 + 1 ulp = 2 ulp.
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, 0x0001, 0x0001), 0x0002);
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 0x0001, 0x0001), 0x0002);
  // 65504 * 2 overflows to +Inf.
  EXPECT_EQ(Fold1<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 0x7bff, 0x4000), 0x7c00);
  // fp32 subnormal sum is exact (no flush to zero).
  EXPECT_EQ(Bits(Fold1<float>(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, FromBits(1), FromBits(1))), 2u);
}

TEST(HarnessCompare, NaNsEqualAndFirstDifferenceReported) {
  const DtypeDesc& d = Desc(HCCL_DATA_TYPE_FP16);
  std::vector<uint16_t> e = {0x3c00, 0x7e00, 0x4000}, g = {0x3c00, 0xfe01, 0x4000};
  EXPECT_EQ(CompareElems(d, e.data(), g.data(), 3, "x"), "");
  g[2] = 0x4001;
  std::string m = CompareElems(d, e.data(), g.data(), 3, "x");
  EXPECT_NE(m.find("index 2"), std::string::npos) << m;
  EXPECT_NE(m.find("0x4001"), std::string::npos) << m;
}

TEST(HarnessInput, DeterministicPerRankAndDifferentAcrossRanks) {
  for (const auto& d : ReducibleDtypes()) {
    for (HcclReduceOp op : ReduceOps()) {
      std::vector<char> a(1000 * d.size), b(a.size()), c(a.size());
      GenerateInput(d, op, 42, 1, 1000, a.data());
      GenerateInput(d, op, 42, 1, 1000, b.data());
      GenerateInput(d, op, 42, 2, 1000, c.data());
      EXPECT_EQ(a, b) << d.name;
      EXPECT_NE(a, c) << d.name;
    }
  }
}

TEST(HarnessInput, FloatInputsContainSpecials) {
  // max/min inputs must contain NaN, ±0, ±Inf and subnormals for each float type.
  for (const auto& d : ReducibleDtypes()) {
    if (!IsFloat(d)) continue;
    const size_t n = 4096;
    std::vector<char> v(n * d.size);
    GenerateInput(d, HCCL_REDUCE_MAX, 7, 0, n, v.data());
    int nan = 0, zero = 0, inf = 0, sub = 0;
    for (size_t i = 0; i < n; ++i) {
      double x = 0;
      const char* p = v.data() + i * d.size;
      switch (d.kind) {
        case ElemKind::kFp16: { uint16_t h; std::memcpy(&h, p, 2); x = HalfToFloat(h); break; }
        case ElemKind::kBf16: { uint16_t h; std::memcpy(&h, p, 2); x = Bf16ToFloat(h); break; }
        case ElemKind::kFp32: { float f; std::memcpy(&f, p, 4); x = f; break; }
        default: std::memcpy(&x, p, 8); break;
      }
      nan += std::isnan(x);
      zero += x == 0;
      inf += std::isinf(x);
      const bool sub64 = std::fpclassify(x) == FP_SUBNORMAL;
      const bool sub32 = std::fpclassify(static_cast<float>(x)) == FP_SUBNORMAL;
      const bool sub16 = x != 0 && std::fabs(x) < 6.103515625e-05;  // below fp16's smallest normal
      sub += d.kind == ElemKind::kFp64 ? sub64 : d.kind == ElemKind::kFp16 ? sub16 : sub32;
    }
    EXPECT_GT(nan, 0) << d.name;
    EXPECT_GT(zero, 0) << d.name;
    EXPECT_GT(inf, 0) << d.name;
    EXPECT_GT(sub, 0) << d.name;
  }
}

}  // namespace
}  // namespace hostccl::test
