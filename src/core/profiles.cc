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
                    "(HOSTCCL_PROFILE_OLD_RULES=1: only sum/max/min, 64-bit types intra-node only)"},
      {"AtlasA3", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16"},
      {"AtlasA2", "int8 int16 int32 int64 fp16 fp32 bf16; prod not for int16/bf16; int64 is slow (warning)"},
      {"Atlas910", "int8 int32 int64 fp16 fp32"},
      {"Atlas310P", "HcclReduce not supported (HcclAllReduce is)"},
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
  if (profile == nullptr) return Status::Ok();
  const std::string_view p = profile;
  auto reject = [&](const char* rule) {
    return MakeStatus(Code::kNotSupport, "profile %s: %s (dataType %s, op %s)", profile, rule,
                      DataTypeName(t), RedOpName(op));
  };
  if (p == "Atlas310P") return reject("HcclReduce is not supported on this chip");
  if (p == "Atlas910") {
    if (!In(t, {D::kInt8, D::kInt32, D::kInt64, D::kFp16, D::kFp32}))
      return reject("HcclReduce supports int8, int32, int64, fp16, fp32 only");
    return Status::Ok();
  }
  if (p == "AtlasA3" || p == "AtlasA2") {
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kInt64, D::kFp16, D::kFp32, D::kBf16}))
      return reject("HcclReduce supports int8, int16, int32, int64, fp16, fp32, bf16 only");
    if (op == RedOp::kProd && In(t, {D::kInt16, D::kBf16}))
      return reject("prod is not supported for int16 and bf16");
    if (p == "AtlasA2" && t == D::kInt64)
      HLOG_WARN(kColl, "profile AtlasA2: int64 HcclReduce has degraded performance on this chip");
    return Status::Ok();
  }
  if (p == "Ascend950") {
    if (!In(t, {D::kInt8, D::kInt16, D::kInt32, D::kInt64, D::kUint64, D::kFp16, D::kFp32, D::kFp64, D::kBf16}))
      return reject("HcclReduce supports int8, int16, int32, int64, uint64, fp16, fp32, fp64, bf16 only");
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
