#include "kernels/copy.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace hostccl::kern {
namespace {

__attribute__((target("avx2"))) void StreamAvx2(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  if (i < n) std::memcpy(d + i, s + i, n - i);
  _mm_sfence();  // streaming stores are weakly ordered: complete them before any later release
}

}  // namespace

void CopyStreaming(void* dst, const void* src, size_t bytes) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (!avx2 || bytes < 4096) {
    std::memcpy(d, s, bytes);
    return;
  }
  const size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  StreamAvx2(d + head, s + head, bytes - head);
}

}  // namespace hostccl::kern
