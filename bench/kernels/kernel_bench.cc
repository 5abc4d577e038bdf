// kernel_bench: throughput of the reduction kernels. Names are
//   Binary/<type>/<op>/<isa>/<output bytes>, FoldN/<type>/<op>/<isa>/k<k>/<output bytes>,
//   Memcpy/<bytes>.
// bytes_per_second counts output bytes (comparable with a k-input reduce's algbw and with
// memcpy); the "read" counter is the input bytes per second. Rates use CPU time (Google
// Benchmark's default), which stays meaningful when other processes share the cores; on a
// quiet machine the Time (wall) column gives the same numbers. Buffers are 64-byte aligned,
// staggered so that no two start at the same offset modulo 4 KiB, and touched before timing.
// Typical use: kernel_bench --benchmark_filter='fp32/sum' --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reduce.h"

namespace hostccl::kern {
namespace {

constexpr size_t kSizes[] = {16u << 10, 1u << 20, 64u << 20};

// k + 1 staggered buffers of `bytes` each (k inputs, one output), filled with small values
// that are valid, finite numbers in every type (so fp work runs at its normal speed).
class Buffers {
 public:
  Buffers(int count, size_t bytes) {
    for (int j = 0; j < count; ++j) {
      const size_t stagger = static_cast<size_t>(j) * 320;
      auto* base = static_cast<unsigned char*>(std::aligned_alloc(64, bytes + stagger + 64));
      std::memset(base, 0, bytes + stagger + 64);
      for (size_t i = 0; i < bytes; i += 2) base[stagger + i] = static_cast<unsigned char>(0x01 + (i >> 1) % 7);
      owned_.push_back(base);
      ptr_.push_back(base + stagger);
    }
  }
  ~Buffers() {
    for (void* p : owned_) std::free(p);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* at(int j) const { return ptr_[j]; }

 private:
  std::vector<void*> owned_;
  std::vector<unsigned char*> ptr_;
};

bool SetIsa(benchmark::State& state, Isa isa) {
  if (ForceIsa(isa) != isa) {
    state.SkipWithError("level not supported by this CPU");
    return false;
  }
  return true;
}

void Report(benchmark::State& state, size_t out_bytes, int inputs) {
  const auto iters = static_cast<int64_t>(state.iterations());
  state.SetBytesProcessed(iters * static_cast<int64_t>(out_bytes));
  state.counters["read"] = benchmark::Counter(static_cast<double>(iters) * static_cast<double>(out_bytes) * inputs,
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void BmBinary(benchmark::State& state, DataType t, RedOp op, Isa isa, size_t bytes) {
  if (!SetIsa(state, isa)) return;
  const size_t n = bytes / DataTypeSize(t);
  Buffers buf(3, bytes);
  BinaryFn fn = GetBinary(t, op);
  for (auto _ : state) {
    fn(buf.at(2), buf.at(0), buf.at(1), n);
    benchmark::ClobberMemory();
  }
  Report(state, bytes, 2);
}

void BmFold(benchmark::State& state, DataType t, RedOp op, Isa isa, int k, size_t bytes) {
  if (!SetIsa(state, isa)) return;
  const size_t n = bytes / DataTypeSize(t);
  Buffers buf(k + 1, bytes);
  std::vector<const void*> srcs;
  for (int j = 0; j < k; ++j) srcs.push_back(buf.at(j));
  FoldFn fn = GetFold(t, op);
  for (auto _ : state) {
    fn(buf.at(k), srcs.data(), k, n);
    benchmark::ClobberMemory();
  }
  Report(state, bytes, k);
}

void BmMemcpy(benchmark::State& state, size_t bytes) {
  Buffers buf(2, bytes);
  for (auto _ : state) {
    std::memcpy(buf.at(1), buf.at(0), bytes);
    benchmark::ClobberMemory();
  }
  Report(state, bytes, 1);
}

std::string SizeName(size_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes >> 10) + "KiB";
}

void RegisterAll() {
  const DataType types[] = {
#define X(id) DataType::k##id,
      HOSTCCL_FOR_EACH_REDUCIBLE_DTYPE(X)
#undef X
  };
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin};
  const Isa isas[] = {Isa::kAvx512, Isa::kAvx2, Isa::kScalar};
  for (size_t bytes : kSizes) {
    benchmark::RegisterBenchmark(("Memcpy/" + SizeName(bytes)).c_str(), BmMemcpy, bytes);
  }
  for (DataType t : types) {
    for (RedOp op : ops) {
      for (Isa isa : isas) {
        const std::string stem = std::string(DataTypeName(t)) + "/" + RedOpName(op) + "/" + IsaName(isa) + "/";
        for (size_t bytes : kSizes) {
          benchmark::RegisterBenchmark(("Binary/" + stem + SizeName(bytes)).c_str(), BmBinary, t, op, isa, bytes);
          for (int k : {2, 4, 8}) {
            benchmark::RegisterBenchmark(("FoldN/" + stem + "k" + std::to_string(k) + "/" + SizeName(bytes)).c_str(),
                                         BmFold, t, op, isa, k, bytes);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hostccl::kern

int main(int argc, char** argv) {
  hostccl::kern::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
