#include "kernels/copy.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/env.h"
#include "kernels/reduce.h"

namespace hostccl::kern {
namespace {

// One 64-byte load and one 64-byte non-temporal store per line. A whole line per store leaves the
// write-combining buffer full at once; two 32-byte halves (the AVX2 loop) or an unrolled body of
// four lines measured 7-18 % slower in a 256 MiB AlltoAll model on an Intel host
// (docs/performance.md "Streaming copies: one store per line").
__attribute__((target("avx512f"))) void StreamAvx512(char* d, const char* s, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
  if (i < n) std::memcpy(d + i, s + i, n - i);
  _mm_sfence();  // as below
}

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

// sysfs cache size text ("107520K", "2048K", "32M") in bytes; 0 when unreadable.
uint64_t ReadCacheSize(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  unsigned long long v = 0;
  char unit = 0;
  const int got = std::fscanf(f, "%llu%c", &v, &unit);
  std::fclose(f);
  if (got < 1) return 0;
  if (unit == 'K' || unit == 'k') v <<= 10;
  else if (unit == 'M' || unit == 'm') v <<= 20;
  else if (unit == 'G' || unit == 'g') v <<= 30;
  return v;
}

uint64_t DetectLlc() {
  uint64_t best = ReadCacheSize("/sys/devices/system/cpu/cpu0/cache/index3/size");
  for (int i = 0; best == 0 && i < 8; ++i) {  // no index3: the largest level listed
    const std::string p = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size";
    const uint64_t v = ReadCacheSize(p.c_str());
    if (v > best) best = v;
  }
  return best != 0 ? best : uint64_t{32} << 20;
}

// AMD's last level is the L3 of one core complex (what sysfs lists, 32 MiB on Zen 3 to 5), a
// victim cache of the complex's L2s; Intel's is shared by the whole socket.
bool IsAmd() { return __builtin_cpu_is("amd"); }

// -1: auto, 0: off, 1: on.
int StreamMode() {
  const std::string v = EnvString(Knob::kStreamStores, "auto");
  if (v == "on") return 1;
  if (v == "off") return 0;
  return -1;
}

}  // namespace

void CopyStreaming(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const Isa isa = bytes < 4096 ? Isa::kScalar : ActiveIsa();
  if (isa == Isa::kScalar) {
    std::memcpy(d, s, bytes);
    return;
  }
  // The head up to the first aligned store with ordinary stores.
  const size_t align = isa == Isa::kAvx512 ? 64 : 32;
  const size_t head = (align - (reinterpret_cast<uintptr_t>(d) & (align - 1))) & (align - 1);
  std::memcpy(d, s, head);
  if (isa == Isa::kAvx512)
    StreamAvx512(d + head, s + head, bytes - head);
  else
    StreamAvx2(d + head, s + head, bytes - head);
}

uint64_t LastLevelCacheBytes() {
  static const uint64_t llc = DetectLlc();
  return llc;
}

uint64_t StreamThresholdBytes() {
  static const uint64_t t = [] {
    const uint64_t llc = LastLevelCacheBytes();
    return std::max(uint64_t{4} << 20, IsAmd() ? 2 * llc : llc / 4);
  }();
  return t;
}

bool StreamStores(uint64_t footprint) {
  static const int mode = StreamMode();
  if (mode >= 0) return mode == 1;
  return footprint > StreamThresholdBytes();
}

}  // namespace hostccl::kern
