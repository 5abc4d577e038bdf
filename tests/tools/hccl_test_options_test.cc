// Unit tests of the hccl_test command line: defaults, size suffixes, sweeps, validation, formulas
// and the exact output format.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "options.h"
#include "report.h"

namespace hostccl::tools {
namespace {

ParseResult Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "reduce_test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return ParseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(HcclTestOptions, DefaultsAreHcclTests) {
  ParseResult r = Parse({});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.options.min_bytes, 64ull << 20);
  EXPECT_EQ(r.options.max_bytes, 64ull << 20);
  EXPECT_EQ(r.options.iters, 20);
  EXPECT_EQ(r.options.warmup_iters, 10);
  EXPECT_EQ(r.options.check, 1);
  EXPECT_EQ(r.options.root, 0);
  EXPECT_EQ(r.options.dtypes, std::vector<int>{4});
  EXPECT_EQ(r.options.ops, std::vector<int>{0});
  EXPECT_FALSE(r.options.wide);
  EXPECT_FALSE(r.options.isolated);
  EXPECT_FALSE(r.options.host_buffers);
  EXPECT_EQ(SizeSweep(r.options), std::vector<uint64_t>{64ull << 20});
}

TEST(HcclTestOptions, SizeSuffixes) {
  EXPECT_EQ(ParseSize("8"), 8u);
  EXPECT_EQ(ParseSize("8k"), 8192u);
  EXPECT_EQ(ParseSize("8K"), 8192u);
  EXPECT_EQ(ParseSize("4m"), 4ull << 20);
  EXPECT_EQ(ParseSize("2G"), 2ull << 30);
  EXPECT_EQ(ParseSize("0x10"), 16u);  // strtol base 0, like hccl_test
  EXPECT_FALSE(ParseSize("0"));
  EXPECT_FALSE(ParseSize("-4"));
  EXPECT_FALSE(ParseSize("4KB"));
  EXPECT_FALSE(ParseSize("4T"));
  EXPECT_FALSE(ParseSize("abc"));
  EXPECT_FALSE(ParseSize(""));
}

TEST(HcclTestOptions, FactorSweep) {
  ParseResult r = Parse({"-b", "8", "-e", "4M", "-f", "4"});
  ASSERT_EQ(r.error, "");
  std::vector<uint64_t> s = SizeSweep(r.options);
  ASSERT_EQ(s.size(), 10u);  // 8, 32, ..., 2M (8M would pass -e)
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s[1], 32u);
  EXPECT_EQ(s.back(), 2ull << 20);
}

