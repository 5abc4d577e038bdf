// Unit tests of the reduction check: half/bfloat16 conversions, the rank-order reference fold,
// sensitivity of the inputs to dropped/swapped ranks and operand order, and the comparison.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "check.h"

namespace hostccl::tools {
namespace {

constexpr int kFp16 = 3, kFp32 = 4, kInt8 = 0, kInt32 = 2, kUint8 = 7, kBf16 = 11, kFp64 = 10;

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

__attribute__((target("f16c"))) uint16_t HardwareHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float HardwareHalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

TEST(HcclTestCheck, HalfRoundTripIsExact) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
}

TEST(HcclTestCheck, HalfRoundingCases) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)),
            0x0000);  // half of the smallest subnormal: tie -> 0
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
}

TEST(HcclTestCheck, HalfMatchesF16cOnRandomFloats) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  std::mt19937 gen(7);
  for (int i = 0; i < 2000000; ++i) {
    // Exponents around the half range, random mantissas and signs.
    uint32_t u = (gen() & 0x807fffffu) | ((90u + gen() % 60u) << 23);
    float f = FromBits(u);
    ASSERT_EQ(FloatToHalf(f), HardwareHalf(f)) << std::hex << u;
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    float a = HalfToFloat(static_cast<uint16_t>(h)),
          b = HardwareHalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(a)) {
      ASSERT_TRUE(std::isnan(b));
      continue;
    }
    ASSERT_EQ(Bits(a), Bits(b)) << std::hex << h;
  }
}

