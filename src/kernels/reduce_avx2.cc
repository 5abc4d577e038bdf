// The AVX2 + F16C dispatch level: 256-bit kinds for all 12 types x 4 ops. Compiled with
// -mavx2 -mf16c (src/kernels/CMakeLists.txt); only reached after dispatch.cc checked the CPU.
// fp16 goes through VCVTPH2PS/VCVTPS2PH (exact both ways, subnormals kept, MXCSR FTZ/DAZ
// not consulted for these); bf16 rounds with integer ops (same rule as scalar_math.h).
#include <immintrin.h>

#include <cstdint>

#include "kernels/kernel_loops.h"
#include "kernels/scalar_math.h"

namespace hostccl::kern {
namespace {

// ---- integers: wrapping sum/prod, signed or unsigned max/min by element width ----
template <class E, RedOp Op>
__m256i IntCombine(__m256i a, __m256i b) {
  constexpr bool kSigned = static_cast<E>(-1) < 0;
  constexpr size_t kBytes = sizeof(E);
  if constexpr (Op == RedOp::kSum) {
    if constexpr (kBytes == 1) return _mm256_add_epi8(a, b);
    else if constexpr (kBytes == 2) return _mm256_add_epi16(a, b);
    else if constexpr (kBytes == 4) return _mm256_add_epi32(a, b);
    else return _mm256_add_epi64(a, b);
  } else if constexpr (Op == RedOp::kProd) {
    if constexpr (kBytes == 1) {
      // No 8-bit multiply: even bytes from a 16-bit multiply, odd bytes from the high halves.
      const __m256i lo_mask = _mm256_set1_epi16(0x00FF);
      const __m256i even = _mm256_and_si256(_mm256_mullo_epi16(a, b), lo_mask);
      const __m256i odd = _mm256_slli_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8)), 8);
      return _mm256_or_si256(even, odd);
    } else if constexpr (kBytes == 2) {
      return _mm256_mullo_epi16(a, b);
    } else if constexpr (kBytes == 4) {
      return _mm256_mullo_epi32(a, b);
    } else {
      // 64-bit low product: alo*blo + ((ahi*blo + alo*bhi) << 32), all modulo 2^64.
      const __m256i lo = _mm256_mul_epu32(a, b);
      const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                             _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
      return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
    }
  } else {
    constexpr bool kMax = Op == RedOp::kMax;
    if constexpr (kBytes == 1) {
      if constexpr (kSigned) return kMax ? _mm256_max_epi8(a, b) : _mm256_min_epi8(a, b);
      else return kMax ? _mm256_max_epu8(a, b) : _mm256_min_epu8(a, b);
    } else if constexpr (kBytes == 2) {
      if constexpr (kSigned) return kMax ? _mm256_max_epi16(a, b) : _mm256_min_epi16(a, b);
      else return kMax ? _mm256_max_epu16(a, b) : _mm256_min_epu16(a, b);
    } else if constexpr (kBytes == 4) {
      if constexpr (kSigned) return kMax ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b);
      else return kMax ? _mm256_max_epu32(a, b) : _mm256_min_epu32(a, b);
    } else {
      // No 64-bit max/min in AVX2: signed compare (unsigned via a flipped sign bit) + blend.
      __m256i ca = a, cb = b;
      if constexpr (!kSigned) {
        const __m256i flip = _mm256_set1_epi64x(INT64_MIN);
        ca = _mm256_xor_si256(a, flip);
        cb = _mm256_xor_si256(b, flip);
      }
      const __m256i take_b = kMax ? _mm256_cmpgt_epi64(cb, ca) : _mm256_cmpgt_epi64(ca, cb);
      return _mm256_blendv_epi8(a, b, take_b);
    }
  }
}

