// Fingerprint comparison and the mismatch message every transport reports (src/common).
#include <gtest/gtest.h>

#include <string>

#include "common/dtype.h"
#include "common/fingerprint.h"

namespace hostccl {
namespace {

Fingerprint Reduce(uint64_t seq, uint64_t count) {
  Fingerprint f;
  f.kind = static_cast<uint8_t>(CollKind::kReduce);
  f.dtype = static_cast<uint8_t>(DataType::kFp32);
  f.op = static_cast<uint8_t>(RedOp::kSum);
  f.root = 2;
  f.seq = seq;
  f.count = count;
  return f;
}

TEST(Fingerprint, EveryFieldTakesPart) {
  const Fingerprint a = Reduce(17, 8);
  EXPECT_EQ(a, Reduce(17, 8));
  Fingerprint b = a;
  b.kind = static_cast<uint8_t>(CollKind::kAllReduce);
  EXPECT_NE(a, b);
  b = a, b.dtype = static_cast<uint8_t>(DataType::kInt32);
  EXPECT_NE(a, b);
  b = a, b.op = static_cast<uint8_t>(RedOp::kMax);
  EXPECT_NE(a, b);
  b = a, b.root = 1;
  EXPECT_NE(a, b);
  b = a, b.seq = 18;
  EXPECT_NE(a, b);
  b = a, b.count = 32;
  EXPECT_NE(a, b);
}

TEST(Fingerprint, DescribeNamesTheFieldsOfTheKind) {
  EXPECT_EQ(DescribeFingerprint(Reduce(1, 8)), "count=8 fp32 sum root=2");
  Fingerprint barrier;
  barrier.kind = static_cast<uint8_t>(CollKind::kBarrier);
  barrier.seq = 3;
  EXPECT_EQ(DescribeFingerprint(barrier), "");
}

TEST(Fingerprint, MismatchOfAFieldNamesBothRanksValues) {
  EXPECT_EQ(FormatMismatch(Reduce(17, 8), 0, Reduce(17, 32), 3),
            "HcclReduce #17 mismatch: rank 0 count=8 fp32 sum root=2, rank 3 count=32 fp32 sum root=2");
}

// A rank that skipped or added a call is one sequence number apart: both numbers are named.
TEST(Fingerprint, MismatchOfSequenceOrKindNamesBothCalls) {
  EXPECT_EQ(FormatMismatch(Reduce(17, 8), 0, Reduce(18, 8), 1),
            "HcclReduce #17 mismatch: rank 0 is in HcclReduce #17 count=8 fp32 sum root=2, rank 1 is in "
            "HcclReduce #18 count=8 fp32 sum root=2");
  Fingerprint barrier;
  barrier.kind = static_cast<uint8_t>(CollKind::kBarrier);
  barrier.seq = 17;
  const std::string m = FormatMismatch(Reduce(17, 8), 0, barrier, 3);
  EXPECT_NE(m.find("rank 3 is in HcclBarrier #17"), std::string::npos) << m;
}

}  // namespace
}  // namespace hostccl