TEST(HcclTestCheck, Bf16Rounding) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(FromBits(0x3f808000u)), 0x3f80);  // tie -> even (down)
  EXPECT_EQ(FloatToBf16(FromBits(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(FloatToBf16(FromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(FloatToBf16(FromBits(0x7f7fffffu)), 0x7f80);  // rounds to infinity
  EXPECT_EQ(FloatToBf16(FromBits(0x00000001u)),
            0x0000);  // subnormals are kept, not flushed: tiny -> 0
  EXPECT_EQ(FloatToBf16(FromBits(0x00018000u)), 0x0002);  // subnormal tie -> even
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = Bf16ToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(FloatToBf16(f), b);
    }
  }
}

TEST(HcclTestCheck, Fp32SumIsTheExactSum) {
  const int ranks = 5;
  const uint64_t n = 300;
  std::vector<uint8_t> exp = ExpectedPeriod(kFp32, 0, ranks, n);
  ASSERT_EQ(exp.size(), n * 4);
  std::vector<float> in(n);
  std::vector<double> sum(n, 0.0);
  for (int r = 0; r < ranks; ++r) {
    FillInput(kFp32, 0, r, n, in.data());
    for (uint64_t j = 0; j < n; ++j) sum[j] += in[j];
  }
  for (uint64_t j = 0; j < n; ++j) {
    float e;
    std::memcpy(&e, exp.data() + j * 4, 4);
    ASSERT_EQ(static_cast<double>(e), sum[j]) << j;
  }
}

TEST(HcclTestCheck, IntegerSumWrapsAndDetectsMissingRank) {
  const int ranks = 8;
  const uint64_t n = kPeriod;
  std::vector<uint8_t> exp = ExpectedPeriod(kUint8, 0, ranks, n);
  std::vector<uint8_t> in(n);
  std::vector<uint8_t> good(n, 0), dup(n, 0);
  for (int r = 0; r < ranks; ++r) {
    FillInput(kUint8, 0, r, n, in.data());
    for (uint64_t j = 0; j < n; ++j) good[j] = static_cast<uint8_t>(good[j] + in[j]);
    FillInput(kUint8, 0, r == 3 ? 2 : r, n, in.data());  // rank 3 replaced by a second rank 2
    for (uint64_t j = 0; j < n; ++j) dup[j] = static_cast<uint8_t>(dup[j] + in[j]);
  }
  EXPECT_EQ(exp, good);
  uint64_t same = 0;
  for (uint64_t j = 0; j < n; ++j) same += dup[j] == good[j];
  EXPECT_EQ(same, 0u) << "a doubled rank must change every element";
}

TEST(HcclTestCheck, Fp16SumDependsOnFoldOrder) {
  // The canonical result is the rank-order left fold with rounding per step; a different order
  // gives a different result on some elements, so the check catches operand-order bugs.
  const int ranks = 8;
  const uint64_t n = kPeriod;
  std::vector<uint8_t> exp = ExpectedPeriod(kFp16, 0, ranks, n);
  std::vector<std::vector<uint16_t>> in(ranks, std::vector<uint16_t>(n));
  for (int r = 0; r < ranks; ++r) FillInput(kFp16, 0, r, n, in[r].data());
  uint64_t differs = 0;
  for (uint64_t j = 0; j < n; ++j) {
    float fwd = HalfToFloat(in[0][j]);
    for (int r = 1; r < ranks; ++r) fwd = HalfToFloat(FloatToHalf(fwd + HalfToFloat(in[r][j])));
    float rev = HalfToFloat(in[ranks - 1][j]);
    for (int r = ranks - 2; r >= 0; --r)
      rev = HalfToFloat(FloatToHalf(rev + HalfToFloat(in[r][j])));
    uint16_t e;
    std::memcpy(&e, exp.data() + j * 2, 2);
    ASSERT_EQ(e, FloatToHalf(fwd)) << j;
    differs += FloatToHalf(fwd) != FloatToHalf(rev);
  }
  EXPECT_GT(differs, 0u);
}

TEST(HcclTestCheck, SignedZeroTiesKeepTheLeftOperand) {
  for (int op : {2, 3}) {
    for (int dtype : {kFp16, kFp32, kFp64, kBf16}) {
      std::vector<uint8_t> exp = ExpectedPeriod(dtype, op, 4, 16);
      std::vector<uint8_t> in1(16 * 8);
      FillInput(dtype, op, 1, 16, in1.data());
      size_t es = exp.size() / 16;
      // Element 5: rank 0 gives -0, rank 1 gives +0: the result must be -0 (sign bit set, rest 0).
      const uint8_t* e5 = exp.data() + 5 * es;
      EXPECT_EQ(e5[es - 1], 0x80) << "dtype " << dtype << " op " << op;
      for (size_t b = 0; b + 1 < es; ++b) EXPECT_EQ(e5[b], 0);
      EXPECT_EQ(in1[5 * es + es - 1], 0x00);  // rank 1's input is +0
    }
  }
}

TEST(HcclTestCheck, EveryTypeAndOpIsComputable) {
  for (int dtype : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) {
    for (int op = 0; op < 4; ++op) {
      for (int ranks : {1, 2, 3, 8}) {
        std::vector<uint8_t> exp = ExpectedPeriod(dtype, op, ranks, 2000);
        ASSERT_FALSE(exp.empty());
        if (ranks == 1) {  // one rank: the result is the input itself
          std::vector<uint8_t> in(exp.size());
          FillInput(dtype, op, 0, kPeriod, in.data());
          EXPECT_EQ(in, exp) << dtype << " " << op;
        }
      }
    }
  }
  EXPECT_TRUE(ExpectedPeriod(12, 0, 2, 10).empty());  // int128 is not reducible
}

TEST(HcclTestCheck, CompareTilesAndCountsWrongElements) {
  const uint64_t count = 5000;
  std::vector<uint8_t> period = ExpectedPeriod(kInt32, 1, 3, count);
  std::vector<int32_t> res(count);
  // Build the right answer by tiling the period.
  for (uint64_t i = 0; i < count; ++i) std::memcpy(&res[i], period.data() + (i % kPeriod) * 4, 4);
  EXPECT_EQ(CompareWithExpected(kInt32, res.data(), count, period, 8, nullptr), 0u);
  res[4321] ^= 1;
  res[7] += 5;
  std::string report;
  EXPECT_EQ(CompareWithExpected(kInt32, res.data(), count, period, 8, &report), 2u);
  EXPECT_NE(report.find("index 4321"), std::string::npos);
  // A result shifted by a power-of-two number of elements is wrong nearly everywhere.
  std::vector<int32_t> shifted(count);
  for (uint64_t i = 0; i < count; ++i) shifted[i] = res[(i + 1024) % count];
  EXPECT_GT(CompareWithExpected(kInt32, shifted.data(), count, period, 0, nullptr), count / 2);
}

TEST(HcclTestCheck, AntiExpectedNeverMatchesAndNaNsCompareEqual) {
  const uint64_t count = 3000;
  std::vector<uint8_t> period = ExpectedPeriod(kInt8, 0, 4, count);
  std::vector<uint8_t> anti(count);
  FillAntiExpected(period, kInt8, count, anti.data());
  EXPECT_EQ(CompareWithExpected(kInt8, anti.data(), count, period, 0, nullptr), count);
  std::vector<uint8_t> nan_period(4);
  float qnan = NAN, other_nan = FromBits(0xffc00001u);
  std::memcpy(nan_period.data(), &qnan, 4);
  EXPECT_EQ(CompareWithExpected(kFp32, &other_nan, 1, nan_period, 0, nullptr), 0u);
}

TEST(HcclTestCheck, GuardViolations) {
  std::vector<uint8_t> buf(100, kGuardByte);
  EXPECT_EQ(CountGuardViolations(buf.data(), buf.size()), 0u);
  buf[10] = 0;
  buf[99] = 1;
  EXPECT_EQ(CountGuardViolations(buf.data(), buf.size()), 2u);
}

}  // namespace
}  // namespace hostccl::tools
