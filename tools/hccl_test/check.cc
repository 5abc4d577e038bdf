// Inputs, reference fold and comparison for the reduction tests (see check.h).
#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hostccl::tools {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// kRaw: a type that only moves (int128, hif8, fp8*): inputs are byte patterns, compared bytewise.
enum class Kind { kInt, kFloat, kHalf, kBf16, kRaw };

template <int N>
struct Raw {
  uint8_t b[N];
};

// Storage type T, arithmetic kind K.
template <typename T, Kind K>
struct Type {
  using Storage = T;
  static constexpr Kind kKind = K;
};

// Input value before conversion to the storage type: integer or real, depending on the kind.
double RealInput(int op, int rank, uint64_t j) {
  switch (op) {
    case 0: {  // sum: distinct small integers per rank, scaled by 1, 1/8, 1/64 or 1/512
      double m = static_cast<double>(
          1 + static_cast<int64_t>((j * 11 + static_cast<uint64_t>(rank) * 37) % 61) - 30);
      int e = static_cast<int>((static_cast<uint64_t>(rank) + j) % 4) * 3;
      return std::ldexp(m, -e);
    }
    case 1: {  // prod: short binary fractions, never zero
      static const double kVals[8] = {1.0, -1.0, 2.0, 0.5, 1.5, -0.75, 1.25, -2.0};
      return kVals[(j * 3 + static_cast<uint64_t>(rank) * 5) % 8];
    }
    default: {  // max / min: per-index permutation, with signed-zero ties every 16th element
      if (j % 16 == 5) return rank % 2 == 0 ? -0.0 : 0.0;
      return static_cast<double>(
                 static_cast<int64_t>((j * 7 + static_cast<uint64_t>(rank) * 13) % 97) - 48) *
             0.25;
    }
  }
}

int64_t IntInput(int op, int rank, uint64_t j, bool is_signed) {
  uint64_t r = static_cast<uint64_t>(rank);
  switch (op) {
    case 0: {
      int64_t v = 1 + static_cast<int64_t>((j * 11 + r * 37) % 61);
      return is_signed ? v - 30 : v;
    }
    case 1: {
      static const int64_t kSigned[8] = {1, -1, 3, -3, 5, -5, 7, -7};
      static const int64_t kUnsigned[8] = {1, 3, 5, 7, 9, 11, 13, 15};
      uint64_t k = (j * 3 + r * 5) % 8;
      return is_signed ? kSigned[k] : kUnsigned[k];
    }
    default: {
      int64_t v = static_cast<int64_t>((j * 7 + r * 13) % 97);
      return is_signed ? v - 48 : v;
    }
  }
}

template <typename Ty>
typename Ty::Storage MakeInput(int op, int rank, uint64_t j) {
  using T = typename Ty::Storage;
  if constexpr (Ty::kKind == Kind::kInt) {
    return static_cast<T>(IntInput(op, rank, j, std::is_signed_v<T>));
  } else if constexpr (Ty::kKind == Kind::kFloat) {
    return static_cast<T>(RealInput(op, rank, j));
  } else if constexpr (Ty::kKind == Kind::kHalf) {
    return FloatToHalf(static_cast<float>(RealInput(op, rank, j)));
  } else if constexpr (Ty::kKind == Kind::kBf16) {
    return FloatToBf16(static_cast<float>(RealInput(op, rank, j)));
  } else {
    // Every byte depends on the rank, the element index and the byte position.
    T v;
    for (size_t k = 0; k < sizeof(T); ++k)
      v.b[k] = static_cast<uint8_t>(1 + j * 7 + static_cast<uint64_t>(rank) * 31 + k * 13);
    return v;
  }
}

template <typename F>
F FloatOp(int op, F a, F b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a * b;
    case 2:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
      return b > a ? b : a;  // equal (e.g. -0, +0): the left operand
    default:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
      return b < a ? b : a;
  }
}

// HOSTCCL_ACCUMULATE=fp32 (docs/semantics.md "Accumulation"): fp16/bf16 sum and prod are folded
// in fp32 and rounded once, so the expected results follow the same variable.
bool AccumulateFp32() {
  const char* v = std::getenv("HOSTCCL_ACCUMULATE");
  return v != nullptr && std::strcmp(v, "fp32") == 0;
}

