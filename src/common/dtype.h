// The one list of data types and reduction ops. Values are HCCL's (hccl_types.h); the api layer
// static_asserts that they match. Names are hccl_test's -d / -o names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

// X(Id, hcclValue, "name", elementBytes, reducible)
#define HOSTCCL_FOR_EACH_DTYPE(X)      \
  X(Int8, 0, "int8", 1, true)          \
  X(Int16, 1, "int16", 2, true)        \
  X(Int32, 2, "int32", 4, true)        \
  X(Fp16, 3, "fp16", 2, true)          \
  X(Fp32, 4, "fp32", 4, true)          \
  X(Int64, 5, "int64", 8, true)        \
  X(Uint64, 6, "uint64", 8, true)      \
  X(Uint8, 7, "uint8", 1, true)        \
  X(Uint16, 8, "uint16", 2, true)      \
  X(Uint32, 9, "uint32", 4, true)      \
  X(Fp64, 10, "fp64", 8, true)         \
  X(Bf16, 11, "bfp16", 2, true)        \
  X(Int128, 12, "int128", 16, false)   \
  X(Hif8, 14, "hif8", 1, false)        \
  X(Fp8E4M3, 15, "fp8e4m3", 1, false)  \
  X(Fp8E5M2, 16, "fp8e5m2", 1, false)  \
  X(Fp8E8M0, 17, "fp8e8m0", 1, false)

// The 12 reducible types, in HCCL enum order (kernel tables and test grids iterate this).
#define HOSTCCL_FOR_EACH_REDUCIBLE_DTYPE(X) \
  X(Int8) X(Int16) X(Int32) X(Fp16) X(Fp32) X(Int64) X(Uint64) X(Uint8) X(Uint16) X(Uint32) X(Fp64) X(Bf16)

// X(Id, hcclValue, "name")
#define HOSTCCL_FOR_EACH_REDOP(X) \
  X(Sum, 0, "sum")                \
  X(Prod, 1, "prod")              \
  X(Max, 2, "max")                \
  X(Min, 3, "min")

namespace hostccl {

enum class DataType : int {
#define X(id, v, name, size, red) k##id = v,
  HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
};

enum class RedOp : int {
#define X(id, v, name) k##id = v,
  HOSTCCL_FOR_EACH_REDOP(X)
#undef X
};

constexpr int kNumRedOps = 4;

// Element size in bytes, or 0 for a value that is not a known data type.
constexpr size_t DataTypeSize(int v) {
  switch (v) {
#define X(id, val, name, size, red) case val: return size;
    HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
  }
  return 0;
}
constexpr size_t DataTypeSize(DataType t) { return DataTypeSize(static_cast<int>(t)); }

constexpr bool IsKnownDataType(int v) { return DataTypeSize(v) != 0; }

constexpr bool IsReducible(int v) {
  switch (v) {
#define X(id, val, name, size, red) case val: return red;
    HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
  }
  return false;
}

constexpr bool IsValidRedOp(int v) { return v >= 0 && v < kNumRedOps; }

// "fp32", "bfp16", ...; "unknown(<v>)" style names are not produced: returns "?" for unknown.
const char* DataTypeName(int v);
inline const char* DataTypeName(DataType t) { return DataTypeName(static_cast<int>(t)); }
const char* RedOpName(int v);
inline const char* RedOpName(RedOp o) { return RedOpName(static_cast<int>(o)); }

std::optional<DataType> ParseDataType(std::string_view name);
std::optional<RedOp> ParseRedOp(std::string_view name);

}  // namespace hostccl