TEST(HcclTestOptions, StepSweepAndDefaultStep) {
  ParseResult r = Parse({"-b", "100", "-e", "200", "-i", "50"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(SizeSweep(r.options), (std::vector<uint64_t>{100, 150, 200}));
  r = Parse({"-b", "100", "-e", "200"});  // default step (max-min)/10
  EXPECT_EQ(r.options.step_bytes, 10u);
  EXPECT_EQ(SizeSweep(r.options).size(), 11u);
  r = Parse({"-b", "1K", "-e", "8K", "-i", "0"});  // -i 0: the -b size only
  EXPECT_EQ(SizeSweep(r.options), std::vector<uint64_t>{1024});
  r = Parse({"-b", "8", "-e", "64", "-f", "1.01"});  // tiny factor still makes progress
  EXPECT_FALSE(SizeSweep(r.options).empty());
  EXPECT_LE(SizeSweep(r.options).back(), 64u);
}

TEST(HcclTestOptions, Errors) {
  EXPECT_NE(Parse({"-b", "0"}).error, "");
  EXPECT_NE(Parse({"-b", "1x"}).error, "");
  EXPECT_NE(Parse({"-b", "8M", "-e", "4M"}).error.find("maxbytes < minbytes"), std::string::npos);
  EXPECT_NE(Parse({"-f", "1.0"}).error, "");
  EXPECT_NE(Parse({"-f", "x"}).error, "");
  EXPECT_NE(Parse({"-n", "-1"}).error, "");
  EXPECT_NE(Parse({"-w", "abc"}).error, "");
  EXPECT_NE(Parse({"-c", "3"}).error, "");
  EXPECT_NE(Parse({"-d", "fp33"}).error, "");
  EXPECT_NE(Parse({"-o", "avg"}).error, "");
  EXPECT_NE(Parse({"-q"}).error, "");
  EXPECT_NE(Parse({"extra"}).error.find("non-option"), std::string::npos);
  EXPECT_NE(Parse({"-b"}).error, "");
  EXPECT_TRUE(Parse({"-h"}).help);
  EXPECT_TRUE(Parse({"--help"}).help);
}

TEST(HcclTestOptions, AllTypesAndOps) {
  ParseResult r = Parse({"-d", "all", "-o", "all"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.options.dtypes.size(), 12u);
  EXPECT_EQ(r.options.ops, (std::vector<int>{0, 1, 2, 3}));
  r = Parse(
      {"--datatype", "bfp16", "--op", "min", "--root", "3", "--iters", "5", "--warmup_iters", "0"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.options.dtypes, std::vector<int>{11});
  EXPECT_EQ(r.options.ops, std::vector<int>{3});
  EXPECT_EQ(r.options.root, 3);
  EXPECT_EQ(r.options.iters, 5);
  EXPECT_EQ(r.options.warmup_iters, 0);
  // int128 is a known name but not reducible: accepted by the parser, HcclReduce rejects it.
  EXPECT_EQ(Parse({"-d", "int128"}).options.dtypes, std::vector<int>{12});
}

// -z / -m select hccl_test's zero-copy and symmetric-memory buffers: 0 or 1, not both, not with
// --host-buffers.
TEST(HcclTestOptions, ZeroCopyAndSymmetricMemory) {
  ParseResult r = Parse({"-z", "1"});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.options.zero_copy);
  EXPECT_FALSE(r.options.symmetric);
  EXPECT_TRUE(r.options.notes.empty());
  r = Parse({"--symmetric_memory", "1"});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.options.symmetric);
  EXPECT_FALSE(Parse({"-z", "0"}).options.zero_copy);
  EXPECT_NE(Parse({"-z", "2"}).error, "");
  EXPECT_NE(Parse({"-m", "yes"}).error, "");
  EXPECT_NE(Parse({"-z", "1", "-m", "1"}).error, "");
  EXPECT_NE(Parse({"-m", "1", "--host-buffers"}).error, "");
}

TEST(HcclTestOptions, Extensions) {
  ParseResult r = Parse({"-W", "1", "-I", "--json", "/tmp/x.json", "-t", "1"});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.options.wide);
  EXPECT_TRUE(r.options.isolated);
  EXPECT_EQ(r.options.json_path, "/tmp/x.json");
  EXPECT_EQ(r.options.notes.size(), 1u);
  EXPECT_TRUE(Parse({"--wide"}).options.wide);
  EXPECT_TRUE(Parse({"--wide", "1"}).options.wide);
  EXPECT_TRUE(Parse({"--isolated"}).options.isolated);
  EXPECT_TRUE(Parse({"--host-buffers"}).options.host_buffers);
  EXPECT_NE(Parse({"-W", "2"}).error, "");
  r = Parse({"--sizes", "8,16,64K,1m", "-T", "0.25"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(SizeSweep(r.options), (std::vector<uint64_t>{8, 16, 65536, 1u << 20}));
  EXPECT_DOUBLE_EQ(r.options.time_budget_s, 0.25);
  EXPECT_NE(Parse({"--sizes", "8,,16"}).error, "");
  EXPECT_NE(Parse({"-T", "0"}).error, "");
  EXPECT_EQ(CalibratedIters(0.5, 1.0), 5000);
  EXPECT_EQ(CalibratedIters(0.5, 1e6), 1);
  EXPECT_EQ(CalibratedIters(0.5, 2e5), 2);
  EXPECT_EQ(CalibratedIters(0.5, 1000.0), 500);
}

TEST(HcclTestOptions, WorldValidation) {
  Options o;
  o.root = 4;
  EXPECT_NE(ValidateForWorld(o, 4, 8), "");
  o.root = 3;
  EXPECT_EQ(ValidateForWorld(o, 4, 8), "");
  o.npus = 9;
  EXPECT_NE(ValidateForWorld(o, 4, 8), "");
  o.npus = 0;
  EXPECT_NE(ValidateForWorld(o, 4, 8), "");
  o.npus = 8;
  EXPECT_EQ(ValidateForWorld(o, 4, 8), "");
}

TEST(HcclTestOptions, Formulas) {
  EXPECT_DOUBLE_EQ(AvgTimeUs(2.0, 20), 100.0);              // 2 ms over 20 iterations
  EXPECT_DOUBLE_EQ(AlgBandwidthGBs(1000000, 100.0), 10.0);  // 1e6 B in 100 us = 10 GB/s (decimal)
  EXPECT_DOUBLE_EQ(AvgTimeUs(2.0, 0), 0.0);
  // hccl_test rounds the element count up: a size not divisible by the type still moves all of
  // its bytes (the last element is whole).
  EXPECT_EQ(CountForBytes(10, 4), 3u);
  EXPECT_EQ(CountForBytes(7, 4), 2u);
  EXPECT_EQ(CountForBytes(8, 4), 2u);
  EXPECT_EQ(CountForBytes(1, 16), 1u);
  EXPECT_EQ(CountForBytes(17, 2), 9u);
  EXPECT_EQ(CountForBytes(9, 1), 9u);
}

// -o is remembered as given, so the tools that do not reduce can warn that it has no effect.
TEST(HcclTestOptions, OpOptionIsRecorded) {
  EXPECT_FALSE(Parse({}).options.op_set);
  EXPECT_FALSE(Parse({"-d", "int8"}).options.op_set);
  EXPECT_TRUE(Parse({"-o", "prod"}).options.op_set);
  EXPECT_TRUE(Parse({"--op", "all"}).options.op_set);
  EXPECT_TRUE(Parse({"-o", "sum"}).options.op_set);  // the default, given explicitly, still warns
  EXPECT_STREQ(kOpIgnoredWarning,
               "Warning: The -o,--op <sum/prod/min/max> option does not take effect. Check the cmd "
               "parameter.");
}

// The -h text states the calibrated iterations' clamp that CalibratedIters applies (1..5000).
TEST(HcclTestOptions, UsageStatesTheCalibrationClamp) {
  const std::string u = UsageText("all_reduce_test");
  EXPECT_NE(u.find("1..5000 iterations"), std::string::npos) << u;
  EXPECT_EQ(u.find("3..5000"), std::string::npos) << u;
  EXPECT_EQ(CalibratedIters(1.0, 2e6), 1);
  EXPECT_EQ(CalibratedIters(1.0, 1.0), 5000);
}

// The line before the table: -b/-e (as the tool aligned them) and the iterations; with -T the
// iteration count is calibrated per size, so no fixed "iters is 20", and the warm-up count run.
TEST(HcclTestReport, ParamsLine) {
  ParseResult r = Parse({"-b", "8", "-e", "4M", "-f", "4"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(ParamsLine(r.options),
            "the minbytes is 8, maxbytes is 4194304, iters is 20, warmup_iters is 10\n");
  r = Parse({"--sizes", "8,4K,1M", "-T", "0.05", "-w", "1"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(ParamsLine(r.options),
            "the minbytes is 8, maxbytes is 1048576, iters is calibrated to about 0.05 s per size, "
            "warmup_iters is 2\n");
  r = Parse({"-b", "1K", "-e", "1K", "-T", "2", "-n", "7"});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(ParamsLine(r.options).find("iters is 7"), std::string::npos);
  EXPECT_NE(ParamsLine(r.options).find("iters is calibrated to about 2 s per size, warmup_iters is 10"),
            std::string::npos);
}

TEST(HcclTestReport, ClassicFormatMatchesHcclTest) {
  EXPECT_EQ(ClassicHeader(),
            "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n");
  Row r;
  r.bytes = 64;
  r.time_us = 1000.0;
  r.algbw = 0.000064;
  r.check = CheckState::kSuccess;
  EXPECT_EQ(ClassicRow(r), "64                | 1000.00        | 0.00006              | success\n");
  r.check = CheckState::kNull;
  EXPECT_NE(ClassicRow(r).find("| NULL"), std::string::npos);
  r.check = CheckState::kFailed;
  r.wrong = 3;
  EXPECT_NE(WideRow(r).find("failed"), std::string::npos);
  RunInfo info{"reduce_test", 4, 20, 10, false};
  std::string js = RowsToJson(info, {r, r});
  EXPECT_NE(js.find("\"ranks\": 4"), std::string::npos);
  EXPECT_NE(js.find("\"wrong\": 3"), std::string::npos);
}

}  // namespace
}  // namespace hostccl::tools
