// "Device" memory (aclrtMalloc), host memory (aclrtMallocHost) and copies.
//
// Contract:
//  - aclrtMalloc memory is a memfd (MFD_CLOEXEC) mapped MAP_SHARED, page aligned, pre-faulted
//    unless HOSTCCL_MALLOC_PREFAULT=0; HUGE_* policies add madvise(MADV_HUGEPAGE) and, when
//    pre-faulted, collapse the whole 2 MiB pages (MADV_COLLAPSE) of a mapping placed on a 2 MiB
//    boundary (common/huge_pages.h), best effort.
//    Each allocation is in a sorted, thread-safe registry (FindAllocation in runtime.h), which
//    owns the memfd until aclrtFree.
//  - aclrtMallocHost memory is plain 64-byte aligned heap memory, tracked so that FreeHost can
//    reject foreign pointers.
//  - Synchronous copies/memsets run at once with no stream synchronization; the async forms
//    validate their arguments at the call and run as a task on the stream.
//  - All functions are thread-safe and return AscendCL codes (runtime/acl_codes.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace hostccl::rt {

int Malloc(void** ptr, size_t size, uint32_t policy);
// Unregisters at once (later calls cannot use the pointer); the memory itself is unmapped at once
// when no stream has work queued or running, else once every stream that had completed the work
// it held at the free (ReleaseFreedMemory), so work enqueued before the free never touches
// unmapped memory.
int Free(void* ptr);
// Unmaps what Free deferred and is no longer used. Called by Malloc, Free and the synchronizes.
void ReleaseFreedMemory();
int MallocHost(void** ptr, size_t size);
int FreeHost(void* ptr);
int Memcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind);
int MemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, int kind, void* stream);
int Memset(void* dst, size_t max_count, int32_t value, size_t count);
int MemsetAsync(void* dst, size_t max_count, int32_t value, size_t count, void* stream);
// Host memory numbers from /proc/meminfo (MemAvailable, MemTotal) for every attribute.
int GetMemInfo(int attr, size_t* free_bytes, size_t* total_bytes);

// Registry hooks for memory mapped by the VMM calls (vmm.cc): registers [base, base+size) as
// an allocation backed by `memfd` at `offset` (the registry does not own that fd).
void RegisterMapping(void* base, size_t size, int memfd, size_t offset, int device);
void UnregisterMapping(void* base);
// The aclrtMalloc (or VMM-mapped) allocation containing p: copies it to *out and returns true,
// or returns false (*out untouched). The same answer as FindAllocation (runtime.h) without an
// std::optional; a buffer looked up again by this thread since the registry last changed costs
// a compare.
struct Allocation;
bool FindAllocation(const void* p, Allocation* out);
// The same into an optional (engaged with the allocation, or reset).
bool FindAllocation(const void* p, std::optional<Allocation>* out);
// Number of live aclrtMalloc allocations (tests, leak checks).
size_t LiveAllocationCount();
// A number that changes whenever an allocation or mapping is added or removed: an answer of
// FindAllocation stays true while it is unchanged (api/arg_check.cc remembers checks by it).
uint64_t AllocationGeneration();

}  // namespace hostccl::rt
