// The AVX-512 dispatch level (F + BW + VL; F16C conversions in 512-bit form): 512-bit kinds for
// all 12 types x 4 ops. Compiled with -mavx512f -mavx512bw -mavx512vl (src/kernels/CMakeLists.txt);
// only reached after dispatch.cc checked the CPU. bf16 rounds with integer ops rather than
// VCVTNE2PS2BF16, which treats subnormal inputs as zero and so breaks the scalar rule.
#include <immintrin.h>

// GCC 12's avx512fintrin.h builds its "undefined" pass-through operands from self-initialised
// locals, which -O3 reports as -Wmaybe-uninitialized at every inlined intrinsic: a header bug.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstdint>

#include "kernels/kernel_loops.h"

namespace hostccl::kern {
namespace {

template <class E, RedOp Op>
__m512i IntCombine(__m512i a, __m512i b) {
  constexpr bool kSigned = static_cast<E>(-1) < 0;
  constexpr size_t kBytes = sizeof(E);
  if constexpr (Op == RedOp::kSum) {
    if constexpr (kBytes == 1) return _mm512_add_epi8(a, b);
    else if constexpr (kBytes == 2) return _mm512_add_epi16(a, b);
    else if constexpr (kBytes == 4) return _mm512_add_epi32(a, b);
    else return _mm512_add_epi64(a, b);
  } else if constexpr (Op == RedOp::kProd) {
    if constexpr (kBytes == 1) {
      // No 8-bit multiply: even bytes from a 16-bit multiply, odd bytes from the high halves.
      const __m512i even = _mm512_mullo_epi16(a, b);
      const __m512i odd = _mm512_slli_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8)), 8);
      return _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, even, odd);
    } else if constexpr (kBytes == 2) {
      return _mm512_mullo_epi16(a, b);
    } else if constexpr (kBytes == 4) {
      return _mm512_mullo_epi32(a, b);
    } else {
      // 64-bit low product without AVX512DQ: alo*blo + ((ahi*blo + alo*bhi) << 32).
      const __m512i lo = _mm512_mul_epu32(a, b);
      const __m512i cross = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32), b),
                                             _mm512_mul_epu32(a, _mm512_srli_epi64(b, 32)));
      return _mm512_add_epi64(lo, _mm512_slli_epi64(cross, 32));
    }
  } else {
    constexpr bool kMax = Op == RedOp::kMax;
    if constexpr (kBytes == 1) {
      if constexpr (kSigned) return kMax ? _mm512_max_epi8(a, b) : _mm512_min_epi8(a, b);
      else return kMax ? _mm512_max_epu8(a, b) : _mm512_min_epu8(a, b);
    } else if constexpr (kBytes == 2) {
      if constexpr (kSigned) return kMax ? _mm512_max_epi16(a, b) : _mm512_min_epi16(a, b);
      else return kMax ? _mm512_max_epu16(a, b) : _mm512_min_epu16(a, b);
    } else if constexpr (kBytes == 4) {
      if constexpr (kSigned) return kMax ? _mm512_max_epi32(a, b) : _mm512_min_epi32(a, b);
      else return kMax ? _mm512_max_epu32(a, b) : _mm512_min_epu32(a, b);
    } else {
      if constexpr (kSigned) return kMax ? _mm512_max_epi64(a, b) : _mm512_min_epi64(a, b);
      else return kMax ? _mm512_max_epu64(a, b) : _mm512_min_epu64(a, b);
    }
  }
}

// Tails (n < kStep elements): masked loads and stores (LoadPartial/StorePartial, kernel_loops.h).
// Masked-off lanes read as zero, as the padded copy's lanes did, and are never written; masked-off
// bytes do not fault, so a tail at the end of a page is safe.
inline __mmask64 FirstBytes(size_t bytes) {
  return bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
}
inline uint32_t FirstLanes(size_t n) { return n >= 32 ? ~0u : (1u << n) - 1; }
inline __mmask8 Lanes8(size_t n) { return static_cast<__mmask8>(FirstLanes(n)); }
inline __mmask16 Lanes16(size_t n) { return static_cast<__mmask16>(FirstLanes(n)); }
inline __mmask32 Lanes32(size_t n) { return static_cast<__mmask32>(FirstLanes(n)); }

template <class E, RedOp Op>
struct IntKind {
  using Elem = E;
  using Acc = __m512i;
  static constexpr size_t kStep = 64 / sizeof(E);
  static Acc Load(const Elem* p) { return _mm512_loadu_si512(p); }
  static void Store(Elem* p, Acc v) { _mm512_storeu_si512(p, v); }
  static Acc LoadPartial(const Elem* p, size_t n) {
    return _mm512_maskz_loadu_epi8(FirstBytes(n * sizeof(E)), p);
  }
  static void StorePartial(Elem* p, Acc v, size_t n) {
    _mm512_mask_storeu_epi8(p, FirstBytes(n * sizeof(E)), v);
  }
  static Acc Combine(Acc a, Acc b) { return IntCombine<E, Op>(a, b); }
};

// Max/min decision: take b where b > a (b < a for min) or b is NaN; a stays on ties and NaN a.
template <RedOp Op>
__mmask16 PsTakeB(__m512 a, __m512 b) {
  const __mmask16 better = Op == RedOp::kMax ? _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ) : _mm512_cmp_ps_mask(b, a, _CMP_LT_OQ);
  return better | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
}

