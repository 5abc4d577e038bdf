// Memory registered with communicators: HCCL's zero-copy ranges (HcclCommSetMemoryRange,
// HcclCommActivateCommMemory and their inverses) and symmetric windows (HcclCommSymWinRegister,
// ...Deregister, ...Get). See docs/memory_registration.md.
//
// Contract:
//  - A memory range is a span of an aclrtReserveMemAddress reservation, announced once per
//    device (HCCL: "visible to every communicator of the process"; our thread ranks are
//    devices, so the scope is the communicator's device). Ranges of one device never overlap.
//  - Activation marks [p, p + size) of a range as communication memory: p must be the start of
//    an aclrtMapMem map made from `handle`, and the map must cover size bytes; activations never
//    overlap. Unsetting a range with active memory in it fails (deactivate first).
//  - A symmetric window is [addr, addr + extent) of one communicator, where addr starts inside a
//    map and extent is what that map covers from addr (HCCL registers the physical memory's
//    size); size must be > 0, <= the communicator's hcclSymWinMaxMemSizePerRank (GB) and <=
//    extent. Windows of one communicator never overlap. Handles are never reused, so
//    deregistering twice is recognised. A destroyed communicator's windows are dropped.
//  - The memory itself is aclrtMapMem memory: in the allocation registry like aclrtMalloc memory
//    (rt::FindAllocation), so operators use it in place and peers of this host map it through its
//    memfd (zero-copy in both thread and process mode). Registration adds the checks and the
//    bookkeeping HCCL has; it moves no data.
//  - Every failure changes nothing and names the call's rank; all functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status.h"

namespace hostccl::core {

class Communicator;

Status SetMemoryRange(const Communicator& comm, void* base, size_t size, size_t alignment, uint64_t flags);
Status UnsetMemoryRange(const Communicator& comm, void* base);
Status ActivateCommMemory(const Communicator& comm, void* ptr, size_t size, size_t offset, void* handle,
                          uint64_t flags);
Status DeactivateCommMemory(const Communicator& comm, void* ptr);

Status SymWinRegister(const std::shared_ptr<Communicator>& comm, void* addr, uint64_t size, void** win,
                      uint32_t flag);
// *rank_out: the rank of the window's communicator (-1 when unknown), for the message.
Status SymWinDeregister(void* win, int* rank_out);
Status SymWinGet(const Communicator& comm, void* ptr, size_t size, void** win, size_t* offset);
// HcclCommDestroy: the communicator's windows go away with it.
void DropCommWindows(const Communicator* comm);

// Counts for tests and diagnostics.
size_t ActiveRangeCount(int device);
size_t WindowCount(const Communicator* comm);

}  // namespace hostccl::core
