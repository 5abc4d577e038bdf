#include "harness/dtypes.h"

#include <cstdio>
#include <cstdlib>

namespace hostccl::test {

const std::vector<DtypeDesc>& ReducibleDtypes() {
  static const std::vector<DtypeDesc> kTypes = {
      {HCCL_DATA_TYPE_INT8, "int8", 1, ElemKind::kSigned},
      {HCCL_DATA_TYPE_INT16, "int16", 2, ElemKind::kSigned},
      {HCCL_DATA_TYPE_INT32, "int32", 4, ElemKind::kSigned},
      {HCCL_DATA_TYPE_FP16, "fp16", 2, ElemKind::kFp16},
      {HCCL_DATA_TYPE_FP32, "fp32", 4, ElemKind::kFp32},
      {HCCL_DATA_TYPE_INT64, "int64", 8, ElemKind::kSigned},
      {HCCL_DATA_TYPE_UINT64, "uint64", 8, ElemKind::kUnsigned},
      {HCCL_DATA_TYPE_UINT8, "uint8", 1, ElemKind::kUnsigned},
      {HCCL_DATA_TYPE_UINT16, "uint16", 2, ElemKind::kUnsigned},
      {HCCL_DATA_TYPE_UINT32, "uint32", 4, ElemKind::kUnsigned},
      {HCCL_DATA_TYPE_FP64, "fp64", 8, ElemKind::kFp64},
      {HCCL_DATA_TYPE_BFP16, "bfp16", 2, ElemKind::kBf16},
  };
  return kTypes;
}

const std::vector<HcclReduceOp>& ReduceOps() {
  static const std::vector<HcclReduceOp> kOps = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD,
                                                  HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};
  return kOps;
}

const DtypeDesc& Desc(HcclDataType type) {
  for (const auto& d : ReducibleDtypes())
    if (d.type == type) return d;
  std::fprintf(stderr, "hostccl test harness: dtype %d is not reducible\n", static_cast<int>(type));
  std::abort();
}

const char* OpName(HcclReduceOp op) {
  switch (op) {
    case HCCL_REDUCE_SUM: return "sum";
    case HCCL_REDUCE_PROD: return "prod";
    case HCCL_REDUCE_MAX: return "max";
    case HCCL_REDUCE_MIN: return "min";
    default: return "?";
  }
}

}  // namespace hostccl::test
