// Dispatch: CPU detection, the HOSTCCL_KERNEL_ISA knob, ForceIsa/ResetIsa, and the public
// entry points of reduce.h that look up the table of the active level. The active level is
// one atomic; switching it while another thread is inside a kernel is safe (that call
// finishes on the level it started with; all levels give identical bits anyway).
#include <atomic>
#include <string>

#include "common/env.h"
#include "common/log.h"
#include "kernels/kernel_table.h"

namespace hostccl::kern {
namespace {

// Folds of fewer bytes than this run the scalar loop (FoldN).
constexpr size_t kSmallFoldBytes = 64;

Isa Detect() {
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 register state.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("f16c"))
    return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return Isa::kAvx2;
  return Isa::kScalar;
}

Isa Clamp(Isa isa) {
  const Isa best = DetectedIsa();
  return static_cast<int>(isa) > static_cast<int>(best) ? best : isa;
}

Isa FromEnv() {
  const std::string v = EnvString(Knob::kKernelIsa, "auto");
  Isa want = DetectedIsa();
  if (v == "scalar") want = Isa::kScalar;
  else if (v == "avx2") want = Isa::kAvx2;
  else if (v == "avx512") want = Isa::kAvx512;
  else if (v != "auto" && !v.empty())
    HLOG_WARN(kKernel, "HOSTCCL_KERNEL_ISA='%s' is not auto|avx512|avx2|scalar; using auto", v.c_str());
  const Isa got = Clamp(want);
  if (got != want)
    HLOG_WARN(kKernel, "HOSTCCL_KERNEL_ISA=%s not supported by this CPU; using %s", v.c_str(), IsaName(got));
  HLOG_INFO(kKernel, "reduction kernels: detected %s, active %s", IsaName(DetectedIsa()), IsaName(got));
  return got;
}

constexpr int kUnset = -1;
std::atomic<int> g_active{kUnset};

const KernelTable& TableFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return kAvx512Table;
    case Isa::kAvx2: return kAvx2Table;
    case Isa::kScalar: break;
  }
  return kScalarTable;
}

const KernelEntry* Lookup(DataType t, RedOp op) {
  const int ti = static_cast<int>(t);
  const int oi = static_cast<int>(op);
  if (ti < 0 || ti >= kNumReducible || !IsReducible(ti) || !IsValidRedOp(oi)) return nullptr;
  return &TableFor(ActiveIsa()).entry[ti][oi];
}

}  // namespace

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

Isa DetectedIsa() {
  static const Isa detected = Detect();
  return detected;
}

Isa ActiveIsa() {
  int v = g_active.load(std::memory_order_acquire);
  if (v == kUnset) {
    int expected = kUnset;
    g_active.compare_exchange_strong(expected, static_cast<int>(FromEnv()), std::memory_order_acq_rel);
    v = g_active.load(std::memory_order_acquire);
  }
  return static_cast<Isa>(v);
}

Isa ForceIsa(Isa isa) {
  const Isa got = Clamp(isa);
  g_active.store(static_cast<int>(got), std::memory_order_release);
  return got;
}

Isa ResetIsa() {
  const Isa got = FromEnv();
  g_active.store(static_cast<int>(got), std::memory_order_release);
  return got;
}

BinaryFn GetBinary(DataType t, RedOp op) {
  const KernelEntry* e = Lookup(t, op);
  return e ? e->binary : nullptr;
}

FoldFn GetFold(DataType t, RedOp op) {
  const KernelEntry* e = Lookup(t, op);
  return e ? e->fold : nullptr;
}

void FoldN(DataType t, RedOp op, void* dst, const void* const* srcs, int k, size_t n) {
  const KernelEntry* e = Lookup(t, op);
  if (e == nullptr) return;
  // Less than one 64-byte vector: the scalar loop (the same fold, bitwise). The vector kernels'
  // masked loads and stores of a few elements measured slower in small calls across cores.
  if (n * DataTypeSize(t) < kSmallFoldBytes) {
    e = &kScalarTable.entry[static_cast<int>(t)][static_cast<int>(op)];
    // Two sources (a 2-rank call): the binary loop, which takes no array of sources.
    if (k == 2) return e->binary(dst, srcs[0], srcs[1], n);
  }
  e->fold(dst, srcs, k, n);
}

}  // namespace hostccl::kern
