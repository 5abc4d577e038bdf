// Every type x op x dispatch level against the test's own scalar reference (reference.h):
// lengths around the vector widths, unaligned pointers, dst aliasing a or b, FoldN for
// k = 1..9 and 17 (the blocked path) against sequential GetBinary, and the three levels
// bit-identical to each other on the same inputs (NaN payloads aside).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/reduce.h"
#include "reference.h"

namespace hostccl::kern {
namespace {

using testing::FirstDiff;
using testing::Gen;
using testing::HexElem;
using testing::RefOne;

constexpr DataType kTypes[] = {
#define X(id) DataType::k##id,
    HOSTCCL_FOR_EACH_REDUCIBLE_DTYPE(X)
#undef X
};
constexpr RedOp kOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin};
constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
constexpr size_t kLengths[] = {0, 1, 7, 15, 16, 17, 63, 64, 65, 1000, 4099};

std::vector<uint8_t> RefBinary(DataType t, RedOp op, const std::vector<uint8_t>& a,
                               const std::vector<uint8_t>& b, size_t n) {
  const size_t es = DataTypeSize(t);
  std::vector<uint8_t> r(n * es);
  for (size_t i = 0; i < n; ++i) RefOne(t, op, r.data() + i * es, a.data() + i * es, b.data() + i * es);
  return r;
}

class OpsTest : public ::testing::TestWithParam<std::tuple<DataType, RedOp, Isa>> {
 protected:
  void SetUp() override {
    std::tie(t_, op_, isa_) = GetParam();
    if (static_cast<int>(isa_) > static_cast<int>(DetectedIsa())) GTEST_SKIP() << "CPU lacks " << IsaName(isa_);
    ASSERT_EQ(ForceIsa(isa_), isa_);
    es_ = DataTypeSize(t_);
    fn_ = GetBinary(t_, op_);
    ASSERT_NE(fn_, nullptr);
  }
  void TearDown() override { ResetIsa(); }

  std::string Where(size_t n, long i, const void* got, const void* want, const void* a, const void* b) const {
    return std::string(DataTypeName(t_)) + " " + RedOpName(op_) + " " + IsaName(isa_) + " n=" + std::to_string(n) +
           " i=" + std::to_string(i) + " a=" + HexElem(t_, a, i) + " b=" + HexElem(t_, b, i) +
           " got=" + HexElem(t_, got, i) + " want=" + HexElem(t_, want, i);
  }

  DataType t_{};
  RedOp op_{};
  Isa isa_{};
  size_t es_ = 0;
  BinaryFn fn_ = nullptr;
};

TEST_P(OpsTest, BinaryMatchesReference) {
  Gen gen(1000 + static_cast<int>(t_) * 16 + static_cast<int>(op_));
  for (size_t n : kLengths) {
    for (size_t offset : {size_t{0}, size_t{1}}) {  // offset 1 element: unaligned for every vector width
      auto a = gen.Fill(t_, n + 1);
      auto b = gen.Fill(t_, n + 1, &a);
      std::vector<uint8_t> dst((n + 1) * es_, 0xA5);
      fn_(dst.data() + offset * es_, a.data() + offset * es_, b.data() + offset * es_, n);
      std::vector<uint8_t> as(a.begin() + offset * es_, a.end()), bs(b.begin() + offset * es_, b.end());
      auto want = RefBinary(t_, op_, as, bs, n);
      const uint8_t* got = dst.data() + offset * es_;
      const long i = FirstDiff(t_, got, want.data(), n);
      ASSERT_EQ(i, -1) << Where(n, i, got, want.data(), as.data(), bs.data()) << " offset=" << offset;
      // Bytes outside [offset, offset + n) untouched.
      for (size_t j = 0; j < offset * es_; ++j) ASSERT_EQ(dst[j], 0xA5);
      for (size_t j = (offset + n) * es_; j < dst.size(); ++j) ASSERT_EQ(dst[j], 0xA5) << "wrote past n=" << n;
    }
  }
}

// Tails that end where an inaccessible page begins: the short-tail path (masked loads and stores
// at the AVX-512 level) neither faults on the bytes past n nor writes them.
TEST_P(OpsTest, TailEndingAtAPageBoundary) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* mem = static_cast<uint8_t*>(map);
  // a ends page 0, b ends page 1, dst ends page 2; page 3 is inaccessible.
  ASSERT_EQ(mprotect(mem + 3 * page, page, PROT_NONE), 0);
  Gen gen(2500 + static_cast<int>(t_) * 16 + static_cast<int>(op_));
  for (size_t n = 1; n * es_ <= 64; ++n) {
    auto av = gen.Fill(t_, n);
    auto bv = gen.Fill(t_, n, &av);
    auto want = RefBinary(t_, op_, av, bv, n);
    uint8_t* a = mem + page - n * es_;          // ends at page 1 (readable: b's page follows)
    uint8_t* b = mem + 2 * page - n * es_;      // ends at page 2
    uint8_t* dst = mem + 3 * page - n * es_;    // ends at the PROT_NONE page
    std::memcpy(a, av.data(), n * es_);
    std::memcpy(b, bv.data(), n * es_);
    std::memset(mem + 2 * page, 0xA5, page);
    fn_(dst, a, b, n);
    long i = FirstDiff(t_, dst, want.data(), n);
    ASSERT_EQ(i, -1) << Where(n, i, dst, want.data(), a, b);
    for (size_t j = 0; j < page - n * es_; ++j) ASSERT_EQ(mem[2 * page + j], 0xA5) << "wrote before dst, n=" << n;
    // Sources ending at the inaccessible page too (dst elsewhere); FoldN over three of them.
    std::memcpy(dst, bv.data(), n * es_);  // dst page now holds b at its end
    std::vector<uint8_t> out(n * es_);
    const void* srcs[3] = {a, dst, dst};
    FoldN(t_, op_, out.data(), srcs, 3, n);
    auto want3 = RefBinary(t_, op_, want, bv, n);
    i = FirstDiff(t_, out.data(), want3.data(), n);
    ASSERT_EQ(i, -1) << "FoldN k=3 " << Where(n, i, out.data(), want3.data(), a, dst);
  }
  munmap(mem, 4 * page);
}

