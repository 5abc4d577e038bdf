/*
 * hostccl public header: model loading and execution (acl/acl_mdl.h).
 * Present so `#include <acl/acl.h>` resolves as in CANN; hostccl loads no offline models. The
 * stream-capture model API (aclmdlRI*) comes through acl_rt.h, included here.
 */
#ifndef INC_EXTERNAL_ACL_ACL_MODEL_H_
#define INC_EXTERNAL_ACL_ACL_MODEL_H_

#include "acl_base.h"
#include "acl_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_MODEL_H_ */
