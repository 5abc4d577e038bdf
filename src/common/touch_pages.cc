#include "common/touch_pages.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace hostccl {

void TouchPages(void* p, size_t length, bool write) {
  if (length == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + length;
  if (write) {
    for (uintptr_t a = first; a < end; a += page)
      std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(a))
          .fetch_add(0, std::memory_order_relaxed);
  } else {
    uint64_t sink = 0;
    for (uintptr_t a = first; a < end; a += page)
      sink += std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(a))
                  .load(std::memory_order_relaxed);
    asm volatile("" : : "r"(sink));
  }
}

}  // namespace hostccl
