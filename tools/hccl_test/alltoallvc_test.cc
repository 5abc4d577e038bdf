// alltoallvc_test: HcclAlltoAllVC in the hccl_test dialect (see docs/tools.md). Every entry of
// the n x n sendCountMatrix is C'/n, as hccl_test passes it (packed layout); checked as
// alltoall_test (AlltoAllVCModel).
#include <vector>

#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  static std::vector<uint64_t> matrix;  // the library copies it during the call
  matrix.assign(static_cast<size_t>(a.ranks) * static_cast<size_t>(a.ranks), a.count);
  const auto t = static_cast<HcclDataType>(a.dtype);
  return HcclAlltoAllVC(a.send, matrix.data(), t, a.recv, t, a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::AlltoAllVCModel(), Run});
}
