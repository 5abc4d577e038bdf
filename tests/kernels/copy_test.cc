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

}  // namespace
}  // namespace hostccl::kern
