// Unit tests of the collectives' models of the hccl_test tools (tools/hccl_test/collective.h):
// what each rank's output must hold for Reduce, AllReduce and Broadcast, the generic
// prepare/check over segments (offset, phase, guard gaps), the data-movement types, the bus
// factors, and the options/columns that differ per collective. No library: simulated outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "collective.h"
#include "options.h"
#include "report.h"

namespace hostccl::tools {
namespace {

// The sizes a tool visits: the options aligned as the driver aligns them, then swept.
std::vector<uint64_t> Sweep(const CollectiveModel& m, const Options& o, int ranks) {
  return SizeSweep(SweepOptions(m, o, ranks));
}

constexpr int kFp16 = 3, kFp32 = 4, kInt32 = 2, kInt128 = 12, kFp8 = 15;

Point At(int rank, int ranks, int root, uint64_t count, int dtype, int op = 0) {
  Point p;
  p.count = count;
  p.dtype = dtype;
  p.op = op;
  p.root = root;
  p.rank = rank;
  p.ranks = ranks;
  return p;
}

std::vector<uint8_t> Input(int dtype, int op, int rank, uint64_t count) {
  std::vector<uint8_t> v(count * static_cast<uint64_t>(TypeBytes(dtype)));
  FillInput(dtype, op, rank, count, v.data());
  return v;
}

// fp16 sum of all ranks' inputs, folded starting at rank `first` (a ring order when first != 0).
std::vector<uint8_t> Fp16SumFrom(int first, int ranks, uint64_t count) {
  std::vector<std::vector<uint16_t>> in(ranks, std::vector<uint16_t>(count));
  for (int r = 0; r < ranks; ++r) FillInput(kFp16, 0, r, count, in[r].data());
  std::vector<uint16_t> out(count);
  for (uint64_t j = 0; j < count; ++j) {
    float acc = HalfToFloat(in[first][j]);
    for (int k = 1; k < ranks; ++k)
      acc = HalfToFloat(FloatToHalf(acc + HalfToFloat(in[(first + k) % ranks][j])));
    out[j] = FloatToHalf(acc);
  }
  std::vector<uint8_t> bytes(count * 2);
  std::memcpy(bytes.data(), out.data(), bytes.size());
  return bytes;
}

TEST(HcclTestCollective, AllReduceEveryRankGetsTheRankOrderFold) {
  const CollectiveModel& m = AllReduceModel();
  EXPECT_STREQ(m.name, "all_reduce_test");
  EXPECT_STREQ(m.call, "HcclAllReduce");
  EXPECT_TRUE(m.reduction);
  EXPECT_FALSE(m.rooted);
  EXPECT_FALSE(m.one_buffer);
  const int ranks = 6;
  const uint64_t count = 3000;  // several periods
  for (int rank = 0; rank < ranks; ++rank) {
    Point p = At(rank, ranks, 0, count, kFp16);
    EXPECT_EQ(m.send_count(count, ranks), count);
    EXPECT_EQ(m.recv_count(count, ranks), count);
    Expectation e = m.expect(p);
    std::vector<uint8_t> buf(count * 2);
    // The prepared image never passes: every element is wrong.
    PrepareOutput(p, e, buf.data(), buf.size());
    EXPECT_EQ(CheckOutput(p, e, buf.data(), buf.size(), nullptr), count);
    // The canonical fold passes on every rank.
    EXPECT_EQ(CheckOutput(p, e, Fp16SumFrom(0, ranks, count).data(), buf.size(), nullptr), 0u);
    // A ring AllReduce whose fold starts at another rank does not.
    EXPECT_GT(CheckOutput(p, e, Fp16SumFrom(1, ranks, count).data(), buf.size(), nullptr), 0u);
  }
}

TEST(HcclTestCollective, ReduceRootGetsTheFoldOthersKeepTheGuard) {
  const CollectiveModel& m = ReduceModel();
  EXPECT_TRUE(m.rooted);
  const uint64_t count = 100;
  std::vector<uint8_t> fold = ExpectedPeriod(kInt32, 1, 3, count);
  Point root = At(2, 3, 2, count, kInt32, 1);
  EXPECT_EQ(CheckOutput(root, m.expect(root), fold.data(), fold.size(), nullptr), 0u);
  Point other = At(0, 3, 2, count, kInt32, 1);
  Expectation none = m.expect(other);
  EXPECT_TRUE(none.empty());
  std::vector<uint8_t> buf(count * 4);
  PrepareOutput(other, none, buf.data(), buf.size());
  EXPECT_EQ(CheckOutput(other, none, buf.data(), buf.size(), nullptr), 0u);
  buf[17] = 0;
  std::string report;
  EXPECT_EQ(CheckOutput(other, none, buf.data(), buf.size(), &report), 1u);
  EXPECT_NE(report.find("lost the guard"), std::string::npos);
}

TEST(HcclTestCollective, BroadcastEveryRankGetsTheRootsInput) {
  const CollectiveModel& m = BroadcastModel();
  EXPECT_STREQ(m.call, "HcclBroadcast");
  EXPECT_FALSE(m.reduction);
  EXPECT_TRUE(m.rooted);
  EXPECT_TRUE(m.one_buffer);
  const int ranks = 5, root = 3;
  const uint64_t count = 2500;
  for (int rank = 0; rank < ranks; ++rank) {
    Point p = At(rank, ranks, root, count, kFp32);
    EXPECT_EQ(m.has_input(p), rank == root);
    Expectation e = m.expect(p);
    EXPECT_EQ(CheckOutput(p, e, Input(kFp32, 0, root, count).data(), count * 4, nullptr), 0u);
    // Another rank's data (a broadcast from the wrong root) is wrong nearly everywhere.
    for (int other = 0; other < ranks; ++other) {
      if (other == root) continue;
      EXPECT_GT(CheckOutput(p, e, Input(kFp32, 0, other, count).data(), count * 4, nullptr),
                count * 9 / 10)
          << "rank " << rank << " other " << other;
    }
    std::vector<uint8_t> buf(count * 4);
    PrepareOutput(p, e, buf.data(), buf.size());
    EXPECT_EQ(CheckOutput(p, e, buf.data(), buf.size(), nullptr), count);
  }
}

TEST(HcclTestCollective, BroadcastMovesEveryTypeIncludingRawOnes) {
  std::vector<int> types = AllTypesFor(BroadcastModel());
  EXPECT_EQ(types.size(), 17u);  // every hccl_test name
  EXPECT_EQ(AllTypesFor(AllReduceModel()).size(), 12u);
  EXPECT_EQ(AllTypesFor(ReduceModel()).size(), 12u);
  for (int dtype : types) {
    ASSERT_TRUE(IsCheckableType(dtype)) << dtype;
    const uint64_t count = 1500;
    Point p = At(1, 4, 0, count, dtype);
    Expectation e = BroadcastModel().expect(p);
    std::vector<uint8_t> in0 = Input(dtype, 0, 0, count), in1 = Input(dtype, 0, 1, count);
    EXPECT_EQ(CheckOutput(p, e, in0.data(), in0.size(), nullptr), 0u) << dtype;
    EXPECT_GT(CheckOutput(p, e, in1.data(), in1.size(), nullptr), count / 2) << dtype;
  }
  EXPECT_FALSE(IsFoldableType(kInt128));
  EXPECT_FALSE(IsFoldableType(kFp8));
  EXPECT_TRUE(IsFoldableType(kFp16));
  EXPECT_EQ(TypeBytes(kInt128), 16);
  EXPECT_EQ(TypeBytes(kFp8), 1);
  EXPECT_EQ(TypeBytes(13), 0);
  // A raw element is reported as hex bytes.
  std::vector<uint8_t> one = Input(kInt128, 0, 0, 1);
  one[0] ^= 0xff;
  std::string report;
  Point p = At(0, 1, 0, 1, kInt128);
  EXPECT_EQ(CheckOutput(p, BroadcastModel().expect(p), one.data(), one.size(), &report), 1u);
  EXPECT_NE(report.find("index 0: expected 0x"), std::string::npos) << report;
}

TEST(HcclTestCollective, SegmentsWithOffsetPhaseAndGuardGaps) {
  // The layout of later operators (AllGather, Scatter, ReduceScatter): slices of patterns at
  // offsets, starting at some element of the pattern, with untouched bytes in between.
  const uint64_t seg = 700;
  Point p = At(0, 3, 0, seg, kInt32, 0);
  Expectation e = {{Segment::Pattern::kInput, 2, 0, seg, 5 * seg},
                   {Segment::Pattern::kFold, 0, seg + 10, seg, seg}};
  std::vector<uint8_t> buf((2 * seg + 20) * 4);
  PrepareOutput(p, e, buf.data(), buf.size());
  EXPECT_EQ(CheckOutput(p, e, buf.data(), buf.size(), nullptr), 2 * seg);
  // Build the right image from the whole patterns.
  std::vector<uint8_t> in2 = Input(kInt32, 0, 2, 6 * seg);
  std::memcpy(buf.data(), in2.data() + 5 * seg * 4, seg * 4);
  std::vector<uint8_t> fold = ExpectedPeriod(kInt32, 0, 3, kPeriod);
  for (uint64_t j = 0; j < seg; ++j)
    std::memcpy(buf.data() + (seg + 10 + j) * 4, fold.data() + ((seg + j) % kPeriod) * 4, 4);
  EXPECT_EQ(CheckOutput(p, e, buf.data(), buf.size(), nullptr), 0u);
  // Phase matters: the same slice from element 0 of the pattern is wrong.
  std::memcpy(buf.data(), in2.data(), seg * 4);
  EXPECT_GT(CheckOutput(p, e, buf.data(), buf.size(), nullptr), seg / 2);
  std::memcpy(buf.data(), in2.data() + 5 * seg * 4, seg * 4);
  // Reports count from the start of the buffer; a written gap byte and the tail are guard losses.
  buf[(seg + 20) * 4] ^= 1;  // element 10 of the second segment (buffer index seg + 20)
  buf[seg * 4 + 3] = 0;      // gap
  buf[buf.size() - 1] = 0;   // tail
  std::string report;
  EXPECT_EQ(CheckOutput(p, e, buf.data(), buf.size(), &report), 3u);
  EXPECT_NE(report.find("index " + std::to_string(seg + 20) + ":"), std::string::npos) << report;
  EXPECT_NE(report.find("2 bytes lost the guard"), std::string::npos) << report;
  // InputPeriod/FoldPeriod with a phase are the whole pattern shifted.
  std::vector<uint8_t> shifted = InputPeriod(kInt32, 0, 2, 10, kPeriod + 3);
  EXPECT_EQ(0, std::memcmp(shifted.data(), in2.data() + 3 * 4, 40));
  EXPECT_EQ(FoldPeriod(kInt32, 0, 3, 5000, 0), ExpectedPeriod(kInt32, 0, 3, 5000));
}

TEST(HcclTestCollective, InPlaceKeepsTheInputWhereNothingIsWritten) {
  const uint64_t count = 1200;
  for (const CollectiveModel* m : {&ReduceModel(), &AllReduceModel()}) {
    ASSERT_NE(m->in_place_send_offset, nullptr) << m->name;
    for (int rank : {0, 1}) {
      Point p = At(rank, 3, 0, count, kFp32, 0);
      p.in_place = true;
      EXPECT_EQ(m->in_place_send_offset(p), 0u);
      Expectation e = m->expect(p);
      std::vector<uint8_t> input = Input(kFp32, 0, rank, count), before(count * 4);
      PrepareInPlace(p, e, 0, input.data(), input.size(), before.data(), before.size());
      EXPECT_EQ(before, input);  // sendBuf == recvBuf: the image is the input
      std::vector<uint8_t> fold(count * 4), period = ExpectedPeriod(kFp32, 0, 3, kPeriod);
      for (uint64_t i = 0; i < count; ++i)
        std::memcpy(fold.data() + i * 4, period.data() + (i % kPeriod) * 4, 4);
      const bool gets_result = m == &AllReduceModel() || rank == 0;
      // Untouched buffer: right only where no result is due (a Reduce non-root).
      EXPECT_EQ(CheckOutput(p, e, before.data(), before.size(), nullptr, before.data()) == 0,
                !gets_result) << m->name << " rank " << rank;
      // The result: right only where it is due; a written non-root buffer is wrong.
      std::string report;
      EXPECT_EQ(CheckOutput(p, e, fold.data(), fold.size(), &report, before.data()) == 0,
                gets_result) << m->name << " rank " << rank;
      if (!gets_result) {
        EXPECT_NE(report.find("must keep their input"), std::string::npos);
      }
    }
  }
  EXPECT_EQ(BroadcastModel().in_place_send_offset, nullptr);  // in place by definition
}

TEST(HcclTestCollective, SizesOfARowAndALaterOperatorAsOneModel) {
  // Defaults: data_size = the row's size, count = C = ceil(size / type size), alg bytes = C x type.
  RowSizes d = SizesFor(AllReduceModel(), 4098, 4, 3);
  EXPECT_EQ(d.data_size, 4098u);
  EXPECT_EQ(d.count, 1025u);
  EXPECT_EQ(d.alg_bytes, 4100u);
  EXPECT_EQ(RankSizeAlignedSize(5, 8), 8u);
  EXPECT_EQ(RankSizeAlignedSize(100, 8), 96u);
  EXPECT_EQ(RankSizeAlignedSize(16u << 20, 3), (16u << 20) / 3 * 3);
  EXPECT_EQ(RankSizeAlignedSize((32u << 20) + 5, 3), ((32u << 20) + 5) / 1536 * 1536);
  const CollectiveModel& ag = AllGatherModel();
  // A row is not re-aligned (the options were): 1000 B -> C = 250 fp32 -> sendCount 84.
  RowSizes r = SizesFor(ag, 1000, 4, 3);
  EXPECT_EQ(r.data_size, 1000u);
  EXPECT_EQ(r.count, 84u);
  EXPECT_EQ(r.alg_bytes, 84u * 4 * 3);
  const int ranks = 3;
  for (int rank = 0; rank < ranks; ++rank) {
    Point p = At(rank, ranks, 0, r.count, kFp32);
    Expectation e = ag.expect(p);
    const uint64_t total = ag.recv_count(r.count, ranks);
    std::vector<uint8_t> out(total * 4);
    PrepareOutput(p, e, out.data(), out.size());
    EXPECT_EQ(CheckOutput(p, e, out.data(), out.size(), nullptr), total);
    for (int i = 0; i < ranks; ++i) FillInput(kFp32, 0, i, r.count, out.data() + i * r.count * 4);
    EXPECT_EQ(CheckOutput(p, e, out.data(), out.size(), nullptr), 0u);
    // Blocks 1 and 2 swapped: wrong.
    FillInput(kFp32, 0, 2, r.count, out.data() + 1 * r.count * 4);
    FillInput(kFp32, 0, 1, r.count, out.data() + 2 * r.count * 4);
    EXPECT_GT(CheckOutput(p, e, out.data(), out.size(), nullptr), r.count);
  }
}

// Scatter: rank r's recvBuf is block r of the root's n x count input, at any root.
TEST(HcclTestCollective, ScatterExpectsItsBlockOfTheRootsInput) {
  const CollectiveModel& m = ScatterModel();
  RowSizes r = SizesFor(m, 1000, 4, 3);
  EXPECT_EQ(r.count, 84u);
  EXPECT_EQ(r.alg_bytes, 84u * 4 * 3);
  const int ranks = 3;
  std::vector<uint8_t> root_input(m.send_count(r.count, ranks) * 4);
  FillInput(kFp32, 0, 1, m.send_count(r.count, ranks), root_input.data());
  for (int rank = 0; rank < ranks; ++rank) {
    Point p = At(rank, ranks, 1, r.count, kFp32);
    Expectation e = m.expect(p);
    std::vector<uint8_t> out(m.recv_count(r.count, ranks) * 4);
    PrepareOutput(p, e, out.data(), out.size());
    EXPECT_EQ(CheckOutput(p, e, out.data(), out.size(), nullptr), r.count);
    std::copy(root_input.begin() + rank * r.count * 4, root_input.begin() + (rank + 1) * r.count * 4, out.begin());
    EXPECT_EQ(CheckOutput(p, e, out.data(), out.size(), nullptr), 0u) << rank;
    const int other = (rank + 1) % ranks;
    std::copy(root_input.begin() + other * r.count * 4, root_input.begin() + (other + 1) * r.count * 4, out.begin());
    EXPECT_GT(CheckOutput(p, e, out.data(), out.size(), nullptr), 0u) << rank;
  }
  EXPECT_EQ(m.in_place_send_offset, nullptr);
}

Options ParseArgs(std::vector<std::string> args) {
  args.insert(args.begin(), "all_gather_test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ParseResult r = ParseOptions(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(r.error, "");
  return r.options;
}

const std::vector<const CollectiveModel*>& SplittingModels() {
  static const std::vector<const CollectiveModel*> v = {
      &AllGatherModel(),     &AllGatherVModel(), &ReduceScatterModel(), &ReduceScatterVModel(),
      &ScatterModel(),       &AlltoAllModel(),   &AlltoAllVModel(),     &AlltoAllVCModel()};
  return v;
}

// Counts round up (C = ceil(D / type size)) and alg_bandwidth's bytes come from the counts, never
// from the raw D, for every tool.
TEST(HcclTestCollective, CountsRoundUpAndAlgBytesAreCountBased) {
  for (const CollectiveModel* m : {&AllReduceModel(), &ReduceModel(), &BroadcastModel()}) {
    RowSizes r = SizesFor(*m, 7, 4, 2);  // 7 B of fp32: 2 elements
    EXPECT_EQ(r.data_size, 7u) << m->name;
    EXPECT_EQ(r.count, 2u) << m->name;
    EXPECT_EQ(r.alg_bytes, 8u) << m->name;
    r = SizesFor(*m, 8, 16, 4);  // int128: one element
    EXPECT_EQ(r.count, 1u) << m->name;
    EXPECT_EQ(r.alg_bytes, 16u) << m->name;
    r = SizesFor(*m, 64, 4, 4);  // divisible: unchanged
    EXPECT_EQ(r.count, 16u) << m->name;
    EXPECT_EQ(r.alg_bytes, 64u) << m->name;
  }
  // all_gather(v): sendCount = ceil(C / n), alg bytes n x sendCount x type.
  for (const CollectiveModel* m : {&AllGatherModel(), &AllGatherVModel()}) {
    RowSizes r = SizesFor(*m, 27, 4, 3);  // C = 7 -> sendCount 3
    EXPECT_EQ(r.data_size, 27u) << m->name;
    EXPECT_EQ(r.count, 3u) << m->name;
    EXPECT_EQ(r.alg_bytes, 36u) << m->name;
  }
  // reduce_scatter(v), scatter: recvCount = ceil(C / n), alg bytes n x recvCount x type.
  for (const CollectiveModel* m : {&ReduceScatterModel(), &ReduceScatterVModel(), &ScatterModel()}) {
    RowSizes r = SizesFor(*m, 27, 4, 3);
    EXPECT_EQ(r.data_size, 27u) << m->name;
    EXPECT_EQ(r.count, 3u) << m->name;
    EXPECT_EQ(r.alg_bytes, 36u) << m->name;
    r = SizesFor(*m, 6, 2, 4);  // C = 3 -> recvCount 1
    EXPECT_EQ(r.count, 1u) << m->name;
    EXPECT_EQ(r.alg_bytes, 8u) << m->name;
  }
  // AlltoAll family: C' = C rounded up to a multiple of n (C < n x 128) or of n x 128; alg bytes
  // C' x type; the call's count C' / n.
  for (const CollectiveModel* m : {&AlltoAllModel(), &AlltoAllVModel(), &AlltoAllVCModel()}) {
    RowSizes r = SizesFor(*m, 100, 4, 3);  // C = 25 -> C' = 27
    EXPECT_EQ(r.data_size, 100u) << m->name;
    EXPECT_EQ(r.count, 9u) << m->name;
    EXPECT_EQ(r.alg_bytes, 108u) << m->name;
    r = SizesFor(*m, 4001, 4, 2);  // C = 1001 >= 256 -> C' = 1024
    EXPECT_EQ(r.count, 512u) << m->name;
    EXPECT_EQ(r.alg_bytes, 4096u) << m->name;
  }
}

// hccl_test's check_data_count aligns the options once (min, max, step), then the sweep runs
// from the aligned min without re-aligning rows. Only the tools that split buffers into n blocks.
TEST(HcclTestCollective, SplittingToolsAlignTheOptionsOnceBeforeTheSweep) {
  for (const CollectiveModel* m : SplittingModels()) {
    ASSERT_NE(m->align_size, nullptr) << m->name;
    Options o = ParseArgs({"-b", "8", "-e", "100", "-f", "2"});
    Options a = SweepOptions(*m, o, 3);
    EXPECT_EQ(a.min_bytes, 6u) << m->name;
    EXPECT_EQ(a.max_bytes, 99u) << m->name;
    EXPECT_EQ(ParamsLine(a).rfind("the minbytes is 6, maxbytes is 99, ", 0), 0u) << m->name;
    EXPECT_EQ(Sweep(*m, o, 3), (std::vector<uint64_t>{6, 12, 24, 48, 96})) << m->name;
    o = ParseArgs({"-b", "7", "-e", "40", "-i", "5"});  // step 5 -> 6
    EXPECT_EQ(SweepOptions(*m, o, 3).step_bytes, 6u) << m->name;
    EXPECT_EQ(Sweep(*m, o, 3), (std::vector<uint64_t>{6, 12, 18, 24, 30, 36})) << m->name;
    // -i 0 still means the -b size only (aligned); a size below n becomes n.
    EXPECT_EQ(Sweep(*m, ParseArgs({"-b", "7", "-e", "40", "-i", "0"}), 3), std::vector<uint64_t>{6});
    EXPECT_EQ(Sweep(*m, ParseArgs({"-b", "2", "-e", "2"}), 3), std::vector<uint64_t>{3});
    // Above 16 MiB the max is floored to a multiple of n x 512; the default step (max-min)/10 is
    // rounded up to a multiple of n.
    o = ParseArgs({"-b", "16M", "-e", "20M"});
    a = SweepOptions(*m, o, 3);
    EXPECT_EQ(a.min_bytes, (16ull << 20) / 3 * 3) << m->name;
    EXPECT_EQ(a.max_bytes, (20ull << 20) / 1536 * 1536) << m->name;
    EXPECT_EQ(a.step_bytes % 3, 0u) << m->name;
    EXPECT_GE(a.step_bytes, o.step_bytes) << m->name;
    for (uint64_t s : Sweep(*m, o, 3)) EXPECT_EQ(s % 3, 0u) << m->name << " " << s;
    // --sizes entries are size options too.
    EXPECT_EQ(Sweep(*m, ParseArgs({"--sizes", "8,100,2"}), 3), (std::vector<uint64_t>{6, 99, 3}));
    // Already aligned options are unchanged (the e2e header "minbytes is 8, maxbytes is 4194304").
    a = SweepOptions(*m, ParseArgs({"-b", "8", "-e", "4M", "-f", "4"}), 4);
    EXPECT_EQ(a.min_bytes, 8u);
    EXPECT_EQ(a.max_bytes, 4u << 20);
  }
  // The tools that do not split their buffers keep the options as given.
  for (const CollectiveModel* m : {&AllReduceModel(), &ReduceModel(), &BroadcastModel()}) {
    EXPECT_EQ(m->align_size, nullptr) << m->name;
    Options o = ParseArgs({"-b", "8", "-e", "100", "-f", "2"});
    Options a = SweepOptions(*m, o, 3);
    EXPECT_EQ(a.min_bytes, 8u);
    EXPECT_EQ(a.max_bytes, 100u);
    EXPECT_EQ(Sweep(*m, o, 3), (std::vector<uint64_t>{8, 16, 32, 64})) << m->name;
    EXPECT_EQ(Sweep(*m, ParseArgs({"-b", "7", "-e", "40", "-i", "5"}), 3),
              (std::vector<uint64_t>{7, 12, 17, 22, 27, 32, 37}));
  }
}

// -o given to a tool whose operator does not reduce: the warning (the run goes on).
TEST(HcclTestCollective, OpOptionIgnoredByTheToolsThatDoNotReduce) {
  const Options with_op = ParseArgs({"-o", "prod"});
  const Options without = ParseArgs({"-d", "fp16"});
  for (const CollectiveModel* m : SplittingModels()) {
    EXPECT_EQ(OpOptionIgnored(*m, with_op), !m->reduction) << m->name;
    EXPECT_FALSE(OpOptionIgnored(*m, without)) << m->name;
  }
  EXPECT_TRUE(OpOptionIgnored(BroadcastModel(), with_op));
  EXPECT_TRUE(OpOptionIgnored(AllGatherModel(), with_op));
  EXPECT_TRUE(OpOptionIgnored(ScatterModel(), with_op));
  EXPECT_TRUE(OpOptionIgnored(AlltoAllVCModel(), with_op));
  EXPECT_FALSE(OpOptionIgnored(BroadcastModel(), without));
  for (const CollectiveModel* m : {&AllReduceModel(), &ReduceModel(), &ReduceScatterModel(),
                                   &ReduceScatterVModel()})
    EXPECT_FALSE(OpOptionIgnored(*m, with_op)) << m->name;
}

TEST(HcclTestCollective, BusFactors) {
  EXPECT_DOUBLE_EQ(ReduceModel().bus_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(BroadcastModel().bus_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(AllReduceModel().bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(AllReduceModel().bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(AllReduceModel().bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(AllReduceModel().bus_factor(8), 1.75);
}

TEST(HcclTestCollective, OptionsAndColumnsOfDataMovement) {
  std::vector<std::string> args = {"broadcast_test", "-d", "all", "--skip-unimplemented",
                                   "--in-place"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ParseResult r = ParseOptions(static_cast<int>(argv.size()), argv.data());
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.options.all_dtypes);
  EXPECT_TRUE(r.options.skip_unimplemented);
  EXPECT_TRUE(r.options.in_place);
  EXPECT_NE(UsageText("broadcast_test").find("--skip-unimplemented"), std::string::npos);
  Row row;
  row.op = -1;
  row.root = -1;
  row.dtype = kInt128;
  std::string wide = WideRow(row);
  EXPECT_NE(wide.find(" int128   none    -1 "), std::string::npos) << wide;
  std::string js = RowsToJson({"broadcast_test", 2, 1, 1, false, true}, {row});
  EXPECT_NE(js.find("\"redop\": \"none\""), std::string::npos);
  EXPECT_NE(js.find("\"placement\": \"in-place\""), std::string::npos);
}

}  // namespace
}  // namespace hostccl::tools
