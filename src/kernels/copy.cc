#include "kernels/copy.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/env.h"
#include "common/log.h"
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

namespace {
int ForcedMode() {
  static const int mode = StreamMode();
  return mode;
}
}  // namespace

bool StreamStores(uint64_t footprint) {
  const int mode = ForcedMode();
  if (mode >= 0) return mode == 1;
  return footprint > StreamThresholdBytes();
}

int StoreLearner::ClassOf(uint64_t footprint) {
  if (ForcedMode() >= 0 || footprint <= (uint64_t{4} << 20) || footprint > 4 * StreamThresholdBytes()) return -1;
  return 63 - __builtin_clzll(footprint);
}

StoreLearner::Choice StoreLearner::Choose(uint64_t footprint) const {
  const int b = ClassOf(footprint);
  if (b < 0) return Choice{StreamStores(footprint), -1};
  const Class& c = classes_[b];
  if (c.decided >= 0) return Choice{c.decided == 1, -1};
  // The class's first call by the rule (its first pass over newly mapped pages), then a run of
  // kRun calls with ordinary stores and one with non-temporal ones.
  if (c.seen == 0) return Choice{StreamStores(footprint), b};
  return Choice{c.seen > kRun, b};
}

void StoreLearner::Learn(const Choice& choice, uint64_t ns) {
  if (choice.bucket < 0 || choice.bucket >= 64) return;
  Class& c = classes_[choice.bucket];
  if (c.decided >= 0) return;
  const int s = c.seen++;
  // The first call of each run is not timed: a call after one with the other kind of stores
  // finds the cache as that one left it (ordinary stores after non-temporal ones measured 2.2 ms
  // against 1.4 in a steady run of 16 MiB AlltoAll calls).
  if (s == 0 || (s - 1) % kRun == 0) return;
  uint64_t& best = c.best[choice.stream ? 1 : 0];
  best = std::min(best, ns);
  if (c.seen < kLearningCalls) return;
  c.decided = c.best[1] < c.best[0] ? 1 : 0;
  HLOG_INFO(kKernel, "AlltoAll copies of %llu-%llu MiB of buffers: %s stores (fastest call %.0f us, against %.0f us)",
            static_cast<unsigned long long>((uint64_t{1} << choice.bucket) >> 20),
            static_cast<unsigned long long>((uint64_t{2} << choice.bucket) >> 20),
            c.decided == 1 ? "non-temporal" : "ordinary", static_cast<double>(c.best[c.decided]) / 1e3,
            static_cast<double>(c.best[1 - c.decided]) / 1e3);
}

int StoreLearner::Decided(uint64_t footprint) const {
  const int b = ClassOf(footprint);
  return b < 0 ? -1 : classes_[b].decided;
}

}  // namespace hostccl::kern
