// Algorithm selection table and HOSTCCL_ALGO parsing; hardware profile rules.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/profiles.h"
#include "core/selector.h"

namespace hostccl::core {
namespace {

TEST(Selector, DefaultTable) {
  std::vector<AlgoRule> none;
  std::string why;
  EXPECT_STREQ(SelectReduce(none, 1 << 30, {8, true, true}, &why)->name, "direct");
  EXPECT_STREQ(SelectReduce(none, 8, {8, false, true}, &why)->name, "gather");
  EXPECT_STREQ(SelectReduce(none, 256 << 10, {4, false, true}, &why)->name, "gather");
  EXPECT_STREQ(SelectReduce(none, (256 << 10) + 4, {4, false, true}, &why)->name, "chain");
  EXPECT_EQ(why, "table");
}

TEST(Selector, ForcedRulesAndRanges) {
  std::vector<AlgoRule> rules;
  ASSERT_TRUE(ParseAlgoRules("reduce:0-64K:gather#reduce:64K-inf:chain", &rules).ok());
  ASSERT_EQ(rules.size(), 2u);
  std::string why;
  EXPECT_STREQ(SelectReduce(rules, 65535, {4, true, true}, &why)->name, "gather");
  EXPECT_EQ(why, "HOSTCCL_ALGO");
  EXPECT_STREQ(SelectReduce(rules, 65536, {4, true, true}, &why)->name, "chain");
  ASSERT_TRUE(ParseAlgoRules("reduce=direct", &rules).ok());
  // direct needs thread ranks: falls back to the table for processes.
  EXPECT_STREQ(SelectReduce(rules, 8, {4, false, true}, &why)->name, "gather");
  EXPECT_EQ(why, "table");
}

TEST(Selector, BadRulesAreRejected) {
  std::vector<AlgoRule> rules;
  EXPECT_EQ(ParseAlgoRules("reduce=nosuch", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("allgather=ring", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("reduce:x-1:chain", &rules).code(), Code::kPara);
  EXPECT_EQ(ParseAlgoRules("reduce", &rules).code(), Code::kPara);
}

TEST(Profiles, Rules) {
  setenv("HOSTCCL_SOC", "atlas310p", 1);
  EXPECT_EQ(ActiveProfileName(), "Atlas310P");
  EXPECT_EQ(CheckReduceProfile(DataType::kFp32, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "Atlas910", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kInt64, RedOp::kProd, false).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kInt16, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kBf16, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "AtlasA2", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kBf16, RedOp::kMax, false).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kBf16, RedOp::kProd, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kUint8, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp64, RedOp::kSum, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_SOC", "Ascend950", 1);
  EXPECT_TRUE(CheckReduceProfile(DataType::kUint64, RedOp::kProd, true).ok());
  EXPECT_EQ(CheckReduceProfile(DataType::kUint32, RedOp::kSum, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kInt16, RedOp::kProd, false).code(), Code::kNotSupport);
  setenv("HOSTCCL_PROFILE_OLD_RULES", "1", 1);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp32, RedOp::kProd, false).code(), Code::kNotSupport);
  EXPECT_EQ(CheckReduceProfile(DataType::kFp64, RedOp::kSum, true).code(), Code::kNotSupport);
  EXPECT_TRUE(CheckReduceProfile(DataType::kFp64, RedOp::kSum, false).ok());
  unsetenv("HOSTCCL_PROFILE_OLD_RULES");
  unsetenv("HOSTCCL_SOC");
  EXPECT_EQ(ActiveProfileName(), "");
  EXPECT_TRUE(CheckReduceProfile(DataType::kUint16, RedOp::kProd, false).ok());
}

}  // namespace
}  // namespace hostccl::core
