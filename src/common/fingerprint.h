// A collective's fingerprint: what every rank must agree on. It travels in the header of every
// frame (TCP) or descriptor (shared memory), so a mismatch is found with no extra round trip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ops.h"

namespace hostccl {

struct Fingerprint {
  uint8_t kind = 0;      // CollKind
  uint8_t dtype = 0;     // HcclDataType value
  uint8_t op = 0;        // HcclReduceOp value (0 when not a reduction)
  uint8_t flags = 0;     // kFpAccumulateFp32 when a fp16/bf16 sum/prod accumulates in fp32
  uint32_t root = 0;     // root rank or peer (0 when not rooted); for operators with V arrays
                         // that must match (AllGatherV, ReduceScatterV, AlltoAllVC) the low 32
                         // bits of the arrays' hash (HashWords), folded: h ^ (h >> 32)
  uint64_t seq = 0;      // per-communicator sequence number of this collective (1, 2, ...)
  uint64_t count = 0;    // element count
  bool operator==(const Fingerprint& o) const {
    return kind == o.kind && dtype == o.dtype && op == o.op && flags == o.flags && root == o.root &&
           seq == o.seq && count == o.count;
  }
  bool operator!=(const Fingerprint& o) const { return !(*this == o); }
};
static_assert(sizeof(Fingerprint) == 24, "fingerprint travels on the wire");
// Fingerprint::flags: HOSTCCL_ACCUMULATE=fp32 changes this reduction's result (semantics.md
// "Accumulation"), so ranks must agree on it; DescribeFingerprint shows it as "acc=fp32".
inline constexpr uint8_t kFpAccumulateFp32 = 1;

// Point-to-point messages (HcclSend/HcclRecv/HcclBatchSendRecv, docs/semantics.md "Point-to-point")
// carry a message fingerprint: kind = kSend on both sides, dtype and count of the message, root =
// the message's number in its (sender, receiver) order (1, 2, ...), op = kP2PData or kP2PAck, and
// seq = the communicator's collective sequence number at the time of the call (the "epoch": P2P
// takes no sequence number of its own). Operations compare as "the same operation" (stall probes,
// early frames) only when both are collectives: a P2P message is checked when it is matched.
inline constexpr uint8_t kP2PData = 0;
inline constexpr uint8_t kP2PAck = 1;
inline bool IsP2PKind(uint8_t kind) {
  return kind == static_cast<uint8_t>(CollKind::kSend) || kind == static_cast<uint8_t>(CollKind::kRecv) ||
         kind == static_cast<uint8_t>(CollKind::kBatchSendRecv);
}
// Two fingerprints of the same collective (equal sequence number, neither point-to-point): where
// differing arguments are a mismatch rather than another operation.
inline bool SameCollective(const Fingerprint& a, const Fingerprint& b) {
  return a.seq == b.seq && !IsP2PKind(a.kind) && !IsP2PKind(b.kind);
}

// A 64-bit hash of raw 64-bit words (the V arrays' entry into the fingerprint); chainable: pass
// one run's hash as the next run's h.
uint64_t HashWords(const uint64_t* words, uint64_t n, uint64_t h = 1469598103934665603ull);

// "count=8 fp32 sum root=2" (fields that apply to the kind)
std::string DescribeFingerprint(const Fingerprint& fp);
// "HcclReduce #17 mismatch: rank 0 count=8 fp32 sum root=2, rank 3 count=32 fp32 sum root=2"
// (for a differing collective kind or sequence number, both are named instead). For two P2P
// message fingerprints, a is the receiver's and b the sender's (and against a collective's, a
// message fingerprint in a is a receiver's, in b a sender's: FormatP2PMismatch):
// "HcclSend/HcclRecv mismatch: rank 0 sends message #1 to rank 1 as count=8 fp32, rank 1 receives
// message #1 from rank 0 as count=16 fp32".
std::string FormatMismatch(const Fingerprint& a, int rank_a, const Fingerprint& b, int rank_b);
// Rank `rank` is in HcclRecv from (`receives`) or HcclSend to rank `coll_rank`, of message `msg`
// (count, dtype, the message number in `root`), while `coll_rank` is in collective `coll`:
// "HcclRecv from rank 1 mismatch: rank 0 is in HcclRecv from rank 1 (message #1, count=8 fp32),
// rank 1 is in HcclAllReduce #2 count=8 fp32 sum" (`p2p_first`), else led by the collective.
// FormatMismatch words a message fingerprint against a collective's this way.
std::string FormatP2PMismatch(const Fingerprint& msg, int rank, bool receives, const Fingerprint& coll,
                              int coll_rank, bool p2p_first);
// Rank `me` waits in collective `mine` for rank `peer`, which waits in HcclSend to `me` for me's
// HcclRecv (`receives` false) or in HcclRecv from `me` for me's HcclSend (`receives` true), of
// message `msg` (its fingerprint: count, dtype, and the message number in `root`): two different
// operations that can never complete.
std::string FormatBlockedPeer(const Fingerprint& mine, int me, const Fingerprint& msg, int peer, bool receives);
// What one member of a group is doing in transfers, for the timeout message of a collective that
// waits for it (only `late` members are described): it waits for `send_to` to receive its message
// `send_msg` (null: that send timed out and withdrew it), or else it is in HcclRecv from
// `recv_from` for message `recv_msg` (count, dtype, and the message number in `root`). Members
// are indices into the group; -1: none.
struct LateTransfer {
  bool late = false;
  int send_to = -1;
  const Fingerprint* send_msg = nullptr;
  int recv_from = -1;
  Fingerprint recv_msg;
};
// "rank 0 and rank 2 both send to each other before receiving (…: a deadlock); rank 3 is in
// HcclRecv from rank 1 (…)": two late members that each wait for the other to receive are named as
// a pair; "" when no late member waits in a transfer. `ranks[i]`: member i's communicator rank
// (empty: the same as i).
std::string FormatLateTransfers(const std::vector<LateTransfer>& members, const std::vector<int>& ranks);

}  // namespace hostccl
