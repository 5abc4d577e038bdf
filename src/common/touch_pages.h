// The first access of every page of a range, made now rather than inside later calls.
//
// Why: on virtual machines whose hypervisor builds its own mapping of each process's pages lazily
// (shadow paging), the first access of a page through a new mapping costs far more than the page
// tables mmap populated suggest: ~1.5 us per 4 KiB page read and ~6.5 us written on the probe
// machine (bench/membw; docs/performance.md "First access through a new mapping"). Memory a call
// will use (device buffers, the shared segment's rings, a stream's task storage) is touched when it
// is created, so the first calls do not pay it. Elsewhere it costs a cache miss per page.
#pragma once

#include <cstddef>

namespace hostccl {

// Touches the first word of every page that [p, p + length) overlaps (a range need not start on a
// page: an arrival ring inside the shared segment). `write`: with an atomic add of 0, so the value
// is unchanged even when another thread or process writes the word meanwhile; else with a load.
void TouchPages(void* p, size_t length, bool write);

}  // namespace hostccl
