// A collective's fingerprint: what every rank must agree on. It travels in the header of every
// frame (TCP) or descriptor (shared memory), so a mismatch is found with no extra round trip.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl {

enum class CollKind : uint8_t {
  kNone = 0, kReduce = 1, kAllReduce = 2, kBroadcast = 3, kBarrier = 4, kAllGather = 5,
  kReduceScatter = 6, kScatter = 7, kSendRecv = 8, kAlltoAll = 9, kInternal = 10,
};
const char* CollKindName(CollKind k);  // "HcclReduce", ...

struct Fingerprint {
  uint8_t kind = 0;      // CollKind
  uint8_t dtype = 0;     // HcclDataType value
  uint8_t op = 0;        // HcclReduceOp value (0 when not a reduction)
  uint8_t reserved = 0;
  uint32_t root = 0;     // root rank (0 when not rooted)
  uint64_t seq = 0;      // per-communicator sequence number of this collective (1, 2, ...)
  uint64_t count = 0;    // element count
  bool operator==(const Fingerprint& o) const {
    return kind == o.kind && dtype == o.dtype && op == o.op && root == o.root && seq == o.seq &&
           count == o.count;
  }
  bool operator!=(const Fingerprint& o) const { return !(*this == o); }
};
static_assert(sizeof(Fingerprint) == 24, "fingerprint travels on the wire");

// "count=8 fp32 sum root=2" (fields that apply to the kind)
std::string DescribeFingerprint(const Fingerprint& fp);
// "HcclReduce #17 mismatch: rank 0 count=8 fp32 sum root=2, rank 3 count=32 fp32 sum root=2"
// (for a differing collective kind or sequence number, both are named instead).
std::string FormatMismatch(const Fingerprint& a, int rank_a, const Fingerprint& b, int rank_b);

}  // namespace hostccl
