// EnumBits: the int a C caller passed for an argument of an enum type.
//
// A C client may pass any int as an enum argument (the argument tests pass -1, 7, 255, 1000); in
// C++ reading a value outside the enum's range through the enum type is undefined behaviour
// (UBSan: "load of value ... not a valid value for type"), so the API layer reads the argument's
// bits and checks the int.
#pragma once

#include <cstring>

namespace hostccl::api {

template <typename E>
inline int EnumBits(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

}  // namespace hostccl::api
