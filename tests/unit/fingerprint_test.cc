// Fingerprint comparison and the mismatch message every transport reports (src/common).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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

// The V arrays enter the fingerprint as HashWords folded to 32 bits (core MakeFingerprint:
// h ^ (h >> 32)). Any one-bit change of any word of count/displacement arrays, and a swap of two
// entries, must change the folded value; so must moving a block (displacement +- 1).
TEST(Fingerprint, ArrayHashSeesEveryBitOfEveryWord) {
  auto folded = [](const std::vector<uint64_t>& w) {
    const uint64_t h = HashWords(w.data(), w.size());
    return static_cast<uint32_t>(h ^ (h >> 32));
  };
  uint64_t x = 88172645463325252ull;
  auto next = [&] {  // xorshift64: reproducible words, small and large
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (size_t n : {1u, 2u, 3u, 8u, 16u, 64u}) {
    std::vector<uint64_t> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = (i % 2) ? next() % 1000 : next();
    const uint32_t base = folded(w);
    for (size_t i = 0; i < n; ++i) {
      for (int b = 0; b < 64; ++b) {
        w[i] ^= 1ull << b;
        EXPECT_NE(folded(w), base) << "n " << n << " word " << i << " bit " << b;
        w[i] ^= 1ull << b;
      }
      w[i] += 1;
      EXPECT_NE(folded(w), base) << "n " << n << " word " << i << " + 1";
      w[i] -= 2;
      EXPECT_NE(folded(w), base) << "n " << n << " word " << i << " - 1";
      w[i] += 1;
      if (i + 1 < n && w[i] != w[i + 1]) {
        std::swap(w[i], w[i + 1]);
        EXPECT_NE(folded(w), base) << "n " << n << " swap " << i;
        std::swap(w[i], w[i + 1]);
      }
    }
  }
  // Chaining hashes the concatenation; the order of the entries matters.
  const uint64_t a[] = {4, 4, 0, 4}, b[] = {4, 4, 0, 4};
  EXPECT_EQ(HashWords(a + 2, 2, HashWords(a, 2)), HashWords(b, 4));
  const uint64_t counts[] = {2, 2}, displs[] = {0, 2}, displs2[] = {2, 0};
  EXPECT_NE(HashWords(displs, 2, HashWords(counts, 2)), HashWords(displs2, 2, HashWords(counts, 2)));
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

// A point-to-point message against a collective: the message's side says whether it sends or
// receives and to or from whom (a frame's message is its sender's, a posted receive's is its
// receiver's), never "HcclSend #seq ... peer=" (the seq of a message is the collective count).
TEST(Fingerprint, MessageAgainstACollectiveNamesTheTransfer) {
  Fingerprint msg;
  msg.kind = static_cast<uint8_t>(CollKind::kSend);
  msg.seq = 16;
  msg.root = 3;  // message #3
  msg.dtype = static_cast<uint8_t>(DataType::kFp32);
  msg.count = 8;
  EXPECT_EQ(FormatMismatch(Reduce(17, 8), 1, msg, 0),
            "HcclReduce #17 mismatch: rank 1 is in HcclReduce #17 count=8 fp32 sum root=2, rank 0 is in HcclSend "
            "to rank 1 (message #3, count=8 fp32)");
  EXPECT_EQ(FormatMismatch(msg, 0, Reduce(17, 8), 1),
            "HcclRecv from rank 1 mismatch: rank 0 is in HcclRecv from rank 1 (message #3, count=8 fp32), rank 1 "
            "is in HcclReduce #17 count=8 fp32 sum root=2");
  EXPECT_EQ(FormatP2PMismatch(msg, 0, false, Reduce(17, 8), 1, true),
            "HcclSend to rank 1 mismatch: rank 0 is in HcclSend to rank 1 (message #3, count=8 fp32), rank 1 is "
            "in HcclReduce #17 count=8 fp32 sum root=2");
  EXPECT_EQ(FormatBlockedPeer(Reduce(17, 8), 1, msg, 0, true),
            "HcclReduce #17 mismatch: rank 1 is in HcclReduce #17 count=8 fp32 sum root=2 and waits for rank 0, "
            "which is in HcclRecv from rank 1 (message #3, count=8 fp32) and waits for rank 1's HcclSend");
}

}  // namespace
}  // namespace hostccl
