// all_gatherv_test: HcclAllGatherV in the hccl_test dialect (see docs/tools.md), called as
// hccl_test's all_gatherv_test calls it: recvCounts[i] = count and recvDispls[i] = i x count on
// every rank, so every rank checks AllGather's result bit for bit (AllGatherVModel in
// collective.cc).
#include <vector>

#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  thread_local std::vector<uint64_t> counts, displs;  // read during the call only
  counts.assign(static_cast<size_t>(a.ranks), a.count);
  displs.resize(static_cast<size_t>(a.ranks));
  for (size_t i = 0; i < displs.size(); ++i) displs[i] = i * a.count;
  return HcclAllGatherV(a.send, a.count, a.recv, counts.data(), displs.data(), static_cast<HcclDataType>(a.dtype),
                        a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::AllGatherVModel(), Run});
}