// One step of the left fold: acc (+) x.
template <typename Ty>
typename Ty::Storage Combine(int op, typename Ty::Storage a, typename Ty::Storage b) {
  using T = typename Ty::Storage;
  if constexpr (Ty::kKind == Kind::kInt) {
    using U = std::make_unsigned_t<T>;
    uint64_t ua = static_cast<U>(a), ub = static_cast<U>(b);
    switch (op) {
      case 0:
        return static_cast<T>(static_cast<U>(ua + ub));  // wraps modulo 2^bits
      case 1:
        return static_cast<T>(static_cast<U>(ua * ub));
      case 2:
        return b > a ? b : a;
      default:
        return b < a ? b : a;
    }
  } else if constexpr (Ty::kKind == Kind::kFloat) {
    return FloatOp<T>(op, a, b);
  } else if constexpr (Ty::kKind == Kind::kHalf) {
    return FloatToHalf(FloatOp<float>(op, HalfToFloat(a), HalfToFloat(b)));
  } else if constexpr (Ty::kKind == Kind::kBf16) {
    return FloatToBf16(FloatOp<float>(op, Bf16ToFloat(a), Bf16ToFloat(b)));
  } else {
    (void)op;
    (void)b;
    return a;  // never folded (ExpectedPeriod is empty for these types)
  }
}

template <typename Ty>
bool ElementEqual(const void* pa, const void* pb) {
  using T = typename Ty::Storage;
  if (std::memcmp(pa, pb, sizeof(T)) == 0) return true;
  T a, b;
  std::memcpy(&a, pa, sizeof(T));
  std::memcpy(&b, pb, sizeof(T));
  if constexpr (Ty::kKind == Kind::kFloat) {
    return std::isnan(a) && std::isnan(b);
  } else if constexpr (Ty::kKind == Kind::kHalf) {
    return std::isnan(HalfToFloat(a)) && std::isnan(HalfToFloat(b));
  } else if constexpr (Ty::kKind == Kind::kBf16) {
    return std::isnan(Bf16ToFloat(a)) && std::isnan(Bf16ToFloat(b));
  }
  return false;
}

template <typename Ty>
std::string Format(const void* p) {
  using T = typename Ty::Storage;
  T v;
  std::memcpy(&v, p, sizeof(T));
  char buf[64];
  if constexpr (Ty::kKind == Kind::kInt) {
    if constexpr (std::is_signed_v<T>) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
    }
  } else if constexpr (Ty::kKind == Kind::kFloat) {
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
  } else if constexpr (Ty::kKind == Kind::kHalf) {
    std::snprintf(buf, sizeof buf, "%.9g (0x%04x)", static_cast<double>(HalfToFloat(v)), v);
  } else if constexpr (Ty::kKind == Kind::kBf16) {
    std::snprintf(buf, sizeof buf, "%.9g (0x%04x)", static_cast<double>(Bf16ToFloat(v)), v);
  } else {
    std::string hex = "0x";
    for (size_t k = sizeof(T); k-- > 0;) {  // little-endian: most significant byte first
      std::snprintf(buf, sizeof buf, "%02x", v.b[k]);
      hex += buf;
    }
    return hex;
  }
  return buf;
}

// Calls fn(Type<...>{}) for the HcclDataType value; returns false for a value hccl_test does not
// know.
template <typename Fn>
bool Dispatch(int dtype, Fn&& fn) {
  switch (dtype) {
    case 0:
      fn(Type<int8_t, Kind::kInt>{});
      return true;
    case 1:
      fn(Type<int16_t, Kind::kInt>{});
      return true;
    case 2:
      fn(Type<int32_t, Kind::kInt>{});
      return true;
    case 3:
      fn(Type<uint16_t, Kind::kHalf>{});
      return true;
    case 4:
      fn(Type<float, Kind::kFloat>{});
      return true;
    case 5:
      fn(Type<int64_t, Kind::kInt>{});
      return true;
    case 6:
      fn(Type<uint64_t, Kind::kInt>{});
      return true;
    case 7:
      fn(Type<uint8_t, Kind::kInt>{});
      return true;
    case 8:
      fn(Type<uint16_t, Kind::kInt>{});
      return true;
    case 9:
      fn(Type<uint32_t, Kind::kInt>{});
      return true;
    case 10:
      fn(Type<double, Kind::kFloat>{});
      return true;
    case 11:
      fn(Type<uint16_t, Kind::kBf16>{});
      return true;
    case 12:
      fn(Type<Raw<16>, Kind::kRaw>{});
      return true;
    case 14:
    case 15:
    case 16:
    case 17:
      fn(Type<Raw<1>, Kind::kRaw>{});
      return true;
    default:
      return false;
  }
}

