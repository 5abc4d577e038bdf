// The flight recorder's hot path alone (docs/flight_recorder.md "Cost"): the hooks one operation
// calls (Enqueued on the enqueuing thread; Started, WaitWord and Ended on the stream thread), run
// back to back on one thread over a 1024-entry ring. Prints the best of --reps timed loops in ns
// per operation (the minimum is what the code costs; a loaded machine only adds to it), next to
// an empty loop. Compare it with the 8 B isolated call time of hostccl_coll_bench -I.
//   fr_cost_bench [ops per loop, default 1000000] [reps, default 15]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/status.h"
#include "core/flight_recorder.h"

using namespace hostccl;

namespace {

double NsPerOp(uint64_t ops, bool record, core::FlightRecorder* fr, uint64_t* seq) {
  const Status ok = Status::Ok();
  Fingerprint fp;
  fp.kind = 1;
  fp.dtype = 4;
  fp.count = 2;
  std::atomic<int32_t>* sink = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < ops; ++i) {
    fp.seq = ++*seq;
    if (record) {
      fr->Enqueued(fp);
      fr->Started(fp.seq, "direct", 1000 + fp.seq);  // the deadline's reading, as Communicator::Run passes it
      sink = fr->WaitWord(fp.seq);
      fr->Ended(fp.seq, ok);
    }
    asm volatile("" : : "r"(sink) : "memory");
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(ops);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  setenv("HOSTCCL_FR_ENTRIES", "1024", 0);  // the default ring unless the caller sets one
  for (const char* times : {"0", "1"}) {
    setenv("HOSTCCL_FR_TIMESTAMPS", times, 1);
    auto fr = core::FlightRecorder::Create(core::FrIdentity{});
    if (!fr) return 1;
    uint64_t seq = 0;
    double best_empty = 1e9, best_rec = 1e9;
    for (int r = 0; r < reps; ++r) {
      double e = NsPerOp(ops, false, fr.get(), &seq), f = NsPerOp(ops, true, fr.get(), &seq);
      if (e < best_empty) best_empty = e;
      if (f < best_rec) best_rec = f;
    }
    std::printf("HOSTCCL_FR_TIMESTAMPS=%s: flight recorder hooks %.1f ns per operation (empty loop %.1f ns; best of "
                "%d x %llu ops)\n", times, best_rec - best_empty, best_empty, reps, static_cast<unsigned long long>(ops));
  }
  return 0;
}
