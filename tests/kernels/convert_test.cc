// fp16/bf16 conversions: the exported scalar helpers exhaustively over all 65536 patterns and a
// dense sample of fp32 inputs (the full 2^32 sweep is in convert_long_test.cc, label "long"),
// and every dispatch level's widen/narrow path exhaustively through identity ops (x + -0,
// x * 1), scaling into the subnormal range (x * 2^-k: every rounding position and tie) and
// sums with fixed partners. Also: kernels ignore the caller's FTZ/DAZ/rounding mode.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/reduce.h"
#include "reference.h"

namespace hostccl::kern {
namespace {

using testing::Bits;
using testing::FirstDiff;
using testing::FromBits;
using testing::HexElem;
using testing::RefBf16ToFloat;
using testing::RefFloatToBf16;
using testing::RefFloatToHalf;
using testing::RefHalfToFloat;

bool SameOrBothNan(float x, float y) { return Bits(x) == Bits(y) || (std::isnan(x) && std::isnan(y)); }
bool HalfNan(uint16_t h) { return (h & 0x7FFF) > 0x7C00; }
bool BfNan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

TEST(Convert, HalfToFloatExhaustive) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    ASSERT_TRUE(SameOrBothNan(got, RefHalfToFloat(static_cast<uint16_t>(h)))) << "h=" << h;
    if (!std::isnan(got)) ASSERT_EQ(FloatToHalf(got), h) << "round trip h=" << h;
    else ASSERT_TRUE(HalfNan(FloatToHalf(got)));
  }
}

TEST(Convert, Bf16ToFloatExhaustive) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float got = Bf16ToFloat(static_cast<uint16_t>(h));
    ASSERT_TRUE(SameOrBothNan(got, RefBf16ToFloat(static_cast<uint16_t>(h)))) << "h=" << h;
    if (!std::isnan(got)) ASSERT_EQ(FloatToBf16(got), h) << "round trip h=" << h;
    else ASSERT_TRUE(BfNan(FloatToBf16(got)));
  }
}

void CheckNarrow(uint32_t fbits) {
  const float f = FromBits(fbits);
  const uint16_t h = FloatToHalf(f), rh = RefFloatToHalf(f);
  ASSERT_TRUE(h == rh || (HalfNan(h) && HalfNan(rh))) << std::hex << "fp16 f=0x" << fbits << " got 0x" << h << " want 0x" << rh;
  const uint16_t b = FloatToBf16(f), rb = RefFloatToBf16(f);
  ASSERT_TRUE(b == rb || (BfNan(b) && BfNan(rb))) << std::hex << "bf16 f=0x" << fbits << " got 0x" << b << " want 0x" << rb;
}

TEST(Convert, FloatToHalfAndBf16NearEveryBoundary) {
  // Around every fp16 value: the value, the midpoints to its neighbour and one fp32 ulp either side.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t lo = Bits(HalfToFloat(static_cast<uint16_t>(h)));
      const uint32_t hi = Bits(HalfToFloat(static_cast<uint16_t>(h + 1)));
      const uint32_t mid = Bits((FromBits(lo) + FromBits(hi)) * 0.5f);  // exact in fp32
      for (uint32_t x : {lo, mid - 1, mid, mid + 1, hi - 1}) CheckNarrow(sign | x);
    }
  }
  // Same for bf16 (its midpoints are the fp32 patterns ending in 0x8000).
  for (uint32_t b = 0; b < 0x7F80; ++b) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint32_t base = b << 16;
      for (uint32_t x : {base, base + 0x7FFFu, base + 0x8000u, base + 0x8001u, base + 0xFFFFu}) CheckNarrow(sign | x);
    }
  }
  // A strided sweep of all fp32 patterns (NaNs, Infs, subnormals included).
  for (uint64_t x = 0; x < (1ull << 32); x += 4099) CheckNarrow(static_cast<uint32_t>(x));
}

