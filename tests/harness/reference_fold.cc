#include "harness/reference_fold.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace hostccl::test {
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

template <typename T>
T Load(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void Store(void* p, size_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}

// Integers: S is the signed/unsigned value type, U its unsigned twin (wrapping arithmetic).
// 8/16-bit products go through uint32 so integer promotion cannot overflow a signed int.
template <typename S>
S IntOp(HcclReduceOp op, S a, S b) {
  using U = std::make_unsigned_t<S>;
  using Wide = std::conditional_t<(sizeof(U) < 4), uint32_t, U>;
  switch (op) {
    case HCCL_REDUCE_SUM: return static_cast<S>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) + static_cast<Wide>(static_cast<U>(b))));
    case HCCL_REDUCE_PROD: return static_cast<S>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) * static_cast<Wide>(static_cast<U>(b))));
    case HCCL_REDUCE_MAX: return b > a ? b : a;
    case HCCL_REDUCE_MIN: return b < a ? b : a;
    default: return a;
  }
}

// Floats in their own type (fp32 / fp64). Max/min: NaN wins, ties keep the left operand.
template <typename F>
F FloatOp(HcclReduceOp op, F a, F b) {
  switch (op) {
    case HCCL_REDUCE_SUM: return a + b;
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return b > a ? b : a;
    case HCCL_REDUCE_MIN:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return b < a ? b : a;
    default: return a;
  }
}

// 16-bit floats: sum/prod in fp32 then one rounding; max/min pick an operand's original bits.
uint16_t Half16Op(HcclReduceOp op, uint16_t a, uint16_t b, float (*to_f)(uint16_t),
                  uint16_t (*from_f)(float)) {
  float fa = to_f(a), fb = to_f(b);
  switch (op) {
    case HCCL_REDUCE_SUM: return from_f(fa + fb);
    case HCCL_REDUCE_PROD: return from_f(fa * fb);
    case HCCL_REDUCE_MAX:
      if (std::isnan(fa)) return a;
      if (std::isnan(fb)) return b;
      return fb > fa ? b : a;
    case HCCL_REDUCE_MIN:
      if (std::isnan(fa)) return a;
      if (std::isnan(fb)) return b;
      return fb < fa ? b : a;
    default: return a;
  }
}

template <typename T, typename Fn>
void FoldLoop(void* acc, const void* x, size_t count, Fn fn) {
  for (size_t i = 0; i < count; ++i) Store<T>(acc, i, fn(Load<T>(acc, i), Load<T>(x, i)));
}

}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (mant << 13));  // Inf / NaN (payload kept)
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in fp32.
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return BitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {
    if (abs == 0x7f800000u) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x1ffu);  // quiet NaN
  }
  if (abs < 0x00800000u) return sign;  // fp32 zero/subnormal (< 2^-126) rounds to a signed zero
  int e = static_cast<int>(abs >> 23) - 127;
  uint32_t m = (abs & 0x7fffffu) | 0x800000u;  // 24 significant bits, value m * 2^(e-23)
  if (e >= -14) {
    // Normal half: keep 11 bits.
    uint32_t r = m >> 13, rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
    if (r == 0x800u) {
      r = 0x400u;
      ++e;
    }
    if (e > 15) return sign | 0x7c00u;
    return sign | static_cast<uint16_t>(((e + 15) << 10) | (r & 0x3ffu));
  }
  // Subnormal half: units of 2^-24, so the value is m * 2^(e+1) units.
  int shift = -(e + 1);  // >= 14
  if (shift >= 26) return sign;  // below half of the smallest subnormal
  uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return sign | static_cast<uint16_t>(r);  // r == 0x400 is exactly the smallest normal
}

float Bf16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBf16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

