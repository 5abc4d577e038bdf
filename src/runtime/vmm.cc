// VMM calls on host memory: PROT_NONE reservations, memfd "physical" handles, MAP_FIXED maps.
#include "runtime/vmm.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <mutex>

#include "common/log.h"
#include "runtime/acl_codes.h"
#include "runtime/error.h"
#include "runtime/memory.h"

namespace hostccl::rt {
namespace {

struct Physical {
  int fd;
  size_t size;
  int device;
};

struct Mapping {
  size_t size;
  int fd;  // dup of the physical memfd: the mapping stays valid after aclrtFreePhysical
  const void* handle;    // the physical handle mapped (identity only; it may be freed since)
  size_t physical_size;  // its size
};

struct State {
  std::mutex mu;
  std::map<uintptr_t, size_t> reservations;  // base -> size
  std::map<uintptr_t, uint64_t> serials;     // base -> reservation serial (never reused)
  uint64_t next_serial = 0;
  std::set<Physical*> physicals;
  std::map<uintptr_t, Mapping> mappings;     // base -> mapping
};

State& St() {
  static State* s = new State();  // leaked: usable from atexit handlers
  return *s;
}

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The reservation containing [p, p + size), or end().
std::map<uintptr_t, size_t>::iterator FindReservation(State& s, uintptr_t p, size_t size) {
  auto it = s.reservations.upper_bound(p);
  if (it == s.reservations.begin()) return s.reservations.end();
  --it;
  if (p + size > it->first + it->second) return s.reservations.end();
  return it;
}

void UnmapLocked(State& s, std::map<uintptr_t, Mapping>::iterator it) {
  void* base = reinterpret_cast<void*>(it->first);
  // Put the reservation back (PROT_NONE) rather than punching a hole in the address range.
  (void)mmap(base, it->second.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  UnregisterMapping(base);
  close(it->second.fd);
  s.mappings.erase(it);
}

}  // namespace

int MemGetAllocationGranularity(int option, size_t* granularity) {
  if (granularity == nullptr) return Fail(kAclInvalidParam, "aclrtMemGetAllocationGranularity: granularity is null");
  if (option != 0 && option != 1)
    return Fail(kAclInvalidParam, "aclrtMemGetAllocationGranularity: option %d is not MINIMUM (0) or RECOMMENDED (1)",
                option);
  *granularity = kVmmGranularity;
  return kAclSuccess;
}

int ReserveMemAddress(void** vir_ptr, size_t size, size_t alignment, void* expect_ptr, uint64_t flags) {
  if (vir_ptr == nullptr) return Fail(kAclInvalidParam, "aclrtReserveMemAddress: virPtr is null");
  if (size == 0) return Fail(kAclInvalidParam, "aclrtReserveMemAddress: size is 0");
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (alignment == 0) alignment = kVmmGranularity;
  if ((alignment & (alignment - 1)) != 0)
    return Fail(kAclInvalidParam, "aclrtReserveMemAddress: alignment %zu is not a power of two", alignment);
  if (alignment < page) alignment = page;
  size = RoundUp(size, page);
  size_t span = size + alignment;
  void* p = mmap(expect_ptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return Fail(kAclRtMemoryAllocation, "aclrtReserveMemAddress: cannot reserve %zu bytes: %s", size, strerror(errno));
  uintptr_t raw = reinterpret_cast<uintptr_t>(p);
  uintptr_t base = RoundUp(raw, alignment);
  if (base > raw) munmap(p, base - raw);
  if (raw + span > base + size) munmap(reinterpret_cast<void*>(base + size), raw + span - (base + size));
  auto& s = St();
  std::lock_guard lk(s.mu);
  s.reservations[base] = size;
  s.serials[base] = ++s.next_serial;
  *vir_ptr = reinterpret_cast<void*>(base);
  return kAclSuccess;
}

int ReleaseMemAddress(void* vir_ptr) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto it = s.reservations.find(reinterpret_cast<uintptr_t>(vir_ptr));
  if (vir_ptr == nullptr || it == s.reservations.end())
    return Fail(kAclInvalidParam, "aclrtReleaseMemAddress: %p is not a reserved address", vir_ptr);
  uintptr_t lo = it->first, hi = it->first + it->second;
  for (auto m = s.mappings.lower_bound(lo); m != s.mappings.end() && m->first < hi;) {
    auto next = std::next(m);
    HLOG_WARN(kRuntime, "aclrtReleaseMemAddress: %p still mapped; unmapping it", reinterpret_cast<void*>(m->first));
    UnmapLocked(s, m);
    m = next;
  }
  munmap(vir_ptr, it->second);
  s.serials.erase(it->first);
  s.reservations.erase(it);
  return kAclSuccess;
}

int MallocPhysical(void** handle, size_t size, int prop_device, uint64_t flags) {
  if (handle == nullptr) return Fail(kAclInvalidParam, "aclrtMallocPhysical: handle is null");
  if (size == 0) return Fail(kAclInvalidParam, "aclrtMallocPhysical: size is 0");
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size = RoundUp(size, page);
  int fd = memfd_create("hostccl-phys", MFD_CLOEXEC);
  if (fd < 0) return Fail(kAclRtMemoryAllocation, "aclrtMallocPhysical: memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    close(fd);
    return Fail(kAclRtMemoryAllocation, "aclrtMallocPhysical: cannot size memfd to %zu bytes: %s", size, strerror(err));
  }
  auto* ph = new Physical{fd, size, prop_device};
  auto& s = St();
  std::lock_guard lk(s.mu);
  s.physicals.insert(ph);
  *handle = ph;
  return kAclSuccess;
}

int FreePhysical(void* handle) {
  auto* ph = static_cast<Physical*>(handle);
  auto& s = St();
  {
    std::lock_guard lk(s.mu);
    if (ph == nullptr || s.physicals.erase(ph) == 0)
      return Fail(kAclInvalidParam, "aclrtFreePhysical: %p is not a live physical memory handle", handle);
  }
  close(ph->fd);  // live maps hold their own descriptor and page references
  delete ph;
  return kAclSuccess;
}

int MapMem(void* vir_ptr, size_t size, size_t offset, void* handle, uint64_t flags) {
  auto* ph = static_cast<Physical*>(handle);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (vir_ptr == nullptr || size == 0)
    return Fail(kAclInvalidParam, "aclrtMapMem: %s", vir_ptr == nullptr ? "virPtr is null" : "size is 0");
  uintptr_t p = reinterpret_cast<uintptr_t>(vir_ptr);
  if (p % page != 0 || offset % page != 0)
    return Fail(kAclInvalidParam, "aclrtMapMem: virPtr %p and offset %zu must be page aligned", vir_ptr, offset);
  size = RoundUp(size, page);
  auto& s = St();
  std::lock_guard lk(s.mu);
  if (ph == nullptr || !s.physicals.count(ph))
    return Fail(kAclInvalidParam, "aclrtMapMem: handle %p is not a live physical memory handle", handle);
  if (offset > ph->size || size > ph->size - offset)
    return Fail(kAclInvalidParam, "aclrtMapMem: offset %zu + size %zu exceeds the physical memory (%zu bytes)",
                offset, size, ph->size);
  if (FindReservation(s, p, size) == s.reservations.end())
    return Fail(kAclInvalidParam, "aclrtMapMem: [%p, +%zu) is not inside a reserved address range", vir_ptr, size);
  auto next = s.mappings.lower_bound(p);
  bool overlap = next != s.mappings.end() && next->first < p + size;
  if (next != s.mappings.begin()) {
    auto prev = std::prev(next);
    overlap |= prev->first + prev->second.size > p;
  }
  if (overlap) return Fail(kAclInvalidParam, "aclrtMapMem: [%p, +%zu) overlaps an existing map", vir_ptr, size);
  int fd = dup(ph->fd);
  if (fd < 0) return Fail(kAclRtMemoryAllocation, "aclrtMapMem: dup failed: %s", strerror(errno));
  void* m = mmap(vir_ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(offset));
  if (m == MAP_FAILED) {
    int err = errno;
    close(fd);
    return Fail(kAclRtMemoryAllocation, "aclrtMapMem: mmap at %p failed: %s", vir_ptr, strerror(err));
  }
  s.mappings[p] = Mapping{size, fd, ph, ph->size};
  RegisterMapping(vir_ptr, size, fd, offset, ph->device);
  return kAclSuccess;
}

int UnmapMem(void* vir_ptr) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto it = s.mappings.find(reinterpret_cast<uintptr_t>(vir_ptr));
  if (vir_ptr == nullptr || it == s.mappings.end())
    return Fail(kAclInvalidParam, "aclrtUnmapMem: %p is not the start of a map", vir_ptr);
  UnmapLocked(s, it);
  return kAclSuccess;
}

bool VmmQuery(const void* ptr, size_t size, VmmInfo* out) {
  *out = VmmInfo{};
  auto& s = St();
  std::lock_guard lk(s.mu);
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto r = FindReservation(s, p, size);
  if (r == s.reservations.end()) return false;
  out->reservation_base = r->first;
  out->reservation_size = r->second;
  out->reservation_serial = s.serials[r->first];
  auto m = s.mappings.upper_bound(p);
  if (m != s.mappings.begin()) {
    --m;
    if (p < m->first + m->second.size) {
      out->map_base = m->first;
      out->map_size = m->second.size;
      out->handle = m->second.handle;
      out->physical_size = m->second.physical_size;
    }
  }
  return true;
}

bool VmmIsPhysical(const void* handle) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  return s.physicals.count(static_cast<Physical*>(const_cast<void*>(handle))) != 0;
}

}  // namespace hostccl::rt
