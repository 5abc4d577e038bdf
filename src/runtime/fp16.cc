// binary16 conversions done with integer arithmetic (no F16C needed).
#include "runtime/fp16.h"

#include <cstring>

namespace hostccl::rt {
namespace {
uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
}  // namespace

uint16_t FloatToHalf(float value) {
  uint32_t x = Bits(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // Inf or NaN
    if (x == 0x7f800000u) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((x >> 13) & 0x3ffu);  // quiet NaN
  }
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (x < 0x38800000u) {
    // Result is subnormal (or zero): |v| * 2^24 rounded to nearest even. Adding 0.5 puts the
    // value where one float ulp is 2^-24, so the FPU's own rounding does the work.
    float t = FromBits(x) + 0.5f;
    return sign | static_cast<uint16_t>(Bits(t) - Bits(0.5f));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to even.
  uint32_t odd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return sign | static_cast<uint16_t>(x >> 13);
}

float HalfToFloat(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t exp = (value >> 10) & 0x1fu;
  const uint32_t mant = value & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float f = static_cast<float>(mant) * FromBits(0x33800000u);
    return FromBits(Bits(f) | sign);
  }
  if (exp == 31) return FromBits(sign | 0x7f800000u | (mant << 13));
  return FromBits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

}  // namespace hostccl::rt
