// reduce_scatterv_test: HcclReduceScatterV in the hccl_test dialect (see docs/tools.md), with
// hccl_test's arrays: sendCounts[i] = recvCount, sendDispls[i] = i x recvCount (elements). The
// checks are reduce_scatter_test's (ReduceScatterVModel in collective.cc).
#include <vector>

#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  thread_local std::vector<uint64_t> counts, displs;  // sized once: no allocation per timed call
  counts.assign(static_cast<size_t>(a.ranks), a.count);
  displs.resize(static_cast<size_t>(a.ranks));
  for (int i = 0; i < a.ranks; ++i) displs[static_cast<size_t>(i)] = static_cast<uint64_t>(i) * a.count;
  return HcclReduceScatterV(a.send, counts.data(), displs.data(), a.recv, a.count, static_cast<HcclDataType>(a.dtype),
                            static_cast<HcclReduceOp>(a.op), a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::ReduceScatterVModel(), Run});
}
