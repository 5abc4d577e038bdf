// reduce_test: HcclReduce in the hccl_test dialect (options, output and formulas of Huawei's
// hccl_test; see docs/tools.md). The root checks its recvBuf bit for bit against a scalar
// rank-order fold; every other rank checks that its recvBuf kept the guard pattern
// (ReduceModel in collective.cc).
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  return HcclReduce(a.send, a.recv, a.count, static_cast<HcclDataType>(a.dtype),
                    static_cast<HcclReduceOp>(a.op), a.root, a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::ReduceModel(), Run});
}
