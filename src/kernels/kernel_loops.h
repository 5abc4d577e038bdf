// Internal: the loops shared by every dispatch level, written once over a "vector kind" K:
//   using Elem;                      storage element type
//   using Acc;                       register holding kStep elements
//   static constexpr size_t kStep;   elements per Acc
//   static Acc Load(const Elem*);  static void Store(Elem*, Acc);  static Acc Combine(Acc a, Acc b);
// Combine(a, b) is a ⊕ b lane-wise; tails shorter than kStep go through a zero-padded stack
// copy so they take the same code path (bit-identity does not depend on n's remainder), or, when
// K has them, through
//   static Acc LoadPartial(const Elem*, size_t n);  static void StorePartial(Elem*, Acc, size_t n);
// (the first n lanes; the others read as zero and are not written): the same lanes, without the
// copies, whose narrow stores then wide loads cannot be forwarded (~30 cycles of a 2-element fold).
// Included by each per-ISA .cc; anonymous namespace so each ISA keeps its own instantiations.
#pragma once

#include <xmmintrin.h>

#include <concepts>
#include <cstddef>
#include <cstring>

#include "kernels/kernel_table.h"

namespace hostccl::kern {
namespace {

// The caller may run with FTZ/DAZ, another rounding mode or unmasked FP exceptions (e.g. code
// built with -ffast-math); IEEE results need the default MXCSR for the duration of a kernel.
class MxcsrGuard {
 public:
  MxcsrGuard() : saved_(_mm_getcsr()) {
    const unsigned want = (saved_ & 0x3Fu) | 0x1F80u;  // keep sticky flags; default control
    changed_ = saved_ != want;
    if (changed_) _mm_setcsr(want);
  }
  ~MxcsrGuard() {
    if (changed_) _mm_setcsr((saved_ & ~0x3Fu) | (_mm_getcsr() & 0x3Fu));
  }
  MxcsrGuard(const MxcsrGuard&) = delete;
  MxcsrGuard& operator=(const MxcsrGuard&) = delete;

