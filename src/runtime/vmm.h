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

}  // namespace hostccl::rt