TEST_P(OpsTest, BinaryInPlace) {
  Gen gen(2000 + static_cast<int>(t_) * 16 + static_cast<int>(op_));
  for (size_t n : {size_t{65}, size_t{4099}}) {
    auto a = gen.Fill(t_, n);
    auto b = gen.Fill(t_, n, &a);
    auto want = RefBinary(t_, op_, a, b, n);
    auto da = a;
    fn_(da.data(), da.data(), b.data(), n);  // dst == a
    long i = FirstDiff(t_, da.data(), want.data(), n);
    ASSERT_EQ(i, -1) << "dst==a " << Where(n, i, da.data(), want.data(), a.data(), b.data());
    auto db = b;
    fn_(db.data(), a.data(), db.data(), n);  // dst == b
    i = FirstDiff(t_, db.data(), want.data(), n);
    ASSERT_EQ(i, -1) << "dst==b " << Where(n, i, db.data(), want.data(), a.data(), b.data());
  }
}

TEST_P(OpsTest, FoldNMatchesSequentialBinary) {
  Gen gen(3000 + static_cast<int>(t_) * 16 + static_cast<int>(op_));
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{1000}, size_t{4099}, size_t{9000}}) {
      std::vector<std::vector<uint8_t>> src;
      src.push_back(gen.Fill(t_, n + 1));
      for (int j = 1; j < k; ++j) src.push_back(gen.Fill(t_, n + 1, &src[j - 1]));
      // Expected: the left fold with the (already reference-checked) binary kernel.
      std::vector<uint8_t> want(src[0].begin() + es_, src[0].end());
      for (int j = 1; j < k; ++j) fn_(want.data(), want.data(), src[j].data() + es_, n);
      std::vector<const void*> ptrs;
      for (auto& s : src) ptrs.push_back(s.data() + es_);  // unaligned by one element
      std::vector<uint8_t> dst(n * es_ + 1, 0x5A);
      FoldN(t_, op_, dst.data(), ptrs.data(), k, n);
      long i = FirstDiff(t_, dst.data(), want.data(), n);
      ASSERT_EQ(i, -1) << "k=" << k << " " << Where(n, i, dst.data(), want.data(), ptrs[0], ptrs[k > 1]);
      ASSERT_EQ(dst[n * es_], 0x5A) << "FoldN wrote past n";
      // dst aliasing one source (the last, then the first) gives the same result.
      for (int alias : {k - 1, 0}) {
        std::vector<uint8_t> copy = src[alias];
        std::vector<const void*> p2 = ptrs;
        p2[alias] = copy.data() + es_;
        FoldN(t_, op_, copy.data() + es_, p2.data(), k, n);
        i = FirstDiff(t_, copy.data() + es_, want.data(), n);
        ASSERT_EQ(i, -1) << "k=" << k << " dst==src[" << alias << "] n=" << n << " i=" << i;
      }
      // The cached pointer form agrees.
      std::vector<uint8_t> dst2(n * es_ + 1);
      GetFold(t_, op_)(dst2.data(), ptrs.data(), k, n);
      ASSERT_EQ(FirstDiff(t_, dst2.data(), want.data(), n), -1) << "GetFold k=" << k;
    }
  }
}