// Every level: all 65536 patterns through ops whose exact result is known from the reference.
class LevelConvertTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (static_cast<int>(GetParam()) > static_cast<int>(DetectedIsa())) GTEST_SKIP() << "CPU lacks level";
    ForceIsa(GetParam());
  }
  void TearDown() override { ResetIsa(); }

  // out = all ⊕ b (b broadcast) with the kernel, and with the reference; compare.
  void Check(DataType t, RedOp op, uint16_t b) {
    std::vector<uint16_t> all(65536), bb(65536, b), out(65536), want(65536);
    for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
    GetBinary(t, op)(out.data(), all.data(), bb.data(), all.size());
    for (uint32_t i = 0; i < 65536; ++i) testing::RefOne(t, op, &want[i], &all[i], &b);
    const long i = FirstDiff(t, out.data(), want.data(), out.size());
    ASSERT_EQ(i, -1) << DataTypeName(t) << " " << RedOpName(op) << " " << IsaName(GetParam()) << " b=0x"
                     << std::hex << b << " a=" << HexElem(t, all.data(), i) << " got=" << HexElem(t, out.data(), i)
                     << " want=" << HexElem(t, want.data(), i);
  }
};

TEST_P(LevelConvertTest, Fp16Exhaustive) {
  const DataType t = DataType::kFp16;
  Check(t, RedOp::kSum, 0x8000);  // x + -0 == x: widen + narrow round trip
  Check(t, RedOp::kProd, 0x3C00);  // x * 1
  for (uint16_t e = 1; e <= 26; ++e) Check(t, RedOp::kProd, static_cast<uint16_t>(0x3C00 - (e << 10) + (e > 14 ? 0 : 0)));
  for (uint16_t b : {0x0001, 0x03FF, 0x0400, 0x3555, 0xBC01, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x1234, 0x8001}) {
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) Check(t, op, b);
  }
}

TEST_P(LevelConvertTest, Bf16Exhaustive) {
  const DataType t = DataType::kBf16;
  Check(t, RedOp::kSum, 0x8000);
  Check(t, RedOp::kProd, 0x3F80);
  for (uint16_t e = 1; e <= 40; e += 3) Check(t, RedOp::kProd, static_cast<uint16_t>(0x3F80 - (e << 7)));
  for (uint16_t b : {0x0001, 0x007F, 0x0080, 0x3EAB, 0xBF81, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x1234, 0x8001}) {
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin}) Check(t, op, b);
  }
}

// The caller's MXCSR (FTZ + DAZ + round-toward-zero) must not leak into results, and must be
// restored afterwards.
TEST_P(LevelConvertTest, IgnoresCallerMxcsr) {
  const size_t n = 1000;
  std::vector<float> a(n), b(n), want(n), got(n);
  std::vector<uint16_t> ha(n), hb(n), hwant(n), hgot(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = FromBits(static_cast<uint32_t>(1 + i * 7919));     // fp32 subnormals
    b[i] = FromBits(static_cast<uint32_t>(0x00800000u - i));  // around the smallest normal
    ha[i] = static_cast<uint16_t>(1 + i);                      // fp16 subnormals
    hb[i] = static_cast<uint16_t>(0x3C01 + i);                 // products need rounding
  }
  for (size_t i = 0; i < n; ++i) {
    testing::RefOne(DataType::kFp32, RedOp::kSum, &want[i], &a[i], &b[i]);
    testing::RefOne(DataType::kFp16, RedOp::kProd, &hwant[i], &ha[i], &hb[i]);
  }
  const unsigned saved = _mm_getcsr();
  const unsigned hostile = (saved & ~0x6000u) | 0x8040u | 0x6000u;  // FTZ | DAZ | round to zero
  _mm_setcsr(hostile);
  GetBinary(DataType::kFp32, RedOp::kSum)(got.data(), a.data(), b.data(), n);
  GetBinary(DataType::kFp16, RedOp::kProd)(hgot.data(), ha.data(), hb.data(), n);
  const unsigned after = _mm_getcsr();
  _mm_setcsr(saved);
  EXPECT_EQ(after & ~0x3Fu, hostile & ~0x3Fu) << "MXCSR control bits not restored";
  EXPECT_EQ(FirstDiff(DataType::kFp32, got.data(), want.data(), n), -1);
  EXPECT_EQ(FirstDiff(DataType::kFp16, hgot.data(), hwant.data(), n), -1);
}

INSTANTIATE_TEST_SUITE_P(Levels, LevelConvertTest, ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(IsaName(info.param)); });

}  // namespace
}  // namespace hostccl::kern
