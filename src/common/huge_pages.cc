#include "common/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1 (uapi asm-generic/mman-common.h)
#endif

namespace hostccl {

void* MapSharedAligned(int fd, size_t length, uint64_t file_offset, int extra_flags) {
  const int flags = MAP_SHARED | extra_flags;
  if (length < kHugePageBytes)
    return mmap(nullptr, length, PROT_READ | PROT_WRITE, flags, fd, static_cast<off_t>(file_offset));
  // Reserve length + 2 MiB of address space, place the mapping at the first address congruent
  // to file_offset inside it, and give the rest back.
  const size_t span = length + kHugePageBytes;
  void* r = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return MAP_FAILED;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(r);
  const uintptr_t want = file_offset % kHugePageBytes;
  const uintptr_t at = lo + ((want + kHugePageBytes - lo % kHugePageBytes) % kHugePageBytes);
  void* p = mmap(reinterpret_cast<void*>(at), length, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd,
                 static_cast<off_t>(file_offset));
  if (p == MAP_FAILED) {
    munmap(r, span);
    return MAP_FAILED;
  }
  if (at > lo) munmap(r, at - lo);
  if (lo + span > at + length) munmap(reinterpret_cast<void*>(at + length), lo + span - (at + length));
  return p;
}

size_t CollapseToHugePages(void* p, size_t length) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (b + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  const uintptr_t last = (b + length) / kHugePageBytes * kHugePageBytes;
  if (last <= first) return 0;
  // A range with no page at all is refused (EINVAL): give every 2 MiB page one 4 KiB page first,
  // with an atomic add of 0 (a write fault that keeps whatever the memory holds).
  for (uintptr_t a = first; a < last; a += kHugePageBytes)
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(a)).fetch_add(0, std::memory_order_relaxed);
  if (madvise(reinterpret_cast<void*>(first), last - first, MADV_COLLAPSE) != 0) return 0;
  return last - first;
}

bool ShmemCollapses() {
  const int fd = memfd_create("hostccl-probe", MFD_CLOEXEC);
  if (fd < 0) return false;
  void* m = ftruncate(fd, kHugePageBytes) == 0 ? MapSharedAligned(fd, kHugePageBytes, 0, 0) : MAP_FAILED;
  close(fd);
  if (m == MAP_FAILED) return false;
  const bool yes = CollapseToHugePages(m, kHugePageBytes) == kHugePageBytes;
  munmap(m, kHugePageBytes);
  return yes;
}

std::string ShmemHugeSetting() {
  FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "re");
  if (f == nullptr) return "unknown";
  char line[256] = {};
  const bool ok = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  const char* open = ok ? std::strchr(line, '[') : nullptr;
  const char* close_br = open != nullptr ? std::strchr(open, ']') : nullptr;
  if (close_br == nullptr) return "unknown";
  return std::string(open + 1, close_br);
}

size_t PmdMappedBytes(const void* p, size_t length) {
  FILE* f = std::fopen("/proc/self/smaps", "re");
  if (f == nullptr) return 0;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + length;
  char line[512];
  bool inside = false;
  size_t total = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long a = 0, e = 0;
    if (std::sscanf(line, "%lx-%lx ", &a, &e) == 2) {  // a mapping's first line
      inside = a >= lo && e <= hi;
      continue;
    }
    size_t kb = 0;
    if (inside && (std::sscanf(line, "ShmemPmdMapped: %zu kB", &kb) == 1 ||
                   std::sscanf(line, "FilePmdMapped: %zu kB", &kb) == 1))
      total += kb << 10;
  }
  std::fclose(f);
  return total;
}

}  // namespace hostccl
