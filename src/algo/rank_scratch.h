// RankScratch: one entry per rank of per-call scratch (a fold's input pointers, a gather's
// offsets), on the stack for up to kStackRanks ranks, else in a thread_local vector of the
// calling site. The small-call path then does no thread-local lookup for it (a shared library's
// thread_locals cost a descriptor call each; common/tls_ref.h).
//
//   const void* stack[kStackRanks];
//   const void** in = RankScratch(stack, n, []() -> auto& {
//     thread_local std::vector<const void*> v;
//     return v;
//   });
#pragma once

#include <cstddef>
#include <vector>

namespace hostccl::algo {

inline constexpr size_t kStackRanks = 64;

template <typename T, typename HeapFn>
T* RankScratch(T (&stack)[kStackRanks], size_t n, HeapFn&& heap) {
  if (n <= kStackRanks) return stack;
  std::vector<T>& v = heap();
  v.resize(n);
  return v.data();
}

}  // namespace hostccl::algo
