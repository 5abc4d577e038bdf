// A collective's fingerprint: what every rank must agree on. It travels in the header of every
// frame (TCP) or descriptor (shared memory), so a mismatch is found with no extra round trip.
#pragma once

#include <cstdint>
#include <string>

#include "common/ops.h"

namespace hostccl {

struct Fingerprint {
  uint8_t kind = 0;      // CollKind
  uint8_t dtype = 0;     // HcclDataType value
  uint8_t op = 0;        // HcclReduceOp value (0 when not a reduction)
  uint8_t reserved = 0;
  uint32_t root = 0;     // root rank or peer (0 when not rooted); for operators with V arrays
                         // that must match (AllGatherV, ReduceScatterV, AlltoAllVC) the low 32
                         // bits of the arrays' FNV-1a hash (HashWords)
  uint64_t seq = 0;      // per-communicator sequence number of this collective (1, 2, ...)
  uint64_t count = 0;    // element count
  bool operator==(const Fingerprint& o) const {
    return kind == o.kind && dtype == o.dtype && op == o.op && root == o.root && seq == o.seq &&
           count == o.count;
  }
  bool operator!=(const Fingerprint& o) const { return !(*this == o); }
};
static_assert(sizeof(Fingerprint) == 24, "fingerprint travels on the wire");

// FNV-1a over raw 64-bit words (the V arrays' entry into the fingerprint).
uint64_t HashWords(const uint64_t* words, uint64_t n, uint64_t h = 1469598103934665603ull);

// "count=8 fp32 sum root=2" (fields that apply to the kind)
std::string DescribeFingerprint(const Fingerprint& fp);
// "HcclReduce #17 mismatch: rank 0 count=8 fp32 sum root=2, rank 3 count=32 fp32 sum root=2"
// (for a differing collective kind or sequence number, both are named instead).
std::string FormatMismatch(const Fingerprint& a, int rank_a, const Fingerprint& b, int rank_b);

}  // namespace hostccl
