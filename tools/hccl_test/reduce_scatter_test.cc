// reduce_scatter_test: HcclReduceScatter in the hccl_test dialect (see docs/tools.md). Every rank
// checks its recvBuf bit for bit against block r of the scalar rank-order fold, and that its
// sendBuf is unchanged (ReduceScatterModel in collective.cc).
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  return HcclReduceScatter(a.send, a.recv, a.count, static_cast<HcclDataType>(a.dtype),
                           static_cast<HcclReduceOp>(a.op), a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::ReduceScatterModel(), Run});
}
