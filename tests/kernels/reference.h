// Test-side reference for ⊕ (semantics.md §2), written independently of src/kernels: wider
// integer arithmetic, _Float16 (libgcc soft-float) for fp16, nearest-candidate search in double
// for bf16. Plus input generators and a bitwise comparison that treats all NaNs as equal.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "common/dtype.h"

namespace hostccl::kern::testing {

inline uint32_t Bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float FromBits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float RefHalfToFloat(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}
inline uint16_t RefFloatToHalf(float f) {
  const _Float16 v = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &v, 2);
  return h;
}
inline float RefBf16ToFloat(uint16_t b) { return FromBits(static_cast<uint32_t>(b) << 16); }

// Nearest bf16 by comparing the two neighbours' distances exactly in double; ties to even.
inline uint16_t RefFloatToBf16(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((Bits(f) >> 16) | 0x40);
  const uint32_t lo = Bits(f) & 0xFFFF0000u;  // truncation: the neighbour towards zero
  if (lo == Bits(f)) return static_cast<uint16_t>(lo >> 16);
  const uint32_t hi = lo + 0x10000u;  // the neighbour away from zero (maybe Inf)
  const double d = std::fabs(static_cast<double>(f));
  const double dlo = std::fabs(static_cast<double>(FromBits(lo)));
  const double dhi = (hi & 0x7FFFFFFFu) == 0x7F800000u ? std::ldexp(1.0, 128)
                                                       : std::fabs(static_cast<double>(FromBits(hi)));
  if (d - dlo < dhi - d) return static_cast<uint16_t>(lo >> 16);
  if (d - dlo > dhi - d) return static_cast<uint16_t>(hi >> 16);
  return static_cast<uint16_t>(((lo >> 16) & 1) ? hi >> 16 : lo >> 16);
}

template <class F> F RefIeee(RedOp op, F a, F b) {
  switch (op) {
    case RedOp::kSum: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMax:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a < b ? b : a;
    case RedOp::kMin:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return b < a ? b : a;
  }
  return a;
}

// Integers via 64-bit (or 128-bit) arithmetic, reduced modulo 2^bits by the final cast.
template <class I> I RefInt(RedOp op, I a, I b) {
  using Wide = std::conditional_t<sizeof(I) == 8, unsigned __int128, uint64_t>;
  const Wide wa = static_cast<Wide>(static_cast<std::make_unsigned_t<I>>(a));
  const Wide wb = static_cast<Wide>(static_cast<std::make_unsigned_t<I>>(b));
  switch (op) {
    case RedOp::kSum: return static_cast<I>(static_cast<std::make_unsigned_t<I>>(wa + wb));
    case RedOp::kProd: return static_cast<I>(static_cast<std::make_unsigned_t<I>>(wa * wb));
    case RedOp::kMax: return a < b ? b : a;
    case RedOp::kMin: return b < a ? b : a;
  }
  return a;
}

// One reference ⊕ on raw elements (bytes at pa, pb -> pd), element size from the type.
inline void RefOne(DataType t, RedOp op, void* pd, const void* pa, const void* pb) {
  auto run = [&](auto tag) {
    using E = decltype(tag);
    E a, b, r;
    std::memcpy(&a, pa, sizeof(E));
    std::memcpy(&b, pb, sizeof(E));
    if constexpr (std::is_floating_point_v<E>) r = RefIeee(op, a, b);
    else r = RefInt(op, a, b);
    std::memcpy(pd, &r, sizeof(E));
  };
  auto run16 = [&](bool half) {
    uint16_t a, b, r;
    std::memcpy(&a, pa, 2);
    std::memcpy(&b, pb, 2);
    const float fa = half ? RefHalfToFloat(a) : RefBf16ToFloat(a);
    const float fb = half ? RefHalfToFloat(b) : RefBf16ToFloat(b);
    if (op == RedOp::kMax || op == RedOp::kMin) {
      r = Bits(RefIeee(op, fa, fb)) == Bits(fa) ? a : b;  // the result is one operand
      if (std::isnan(fa)) r = a;
      else if (std::isnan(fb)) r = b;
    } else {
      const float f = RefIeee(op, fa, fb);
      r = half ? RefFloatToHalf(f) : RefFloatToBf16(f);
    }
    std::memcpy(pd, &r, 2);
  };
  switch (t) {
    case DataType::kInt8: return run(int8_t{});
    case DataType::kInt16: return run(int16_t{});
    case DataType::kInt32: return run(int32_t{});
    case DataType::kInt64: return run(int64_t{});
    case DataType::kUint8: return run(uint8_t{});
    case DataType::kUint16: return run(uint16_t{});
    case DataType::kUint32: return run(uint32_t{});
    case DataType::kUint64: return run(uint64_t{});
    case DataType::kFp32: return run(float{});
    case DataType::kFp64: return run(double{});
    case DataType::kFp16: return run16(true);
    case DataType::kBf16: return run16(false);
    default: break;
  }
}

