// Asking for a cache line's ownership ahead of the stores that need it.
//
// A store to a line another core has read (a peer polled this rank's arrival slot) cannot leave
// the store buffer until this core owns the line again: one cross-core round trip. Stores leave
// in order, so the next locked instruction, or every store behind it once the buffer is full,
// waits for it (docs/performance.md "The cross-core slot transfer at 2 ranks"). A write prefetch
// issued at the end of one operation, for the lines the next one will write, starts that transfer
// while this rank returns to its caller and issues the next call.
#pragma once

namespace hostccl::net {

// A hint only: no fault, no effect on the line's contents or on memory ordering. x86-64:
// PREFETCHW (a no-op on x86-64 processors without it); elsewhere the compiler's write prefetch.
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace hostccl::net
