// Bulk copy for results written into another rank's buffer: non-temporal (streaming) stores, so
// the destination is not read first (no read-for-ownership) and does not evict the source from
// cache. The kernels' dispatch level decides how (ActiveIsa, HOSTCCL_KERNEL_ISA): avx512 one
// 64-byte store per line, avx2 two 32-byte ones, scalar plain memcpy; memcpy also below 4 KiB and
// for the unaligned head and the tail.
// Whether to stream at all depends on the call's footprint (StreamStores): a call whose buffers
// fit in the last-level cache gains from ordinary stores (the result stays in cache for the
// caller's next read); a larger one only pays for them (every written line is read first, then
// written back).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl::kern {

void CopyStreaming(void* dst, const void* src, size_t bytes);

// CopyStreaming when `stream`, else memcpy.
inline void CopyTo(void* dst, const void* src, size_t bytes, bool stream);

// Bytes of the last-level cache: /sys/devices/system/cpu/cpu0/cache/index3/size (else the
// largest cache level sysfs lists), 32 MiB when sysfs says nothing. Read once.
uint64_t LastLevelCacheBytes();

// The footprint beyond which "auto" streams: 4 MiB at least, else a quarter of
// LastLevelCacheBytes() on Intel (the socket's shared L3: on a 2-core VM with a 105 MiB L3,
// ordinary stores measured slower than streaming ones already at 16 MiB AllReduce and AllGather
// calls, 64 MiB of buffers) and twice it on AMD (the L3 of one core complex: on a Zen 5 VM,
// ordinary stores were faster up to 64-96 MiB of buffers at 2 ranks and 80-128 MiB at 4, in
// AllReduce, AllGather and AlltoAll; docs/performance.md "When to stream").
uint64_t StreamThresholdBytes();

// Whether a call touching `footprint` bytes in all (every rank's input and output buffers) should
// write its results with non-temporal stores. HOSTCCL_STREAM_STORES: "on" always, "off" never,
// "auto" (default) when footprint > StreamThresholdBytes().
bool StreamStores(uint64_t footprint);

}  // namespace hostccl::kern

#include <cstring>

inline void hostccl::kern::CopyTo(void* dst, const void* src, size_t bytes, bool stream) {
  if (stream)
    CopyStreaming(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}
