// reduce_test: HcclReduce in the hccl_test dialect (options, output and formulas of Huawei's
// hccl_test; see docs/tools.md). The root checks its recvBuf bit for bit against a scalar
// rank-order fold; every other rank checks that its recvBuf kept the guard pattern.
#include <cstring>

#include "check.h"
#include "driver.h"

namespace {

using hostccl::tools::CallArgs;

uint64_t SameCount(uint64_t count, int) { return count; }
double BusFactorOne(int) {
  return 1.0;
}  // all data must reach the root (nccl-tests: busbw = algbw)

HcclResult Run(const CallArgs& a) {
  return HcclReduce(a.send, a.recv, a.count, static_cast<HcclDataType>(a.dtype),
                    static_cast<HcclReduceOp>(a.op), a.root, a.comm, a.stream);
}

void PrepareRecv(const CallArgs& a, void* host_recv, uint64_t bytes) {
  if (static_cast<uint32_t>(a.rank) == a.root) {
    hostccl::tools::FillAntiExpected(
        hostccl::tools::ExpectedPeriod(a.dtype, a.op, a.ranks, a.count), a.dtype, a.count,
        host_recv);
  } else {
    std::memset(host_recv, hostccl::tools::kGuardByte, bytes);
  }
}

uint64_t Check(const CallArgs& a, const void* host_recv, uint64_t bytes, std::string* report) {
  if (static_cast<uint32_t>(a.rank) == a.root) {
    return hostccl::tools::CompareWithExpected(
        a.dtype, host_recv, a.count,
        hostccl::tools::ExpectedPeriod(a.dtype, a.op, a.ranks, a.count), 8, report);
  }
  uint64_t bad = hostccl::tools::CountGuardViolations(host_recv, bytes);
  if (bad && report)
    *report += "non-root recvBuf written: " + std::to_string(bad) + " bytes lost the guard\n";
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  hostccl::tools::CollectiveSpec spec;
  spec.name = "reduce_test";
  spec.uses_op = true;
  spec.send_count = SameCount;
  spec.recv_count = SameCount;
  spec.bus_factor = BusFactorOne;
  spec.run = Run;
  spec.prepare_recv = PrepareRecv;
  spec.check = Check;
  return hostccl::tools::RunHcclTest(argc, argv, spec);
}
