#include "common/fingerprint.h"

#include "common/dtype.h"
#include "common/status.h"

namespace hostccl {

const char* CollKindName(CollKind k) {
  if (k == CollKind::kNone) return "none";
  if (k == CollKind::kInternal) return "internal";
  const OpInfo* o = FindOp(k);
  return o ? o->api : "?";
}

uint64_t HashWords(const uint64_t* words, uint64_t n, uint64_t h) {
  // A word at a time: xor it in, multiply by an odd constant (carries spread each bit upwards),
  // then fold the high bits down (so a difference in a word's high bits reaches the low ones).
  // Every step is a bijection of h, so two runs that differ in one word never hash equal. Four
  // instructions per word where a byte-at-a-time FNV-1a took eight dependent multiplies.
  for (uint64_t i = 0; i < n; ++i) {
    h ^= words[i];
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  return h;
}

std::string DescribeFingerprint(const Fingerprint& fp) {
  const OpInfo* o = FindOp(static_cast<CollKind>(fp.kind));
  if (o == nullptr || o->kind == CollKind::kBarrier || o->kind == CollKind::kBatchSendRecv) return "";
  // AlltoAllV/VC carry the element size (in `op`) instead of a dtype (core MakeFingerprint).
  const bool elem = o->kind == CollKind::kAlltoAllV || o->kind == CollKind::kAlltoAllVC;
  std::string s = elem ? StrFormat("count=%llu elem=%uB", static_cast<unsigned long long>(fp.count), fp.op)
                       : StrFormat("count=%llu %s", static_cast<unsigned long long>(fp.count), DataTypeName(fp.dtype));
  if (o->reduces) s += StrFormat(" %s", RedOpName(fp.op));
  if (fp.flags & kFpAccumulateFp32) s += " acc=fp32";
  if (o->root == RootRule::kRoot) s += StrFormat(" root=%u", fp.root);
  if (o->root == RootRule::kPeer) s += StrFormat(" peer=%u", fp.root);
  if (o->kind == CollKind::kAllGatherV || o->kind == CollKind::kReduceScatterV || o->kind == CollKind::kAlltoAllVC)
    s += StrFormat(" arrays=%08x", fp.root);
  return s;
}

std::string FormatMismatch(const Fingerprint& a, int rank_a, const Fingerprint& b, int rank_b) {
  const char* name = CollKindName(static_cast<CollKind>(a.kind));
  auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  const uint8_t send = static_cast<uint8_t>(CollKind::kSend);
  if (a.kind == send && b.kind == send) {
    auto what = [&](const Fingerprint& f) {
      std::string s = StrFormat("count=%llu %s", ull(f.count), DataTypeName(f.dtype));
      if (a.seq != b.seq) s += StrFormat(" after collective #%llu", ull(f.seq));
      return s;
    };
    return StrFormat("HcclSend/HcclRecv mismatch: rank %d sends message #%u to rank %d as %s, rank %d receives "
                     "message #%u from rank %d as %s",
                     rank_b, b.root, rank_a, what(b).c_str(), rank_a, a.root, rank_b, what(a).c_str());
  }
  // A message fingerprint against a collective's: a frame's (b) comes from its sender, a posted
  // receive's (a) is its receiver's.
  if (a.kind == send) return FormatP2PMismatch(a, rank_a, true, b, rank_b, true);
  if (b.kind == send) return FormatP2PMismatch(b, rank_b, false, a, rank_a, false);
  if (a.kind != b.kind || a.seq != b.seq) {
    return StrFormat("%s #%llu mismatch: rank %d is in %s #%llu %s, rank %d is in %s #%llu %s", name,
                     ull(a.seq), rank_a, name, ull(a.seq), DescribeFingerprint(a).c_str(), rank_b,
                     CollKindName(static_cast<CollKind>(b.kind)), ull(b.seq),
                     DescribeFingerprint(b).c_str());
  }
  return StrFormat("%s #%llu mismatch: rank %d %s, rank %d %s", name, ull(a.seq), rank_a,
                   DescribeFingerprint(a).c_str(), rank_b, DescribeFingerprint(b).c_str());
}

std::string FormatP2PMismatch(const Fingerprint& msg, int rank, bool receives, const Fingerprint& coll,
                              int coll_rank, bool p2p_first) {
  const char* dir = receives ? "HcclRecv from" : "HcclSend to";
  const std::string p2p = StrFormat("rank %d is in %s rank %d (message #%u, count=%llu %s)", rank, dir, coll_rank,
                                    msg.root, static_cast<unsigned long long>(msg.count), DataTypeName(msg.dtype));
  const char* name = CollKindName(static_cast<CollKind>(coll.kind));
  const unsigned long long seq = coll.seq;
  const std::string other = StrFormat("rank %d is in %s #%llu %s", coll_rank, name, seq, DescribeFingerprint(coll).c_str());
  if (p2p_first) return StrFormat("%s rank %d mismatch: %s, %s", dir, coll_rank, p2p.c_str(), other.c_str());
  return StrFormat("%s #%llu mismatch: %s, %s", name, seq, other.c_str(), p2p.c_str());
}

std::string FormatBlockedPeer(const Fingerprint& mine, int me, const Fingerprint& msg, int peer, bool receives) {
  const char* op = CollKindName(static_cast<CollKind>(mine.kind));
  const unsigned long long seq = mine.seq;
  return StrFormat("%s #%llu mismatch: rank %d is in %s #%llu %s and waits for rank %d, which is in %s rank %d "
                   "(message #%u, count=%llu %s) and waits for rank %d's %s",
                   op, seq, me, op, seq, DescribeFingerprint(mine).c_str(), peer,
                   receives ? "HcclRecv from" : "HcclSend to", me, msg.root,
                   static_cast<unsigned long long>(msg.count), DataTypeName(msg.dtype), me,
                   receives ? "HcclSend" : "HcclRecv");
}

std::string FormatLateTransfers(const std::vector<LateTransfer>& members, const std::vector<int>& ranks) {
  const int n = static_cast<int>(members.size());
  auto rank_of = [&ranks](int i) { return ranks.empty() ? i : ranks[static_cast<size_t>(i)]; };
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  for (int r = 0; r < n; ++r) {
    const LateTransfer& m = members[static_cast<size_t>(r)];
    if (!m.late) continue;
    const int x = m.send_to;
    if (x >= 0 && x < n) {
      const LateTransfer& peer = members[static_cast<size_t>(x)];
      if (peer.late && peer.send_to == r) {
        if (r < x)
          add(StrFormat("rank %d and rank %d both send to each other before receiving (each waits for the other's "
                        "HcclRecv: a deadlock)", rank_of(r), rank_of(x)));
      } else if (m.send_msg == nullptr) {
        add(StrFormat("rank %d timed out waiting for rank %d to receive its message", rank_of(r), rank_of(x)));
      } else {
        add(StrFormat("rank %d waits for rank %d to receive its message #%u (count=%llu %s)", rank_of(r), rank_of(x),
                      m.send_msg->root, static_cast<unsigned long long>(m.send_msg->count),
                      DataTypeName(m.send_msg->dtype)));
      }
    } else if (m.recv_from >= 0 && m.recv_from < n) {
      add(StrFormat("rank %d is in HcclRecv from rank %d (message #%u, count=%llu %s) and waits for its HcclSend",
                    rank_of(r), rank_of(m.recv_from), m.recv_msg.root,
                    static_cast<unsigned long long>(m.recv_msg.count), DataTypeName(m.recv_msg.dtype)));
    }
  }
  return out;
}

}  // namespace hostccl
