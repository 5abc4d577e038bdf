// Scalar definitions of ⊕ (semantics.md §2) and the exact fp16/bf16 <-> fp32 conversions, in
// integer arithmetic where the rule needs it (so no MXCSR setting or instruction can flush).
// These are THE rules: every vector level must reproduce them bit for bit (NaN payloads aside).
// Internal to src/kernels. Everything sits in an anonymous namespace on purpose: the per-ISA
// .cc files are compiled with different -m flags, and a shared inline definition could be
// merged by the linker into the AVX-512 copy and then run on a CPU without AVX-512.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/dtype.h"

namespace hostccl::kern {
namespace {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// fp16 -> fp32, exact (subnormals normalised by hand; NaN quietened like F16C does).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return BitsFloat(sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
  if (exp == 0) {
    if (mant == 0) return BitsFloat(sign);
    int e = 1;  // value = mant * 2^-24: shift the leading one up to the implicit-bit position
    while (!(mant & 0x400u)) {
      mant <<= 1;
      --e;
    }
    return BitsFloat(sign | (static_cast<uint32_t>(e + 112) << 23) | ((mant & 0x3FFu) << 13));
  }
  return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

// fp32 -> fp16, round to nearest-even, overflow to Inf, subnormal results exact, NaN -> quiet
// NaN keeping the top payload bits (what VCVTPS2PH produces).
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to Inf
  if (abs < 0x38800000u) {  // below 2^-14: fp16 subnormal (or zero); m = round(value * 2^24)
    const uint32_t e = abs >> 23;
    const uint32_t mant = (abs & 0x7FFFFFu) | (e ? 0x800000u : 0u);
    const uint32_t shift = 126 - (e ? e : 1);  // f32 subnormals scale like exponent field 1
    if (shift > 24) return static_cast<uint16_t>(sign);  // below half of the smallest subnormal
    uint32_t m = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t h = (abs >> 13) - (112u << 10);
  const uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // a carry correctly bumps the exponent
  return static_cast<uint16_t>(sign | h);
}

inline float Bf16BitsToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

// fp32 -> bf16, round to nearest-even (integer add of 0x7FFF + lsb), NaN -> quiet NaN.
inline uint16_t FloatToBf16Bits(float f) {
  const uint32_t bits = FloatBits(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// Storage type of each reducible data type (fp16/bf16 are raw 16-bit patterns).
template <DataType T> struct ElemOf;
template <> struct ElemOf<DataType::kInt8> { using type = int8_t; };
template <> struct ElemOf<DataType::kInt16> { using type = int16_t; };
template <> struct ElemOf<DataType::kInt32> { using type = int32_t; };
template <> struct ElemOf<DataType::kInt64> { using type = int64_t; };
template <> struct ElemOf<DataType::kUint8> { using type = uint8_t; };
template <> struct ElemOf<DataType::kUint16> { using type = uint16_t; };
template <> struct ElemOf<DataType::kUint32> { using type = uint32_t; };
template <> struct ElemOf<DataType::kUint64> { using type = uint64_t; };
template <> struct ElemOf<DataType::kFp16> { using type = uint16_t; };
template <> struct ElemOf<DataType::kFp32> { using type = float; };
template <> struct ElemOf<DataType::kFp64> { using type = double; };
template <> struct ElemOf<DataType::kBf16> { using type = uint16_t; };

// Max/min on IEEE values: NaN if either is NaN, else larger/smaller, the left operand on ties.
template <RedOp Op, class F> inline bool PickRight(F a, F b) {
  if constexpr (Op == RedOp::kMax) return b > a || b != b;
  else return b < a || b != b;
}

template <RedOp Op, class F> inline F IeeeOp(F a, F b) {
  if constexpr (Op == RedOp::kSum) return a + b;
  else if constexpr (Op == RedOp::kProd) return a * b;
  else return PickRight<Op>(a, b) ? b : a;
}

// Integers: sum/prod in an unsigned type at least as wide as int (so no promotion to a signed
// int can overflow), truncated back modulo 2^bits.
template <RedOp Op, class I> inline I IntOp(I a, I b) {
  using W = std::conditional_t<(sizeof(I) < 4), uint32_t, std::make_unsigned_t<I>>;
  if constexpr (Op == RedOp::kSum) return static_cast<I>(static_cast<W>(a) + static_cast<W>(b));
  else if constexpr (Op == RedOp::kProd) return static_cast<I>(static_cast<W>(a) * static_cast<W>(b));
  else if constexpr (Op == RedOp::kMax) return b > a ? b : a;
  else return b < a ? b : a;
}

// One ⊕ on raw elements of data type T.
template <DataType T, RedOp Op> inline typename ElemOf<T>::type ScalarOp(typename ElemOf<T>::type a,
                                                                        typename ElemOf<T>::type b) {
  if constexpr (T == DataType::kFp32 || T == DataType::kFp64) {
    return IeeeOp<Op>(a, b);
  } else if constexpr (T == DataType::kFp16 || T == DataType::kBf16) {
    constexpr bool kHalf = T == DataType::kFp16;
    const float fa = kHalf ? HalfBitsToFloat(a) : Bf16BitsToFloat(a);
    const float fb = kHalf ? HalfBitsToFloat(b) : Bf16BitsToFloat(b);
    if constexpr (Op == RedOp::kMax || Op == RedOp::kMin) {
      return PickRight<Op>(fa, fb) ? b : a;  // the result is an operand: keep its exact bits
    } else {
      const float r = IeeeOp<Op>(fa, fb);
      return kHalf ? FloatToHalfBits(r) : FloatToBf16Bits(r);
    }
  } else {
    return IntOp<Op>(a, b);
  }
}

}  // namespace
}  // namespace hostccl::kern
