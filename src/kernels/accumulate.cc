// fp32 accumulation for fp16/bf16 sums and products (HOSTCCL_ACCUMULATE=fp32, semantics.md
// "Accumulation"): the same rank-order left fold as FoldN, carried in an fp32 accumulator and
// rounded to the element type once, at the end.
//   acc = partial[i] (when given) or fp32(srcs[0][i]);  acc = acc ⊕ fp32(srcs[j][i]) in fp32 for
//   the remaining sources in order;  dst[i] = acc (fp32 output) or round-to-nearest-even(acc).
// Works block by block (kBlock elements on the stack): widen exactly (scalar_math.h, or F16C for
// fp16 at the AVX2 / AVX-512 levels: the same bits), fold with the fp32 kernel of the active level
// (GetBinary: IEEE, default MXCSR, bit-identical across levels), narrow once. So every caller and
// every dispatch level gives the bits of the scalar reference ((x0 + x1) + x2 ... in fp32, rounded
// once).
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/reduce.h"
#include "kernels/scalar_math.h"

namespace hostccl::kern {
namespace {

constexpr size_t kBlock = 1024;  // elements: two fp32 blocks of 4 KiB on the stack

// fp16 through F16C at the AVX2 / AVX-512 levels (same bits; the scalar loop is branchy).
bool UseF16c() { return ActiveIsa() != Isa::kScalar; }

void Widen(DataType t, const void* src, float* out, size_t n) {
  const uint16_t* s = static_cast<const uint16_t*>(src);
  if (t == DataType::kFp16 && UseF16c()) {
    WidenHalfF16c(s, out, n);
  } else if (t == DataType::kFp16) {
    for (size_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(s[i]);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = Bf16BitsToFloat(s[i]);
  }
}

void Narrow(DataType t, const float* in, void* dst, size_t n) {
  uint16_t v[kBlock];
  if (t == DataType::kFp16 && UseF16c()) {
    NarrowHalfF16c(in, v, n);
  } else if (t == DataType::kFp16) {
    for (size_t i = 0; i < n; ++i) v[i] = FloatToHalfBits(in[i]);
  } else {
    for (size_t i = 0; i < n; ++i) v[i] = FloatToBf16Bits(in[i]);
  }
  std::memcpy(dst, v, n * sizeof(uint16_t));
}

}  // namespace

bool WidensToFp32(DataType t, RedOp op) {
  return (t == DataType::kFp16 || t == DataType::kBf16) && (op == RedOp::kSum || op == RedOp::kProd);
}

void FoldAcc32(DataType t, RedOp op, void* dst, bool dst_fp32, const float* partial, const void* const* srcs, int k,
               size_t n) {
  if (!WidensToFp32(t, op)) {  // nothing to widen: the ordinary fold (callers pass no fp32 here)
    FoldN(t, op, dst, srcs, k, n);
    return;
  }
  if (partial == nullptr && k == 1 && !dst_fp32) {  // one input: a copy, like FoldN
    if (dst != srcs[0]) std::memmove(dst, srcs[0], n * sizeof(uint16_t));
    return;
  }
  const BinaryFn add = GetBinary(DataType::kFp32, op);
  alignas(64) float acc[kBlock];
  alignas(64) float tmp[kBlock];
  for (size_t off = 0; off < n; off += kBlock) {
    const size_t len = n - off < kBlock ? n - off : kBlock;
    int j = 0;
    if (partial != nullptr) {
      std::memcpy(acc, partial + off, len * sizeof(float));
    } else {
      Widen(t, static_cast<const uint16_t*>(srcs[0]) + off, acc, len);
      j = 1;
    }
    for (; j < k; ++j) {
      Widen(t, static_cast<const uint16_t*>(srcs[j]) + off, tmp, len);
      add(acc, acc, tmp, len);
    }
    // Every input of this block was read above: dst may alias a source or the partial here.
    if (dst_fp32)
      std::memcpy(static_cast<float*>(dst) + off, acc, len * sizeof(float));
    else
      Narrow(t, acc, static_cast<uint16_t*>(dst) + off, len);
  }
}

void WidenToFp32(DataType t, const void* src, float* out, size_t n) {
  for (size_t off = 0; off < n; off += kBlock) {
    const size_t len = n - off < kBlock ? n - off : kBlock;
    Widen(t, static_cast<const uint16_t*>(src) + off, out + off, len);
  }
}

}  // namespace hostccl::kern
