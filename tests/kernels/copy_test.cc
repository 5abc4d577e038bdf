// kern::CopyTo / CopyStreaming (src/kernels/copy.h): exact bytes for every size and alignment
// around the streaming loops' bodies (64 bytes for avx512, 128 for avx2) and heads (64 and 32
// bytes), at every dispatch level this CPU has, nothing written outside; and the
// non-temporal-store decision (StreamStores) under HOSTCCL_STREAM_STORES (ctest runs the knob test
// three times: unset, on, off).
#include "kernels/copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/reduce.h"

namespace hostccl::kern {
namespace {

TEST(CopyTo, ExactBytesEveryAlignmentAndSize) {
  const size_t sizes[] = {0,    1,         31,         127,        4095,          4096,
                          4097, 4096 + 63, 4096 + 129, 65536 + 77, (1u << 20) + 5};
  std::vector<unsigned char> src((1u << 20) + 256), dst(src.size() + 256);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (Isa want : {Isa::kAvx512, Isa::kAvx2, Isa::kScalar}) {
    // Clamped to what this CPU has: a lower level then runs twice.
    const Isa isa = ForceIsa(want);
    for (bool stream : {false, true}) {
      for (size_t n : sizes) {
        for (size_t so : {0, 1, 33}) {
          for (size_t d0 : {0, 5, 32, 40, 63}) {
            std::memset(dst.data(), 0xEE, dst.size());
            CopyTo(dst.data() + 64 + d0, src.data() + so, n, stream);
            ASSERT_EQ(std::memcmp(dst.data() + 64 + d0, src.data() + so, n), 0)
                << IsaName(isa) << " stream " << stream << " size " << n << " src offset " << so
                << " dst offset " << d0;
            for (size_t k = 0; k < 64 + d0; ++k)
              ASSERT_EQ(dst[k], 0xEE) << "byte before the copy written";
            for (size_t k = 64 + d0 + n; k < dst.size(); ++k)
              ASSERT_EQ(dst[k], 0xEE) << "byte after the copy written";
          }
        }
      }
    }
  }
  ResetIsa();
}

bool CpuinfoVendorIsAmd() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("vendor_id", 0) == 0) return line.find("AuthenticAMD") != std::string::npos;
  return false;
}

TEST(StreamStores, FollowsTheKnobAndTheCacheSize) {
  const uint64_t llc = LastLevelCacheBytes();
  EXPECT_GE(llc, uint64_t{64} << 10) << "a last-level cache below 64 KiB: sysfs misread";
  const char* v = std::getenv("HOSTCCL_STREAM_STORES");
  const std::string mode = v ? v : "auto";
  if (mode == "on") {
    EXPECT_TRUE(StreamStores(1));
    EXPECT_TRUE(StreamStores(uint64_t{1} << 40));
  } else if (mode == "off") {
    EXPECT_FALSE(StreamStores(1));
    EXPECT_FALSE(StreamStores(uint64_t{1} << 40));
  } else {
    // The threshold: at least 4 MiB, else twice the cache on AMD (/proc/cpuinfo's vendor_id),
    // a quarter of it elsewhere.
    const uint64_t t = StreamThresholdBytes();
    const uint64_t floor = uint64_t{4} << 20;
    EXPECT_EQ(t, std::max(floor, CpuinfoVendorIsAmd() ? 2 * llc : llc / 4)) << "llc " << llc;
    EXPECT_FALSE(StreamStores(4096)) << "a 4 KiB call streamed";
    EXPECT_FALSE(StreamStores(floor));
    EXPECT_FALSE(StreamStores(t));
    EXPECT_TRUE(StreamStores(t + 1)) << "llc " << llc;
    EXPECT_TRUE(StreamStores(uint64_t{1} << 40));
  }
}

// The AlltoAll family's learned stores (StoreLearner): forced by the knob like StreamStores (this
// test runs in the on/off passes too); under auto, see StoreLearner.* below.
TEST(StreamStores, TheLearnerFollowsTheKnob) {
  const char* v = std::getenv("HOSTCCL_STREAM_STORES");
  const std::string mode = v ? v : "auto";
  if (mode != "on" && mode != "off") GTEST_SKIP() << "auto: StoreLearner.*";
  StoreLearner learner;
  for (uint64_t f : {uint64_t{1}, uint64_t{8} << 20, uint64_t{1} << 40}) {
    const StoreLearner::Choice c = learner.Choose(f);
    EXPECT_EQ(c.stream, mode == "on") << f;
    EXPECT_EQ(c.bucket, -1) << "a forced choice was timed at " << f;
    EXPECT_EQ(learner.Decided(f), -1);
  }
}