 private:
  unsigned saved_;
  bool changed_;
};

constexpr int kMaxStreams = 8;          // sources folded straight from memory per pass
constexpr size_t kBlockBytes = 8192;    // stack accumulator block when k > kMaxStreams

template <class K>
concept HasPartial = requires(const typename K::Elem* p, typename K::Elem* q, typename K::Acc v, size_t n) {
  { K::LoadPartial(p, n) } -> std::same_as<typename K::Acc>;
  K::StorePartial(q, v, n);
};

// Runs K over a tail of n < kStep elements via partial loads or padded copies; srcs[0..k).
template <class K>
void FoldTail(typename K::Elem* dst, const typename K::Elem* const* srcs, int k, size_t n) {
  if constexpr (HasPartial<K>) {
    typename K::Acc acc = K::LoadPartial(srcs[0], n);
    for (int j = 1; j < k; ++j) acc = K::Combine(acc, K::LoadPartial(srcs[j], n));
    K::StorePartial(dst, acc, n);
    return;
  }
  using Elem = typename K::Elem;
  alignas(64) Elem buf[K::kStep] = {};
  alignas(64) Elem tmp[K::kStep] = {};
  std::memcpy(buf, srcs[0], n * sizeof(Elem));
  typename K::Acc acc = K::Load(buf);
  for (int j = 1; j < k; ++j) {
    std::memcpy(tmp, srcs[j], n * sizeof(Elem));
    acc = K::Combine(acc, K::Load(tmp));
  }
  K::Store(buf, acc);
  std::memcpy(dst, buf, n * sizeof(Elem));
}

template <class K>
void BinaryLoop(void* dst_v, const void* a_v, const void* b_v, size_t n) {
  using Elem = typename K::Elem;
  constexpr size_t S = K::kStep;
  MxcsrGuard guard;
  Elem* dst = static_cast<Elem*>(dst_v);
  const Elem* a = static_cast<const Elem*>(a_v);
  const Elem* b = static_cast<const Elem*>(b_v);
  size_t i = 0;
  // dst aliases a or b only at the same index, so each block's loads precede its store.
  for (; i + 4 * S <= n; i += 4 * S) {
    auto r0 = K::Combine(K::Load(a + i), K::Load(b + i));
    auto r1 = K::Combine(K::Load(a + i + S), K::Load(b + i + S));
    auto r2 = K::Combine(K::Load(a + i + 2 * S), K::Load(b + i + 2 * S));
    auto r3 = K::Combine(K::Load(a + i + 3 * S), K::Load(b + i + 3 * S));
    K::Store(dst + i, r0);
    K::Store(dst + i + S, r1);
    K::Store(dst + i + 2 * S, r2);
    K::Store(dst + i + 3 * S, r3);
  }
  for (; i + S <= n; i += S) K::Store(dst + i, K::Combine(K::Load(a + i), K::Load(b + i)));
  if constexpr (S == 1) return;  // no tail at one element per step
  if (i < n) {
    const Elem* srcs[2] = {a + i, b + i};
    FoldTail<K>(dst + i, srcs, 2, n - i);
  }
}

// dst = fold of srcs[0..k), 2 <= k <= kMaxStreams, every source read once, dst written once.
// P is Elem or void: FoldLoop passes the caller's array as it is. The local copy fills all
// kMaxStreams entries: a loop of k copies compiles to a `rep movsq`, whose start-up cost a small
// fold pays (such a copy took 3 % of the root's time in a 2-rank 8 B Reduce back to back).
template <class K, class P>
void FoldStreams(typename K::Elem* dst, const P* const* srcs, int k, size_t n) {
  using Elem = typename K::Elem;
  constexpr size_t S = K::kStep;
  const Elem* s[kMaxStreams];
  for (int j = 0; j < kMaxStreams; ++j) s[j] = j < k ? static_cast<const Elem*>(srcs[j]) : nullptr;
  size_t i = 0;
  for (; i + 4 * S <= n; i += 4 * S) {
    auto r0 = K::Load(s[0] + i);
    auto r1 = K::Load(s[0] + i + S);
    auto r2 = K::Load(s[0] + i + 2 * S);
    auto r3 = K::Load(s[0] + i + 3 * S);
    for (int j = 1; j < k; ++j) {
      const Elem* p = s[j] + i;
      r0 = K::Combine(r0, K::Load(p));
      r1 = K::Combine(r1, K::Load(p + S));
      r2 = K::Combine(r2, K::Load(p + 2 * S));
      r3 = K::Combine(r3, K::Load(p + 3 * S));
    }
    K::Store(dst + i, r0);
    K::Store(dst + i + S, r1);
    K::Store(dst + i + 2 * S, r2);
    K::Store(dst + i + 3 * S, r3);
  }
  for (; i + S <= n; i += S) {
    auto r = K::Load(s[0] + i);
    for (int j = 1; j < k; ++j) r = K::Combine(r, K::Load(s[j] + i));
    K::Store(dst + i, r);
  }
  if constexpr (S == 1) return;
  if (i < n) {
    const Elem* t[kMaxStreams] = {};
    for (int j = 0; j < k; ++j) t[j] = s[j] + i;
    FoldTail<K>(dst + i, t, k, n - i);
  }
}

template <class K>
void FoldLoop(void* dst_v, const void* const* srcs_v, int k, size_t n) {
  using Elem = typename K::Elem;
  Elem* dst = static_cast<Elem*>(dst_v);
  auto src = [srcs_v](int j) { return static_cast<const Elem*>(srcs_v[j]); };
  if (k <= 0 || n == 0) return;
  if (k == 1) {
    if (dst != src(0)) std::memmove(dst, src(0), n * sizeof(Elem));
    return;
  }
  MxcsrGuard guard;
  if (k <= kMaxStreams) return FoldStreams<K>(dst, srcs_v, k, n);
  // Many sources: fold groups of streams into an L1-resident block, so the number of
  // concurrent streams stays small; the block is written to dst once, after its last group.
  constexpr size_t kBlock = kBlockBytes / sizeof(Elem);
  alignas(64) Elem acc[kBlock];
  for (size_t off = 0; off < n; off += kBlock) {
    const size_t len = n - off < kBlock ? n - off : kBlock;
    const Elem* group[kMaxStreams];
    for (int j = 0; j < kMaxStreams; ++j) group[j] = src(j) + off;
    int next = kMaxStreams;
    Elem* out = next == k ? dst + off : acc;
    FoldStreams<K>(out, group, kMaxStreams, len);
    while (next < k) {
      const int take = k - next < kMaxStreams - 1 ? k - next : kMaxStreams - 1;
      group[0] = acc;
      for (int j = 0; j < take; ++j) group[1 + j] = src(next + j) + off;
      next += take;
      out = next == k ? dst + off : acc;
      FoldStreams<K>(out, group, take + 1, len);
    }
  }
}

template <class K>
constexpr KernelEntry EntryFor() {
  return KernelEntry{&BinaryLoop<K>, &FoldLoop<K>};
}

// One table row: the four ops of one type; Kind<Op> is the vector kind for that op.
template <template <RedOp> class Kind>
struct Row {
  static constexpr KernelEntry kSum = EntryFor<Kind<RedOp::kSum>>();
  static constexpr KernelEntry kProd = EntryFor<Kind<RedOp::kProd>>();
  static constexpr KernelEntry kMax = EntryFor<Kind<RedOp::kMax>>();
  static constexpr KernelEntry kMin = EntryFor<Kind<RedOp::kMin>>();
};

#define HOSTCCL_KERNEL_ROW(Kind) \
  { Row<Kind>::kSum, Row<Kind>::kProd, Row<Kind>::kMax, Row<Kind>::kMin }

// Table rows in DataType value order; the static_asserts pin that order.
static_assert(static_cast<int>(DataType::kInt8) == 0 && static_cast<int>(DataType::kInt16) == 1 &&
              static_cast<int>(DataType::kInt32) == 2 && static_cast<int>(DataType::kFp16) == 3 &&
              static_cast<int>(DataType::kFp32) == 4 && static_cast<int>(DataType::kInt64) == 5 &&
              static_cast<int>(DataType::kUint64) == 6 && static_cast<int>(DataType::kUint8) == 7 &&
              static_cast<int>(DataType::kUint16) == 8 && static_cast<int>(DataType::kUint32) == 9 &&
              static_cast<int>(DataType::kFp64) == 10 && static_cast<int>(DataType::kBf16) == 11);
static_assert(static_cast<int>(RedOp::kSum) == 0 && static_cast<int>(RedOp::kProd) == 1 &&
              static_cast<int>(RedOp::kMax) == 2 && static_cast<int>(RedOp::kMin) == 3);

#define HOSTCCL_KERNEL_TABLE(I8, I16, I32, F16, F32, I64, U64, U8, U16, U32, F64, BF16)               \
  {{HOSTCCL_KERNEL_ROW(I8), HOSTCCL_KERNEL_ROW(I16), HOSTCCL_KERNEL_ROW(I32), HOSTCCL_KERNEL_ROW(F16),  \
    HOSTCCL_KERNEL_ROW(F32), HOSTCCL_KERNEL_ROW(I64), HOSTCCL_KERNEL_ROW(U64), HOSTCCL_KERNEL_ROW(U8),   \
    HOSTCCL_KERNEL_ROW(U16), HOSTCCL_KERNEL_ROW(U32), HOSTCCL_KERNEL_ROW(F64), HOSTCCL_KERNEL_ROW(BF16)}}

}  // namespace
}  // namespace hostccl::kern
