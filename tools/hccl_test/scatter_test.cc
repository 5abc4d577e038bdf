// scatter_test: HcclScatter in the hccl_test dialect (see docs/tools.md). Every rank fills an
// n x count send buffer (only the root's is read, as in hccl_test); every rank checks bit for bit
// that its recvBuf is block r of the root's input (ScatterModel in collective.cc).
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  return HcclScatter(a.send, a.recv, a.count, static_cast<HcclDataType>(a.dtype), a.root, a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::ScatterModel(), Run});
}
