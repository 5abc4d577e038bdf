/*
 * hostccl public header: single-operator execution (acl/acl_op.h).
 * Present so `#include <acl/acl.h>` resolves as in CANN; hostccl runs no device operators and
 * declares nothing here.
 */
#ifndef INC_EXTERNAL_ACL_ACL_OP_H_
#define INC_EXTERNAL_ACL_ACL_OP_H_

#include "acl_base.h"
#include "acl_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_OP_H_ */
