// alltoall_test: HcclAlltoAll in the hccl_test dialect (see docs/tools.md). sendCount = recvCount =
// C'/n (hccl_test's rounding, AlltoAllCallCount); every rank checks bit for bit that block i of its
// recvBuf is block r of rank i's input and that its sendBuf is unchanged (AlltoAllModel).
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  const auto t = static_cast<HcclDataType>(a.dtype);
  return HcclAlltoAll(a.send, a.count, t, a.recv, a.count, t, a.comm, a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::AlltoAllModel(), Run});
}