void FoldInto(const DtypeDesc& d, HcclReduceOp op, void* acc, const void* x, size_t count) {
  switch (d.type) {
    case HCCL_DATA_TYPE_INT8: FoldLoop<int8_t>(acc, x, count, [op](int8_t a, int8_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_INT16: FoldLoop<int16_t>(acc, x, count, [op](int16_t a, int16_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_INT32: FoldLoop<int32_t>(acc, x, count, [op](int32_t a, int32_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_INT64: FoldLoop<int64_t>(acc, x, count, [op](int64_t a, int64_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_UINT8: FoldLoop<uint8_t>(acc, x, count, [op](uint8_t a, uint8_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_UINT16: FoldLoop<uint16_t>(acc, x, count, [op](uint16_t a, uint16_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_UINT32: FoldLoop<uint32_t>(acc, x, count, [op](uint32_t a, uint32_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_UINT64: FoldLoop<uint64_t>(acc, x, count, [op](uint64_t a, uint64_t b) { return IntOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_FP32: FoldLoop<float>(acc, x, count, [op](float a, float b) { return FloatOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_FP64: FoldLoop<double>(acc, x, count, [op](double a, double b) { return FloatOp(op, a, b); }); break;
    case HCCL_DATA_TYPE_FP16:
      FoldLoop<uint16_t>(acc, x, count, [op](uint16_t a, uint16_t b) { return Half16Op(op, a, b, HalfToFloat, FloatToHalf); });
      break;
    case HCCL_DATA_TYPE_BFP16:
      FoldLoop<uint16_t>(acc, x, count, [op](uint16_t a, uint16_t b) { return Half16Op(op, a, b, Bf16ToFloat, FloatToBf16); });
      break;
    default: std::abort();
  }
}

bool IsNaNElem(const DtypeDesc& d, const void* p) {
  switch (d.kind) {
    case ElemKind::kFp16: return std::isnan(HalfToFloat(Load<uint16_t>(p, 0)));
    case ElemKind::kBf16: return std::isnan(Bf16ToFloat(Load<uint16_t>(p, 0)));
    case ElemKind::kFp32: return std::isnan(Load<float>(p, 0));
    case ElemKind::kFp64: return std::isnan(Load<double>(p, 0));
    default: return false;
  }
}

std::string FormatElem(const DtypeDesc& d, const void* p) {
  char buf[96];
  uint64_t bits = 0;
  std::memcpy(&bits, p, d.size);  // little-endian host
  switch (d.kind) {
    case ElemKind::kSigned: {
      int64_t v = static_cast<int64_t>(bits << (64 - 8 * d.size)) >> (64 - 8 * d.size);
      std::snprintf(buf, sizeof(buf), "0x%0*" PRIx64 " (%" PRId64 ")", static_cast<int>(2 * d.size), bits, v);
      break;
    }
    case ElemKind::kUnsigned:
      std::snprintf(buf, sizeof(buf), "0x%0*" PRIx64 " (%" PRIu64 ")", static_cast<int>(2 * d.size), bits, bits);
      break;
    case ElemKind::kFp16:
      std::snprintf(buf, sizeof(buf), "0x%04" PRIx64 " (%.9g)", bits, HalfToFloat(static_cast<uint16_t>(bits)));
      break;
    case ElemKind::kBf16:
      std::snprintf(buf, sizeof(buf), "0x%04" PRIx64 " (%.9g)", bits, Bf16ToFloat(static_cast<uint16_t>(bits)));
      break;
    case ElemKind::kFp32:
      std::snprintf(buf, sizeof(buf), "0x%08" PRIx64 " (%.9g)", bits, Load<float>(p, 0));
      break;
    case ElemKind::kFp64:
      std::snprintf(buf, sizeof(buf), "0x%016" PRIx64 " (%.17g)", bits, Load<double>(p, 0));
      break;
  }
  return buf;
}

std::string CompareElems(const DtypeDesc& d, const void* expected, const void* got, size_t count,
                         const std::string& what) {
  const char* e = static_cast<const char*>(expected);
  const char* g = static_cast<const char*>(got);
  size_t first = count, ndiff = 0;
  for (size_t i = 0; i < count; ++i) {
    const char* ei = e + i * d.size;
    const char* gi = g + i * d.size;
    if (std::memcmp(ei, gi, d.size) == 0) continue;
    if (IsNaNElem(d, ei) && IsNaNElem(d, gi)) continue;
    if (first == count) first = i;
    ++ndiff;
  }
  if (ndiff == 0) return "";
  return what + ": " + std::to_string(ndiff) + " of " + std::to_string(count) +
         " elements differ; first at index " + std::to_string(first) + ": expected " +
         FormatElem(d, e + first * d.size) + ", got " + FormatElem(d, g + first * d.size);
}

std::string CompareBytes(const void* expected, const void* got, size_t bytes, const std::string& what) {
  const auto* e = static_cast<const unsigned char*>(expected);
  const auto* g = static_cast<const unsigned char*>(got);
  for (size_t i = 0; i < bytes; ++i) {
    if (e[i] == g[i]) continue;
    char buf[96];
    std::snprintf(buf, sizeof(buf), ": byte %zu of %zu changed: expected 0x%02x, got 0x%02x", i, bytes, e[i], g[i]);
    return what + buf;
  }
  return "";
}

bool AccumulatesFp32(const DtypeDesc& d, HcclReduceOp op) {
  return (d.kind == ElemKind::kFp16 || d.kind == ElemKind::kBf16) && (op == HCCL_REDUCE_SUM || op == HCCL_REDUCE_PROD);
}

bool KnobFp32() {
  const char* v = std::getenv("HOSTCCL_ACCUMULATE");
  return v != nullptr && std::strcmp(v, "fp32") == 0;
}

void WidenTo(const DtypeDesc& d, const void* x, float* acc, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const uint16_t h = Load<uint16_t>(x, i);
    acc[i] = d.kind == ElemKind::kFp16 ? HalfToFloat(h) : Bf16ToFloat(h);
  }
}

void FoldIntoFp32(const DtypeDesc& d, HcclReduceOp op, float* acc, const void* x, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const uint16_t h = Load<uint16_t>(x, i);
    const float v = d.kind == ElemKind::kFp16 ? HalfToFloat(h) : Bf16ToFloat(h);
    acc[i] = op == HCCL_REDUCE_PROD ? acc[i] * v : acc[i] + v;
  }
}

void RoundFrom(const DtypeDesc& d, const float* acc, void* out, size_t count) {
  for (size_t i = 0; i < count; ++i)
    Store<uint16_t>(out, i, d.kind == ElemKind::kFp16 ? FloatToHalf(acc[i]) : FloatToBf16(acc[i]));
}

}  // namespace hostccl::test
