// all_gather_test: HcclAllGather in the hccl_test dialect (see docs/tools.md). Every rank checks bit
// for bit that block i of its recvBuf is rank i's input and that nothing outside the n blocks was
// written (AllGatherModel in collective.cc); --in-place passes sendBuf = recvBuf + rank x count.
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  return HcclAllGather(a.send, a.recv, a.count, static_cast<HcclDataType>(a.dtype), a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::AllGatherModel(), Run});
}
