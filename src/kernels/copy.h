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

// The choice for the AlltoAll family's claimed copy, learned per communicator: which stores are
// faster at a footprint in (4 MiB, 4 x StreamThresholdBytes()] differs between hosts of one vendor
// (2 ranks, 16 MiB: non-temporal stores 10 % slower on a Sapphire Rapids VM, 17 % faster on an
// Emerald Rapids one; docs/performance.md "When to stream"). Per power-of-two footprint class,
// after one call by the rule (its first pass over newly mapped pages is not representative), a
// run of kRun calls with ordinary stores and one with non-temporal ones; the last kRun - 1 calls
// of each run are timed (the first finds the cache as the other kind left it), and the class
// keeps the kind of the fastest of them. Outside that range, or with HOSTCCL_STREAM_STORES=on/off,
// it answers as StreamStores. Not thread-safe: one per communicator, used under its operation
// lock. Every rank of a call sees the same footprint, so while a class is timed the ranks use the
// same stores in each call; each rank then keeps the kind of its own fastest call, which may
// differ between ranks (a copy either way: the results do not depend on it).
class StoreLearner {
 public:
  static constexpr int kRun = 3;
  static constexpr int kLearningCalls = 1 + 2 * kRun;  // then the class is decided
  struct Choice {
    bool stream = false;
    int bucket = -1;  // >= 0: pass the call's time to Learn
  };
  Choice Choose(uint64_t footprint) const;
  // A call's time, ns (a failed call is not passed); decides its class after kLearningCalls.
  void Learn(const Choice& c, uint64_t ns);
  // -1 while the class of `footprint` is still timed or outside the learned range, 0 ordinary
  // stores, 1 non-temporal.
  int Decided(uint64_t footprint) const;

 private:
  struct Class {
    uint8_t seen = 0;  // calls passed to Learn
    int8_t decided = -1;
    uint64_t best[2] = {~uint64_t{0}, ~uint64_t{0}};  // fastest call: ordinary, non-temporal
  };
  static int ClassOf(uint64_t footprint);  // -1 outside the learned range
  Class classes_[64];
};

}  // namespace hostccl::kern

#include <cstring>

inline void hostccl::kern::CopyTo(void* dst, const void* src, size_t bytes, bool stream) {
  if (stream)
    CopyStreaming(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}
