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
       "as HcclReduce", "-", "every type but int128"},
      {"AtlasA3", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16", "as HcclReduce", "-",
       "8/16/32/64-bit integers, fp16 fp32 fp64 bf16"},
      {"AtlasA2", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16; int64 is slow (warning)",
       "as HcclReduce", "-", "8/16/32/64-bit integers, fp16 fp32 fp64 bf16"},
      {"Atlas910", "int8 int32 int64 fp16 fp32", "as HcclReduce", "AllGatherV ReduceScatterV AlltoAllVC",
       "8/16/32/64-bit integers, fp16 fp32 fp64"},
      {"Atlas310P", "HcclReduce not supported (HcclAllReduce is)", "int8 int16 int32 fp16 fp32; prod/max/min not for int16",
       "Reduce Broadcast Scatter Send Recv BatchSendRecv Barrier AlltoAllVC", "8/16/32/64-bit integers, fp16 fp32 fp64"},
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

Status CheckReduceProfile(DataType t, RedOp op, bool multi_node) {
  return CheckReduceProfile(ActiveProfile(), t, op, multi_node);
}

Status CheckReduceProfile(const char* profile, DataType t, RedOp op, bool multi_node) {
  return CheckProfile(profile, CollKind::kReduce, t, op, multi_node);
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

}  // namespace

Status CheckProfile(const char* profile, CollKind k, DataType t, RedOp op, bool multi_node) {
  if (profile == nullptr) return Status::Ok();
  const std::string_view p = profile;
  const OpInfo* info = FindOp(k);
  const char* api = info ? info->api : "?";
  auto reject = [&](const std::string& rule) {
    if (info != nullptr && !info->reduces)
      return MakeStatus(Code::kNotSupport, "profile %s: %s (dataType %s)", profile, rule.c_str(), DataTypeName(t));
    return MakeStatus(Code::kNotSupport, "profile %s: %s (dataType %s, op %s)", profile, rule.c_str(),
                      DataTypeName(t), RedOpName(op));
  };
  if (Unavailable(p, k)) return reject(StrFormat("%s is not supported on this chip", api));
  // Topology (collectives.md 5.1): 310P runs AllGather(V) and AlltoAll(V) within one server only.
  if (p == "Atlas310P" && multi_node &&
      (k == CollKind::kAlltoAll || k == CollKind::kAlltoAllV || k == CollKind::kAllGather ||
       k == CollKind::kAllGatherV))
    return reject(StrFormat("%s runs within one server only on this chip", api));
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
    if (p == "AtlasA3" && multi_node) return reject("HcclReduceScatterV runs within one server only");
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
      if (multi_node && In(t, {D::kInt64, D::kUint64, D::kFp64}))
        return reject("(older rule) 64-bit types are supported within one node only");
    }
    if (op == RedOp::kProd && In(t, {D::kInt16, D::kBf16}))
      return reject("prod is not supported for int16 and bf16");
    return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace hostccl::core
