// Shared mappings of memfd memory in 2 MiB pages, without the administrator's help.
//
// Why: a collective between processes reads and writes peers' aclrtMalloc buffers through the
// reader's own mapping; with 4 KiB pages a 64 MiB buffer is 16,384 page-table entries per
// process, and on virtual machines that shadow the guest's page tables the misses dominate large
// collectives at more ranks than cores (docs/performance.md "2 MiB pages for device memory").
// Transparent huge pages for shared memory (shmem) are off on many hosts
// (/sys/kernel/mm/transparent_hugepage/shmem_enabled = never), but MADV_COLLAPSE (Linux 6.1+)
// builds 2 MiB pages of a shmem range whatever that setting says. Once the memfd's pages are
// huge, every mapping whose address is congruent to its file offset modulo 2 MiB maps them whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hostccl {

constexpr size_t kHugePageBytes = size_t{2} << 20;

// mmap(PROT_READ | PROT_WRITE, MAP_SHARED | extra_flags) of [file_offset, file_offset + length)
// of fd, placed so that (address - file_offset) is a multiple of kHugePageBytes when length is
// at least that (huge pages of the file then map as such). MAP_FAILED with errno on failure.
// munmap(address, length) releases it.
void* MapSharedAligned(int fd, size_t length, uint64_t file_offset, int extra_flags);

// Turns the whole 2 MiB pages of [p, p + length) of a MAP_SHARED memfd mapping into huge pages
// (MADV_COLLAPSE), keeping their contents. Returns the bytes now in huge pages (0: the kernel
// cannot, e.g. before Linux 6.1, or found no free 2 MiB block; the range keeps its 4 KiB pages).
size_t CollapseToHugePages(void* p, size_t length);

// Whether this kernel collapses shmem on request: a 2 MiB memfd probe (tests, hccl_info).
bool ShmemCollapses();

// The host's own choice for shmem (/sys/kernel/mm/transparent_hugepage/shmem_enabled, the
// bracketed word: "never", "advise", "always", ...), or "unknown".
std::string ShmemHugeSetting();

// Bytes of [p, p + length) this process maps with 2 MiB page-table entries (/proc/self/smaps:
// ShmemPmdMapped + FilePmdMapped of the mappings inside the range); for tests and hccl_info.
size_t PmdMappedBytes(const void* p, size_t length);

}  // namespace hostccl
