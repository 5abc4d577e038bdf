#include "common/v_arrays.h"

#include <algorithm>
#include <vector>

#include "common/status.h"

namespace hostccl::varr {

bool Extent(const uint64_t* counts, const uint64_t* displs, int n, uint64_t* extent, int* bad) {
  uint64_t e = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] == 0) continue;
    if (displs[i] > UINT64_MAX - counts[i]) {
      *bad = i;
      return false;
    }
    e = std::max(e, displs[i] + counts[i]);
  }
  *extent = e;
  return true;
}

bool FindOverlap(const uint64_t* counts, const uint64_t* displs, int n, int* i, int* j) {
  // Blocks laid out in rank order, each after the previous one's end (the usual layout): one pass.
  uint64_t prev_end = 0;
  bool in_order = true;
  for (int k = 0; k < n && in_order; ++k) {
    if (counts[k] == 0) continue;
    in_order = displs[k] >= prev_end;
    prev_end = displs[k] + counts[k];  // no overflow: Extent() was checked first
  }
  if (in_order) return false;
  uint32_t stack[256];
  std::vector<uint32_t> heap;
  uint32_t* idx = stack;
  if (n > 256) {
    heap.resize(static_cast<size_t>(n));
    idx = heap.data();
  }
  int m = 0;
  for (int k = 0; k < n; ++k)
    if (counts[k] != 0) idx[m++] = static_cast<uint32_t>(k);
  std::sort(idx, idx + m, [&](uint32_t a, uint32_t b) { return displs[a] != displs[b] ? displs[a] < displs[b] : a < b; });
  // Sorted by start: a block overlaps an earlier one iff it starts before the furthest end so far.
  uint64_t end = 0;
  uint32_t owner = 0;
  for (int k = 0; k < m; ++k) {
    const uint32_t b = idx[k];
    if (k > 0 && displs[b] < end) {
      *i = static_cast<int>(std::min(owner, b));
      *j = static_cast<int>(std::max(owner, b));
      return true;
    }
    const uint64_t e = displs[b] + counts[b];  // no overflow: Extent() was checked first
    if (k == 0 || e > end) {
      end = e;
      owner = b;
    }
  }
  return false;
}

uint64_t Sum(const uint64_t* v, uint64_t n, uint64_t stride) {
  uint64_t s = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t x = v[k * stride];
    s = x > UINT64_MAX - s ? UINT64_MAX : s + x;
  }
  return s;
}

int64_t FirstAbove(const uint64_t* v, uint64_t n, uint64_t max, uint64_t stride) {
  for (uint64_t k = 0; k < n; ++k)
    if (v[k * stride] > max) return static_cast<int64_t>(k);
  return -1;
}

bool AnyNonZero(const uint64_t* v, uint64_t n, uint64_t stride) {
  for (uint64_t k = 0; k < n; ++k)
    if (v[k * stride] != 0) return true;
  return false;
}

void PackedLayout(const uint64_t* m, int n, int r, uint64_t* send_counts, uint64_t* send_displs,
                  uint64_t* recv_counts, uint64_t* recv_displs) {
  const uint64_t un = static_cast<uint64_t>(n), ur = static_cast<uint64_t>(r);
  uint64_t s = 0, d = 0;
  for (uint64_t k = 0; k < un; ++k) {
    send_counts[k] = m[ur * un + k];
    send_displs[k] = s;
    s = send_counts[k] > UINT64_MAX - s ? UINT64_MAX : s + send_counts[k];
    recv_counts[k] = m[k * un + ur];
    recv_displs[k] = d;
    d = recv_counts[k] > UINT64_MAX - d ? UINT64_MAX : d + recv_counts[k];
  }
}

int64_t FirstDifference(const uint64_t* a, const uint64_t* b, uint64_t len) {
  for (uint64_t k = 0; k < len; ++k)
    if (a[k] != b[k]) return static_cast<int64_t>(k);
  return -1;
}

std::string DescribeDifference(const char* array, uint64_t index, int rank_a, uint64_t a, int rank_b, uint64_t b) {
  return StrFormat("%s[%llu] (rank %d: %llu, rank %d: %llu)", array, static_cast<unsigned long long>(index), rank_a,
                   static_cast<unsigned long long>(a), rank_b, static_cast<unsigned long long>(b));
}

}  // namespace hostccl::varr
