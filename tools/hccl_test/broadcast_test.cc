// broadcast_test: HcclBroadcast in the hccl_test dialect (see docs/tools.md). One buffer per rank,
// as in hccl_test: the root's holds its input, the others' the complement of the expected data;
// afterwards every rank checks bit for bit that it holds the root's input (BroadcastModel in
// collective.cc).
#include "driver.h"

namespace {

HcclResult Run(const hostccl::tools::CallArgs& a) {
  return HcclBroadcast(a.send, a.count, static_cast<HcclDataType>(a.dtype), a.root, a.comm,
                       a.stream);
}

}  // namespace

int main(int argc, char** argv) {
  return hostccl::tools::RunHcclTest(argc, argv, {&hostccl::tools::BroadcastModel(), Run});
}
