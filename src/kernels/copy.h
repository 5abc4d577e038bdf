// Bulk copy for results written into another rank's buffer: non-temporal (streaming) stores where
// the CPU has AVX2, so the destination is not read first (no read-for-ownership) and does not
// evict the source from cache; plain memcpy otherwise and for the unaligned head and tail.
#pragma once

#include <cstddef>

namespace hostccl::kern {

void CopyStreaming(void* dst, const void* src, size_t bytes);

}  // namespace hostccl::kern