inline bool IsFloatType(DataType t) {
  return t == DataType::kFp16 || t == DataType::kBf16 || t == DataType::kFp32 || t == DataType::kFp64;
}

// Is element i of x a NaN (for the float types)?
inline bool ElemIsNan(DataType t, const uint8_t* x) {
  switch (t) {
    case DataType::kFp16: { uint16_t h; std::memcpy(&h, x, 2); return (h & 0x7FFF) > 0x7C00; }
    case DataType::kBf16: { uint16_t h; std::memcpy(&h, x, 2); return (h & 0x7FFF) > 0x7F80; }
    case DataType::kFp32: { float f; std::memcpy(&f, x, 4); return std::isnan(f); }
    case DataType::kFp64: { double d; std::memcpy(&d, x, 8); return std::isnan(d); }
    default: return false;
  }
}

// Index of the first element that differs bitwise (NaN == any NaN), or -1.
inline long FirstDiff(DataType t, const void* x, const void* y, size_t n) {
  const size_t es = DataTypeSize(t);
  const auto* px = static_cast<const uint8_t*>(x);
  const auto* py = static_cast<const uint8_t*>(y);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(px + i * es, py + i * es, es) == 0) continue;
    if (ElemIsNan(t, px + i * es) && ElemIsNan(t, py + i * es)) continue;
    return static_cast<long>(i);
  }
  return -1;
}

inline std::string HexElem(DataType t, const void* base, size_t i) {
  const size_t es = DataTypeSize(t);
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + i * es, es);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%0*llx", static_cast<int>(es * 2), static_cast<unsigned long long>(v));
  return buf;
}

// Random element bytes: integers full range; floats a mix of raw bit patterns (NaN, Inf,
// subnormals, huge), special values, values near 1, and values close to the paired operand
// so that sums cancel and round at many positions.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  std::vector<uint8_t> Fill(DataType t, size_t n, const std::vector<uint8_t>* partner = nullptr) {
    const size_t es = DataTypeSize(t);
    std::vector<uint8_t> v(n * es);
    for (size_t i = 0; i < n; ++i) {
      uint64_t x = rng_();
      if (IsFloatType(t)) x = FloatPattern(t, partner ? Read(*partner, es, i) : 0, partner != nullptr);
      std::memcpy(v.data() + i * es, &x, es);
    }
    return v;
  }

 private:
  static uint64_t Read(const std::vector<uint8_t>& v, size_t es, size_t i) {
    uint64_t x = 0;
    std::memcpy(&x, v.data() + i * es, es);
    return x;
  }

  uint64_t FloatPattern(DataType t, uint64_t partner, bool has_partner) {
    const int kind = static_cast<int>(rng_() % 8);
    const uint64_t r = rng_();
    const bool h = t == DataType::kFp16;
    const bool b = t == DataType::kBf16;
    const bool s = t == DataType::kFp32;
    const uint64_t sign = h || b ? 0x8000u : s ? 0x80000000u : 0x8000000000000000ull;
    const uint64_t mant_mask = h ? 0x3FF : b ? 0x7F : s ? 0x7FFFFF : 0xFFFFFFFFFFFFFull;
    const uint64_t inf = h ? 0x7C00 : b ? 0x7F80 : s ? 0x7F800000u : 0x7FF0000000000000ull;
    switch (kind) {
      case 0: {  // specials
        const uint64_t one = h ? 0x3C00 : b ? 0x3F80 : s ? 0x3F800000u : 0x3FF0000000000000ull;
        const uint64_t specials[] = {0, inf, inf | 1, inf | (mant_mask + 1) / 2, 1, mant_mask, mant_mask + 1,
                                     inf - 1, one, inf | mant_mask};
        return specials[r % 10] | ((r >> 8) & 1 ? sign : 0);
      }
      case 1: case 2:  // raw patterns
        return r;
      case 3: {  // subnormals
        return (r & mant_mask) | ((r >> 60) & 1 ? sign : 0);
      }
      case 4: case 5:  // moderate magnitudes: exponent near the bias
        if (h) return (0x3000 + (r % 0x1800)) | ((r >> 20) & 1 ? sign : 0);
        if (b) return (0x3800 + (r % 0xC00)) | ((r >> 20) & 1 ? sign : 0);
        if (s) return (0x30000000u + (r % 0x18000000u)) | ((r >> 40) & 1 ? sign : 0);
        return (0x3C00000000000000ull + (r % 0x0800000000000000ull)) | ((r >> 62) & 1 ? sign : 0);
      default:  // close to the partner: same or opposite sign, low bits changed
        if (!has_partner) return r;
        return (partner ^ (r & 7) ^ ((r >> 4) & 1 ? sign : 0));
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace hostccl::kern::testing
