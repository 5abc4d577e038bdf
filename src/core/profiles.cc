#include "core/profiles.h"

#include <strings.h>

#include <atomic>
#include <cstdlib>
#include <string_view>
#include <algorithm>
#include <initializer_list>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::core {
namespace {

using D = DataType;

bool In(D t, std::initializer_list<D> set) { return std::find(set.begin(), set.end(), t) != set.end(); }

}  // namespace

const std::vector<ProfileInfo>& ListProfiles() {
  static const std::vector<ProfileInfo> list = {
      {"Ascend950", "int8 int16 int32 int64 uint64 fp16 fp32 fp64 bf16; prod not for int16/bf16 "
                    "(HOSTCCL_PROFILE_OLD_RULES=1: only sum/max/min, 64-bit types intra-node only)",
       "as HcclReduce", "-", "every type but int128", "-"},
      {"AtlasA3", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16", "as HcclReduce", "-",
       "8/16/32/64-bit integers, fp16 fp32 fp64 bf16", "AllGatherV ReduceScatterV: one server"},
      {"AtlasA2", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16; int64 is slow (warning)",
       "as HcclReduce", "-", "8/16/32/64-bit integers, fp16 fp32 fp64 bf16",
       "AllGatherV ReduceScatterV: the same number of ranks on every server"},
      {"Atlas910", "int8 int32 int64 fp16 fp32", "as HcclReduce", "AllGatherV ReduceScatterV AlltoAllVC",
       "8/16/32/64-bit integers, fp16 fp32 fp64", "AlltoAll AlltoAllV: whole 4-device clusters (0-3, 4-7)"},
      {"Atlas310P", "HcclReduce not supported (HcclAllReduce is)", "int8 int16 int32 fp16 fp32; prod/max/min not for int16",
       "Reduce Broadcast Scatter Send Recv BatchSendRecv Barrier AlltoAllVC", "8/16/32/64-bit integers, fp16 fp32 fp64",
       "AllGather ReduceScatter: one server, <= 32 ranks; AllGatherV ReduceScatterV AlltoAll AlltoAllV: one "
       "server, <= 4 ranks"},
  };
  return list;
}

const char* ActiveProfile() {
  const char* raw = std::getenv(GetKnobInfo(Knob::kSoc).name);
  if (raw == nullptr || *raw == '\0') return nullptr;
  for (const auto& p : ListProfiles())
    if (strcasecmp(raw, p.name) == 0) return p.name;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    HLOG_WARN(kEnv, "HOSTCCL_SOC=%s is not a known profile (Ascend950, AtlasA3, AtlasA2, Atlas910, "
              "Atlas310P); using the host default", raw);
  }
  return nullptr;
}

Topology MakeTopology(const std::vector<std::string>& node, const std::vector<int>& device) {
  Topology t;
  t.ranks = static_cast<int>(node.size());
  std::vector<std::string> hosts;  // in order of first appearance
  std::vector<std::vector<int>> devs;
  for (size_t i = 0; i < node.size(); ++i) {
    const auto it = std::find(hosts.begin(), hosts.end(), node[i]);
    const size_t h = static_cast<size_t>(it - hosts.begin());
    if (it == hosts.end()) {
      hosts.push_back(node[i]);
      devs.emplace_back();
    }
    devs[h].push_back(i < device.size() ? device[i] : -1);
  }
  t.hosts = static_cast<int>(hosts.size());
  for (size_t h = 0; h < devs.size(); ++h) {
    std::vector<int> d = devs[h];
    t.symmetric = t.symmetric && d.size() == devs[0].size();
    std::sort(d.begin(), d.end());
    // Whole groups: sorted, distinct, non-negative, starting at a multiple of 4 and consecutive
    // within each group of four.
    bool whole = d.size() % 4 == 0;
    for (size_t k = 0; whole && k < d.size(); ++k)
      whole = d[k] >= 0 && (k % 4 == 0 ? d[k] % 4 == 0 : d[k] == d[k - 1] + 1);
    t.whole_quads = t.whole_quads && whole;
    std::string list;
    for (size_t k = 0; k < devs[h].size(); ++k) {
      if (k > 0) list += ',';
      list += std::to_string(devs[h][k]);
    }
    if (hosts.size() == 1) {
      t.devices = list;
    } else {
      if (h > 0) t.devices += "; ";
      t.devices += StrFormat("host %zu: %s", h, list.c_str());
    }
  }
  return t;
}