template <class E, RedOp Op>
struct IntKind {
  using Elem = E;
  using Acc = __m256i;
  static constexpr size_t kStep = 32 / sizeof(E);
  static Acc Load(const Elem* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void Store(Elem* p, Acc v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static Acc Combine(Acc a, Acc b) { return IntCombine<E, Op>(a, b); }
};

// ---- fp32 / fp64: IEEE ops; max/min = take b where b > a (b < a) or b is NaN ----
template <RedOp Op>
__m256 PsCombine(__m256 a, __m256 b) {
  if constexpr (Op == RedOp::kSum) return _mm256_add_ps(a, b);
  else if constexpr (Op == RedOp::kProd) return _mm256_mul_ps(a, b);
  else {
    const __m256 better = Op == RedOp::kMax ? _mm256_cmp_ps(b, a, _CMP_GT_OQ) : _mm256_cmp_ps(b, a, _CMP_LT_OQ);
    return _mm256_blendv_ps(a, b, _mm256_or_ps(better, _mm256_cmp_ps(b, b, _CMP_UNORD_Q)));
  }
}

template <RedOp Op>
__m256d PdCombine(__m256d a, __m256d b) {
  if constexpr (Op == RedOp::kSum) return _mm256_add_pd(a, b);
  else if constexpr (Op == RedOp::kProd) return _mm256_mul_pd(a, b);
  else {
    const __m256d better = Op == RedOp::kMax ? _mm256_cmp_pd(b, a, _CMP_GT_OQ) : _mm256_cmp_pd(b, a, _CMP_LT_OQ);
    return _mm256_blendv_pd(a, b, _mm256_or_pd(better, _mm256_cmp_pd(b, b, _CMP_UNORD_Q)));
  }
}

template <RedOp Op>
struct F32Kind {
  using Elem = float;
  using Acc = __m256;
  static constexpr size_t kStep = 8;
  static Acc Load(const Elem* p) { return _mm256_loadu_ps(p); }
  static void Store(Elem* p, Acc v) { _mm256_storeu_ps(p, v); }
  static Acc Combine(Acc a, Acc b) { return PsCombine<Op>(a, b); }
};

template <RedOp Op>
struct F64Kind {
  using Elem = double;
  using Acc = __m256d;
  static constexpr size_t kStep = 4;
  static Acc Load(const Elem* p) { return _mm256_loadu_pd(p); }
  static void Store(Elem* p, Acc v) { _mm256_storeu_pd(p, v); }
  static Acc Combine(Acc a, Acc b) { return PdCombine<Op>(a, b); }
};

// ---- fp16: 8 halves per Acc, widened with F16C, one RNE rounding per ⊕ ----
template <RedOp Op>
struct F16Kind {
  using Elem = uint16_t;
  using Acc = __m128i;
  static constexpr size_t kStep = 8;
  static Acc Load(const Elem* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static void Store(Elem* p, Acc v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static Acc Combine(Acc a, Acc b) {
    const __m256 fa = _mm256_cvtph_ps(a);
    const __m256 fb = _mm256_cvtph_ps(b);
    if constexpr (Op == RedOp::kSum || Op == RedOp::kProd) {
      return _mm256_cvtps_ph(PsCombine<Op>(fa, fb), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {
      // Select the original 16-bit operand (exact bits) with the fp32 decision narrowed to 16 bits.
      const __m256 better = Op == RedOp::kMax ? _mm256_cmp_ps(fb, fa, _CMP_GT_OQ) : _mm256_cmp_ps(fb, fa, _CMP_LT_OQ);
      const __m256i m32 = _mm256_castps_si256(_mm256_or_ps(better, _mm256_cmp_ps(fb, fb, _CMP_UNORD_Q)));
      const __m128i m16 = _mm_packs_epi32(_mm256_castsi256_si128(m32), _mm256_extracti128_si256(m32, 1));
      return _mm_blendv_epi8(a, b, m16);
    }
  }
};

// ---- bf16: 16 per Acc; widen by placing the bits in the high half of a 32-bit lane ----
// unpacklo/hi within 128-bit lanes permute the order; packus on the results undoes it.
inline __m256i Bf16Round(__m256 r) {  // fp32 -> bf16 bits in the low half of each lane
  const __m256i bits = _mm256_castps_si256(r);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
  const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(r, r, _CMP_UNORD_Q));
  return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
}

template <RedOp Op>
struct Bf16Kind {
  using Elem = uint16_t;
  using Acc = __m256i;
  static constexpr size_t kStep = 16;
  static Acc Load(const Elem* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void Store(Elem* p, Acc v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static Acc Combine(Acc a, Acc b) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256 alo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, a));
    const __m256 ahi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, a));
    const __m256 blo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, b));
    const __m256 bhi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, b));
    const __m256 rlo = PsCombine<Op>(alo, blo);
    const __m256 rhi = PsCombine<Op>(ahi, bhi);
    if constexpr (Op == RedOp::kSum || Op == RedOp::kProd) {
      return _mm256_packus_epi32(Bf16Round(rlo), Bf16Round(rhi));
    } else {  // max/min picked an operand: its bits are exact, just narrow
      return _mm256_packus_epi32(_mm256_srli_epi32(_mm256_castps_si256(rlo), 16),
                                 _mm256_srli_epi32(_mm256_castps_si256(rhi), 16));
    }
  }
};

template <RedOp Op> using VI8 = IntKind<int8_t, Op>;
template <RedOp Op> using VI16 = IntKind<int16_t, Op>;
template <RedOp Op> using VI32 = IntKind<int32_t, Op>;
template <RedOp Op> using VI64 = IntKind<int64_t, Op>;
template <RedOp Op> using VU8 = IntKind<uint8_t, Op>;
template <RedOp Op> using VU16 = IntKind<uint16_t, Op>;
template <RedOp Op> using VU32 = IntKind<uint32_t, Op>;
template <RedOp Op> using VU64 = IntKind<uint64_t, Op>;

}  // namespace

constinit const KernelTable kAvx2Table =
    HOSTCCL_KERNEL_TABLE(VI8, VI16, VI32, F16Kind, F32Kind, VI64, VU64, VU8, VU16, VU32, F64Kind, Bf16Kind);

void WidenHalfF16c(const uint16_t* src, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  for (; i < n; ++i) out[i] = HalfBitsToFloat(src[i]);
}

void NarrowHalfF16c(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}

}  // namespace hostccl::kern
