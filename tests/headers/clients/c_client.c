/* Client-compile check in C (C99/C11): the public headers also serve C programs.
 * HOSTCCL_C_ENTRY names the function so the file can be compiled under any name. */
#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"
#include "hccl/hccl_types.h"

int HOSTCCL_C_ENTRY(int argc) {
  HcclCommConfig config;
  uint64_t count = 4;
  uint32_t peer = 1;
  float buf[4] = {0};
  HcclSendRecvItem item = {HCCL_SEND, buf, count, HCCL_DATA_TYPE_FP32, peer};
  aclrtPhysicalMemProp prop = {ACL_MEM_HANDLE_TYPE_NONE,
                               ACL_MEM_ALLOCATION_TYPE_PINNED,
                               ACL_HBM_MEM_HUGE,
                               {0, ACL_MEM_LOCATION_TYPE_DEVICE},
                               0};
  HcclConfigValue value;
  uint32_t prof = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_RUNTIME_API;
  HcclCommConfigInit(&config);
  value.value = 1;
  if (argc > 1000) {
    HcclSetConfig(HCCL_DETERMINISTIC, value);
    HcclBatchSendRecv(&item, 1, NULL, NULL);
  }
  return (int)config.hcclBufferSize + (int)prop.memAttr + (int)prof + value.value + argc;
}
