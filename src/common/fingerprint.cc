#include "common/fingerprint.h"

#include "common/dtype.h"
#include "common/status.h"

namespace hostccl {

const char* CollKindName(CollKind k) {
  switch (k) {
    case CollKind::kNone: return "none";
    case CollKind::kReduce: return "HcclReduce";
    case CollKind::kAllReduce: return "HcclAllReduce";
    case CollKind::kBroadcast: return "HcclBroadcast";
    case CollKind::kBarrier: return "HcclBarrier";
    case CollKind::kAllGather: return "HcclAllGather";
    case CollKind::kReduceScatter: return "HcclReduceScatter";
    case CollKind::kScatter: return "HcclScatter";
    case CollKind::kSendRecv: return "HcclSend/Recv";
    case CollKind::kAlltoAll: return "HcclAlltoAll";
    case CollKind::kInternal: return "internal";
  }
  return "?";
}

std::string DescribeFingerprint(const Fingerprint& fp) {
  auto kind = static_cast<CollKind>(fp.kind);
  switch (kind) {
    case CollKind::kBarrier:
    case CollKind::kNone:
    case CollKind::kInternal:
      return "";
    default: break;
  }
  std::string s = StrFormat("count=%llu %s", static_cast<unsigned long long>(fp.count),
                            DataTypeName(fp.dtype));
  bool reduction = kind == CollKind::kReduce || kind == CollKind::kAllReduce ||
                   kind == CollKind::kReduceScatter;
  if (reduction) s += StrFormat(" %s", RedOpName(fp.op));
  bool rooted = kind == CollKind::kReduce || kind == CollKind::kBroadcast || kind == CollKind::kScatter;
  if (rooted) s += StrFormat(" root=%u", fp.root);
  return s;
}

std::string FormatMismatch(const Fingerprint& a, int rank_a, const Fingerprint& b, int rank_b) {
  const char* name = CollKindName(static_cast<CollKind>(a.kind));
  auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  if (a.kind != b.kind || a.seq != b.seq) {
    return StrFormat("%s #%llu mismatch: rank %d is in %s #%llu %s, rank %d is in %s #%llu %s", name,
                     ull(a.seq), rank_a, name, ull(a.seq), DescribeFingerprint(a).c_str(), rank_b,
                     CollKindName(static_cast<CollKind>(b.kind)), ull(b.seq),
                     DescribeFingerprint(b).c_str());
  }
  return StrFormat("%s #%llu mismatch: rank %d %s, rank %d %s", name, ull(a.seq), rank_a,
                   DescribeFingerprint(a).c_str(), rank_b, DescribeFingerprint(b).c_str());
}

}  // namespace hostccl
