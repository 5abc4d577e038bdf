// Virtual memory management calls (aclrtReserveMemAddress & co) on host memory.
//
// Contract:
//  - Reserve = an anonymous PROT_NONE mapping (MAP_NORESERVE), aligned as asked.
//  - Physical memory = a memfd of the requested size (rounded up to the granularity); the handle
//    is a registered heap object.
//  - Map = mmap(MAP_FIXED | MAP_SHARED) of the memfd at `offset` over part of a reservation; the
//    mapped range is registered with FindAllocation (memfd + offset, so it is shareable).
//    Unmap puts PROT_NONE back. Releasing a reservation unmaps what is still mapped in it.
//  - Granularity: 2 MiB for both MINIMUM and RECOMMENDED (like the hardware); sizes and offsets
//    need only be page multiples here.
//  - Thread-safe; AscendCL codes (runtime/acl_codes.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl::rt {

inline constexpr size_t kVmmGranularity = 2u << 20;

int ReserveMemAddress(void** vir_ptr, size_t size, size_t alignment, void* expect_ptr, uint64_t flags);
int ReleaseMemAddress(void* vir_ptr);
// prop_device: location id from aclrtPhysicalMemProp (for FindAllocation's device field).
int MallocPhysical(void** handle, size_t size, int prop_device, uint64_t flags);
int FreePhysical(void* handle);
int MapMem(void* vir_ptr, size_t size, size_t offset, void* handle, uint64_t flags);
int UnmapMem(void* vir_ptr);
int MemGetAllocationGranularity(int option, size_t* granularity);

// What the VMM layer knows about an address range (for HCCL's memory registration, which must
// check that a range was reserved / mapped through these calls).
struct VmmInfo {
  uintptr_t reservation_base = 0;  // reservation containing the range (0: none)
  size_t reservation_size = 0;
  uint64_t reservation_serial = 0;  // never reused: a released-and-reserved-again range differs
  uintptr_t map_base = 0;          // map containing the range's first byte (0: not mapped)
  size_t map_size = 0;
  const void* handle = nullptr;    // physical handle that map was made from (identity only)
  size_t physical_size = 0;        // size of that physical memory
};
// Describes [p, p + size): false when no reservation contains all of it.
bool VmmQuery(const void* p, size_t size, VmmInfo* out);
// True when `handle` is a live aclrtMallocPhysical handle.
bool VmmIsPhysical(const void* handle);

}  // namespace hostccl::rt