// Also checks the reference fold directly for one k, so FoldN is tied to reference.h too.
TEST_P(OpsTest, FoldNMatchesReferenceFold) {
  Gen gen(4000 + static_cast<int>(t_) * 16 + static_cast<int>(op_));
  const size_t n = 777;
  const int k = 5;
  std::vector<std::vector<uint8_t>> src;
  src.push_back(gen.Fill(t_, n));
  for (int j = 1; j < k; ++j) src.push_back(gen.Fill(t_, n, &src[j - 1]));
  std::vector<uint8_t> want = src[0];
  for (int j = 1; j < k; ++j) want = RefBinary(t_, op_, want, src[j], n);
  std::vector<const void*> ptrs;
  for (auto& s : src) ptrs.push_back(s.data());
  std::vector<uint8_t> dst(n * es_);
  FoldN(t_, op_, dst.data(), ptrs.data(), k, n);
  const long i = FirstDiff(t_, dst.data(), want.data(), n);
  ASSERT_EQ(i, -1) << Where(n, i, dst.data(), want.data(), src[0].data(), src[1].data());
}

std::string ParamName(const ::testing::TestParamInfo<OpsTest::ParamType>& info) {
  return std::string(DataTypeName(std::get<0>(info.param))) + "_" + RedOpName(std::get<1>(info.param)) + "_" +
         IsaName(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(All, OpsTest,
                         ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps),
                                            ::testing::ValuesIn(kIsas)),
                         ParamName);

// The levels against each other on large random inputs: identical bits (NaN == NaN).
TEST(CrossIsa, AllLevelsBitIdentical) {
  const size_t n = 20011;
  for (DataType t : kTypes) {
    for (RedOp op : kOps) {
      Gen gen(5000 + static_cast<int>(t) * 16 + static_cast<int>(op));
      const size_t es = DataTypeSize(t);
      auto a = gen.Fill(t, n);
      auto b = gen.Fill(t, n, &a);
      auto c = gen.Fill(t, n, &b);
      const void* srcs[3] = {a.data(), b.data(), c.data()};
      std::vector<uint8_t> first;
      for (Isa isa : kIsas) {
        if (ForceIsa(isa) != isa) continue;
        std::vector<uint8_t> out(n * es);
        FoldN(t, op, out.data(), srcs, 3, n);
        if (first.empty()) {
          first = out;
          continue;
        }
        const long i = FirstDiff(t, out.data(), first.data(), n);
        EXPECT_EQ(i, -1) << DataTypeName(t) << " " << RedOpName(op) << " " << IsaName(isa) << " vs scalar i=" << i;
      }
    }
  }
  ResetIsa();
}

TEST(Dispatch, InvalidTypeOrOp) {
  EXPECT_EQ(GetBinary(DataType::kInt128, RedOp::kSum), nullptr);
  EXPECT_EQ(GetBinary(DataType::kFp8E4M3, RedOp::kMax), nullptr);
  EXPECT_EQ(GetBinary(DataType::kFp32, static_cast<RedOp>(4)), nullptr);
  EXPECT_EQ(GetBinary(static_cast<DataType>(-1), RedOp::kSum), nullptr);
  EXPECT_EQ(GetFold(DataType::kHif8, RedOp::kSum), nullptr);
  uint8_t buf[16] = {1};
  const void* srcs[1] = {buf};
  FoldN(DataType::kInt128, RedOp::kSum, buf, srcs, 1, 1);  // ignored, no crash
  EXPECT_EQ(buf[0], 1);
}

TEST(Dispatch, KnobLowersLevel) {
  ASSERT_EQ(setenv("HOSTCCL_KERNEL_ISA", "scalar", 1), 0);
  EXPECT_EQ(ResetIsa(), Isa::kScalar);
  EXPECT_EQ(ActiveIsa(), Isa::kScalar);
  ASSERT_EQ(setenv("HOSTCCL_KERNEL_ISA", "avx2", 1), 0);
  EXPECT_EQ(ResetIsa(), DetectedIsa() == Isa::kScalar ? Isa::kScalar : Isa::kAvx2);
  ASSERT_EQ(setenv("HOSTCCL_KERNEL_ISA", "bogus", 1), 0);
  EXPECT_EQ(ResetIsa(), DetectedIsa());
  ASSERT_EQ(unsetenv("HOSTCCL_KERNEL_ISA"), 0);
  EXPECT_EQ(ResetIsa(), DetectedIsa());
  EXPECT_EQ(ForceIsa(Isa::kScalar), Isa::kScalar);
  EXPECT_EQ(ActiveIsa(), Isa::kScalar);
  EXPECT_EQ(ResetIsa(), DetectedIsa());
}

}  // namespace
}  // namespace hostccl::kern
