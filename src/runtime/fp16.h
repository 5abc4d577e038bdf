// IEEE 754 binary16 <-> binary32 conversion behind aclFloatToFloat16 / aclFloat16ToFloat:
// round to nearest even, subnormals exact, infinities kept, NaN stays NaN (quiet, payload's top
// bits kept). Pure functions, thread-safe.
#pragma once

#include <cstdint>

namespace hostccl::rt {

uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t value);

}  // namespace hostccl::rt