// Repeats the first `period_bytes` of `out` until `total_bytes` are filled (doubling copies).
void Tile(uint8_t* out, uint64_t period_bytes, uint64_t total_bytes) {
  uint64_t filled = period_bytes;
  while (filled < total_bytes) {
    uint64_t n = std::min(filled, total_bytes - filled);
    std::memcpy(out + filled, out, n);
    filled += n;
  }
}

}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0) {
    float mag = std::ldexp(static_cast<float>(man), -24);  // zero or subnormal, exact
    return sign ? -mag : mag;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u));
  return BitsFloat(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t FloatToHalf(float f) {
  uint32_t bits = FloatBits(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00);  // NaN
  float a = BitsFloat(abs_bits);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to infinity
  if (a < 6.103515625e-05f) {     // below the smallest normal 2^-14: multiples of 2^-24
    float q = a * 16777216.0f;    // exact (power-of-two scaling)
    float m = std::nearbyint(q);  // default rounding mode: nearest even
    return static_cast<uint16_t>(sign |
                                 static_cast<uint16_t>(m));  // 1024 becomes the smallest normal
  }
  int e = static_cast<int>((abs_bits >> 23) & 0xff) - 127;  // -14 .. 15
  uint32_t m = (abs_bits & 0x7fffffu) | 0x800000u;
  uint32_t keep = m >> 13, rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (keep & 1u))) ++keep;
  uint32_t h =
      (static_cast<uint32_t>(e + 15) << 10) + (keep - 0x400u);  // a carry bumps the exponent
  if (h >= 0x7c00u) h = 0x7c00u;
  return static_cast<uint16_t>(sign | h);
}

