// Must NOT compile (ctest WILL_FAIL): proves the client-compile tests really turn warnings and
// narrowing into errors, and that HcclSendRecvItem::remoteRank is 32-bit (a uint64_t variable in
// a braced initializer narrows).
#include "hccl/hccl.h"

int NarrowingCanary() {
  uint64_t count = 1;
  uint64_t wide_rank = 1;
  HcclSendRecvItem item = {HCCL_SEND, nullptr, count, HCCL_DATA_TYPE_FP32, wide_rank};
  return static_cast<int>(item.remoteRank);
}
