/*
 * hostccl public header: AscendCL umbrella (acl/acl.h).
 * Includes the runtime (acl_rt.h: init, devices, memory, streams, events, virtual memory) and
 * the (empty) operator and model headers, in CANN's order.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

/* clang-format off */
/* Include order as in HCCL/CANN. */
#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"
/* clang-format on */

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
