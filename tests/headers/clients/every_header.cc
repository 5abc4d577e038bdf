// Client-compile check: includes every public header in the order selected by HOSTCCL_ORDER
// (1: HCCL first, 2: ACL first, 3: leaves first), twice, then uses one name from each. Compiled
// by ctest with -std=c++11/14/17/20 -Wall -Wextra -Wpedantic -Werror.
#if HOSTCCL_ORDER == 1
#include "acl/acl.h"
#include "acl/acl_base.h"
#include "acl/acl_base_rt.h"
#include "acl/acl_prof.h"
#include "acl/acl_rt.h"
#include "hccl/hccl.h"
#include "hccl/hccl_comm.h"
#include "hccl/hccl_launch.h"
#include "hccl/hccl_res.h"
#include "hccl/hccl_types.h"
#elif HOSTCCL_ORDER == 2
#include <acl/acl.h>
#include <acl/acl_mdl.h>
#include <acl/acl_op.h>
#include <acl/acl_prof.h>
#include <acl/acl_rt_allocator.h>
#include <hccl/hccl.h>
#include <hccl/hccl_comm.h>
#else
#include "acl/acl_base.h"
#include "acl/acl_base_mdl.h"
#include "acl/acl_base_rt.h"
#include "acl/acl_prof.h"
#include "acl/acl_rt.h"
#include "acl/acl_rt_allocator.h"
#include "acl/error_codes/ge_error_codes.h"
#include "acl/error_codes/rt_error_codes.h"
#include "hccl/hccl.h"
#include "hccl/hccl_comm.h"
#include "hccl/hccl_launch.h"
#include "hccl/hccl_res.h"
#include "hccl/hccl_types.h"
#endif
// Include guards: a second round must be harmless.
#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

int EveryHeaderUse(int argc) {
  HcclCommConfig config;
  HcclCommConfigInit(&config);
  HcclRootInfo root_info;
  root_info.internal[0] = '\0';
  aclprofConfig* prof = 0;
  aclrtPhysicalMemProp prop;
  prop.location.id = 0;
  return static_cast<int>(config.hcclBufferSize) + argc + root_info.internal[0] +
         (prof == 0 ? 0 : 1) + static_cast<int>(prop.location.id) + ACL_ERROR_RT_NO_DEVICE +
         ACL_SUCCESS + HCCL_E_PARA;
}