template <RedOp Op>
__m512 PsCombine(__m512 a, __m512 b) {
  if constexpr (Op == RedOp::kSum) return _mm512_add_ps(a, b);
  else if constexpr (Op == RedOp::kProd) return _mm512_mul_ps(a, b);
  else return _mm512_mask_blend_ps(PsTakeB<Op>(a, b), a, b);
}

template <RedOp Op>
__m512d PdCombine(__m512d a, __m512d b) {
  if constexpr (Op == RedOp::kSum) return _mm512_add_pd(a, b);
  else if constexpr (Op == RedOp::kProd) return _mm512_mul_pd(a, b);
  else {
    const __mmask8 better = Op == RedOp::kMax ? _mm512_cmp_pd_mask(b, a, _CMP_GT_OQ) : _mm512_cmp_pd_mask(b, a, _CMP_LT_OQ);
    return _mm512_mask_blend_pd(better | _mm512_cmp_pd_mask(b, b, _CMP_UNORD_Q), a, b);
  }
}

template <RedOp Op>
struct F32Kind {
  using Elem = float;
  using Acc = __m512;
  static constexpr size_t kStep = 16;
  static Acc Load(const Elem* p) { return _mm512_loadu_ps(p); }
  static void Store(Elem* p, Acc v) { _mm512_storeu_ps(p, v); }
  static Acc LoadPartial(const Elem* p, size_t n) { return _mm512_maskz_loadu_ps(Lanes16(n), p); }
  static void StorePartial(Elem* p, Acc v, size_t n) { _mm512_mask_storeu_ps(p, Lanes16(n), v); }
  static Acc Combine(Acc a, Acc b) { return PsCombine<Op>(a, b); }
};

template <RedOp Op>
struct F64Kind {
  using Elem = double;
  using Acc = __m512d;
  static constexpr size_t kStep = 8;
  static Acc Load(const Elem* p) { return _mm512_loadu_pd(p); }
  static void Store(Elem* p, Acc v) { _mm512_storeu_pd(p, v); }
  static Acc LoadPartial(const Elem* p, size_t n) { return _mm512_maskz_loadu_pd(Lanes8(n), p); }
  static void StorePartial(Elem* p, Acc v, size_t n) { _mm512_mask_storeu_pd(p, Lanes8(n), v); }
  static Acc Combine(Acc a, Acc b) { return PdCombine<Op>(a, b); }
};

// fp16: 16 halves per Acc, widened with VCVTPH2PS, rounded once with VCVTPS2PH (RNE immediate).
template <RedOp Op>
struct F16Kind {
  using Elem = uint16_t;
  using Acc = __m256i;
  static constexpr size_t kStep = 16;
  static Acc Load(const Elem* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void Store(Elem* p, Acc v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static Acc LoadPartial(const Elem* p, size_t n) { return _mm256_maskz_loadu_epi16(Lanes16(n), p); }
  static void StorePartial(Elem* p, Acc v, size_t n) { _mm256_mask_storeu_epi16(p, Lanes16(n), v); }
  static Acc Combine(Acc a, Acc b) {
    const __m512 fa = _mm512_cvtph_ps(a);
    const __m512 fb = _mm512_cvtph_ps(b);
    if constexpr (Op == RedOp::kSum || Op == RedOp::kProd) {
      return _mm512_cvtps_ph(PsCombine<Op>(fa, fb), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {
      return _mm256_mask_blend_epi16(PsTakeB<Op>(fa, fb), a, b);  // exact operand bits
    }
  }
};

// bf16: 32 per Acc; widen by putting the bits in the high half of 32-bit lanes (unpack within
// 128-bit lanes permutes the order, packus on the results undoes it).
inline __m512i Bf16Round(__m512 r) {  // fp32 -> bf16 bits in the low half of each lane
  const __m512i bits = _mm512_castps_si512(r);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
  const __m512i quiet = _mm512_or_si512(bits, _mm512_set1_epi32(0x00400000));
  return _mm512_srli_epi32(_mm512_mask_blend_epi32(_mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), rounded, quiet), 16);
}

template <RedOp Op>
struct Bf16Kind {
  using Elem = uint16_t;
  using Acc = __m512i;
  static constexpr size_t kStep = 32;
  static Acc Load(const Elem* p) { return _mm512_loadu_si512(p); }
  static void Store(Elem* p, Acc v) { _mm512_storeu_si512(p, v); }
  static Acc LoadPartial(const Elem* p, size_t n) { return _mm512_maskz_loadu_epi16(Lanes32(n), p); }
  static void StorePartial(Elem* p, Acc v, size_t n) { _mm512_mask_storeu_epi16(p, Lanes32(n), v); }
  static Acc Combine(Acc a, Acc b) {
    const __m512i zero = _mm512_setzero_si512();
    const __m512 alo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, a));
    const __m512 ahi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, a));
    const __m512 blo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, b));
    const __m512 bhi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, b));
    const __m512 rlo = PsCombine<Op>(alo, blo);
    const __m512 rhi = PsCombine<Op>(ahi, bhi);
    if constexpr (Op == RedOp::kSum || Op == RedOp::kProd) {
      return _mm512_packus_epi32(Bf16Round(rlo), Bf16Round(rhi));
    } else {
      return _mm512_packus_epi32(_mm512_srli_epi32(_mm512_castps_si512(rlo), 16),
                                 _mm512_srli_epi32(_mm512_castps_si512(rhi), 16));
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

constinit const KernelTable kAvx512Table =
    HOSTCCL_KERNEL_TABLE(VI8, VI16, VI32, F16Kind, F32Kind, VI64, VU64, VU8, VU16, VU32, F64Kind, Bf16Kind);

}  // namespace hostccl::kern