Topology SimpleTopology(bool multi_node) {
  Topology t;
  t.hosts = multi_node ? 2 : 1;
  return t;
}

Status CheckReduceProfile(DataType t, RedOp op, bool multi_node) {
  return CheckReduceProfile(ActiveProfile(), t, op, multi_node);
}

Status CheckReduceProfile(const char* profile, DataType t, RedOp op, bool multi_node) {
  return CheckProfile(profile, CollKind::kReduce, t, op, SimpleTopology(multi_node));
}

namespace {

// Operators a chip does not have (collectives.md 5.1).
bool Unavailable(std::string_view p, CollKind k) {
  using K = CollKind;
  if (p == "Atlas310P")
    return k == K::kReduce || k == K::kBroadcast || k == K::kScatter || k == K::kSend || k == K::kRecv ||
           k == K::kBatchSendRecv || k == K::kBarrier || k == K::kAlltoAllVC;
  if (p == "Atlas910") return k == K::kAllGatherV || k == K::kReduceScatterV || k == K::kAlltoAllVC;
  return false;
}

// The topology rules (the spec's per-chip limits: servers, NPU count, symmetric servers, whole
// 4-device clusters): an empty string when the communicator's shape is fine.
std::string TopologyRule(std::string_view p, CollKind k, const Topology& topo, const char* api) {
  using K = CollKind;
  auto one_server = [&](int max_ranks) -> std::string {
    if (topo.multi_node()) return StrFormat("%s runs within one server only (this communicator spans %d hosts)", api, topo.hosts);
    if (topo.ranks > max_ranks)
      return StrFormat("%s runs on at most %d NPUs (this communicator has %d ranks)", api, max_ranks, topo.ranks);
    return "";
  };
  if (p == "Atlas310P") {
    if (k == K::kAllGather || k == K::kReduceScatter) return one_server(32);
    if (k == K::kAllGatherV || k == K::kReduceScatterV || k == K::kAlltoAll || k == K::kAlltoAllV) return one_server(4);
  }
  if (p == "AtlasA3" && (k == K::kAllGatherV || k == K::kReduceScatterV)) return one_server(topo.ranks);
  if (p == "AtlasA2" && (k == K::kAllGatherV || k == K::kReduceScatterV) && !topo.symmetric)
    return StrFormat("%s needs the same number of ranks on every server (devices per host: %s)", api,
                     topo.devices.c_str());
  if (p == "Atlas910" && (k == K::kAlltoAll || k == K::kAlltoAllV) && !topo.whole_quads)
    return StrFormat("%s needs whole 4-device clusters (devices 0-3, 4-7) on every server, one rank per device "
                     "(devices: %s)", api, topo.devices.c_str());
  return "";
}

}  // namespace

