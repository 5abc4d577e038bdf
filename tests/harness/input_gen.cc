#include "harness/input_gen.h"

#include <cstring>

#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

// The value of one element as a double request, turned into bits of the target type.
void StoreFloat(const DtypeDesc& d, double v, char* p) {
  switch (d.kind) {
    case ElemKind::kFp16: { uint16_t h = FloatToHalf(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
    case ElemKind::kBf16: { uint16_t b = FloatToBf16(static_cast<float>(v)); std::memcpy(p, &b, 2); break; }
    case ElemKind::kFp32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case ElemKind::kFp64: std::memcpy(p, &v, 8); break;
    default: break;
  }
}

// Raw bit patterns of the float types' special encodings.
struct FloatLayout {
  int exp_bits, mant_bits;
};
FloatLayout Layout(const DtypeDesc& d) {
  switch (d.kind) {
    case ElemKind::kFp16: return {5, 10};
    case ElemKind::kBf16: return {8, 7};
    case ElemKind::kFp32: return {8, 23};
    default: return {11, 52};
  }
}
void StoreBits(const DtypeDesc& d, uint64_t bits, char* p) { std::memcpy(p, &bits, d.size); }

uint64_t SignBit(const DtypeDesc& d) { return uint64_t{1} << (8 * d.size - 1); }
uint64_t ExpMask(const DtypeDesc& d) {
  FloatLayout l = Layout(d);
  return ((uint64_t{1} << l.exp_bits) - 1) << l.mant_bits;
}
uint64_t MantMask(const DtypeDesc& d) { return (uint64_t{1} << Layout(d).mant_bits) - 1; }

// A random subnormal (non-zero mantissa, zero exponent) with random sign.
uint64_t Subnormal(const DtypeDesc& d, uint64_t h) {
  uint64_t m = (h & MantMask(d));
  if (m == 0) m = 1;
  return ((h >> 63) ? SignBit(d) : 0) | m;
}
// Quiet or signalling NaN with random sign and payload.
uint64_t NaNBits(const DtypeDesc& d, uint64_t h) {
  uint64_t m = (h >> 3) & MantMask(d);
  if (m == 0) m = 1;
  return ((h & 1) ? SignBit(d) : 0) | ExpMask(d) | m;
}
uint64_t InfBits(const DtypeDesc& d, uint64_t h) { return ((h & 1) ? SignBit(d) : 0) | ExpMask(d); }

double Moderate(uint64_t h) {
  // Up to 4 decimals in [-100, 100]: exercises rounding in every float type.
  return (static_cast<double>(h % 2000001) - 1000000.0) / 10000.0;
}
double NearOne(uint64_t h) {
  // Magnitude in [0.5, 2), random sign: products over 8 ranks stay in range, with rounding.
  double m = 1.0 + static_cast<double>(h % 4096) / 4096.0;
  if (h & (1u << 20)) m *= 0.5;
  return (h & (1u << 21)) ? -m : m;
}
double Large(const DtypeDesc& d, uint64_t h) {
  double top = d.kind == ElemKind::kFp16 ? 30000.0 : d.kind == ElemKind::kFp64 ? 5e307 : 1e38;
  double v = top * (0.5 + static_cast<double>(h % 1000) / 1000.0);
  return (h & (1u << 30)) ? -v : v;
}

void FloatElem(const DtypeDesc& d, HcclReduceOp op, uint64_t col, uint64_t h, char* p) {
  unsigned cls = static_cast<unsigned>(col % 16);
  if (op == HCCL_REDUCE_MAX || op == HCCL_REDUCE_MIN) {
    if (cls < 9) return StoreBits(d, h, p);  // any pattern (NaN, Inf, subnormal all appear)
    switch (cls) {
      case 9: return StoreBits(d, (h & 1) ? SignBit(d) : 0, p);          // ±0 ties
      case 10: case 11: return StoreBits(d, Subnormal(d, h), p);
      case 12: return StoreBits(d, (h % 4 == 0) ? NaNBits(d, h >> 8) : Subnormal(d, h), p);
      case 13: return StoreBits(d, (h % 3 == 0) ? InfBits(d, h >> 8) : (h & 0xff) << 2, p);
      case 14: return StoreFloat(d, Moderate(col >> 8), p);              // equal on every rank
      default: return StoreFloat(d, static_cast<double>(h % 5) - 2.0, p); // many ties, ±0
    }
  }
  if (op == HCCL_REDUCE_SUM) {
    if (cls < 11) return StoreFloat(d, Moderate(h), p);
    switch (cls) {
      case 11: case 12: return StoreBits(d, Subnormal(d, h), p);  // exact sums of subnormals
      case 13: return (h % 5 == 0) ? StoreBits(d, (h & 8) ? NaNBits(d, h >> 8) : InfBits(d, h >> 8), p)
                                   : StoreFloat(d, Moderate(h >> 8), p);
      case 14: return StoreBits(d, (h & 1) ? SignBit(d) : 0, p);  // signed-zero sums
      default: return StoreFloat(d, Large(d, h), p);               // overflow to ±Inf
    }
  }
  // prod
  if (cls < 11) return StoreFloat(d, NearOne(h), p);
  switch (cls) {
    case 11: case 12: return (h % 3 == 0) ? StoreBits(d, Subnormal(d, h >> 8), p) : StoreFloat(d, NearOne(h >> 8), p);
    case 13: return (h % 4 == 0) ? StoreBits(d, (h & 16) ? NaNBits(d, h >> 8) : InfBits(d, h >> 8), p)
                                 : (h % 4 == 1) ? StoreBits(d, (h & 32) ? SignBit(d) : 0, p)
                                                : StoreFloat(d, NearOne(h >> 8), p);
    case 14: return StoreBits(d, (h & 1) ? SignBit(d) : 0, p);
    default: return StoreFloat(d, (h % 2) ? Large(d, h >> 4) : NearOne(h >> 8), p);
  }
}

}  // namespace

uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void GenerateInput(const DtypeDesc& d, HcclReduceOp op, uint64_t seed, int rank, size_t count, void* out) {
  const uint64_t case_key = Mix64(seed ^ (static_cast<uint64_t>(d.type) << 40) ^ (static_cast<uint64_t>(op) << 48));
  const uint64_t rank_key = Mix64(case_key + 0x1000003ull * static_cast<uint64_t>(rank + 1));
  char* p = static_cast<char*>(out);
  for (size_t i = 0; i < count; ++i, p += d.size) {
    uint64_t h = Mix64(rank_key ^ (i * 0xd1b54a32d192ed03ull));
    if (!IsFloat(d)) {
      std::memcpy(p, &h, d.size);
      continue;
    }
    uint64_t col = Mix64(case_key ^ (i * 0x9e3779b97f4a7c15ull) ^ 0x5bd1e995ull);
    FloatElem(d, op, col, h, p);
  }
}

void FillGuard(void* out, size_t bytes, uint64_t salt) {
  auto* p = static_cast<unsigned char*>(out);
  uint64_t h = Mix64(salt);
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0) h = Mix64(h + i);
    p[i] = static_cast<unsigned char>(h >> (8 * (i % 8)));
  }
}

}  // namespace hostccl::test
