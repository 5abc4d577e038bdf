// The V arrays of AllGatherV, ReduceScatterV, AlltoAllV and AlltoAllVC as plain arithmetic: the
// extent a buffer must have, overlapping blocks, sums, the packed displacements AlltoAllVC implies,
// and the first index where two ranks' arrays differ. Used by the argument check (api), the
// fingerprint and the owned copy of the arrays (core) and the algorithms (algo).
//
// Counts and displacements are numbers of elements (host uint64_t). Block i of a V buffer is
// [displs[i], displs[i] + counts[i]); a block with counts[i] == 0 is empty wherever its
// displacement points (it takes no part in extents or overlaps). Example, n = 3:
//   counts {2, 0, 3}, displs {4, 100, 0}: blocks [4,6) and [0,3); extent 6; no overlap.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl::varr {

// The five V array fields, in the order every list of them keeps (the call record, the algorithm's
// record, their copies): send_counts, send_displs, recv_counts, recv_displs, matrix. Field f holds
// FieldWords(f, n) entries: n, or n x n for the matrix.
inline constexpr int kFields = 5;
constexpr uint64_t FieldWords(int f, uint64_t n) { return f == kFields - 1 ? n * n : n; }

// Largest displs[i] + counts[i] over the non-empty blocks (0 when every block is empty). False
// when a sum overflows uint64_t (then *bad is that block's index).
bool Extent(const uint64_t* counts, const uint64_t* displs, int n, uint64_t* extent, int* bad);

// Whether two non-empty blocks overlap; if so *i < *j are the pair with the lowest displacement
// order found first (deterministic for given arrays). O(n log n) time, O(n) scratch (on the stack
// up to 256 blocks).
bool FindOverlap(const uint64_t* counts, const uint64_t* displs, int n, int* i, int* j);

// Sum of n entries spaced `stride` apart, saturating at UINT64_MAX.
uint64_t Sum(const uint64_t* v, uint64_t n, uint64_t stride = 1);
// Index of the first entry > max over n entries spaced `stride` apart, or -1.
int64_t FirstAbove(const uint64_t* v, uint64_t n, uint64_t max, uint64_t stride = 1);
// Whether some of the n entries spaced `stride` apart is non-zero.
bool AnyNonZero(const uint64_t* v, uint64_t n, uint64_t stride = 1);

// AlltoAllVC: rank r's packed layout implied by the n x n row-major matrix m (m[i*n + j] = elements
// rank i sends to rank j): send_counts = row r, send_displs its prefix sums, recv_counts = column
// r, recv_displs its prefix sums (each output n entries; the sums saturate, an overflowing matrix
// is rejected by the argument check before).
void PackedLayout(const uint64_t* m, int n, int r, uint64_t* send_counts, uint64_t* send_displs,
                  uint64_t* recv_counts, uint64_t* recv_displs);

// The first index where a[0..len) and b[0..len) differ, or -1.
int64_t FirstDifference(const uint64_t* a, const uint64_t* b, uint64_t len);

// "recvCounts[3] (rank 0: 4, rank 2: 5)": names the array and index, both ranks and both values.
std::string DescribeDifference(const char* array, uint64_t index, int rank_a, uint64_t a, int rank_b, uint64_t b);

}  // namespace hostccl::varr