float Bf16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBf16(float f) {
  uint32_t bits = FloatBits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  uint32_t rounding =
      0x7fffu + ((bits >> 16) & 1u);  // nearest even; overflow carries into infinity
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

void FillInput(int dtype, int op, int rank, uint64_t count, void* out) {
  Dispatch(dtype, [&](auto ty) {
    using Ty = decltype(ty);
    using T = typename Ty::Storage;
    T* p = static_cast<T*>(out);
    uint64_t n = std::min<uint64_t>(count, kPeriod);
    for (uint64_t j = 0; j < n; ++j) p[j] = MakeInput<Ty>(op, rank, j);
    if (count > n) Tile(static_cast<uint8_t*>(out), n * sizeof(T), count * sizeof(T));
  });
}

std::vector<uint8_t> ExpectedPeriod(int dtype, int op, int rank_size, uint64_t count) {
  std::vector<uint8_t> bytes;
  Dispatch(dtype, [&](auto ty) {
    using Ty = decltype(ty);
    using T = typename Ty::Storage;
    if constexpr (Ty::kKind != Kind::kRaw) {  // raw types move, they are never reduced
      uint64_t n = std::min<uint64_t>(count, kPeriod);
      std::vector<T> acc(n);
      for (uint64_t j = 0; j < n; ++j) {
        T a = MakeInput<Ty>(op, 0, j);
        if constexpr (Ty::kKind == Kind::kHalf || Ty::kKind == Kind::kBf16) {
          if (AccumulateFp32() && op <= 1 && rank_size > 1) {  // fp32 fold, one rounding
            constexpr bool kHalf = Ty::kKind == Kind::kHalf;
            float f = kHalf ? HalfToFloat(a) : Bf16ToFloat(a);
            for (int r = 1; r < rank_size; ++r) {
              const T x = MakeInput<Ty>(op, r, j);
              f = FloatOp<float>(op, f, kHalf ? HalfToFloat(x) : Bf16ToFloat(x));
            }
            acc[j] = kHalf ? FloatToHalf(f) : FloatToBf16(f);
            continue;
          }
        }
        for (int r = 1; r < rank_size; ++r) a = Combine<Ty>(op, a, MakeInput<Ty>(op, r, j));
        acc[j] = a;
      }
      bytes.resize(n * sizeof(T));
      if (n) std::memcpy(bytes.data(), acc.data(), bytes.size());
    }
  });
  return bytes;
}

namespace {

// The period of `full` (kPeriod elements of `elem` bytes) seen from element `phase` on, trimmed
// to min(count, kPeriod) elements.
std::vector<uint8_t> Rotate(const std::vector<uint8_t>& full, size_t elem, uint64_t count,
                            uint64_t phase) {
  if (full.empty() || elem == 0) return {};
  const uint64_t pn = full.size() / elem;
  const uint64_t n = std::min<uint64_t>(count, pn);
  std::vector<uint8_t> out(n * elem);
  for (uint64_t j = 0; j < n; ++j)
    std::memcpy(out.data() + j * elem, full.data() + ((phase + j) % pn) * elem, elem);
  return out;
}

}  // namespace

bool IsCheckableType(int dtype) {
  return Dispatch(dtype, [](auto) {});
}

bool IsFoldableType(int dtype) {
  bool foldable = false;
  Dispatch(dtype, [&](auto ty) { foldable = decltype(ty)::kKind != Kind::kRaw; });
  return foldable;
}

int TypeBytes(int dtype) {
  int bytes = 0;
  Dispatch(dtype, [&](auto ty) { bytes = sizeof(typename decltype(ty)::Storage); });
  return bytes;
}

std::vector<uint8_t> InputPeriod(int dtype, int op, int rank, uint64_t count, uint64_t phase) {
  const int elem = TypeBytes(dtype);
  if (elem == 0 || count == 0) return {};
  std::vector<uint8_t> full(kPeriod * static_cast<uint64_t>(elem));
  FillInput(dtype, op, rank, kPeriod, full.data());
  return Rotate(full, static_cast<size_t>(elem), count, phase);
}

std::vector<uint8_t> FoldPeriod(int dtype, int op, int rank_size, uint64_t count,
                                uint64_t phase) {
  if (count == 0) return {};
  return Rotate(ExpectedPeriod(dtype, op, rank_size, kPeriod), static_cast<size_t>(TypeBytes(dtype)),
                count, phase);
}

void FillAntiExpected(const std::vector<uint8_t>& period, int dtype, uint64_t count, void* out) {
  Dispatch(dtype, [&](auto ty) {
    using T = typename decltype(ty)::Storage;
    uint8_t* p = static_cast<uint8_t*>(out);
    uint64_t total = count * sizeof(T);
    if (total == 0 || period.empty()) return;
    uint64_t n = std::min<uint64_t>(total, period.size());
    for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(~period[i]);
    Tile(p, n, total);
  });
}

uint64_t CompareWithExpected(int dtype, const void* result, uint64_t count,
                             const std::vector<uint8_t>& period, int max_report,
                             std::string* report, uint64_t first_index) {
  if (count == 0) return 0;
  if (period.empty()) return count;  // nothing to compare with: every element counts as wrong
  uint64_t wrong = 0;
  bool known = Dispatch(dtype, [&](auto ty) {
    using Ty = decltype(ty);
    using T = typename Ty::Storage;
    const uint8_t* res = static_cast<const uint8_t*>(result);
    const uint64_t pn = period.size() / sizeof(T);
    int reported = 0;
    for (uint64_t base = 0; base < count; base += pn) {
      uint64_t n = std::min(pn, count - base);
      const uint8_t* chunk = res + base * sizeof(T);
      if (std::memcmp(chunk, period.data(), n * sizeof(T)) == 0) continue;  // fast path
      for (uint64_t j = 0; j < n; ++j) {
        if (ElementEqual<Ty>(chunk + j * sizeof(T), period.data() + j * sizeof(T))) continue;
        ++wrong;
        if (report && reported < max_report) {
          ++reported;
          *report += "index " + std::to_string(first_index + base + j) + ": expected " +
                     Format<Ty>(period.data() + j * sizeof(T)) + ", got " +
                     Format<Ty>(chunk + j * sizeof(T)) + "\n";
        }
      }
    }
  });
  return known ? wrong : count;
}

uint64_t CountGuardViolations(const void* buf, uint64_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(buf);
  uint64_t bad = 0;
  for (uint64_t i = 0; i < bytes; ++i) bad += p[i] != kGuardByte;
  return bad;
}

std::string FormatElement(int dtype, const void* elem) {
  std::string s = "?";
  Dispatch(dtype, [&](auto ty) { s = Format<decltype(ty)>(elem); });
  return s;
}

}  // namespace hostccl::tools
