// main() for test executables that use the harness: strips the rank-child flag before gtest sees
// the command line, and makes a rank child that never reached its RunRanks call fail loudly.
#include <gtest/gtest.h>

#include <cstdio>

#include "harness/run_ranks.h"

int main(int argc, char** argv) {
  if (!hostccl::test::InitHarness(&argc, argv)) {
    std::fprintf(stderr, "malformed --hostccl_child flag\n");
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  if (hostccl::test::IsRankChild()) return hostccl::test::ChildFinishedWithoutRun();
  return rc;
}
