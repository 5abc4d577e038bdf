// The test harness's own view of HCCL's 12 reducible data types and 4 ops, built only from the
// public header's enum values (independent of src/common/dtype.h, so a wrong library table
// cannot hide behind a shared definition).
#pragma once

#include <hccl/hccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hostccl::test {

// How an element's bits are interpreted by the reference fold.
enum class ElemKind { kSigned, kUnsigned, kFp16, kBf16, kFp32, kFp64 };

struct DtypeDesc {
  HcclDataType type;
  const char* name;  // hccl_test's -d name
  size_t size;       // bytes per element
  ElemKind kind;
};

// The 12 reducible types in HCCL enum order.
const std::vector<DtypeDesc>& ReducibleDtypes();
// The 4 ops in HCCL enum order.
const std::vector<HcclReduceOp>& ReduceOps();
// Lookup by enum value; aborts on a value that is not one of the 12 (a test bug).
const DtypeDesc& Desc(HcclDataType type);
const char* OpName(HcclReduceOp op);

inline bool IsFloat(const DtypeDesc& d) {
  return d.kind == ElemKind::kFp16 || d.kind == ElemKind::kBf16 || d.kind == ElemKind::kFp32 ||
         d.kind == ElemKind::kFp64;
}

}  // namespace hostccl::test
