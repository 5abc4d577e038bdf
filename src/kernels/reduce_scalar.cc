// The scalar dispatch level (any x86-64): one element per step straight from scalar_math.h,
// plus the public exact conversion helpers of reduce.h. Compiled with the baseline flags.
#include "kernels/kernel_loops.h"
#include "kernels/scalar_math.h"

namespace hostccl::kern {
namespace {

template <DataType T, RedOp Op>
struct ScalarKind {
  using Elem = typename ElemOf<T>::type;
  using Acc = Elem;
  static constexpr size_t kStep = 1;
  static Acc Load(const Elem* p) { return *p; }
  static void Store(Elem* p, Acc v) { *p = v; }
  static Acc Combine(Acc a, Acc b) { return ScalarOp<T, Op>(a, b); }
};

template <RedOp Op> using SI8 = ScalarKind<DataType::kInt8, Op>;
template <RedOp Op> using SI16 = ScalarKind<DataType::kInt16, Op>;
template <RedOp Op> using SI32 = ScalarKind<DataType::kInt32, Op>;
template <RedOp Op> using SF16 = ScalarKind<DataType::kFp16, Op>;
template <RedOp Op> using SF32 = ScalarKind<DataType::kFp32, Op>;
template <RedOp Op> using SI64 = ScalarKind<DataType::kInt64, Op>;
template <RedOp Op> using SU64 = ScalarKind<DataType::kUint64, Op>;
template <RedOp Op> using SU8 = ScalarKind<DataType::kUint8, Op>;
template <RedOp Op> using SU16 = ScalarKind<DataType::kUint16, Op>;
template <RedOp Op> using SU32 = ScalarKind<DataType::kUint32, Op>;
template <RedOp Op> using SF64 = ScalarKind<DataType::kFp64, Op>;
template <RedOp Op> using SBF16 = ScalarKind<DataType::kBf16, Op>;

}  // namespace

constinit const KernelTable kScalarTable =
    HOSTCCL_KERNEL_TABLE(SI8, SI16, SI32, SF16, SF32, SI64, SU64, SU8, SU16, SU32, SF64, SBF16);

float HalfToFloat(uint16_t h) { return HalfBitsToFloat(h); }
uint16_t FloatToHalf(float f) { return FloatToHalfBits(f); }
float Bf16ToFloat(uint16_t b) { return Bf16BitsToFloat(b); }
uint16_t FloatToBf16(float f) { return FloatToBf16Bits(f); }

}  // namespace hostccl::kern
