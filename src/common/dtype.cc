#include "common/dtype.h"

namespace hostccl {

const char* DataTypeName(int v) {
  switch (v) {
#define X(id, val, name, size, red) case val: return name;
    HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
  }
  return "?";
}

const char* RedOpName(int v) {
  switch (v) {
#define X(id, val, name) case val: return name;
    HOSTCCL_FOR_EACH_REDOP(X)
#undef X
  }
  return "?";
}

std::optional<DataType> ParseDataType(std::string_view n) {
#define X(id, val, name, size, red) if (n == name) return DataType::k##id;
  HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
  if (n == "bf16" || n == "bfloat16") return DataType::kBf16;
  if (n == "float" || n == "float32") return DataType::kFp32;
  if (n == "half" || n == "float16") return DataType::kFp16;
  if (n == "double" || n == "float64") return DataType::kFp64;
  return std::nullopt;
}

std::optional<RedOp> ParseRedOp(std::string_view n) {
#define X(id, val, name) if (n == name) return RedOp::k##id;
  HOSTCCL_FOR_EACH_REDOP(X)
#undef X
  return std::nullopt;
}

}  // namespace hostccl
