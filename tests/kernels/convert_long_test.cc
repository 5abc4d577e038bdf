// Label "long": FloatToHalf / FloatToBf16 over all 2^32 fp32 patterns. fp16 is checked against
// the CPU's own F16C conversion (an independent implementation; skipped without F16C), bf16
// against reference.h's neighbour-distance rule. About 1-2 minutes of CPU.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>

#include "kernels/reduce.h"
#include "reference.h"

namespace hostccl::kern {
namespace {

__attribute__((target("f16c"))) uint16_t HwFloatToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

TEST(ConvertLong, AllFloatPatterns) {
  __builtin_cpu_init();
  const bool f16c = __builtin_cpu_supports("f16c");
  uint64_t bad = 0;
  for (uint64_t x = 0; x < (1ull << 32); ++x) {
    const float f = testing::FromBits(static_cast<uint32_t>(x));
    const uint16_t h = FloatToHalf(f), b = FloatToBf16(f);
    if (std::isnan(f)) {
      bad += (h & 0x7FFF) <= 0x7C00;
      bad += (b & 0x7FFF) <= 0x7F80;
      continue;
    }
    if ((f16c && h != HwFloatToHalf(f)) || b != testing::RefFloatToBf16(f)) {
      if (bad++ < 5) ADD_FAILURE() << std::hex << "f=0x" << x << " half 0x" << h << " bf16 0x" << b;
    }
  }
  EXPECT_EQ(bad, 0u);
  if (!f16c) GTEST_SKIP() << "fp16 half of the sweep skipped: no F16C";
}

}  // namespace
}  // namespace hostccl::kern
