// alltoallv_test: HcclAlltoAllV in the hccl_test dialect (see docs/tools.md). sendCounts[i] =
// recvCounts[i] = C'/n, sdispls[i] = rdispls[i] = i x C'/n, as hccl_test passes them; checked as
// alltoall_test (AlltoAllVModel).
#include <vector>

#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  static std::vector<uint64_t> counts, displs;  // the library copies them during the call
  counts.assign(static_cast<size_t>(a.ranks), a.count);
  displs.resize(static_cast<size_t>(a.ranks));
  for (size_t i = 0; i < displs.size(); ++i) displs[i] = i * a.count;
  const auto t = static_cast<HcclDataType>(a.dtype);
  return HcclAlltoAllV(a.send, counts.data(), displs.data(), t, a.recv, counts.data(), displs.data(), t, a.comm,
                       a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::AlltoAllVModel(), Run});
}