Status CheckProfile(const char* profile, CollKind k, DataType t, RedOp op, const Topology& topo) {
  if (profile == nullptr) return Status::Ok();
  const std::string_view p = profile;
  const OpInfo* info = FindOp(k);
  const char* api = info ? info->api : "?";
  auto reject = [&](const std::string& rule) {
    if (k == CollKind::kBarrier) return MakeStatus(Code::kNotSupport, "profile %s: %s", profile, rule.c_str());
    if (info != nullptr && !info->reduces)
      return MakeStatus(Code::kNotSupport, "profile %s: %s (dataType %s)", profile, rule.c_str(), DataTypeName(t));
    return MakeStatus(Code::kNotSupport, "profile %s: %s (dataType %s, op %s)", profile, rule.c_str(),
                      DataTypeName(t), RedOpName(op));
  };
  if (Unavailable(p, k)) return reject(StrFormat("%s is not supported on this chip", api));
  if (const std::string rule = TopologyRule(p, k, topo, api); !rule.empty()) return reject(rule);
  if (info != nullptr && !info->reduces) {
    // Data movement (collectives.md 5.2): 950 moves every type but int128; the others neither
    // int128 nor the 8-bit floats; 910 and 310P no bf16 either.
    if (p != "Ascend950" && In(t, {D::kHif8, D::kFp8E4M3, D::kFp8E5M2, D::kFp8E8M0}))
      return reject(StrFormat("%s does not move 8-bit float types on this chip", api));
    if (t == D::kInt128) return reject(StrFormat("%s does not move int128 on this chip", api));
    if ((p == "Atlas910" || p == "Atlas310P") && t == D::kBf16)
      return reject(StrFormat("%s does not support bf16 on this chip", api));
    return Status::Ok();
  }
  if (k == CollKind::kReduceScatterV) {
    // ReduceScatterV has its own, narrower rules (collectives.md 5.3; 910: unavailable above).
    if (p == "Atlas310P") {
      if (!In(t, {D::kInt16, D::kFp16, D::kFp32})) return reject("HcclReduceScatterV supports int16, fp16, fp32 only");
      if (op != RedOp::kSum) return reject("HcclReduceScatterV supports sum only");
      return Status::Ok();
    }
    if (p == "AtlasA2" && !In(t, {D::kInt8, D::kInt16, D::kInt32, D::kFp16, D::kFp32, D::kBf16}))
      return reject("HcclReduceScatterV supports int8, int16, int32, fp16, fp32, bf16 only");
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kInt64, D::kFp16, D::kFp32, D::kBf16}))
      return reject("HcclReduceScatterV supports int8, int16, int32, int64, fp16, fp32, bf16 only");
    if ((p == "AtlasA3" || p == "AtlasA2") && op == RedOp::kProd)
      return reject("HcclReduceScatterV supports sum, max and min only");
    if (op == RedOp::kProd && In(t, {D::kInt16, D::kBf16})) return reject("prod is not supported for int16 and bf16");
    return Status::Ok();
  }
  if (p == "Atlas310P") {  // AllReduce, ReduceScatter (Reduce is unavailable above)
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kFp16, D::kFp32}))
      return reject(StrFormat("%s supports int8, int16, int32, fp16, fp32 only", api));
    if (op != RedOp::kSum && t == D::kInt16) return reject("prod, max and min are not supported for int16");
    return Status::Ok();
  }
  if (p == "Atlas910") {
    if (!In(t, {D::kInt8, D::kInt32, D::kInt64, D::kFp16, D::kFp32}))
      return reject(StrFormat("%s supports int8, int32, int64, fp16, fp32 only", api));
    return Status::Ok();
  }
  if (p == "AtlasA3" || p == "AtlasA2") {
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kInt64, D::kFp16, D::kFp32, D::kBf16}))
      return reject(StrFormat("%s supports int8, int16, int32, int64, fp16, fp32, bf16 only", api));
    if (op == RedOp::kProd && In(t, {D::kInt16, D::kBf16}))
      return reject("prod is not supported for int16 and bf16");
    if (p == "AtlasA2" && t == D::kInt64)
      HLOG_WARN(kColl, "profile AtlasA2: int64 %s has degraded performance on this chip", api);
    return Status::Ok();
  }
  if (p == "Ascend950") {
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kInt64, D::kUint64, D::kFp16, D::kFp32, D::kFp64, D::kBf16}))
      return reject(StrFormat("%s supports int8, int16, int32, int64, uint64, fp16, fp32, fp64, bf16 only", api));
    if (EnvBool(Knob::kProfileOldRules, false)) {
      if (op == RedOp::kProd) return reject("(older rule) only sum, max and min are supported");
      if (topo.multi_node() && In(t, {D::kInt64, D::kUint64, D::kFp64}))
        return reject("(older rule) 64-bit types are supported within one node only");
    }
    if (op == RedOp::kProd && In(t, {D::kInt16, D::kBf16}))
      return reject("prod is not supported for int16 and bf16");
    return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace hostccl::core