bool Forced() {
  const char* v = std::getenv("HOSTCCL_STREAM_STORES");
  return v != nullptr && (std::string(v) == "on" || std::string(v) == "off");
}

// Runs the kLearningCalls calls of one footprint class with the given times (ns; index = call):
// the first by the rule, then three with ordinary stores and three with non-temporal ones.
StoreLearner Teach(uint64_t footprint, const std::vector<uint64_t>& ns) {
  StoreLearner learner;
  for (size_t i = 0; i < ns.size(); ++i) {
    const StoreLearner::Choice c = learner.Choose(footprint);
    EXPECT_EQ(c.stream, i == 0 ? StreamStores(footprint) : i >= 4) << "call " << i;
    EXPECT_GE(c.bucket, 0) << "call " << i << " not passed to Learn";
    EXPECT_EQ(learner.Decided(footprint), -1) << "decided before call " << i;
    learner.Learn(c, ns[i]);
  }
  return learner;
}

TEST(StoreLearner, KeepsTheKindOfTheFastestCallOfEachClass) {
  if (Forced()) GTEST_SKIP() << "HOSTCCL_STREAM_STORES forces the choice";
  ASSERT_EQ(StoreLearner::kLearningCalls, 7);
  const uint64_t f = uint64_t{8} << 20;  // inside (4 MiB, 4 x the threshold) on every host
  // The class's first call and the first of each run (1 ns here) do not count.
  StoreLearner faster_nt = Teach(f, {1, 1, 100, 110, 1, 95, 120});
  EXPECT_EQ(faster_nt.Decided(f), 1);
  EXPECT_TRUE(faster_nt.Choose(f).stream);
  EXPECT_EQ(faster_nt.Choose(f).bucket, -1) << "timed after deciding";
  // The fastest call of each kind counts, not the last: ordinary 80 against non-temporal 85.
  StoreLearner faster_plain = Teach(f, {1, 1, 80, 130, 1, 85, 86});
  EXPECT_EQ(faster_plain.Decided(f), 0);
  EXPECT_FALSE(faster_plain.Choose(f).stream);
  // Another class of the same learner is still timed from its first call; the same class is
  // the same for any footprint in [8 MiB, 16 MiB).
  EXPECT_EQ(faster_nt.Decided((uint64_t{16} << 20) - 1), 1);
  const StoreLearner::Choice other = faster_nt.Choose(uint64_t{16} << 20);
  EXPECT_EQ(other.stream, StreamStores(uint64_t{16} << 20));
  EXPECT_GE(other.bucket, 0);
}

TEST(StoreLearner, FailedCallsAreNotCountedAndTheRuleHoldsOutsideTheRange) {
  if (Forced()) GTEST_SKIP() << "HOSTCCL_STREAM_STORES forces the choice";
  StoreLearner learner;
  const uint64_t f = uint64_t{8} << 20;
  // A call that was never passed to Learn (it failed): the next one uses the same stores.
  for (int i = 0; i < 1 + StoreLearner::kRun; ++i) learner.Learn(learner.Choose(f), 1);
  EXPECT_TRUE(learner.Choose(f).stream);
  EXPECT_TRUE(learner.Choose(f).stream);
  EXPECT_EQ(learner.Decided(f), -1);
  // 4 MiB and below: ordinary stores, untimed; beyond 4 x the threshold: non-temporal, untimed.
  const uint64_t ceiling = 4 * StreamThresholdBytes();
  for (uint64_t small : {uint64_t{4096}, uint64_t{4} << 20}) {
    EXPECT_FALSE(learner.Choose(small).stream) << small;
    EXPECT_EQ(learner.Choose(small).bucket, -1) << small;
  }
  EXPECT_GE(learner.Choose(ceiling).bucket, 0) << "the ceiling itself is learned";
  EXPECT_TRUE(learner.Choose(ceiling + 1).stream);
  EXPECT_EQ(learner.Choose(ceiling + 1).bucket, -1);
  EXPECT_EQ(learner.Decided(ceiling + 1), -1);
  // A Learn for a choice that was not timed changes nothing.
  learner.Learn(learner.Choose(ceiling + 1), 1);
  EXPECT_EQ(learner.Decided(f), -1);
}

}  // namespace
}  // namespace hostccl::kern
