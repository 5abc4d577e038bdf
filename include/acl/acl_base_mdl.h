/*
 * hostccl public header: model-related base types (acl/acl_base_mdl.h).
 * Present so CANN's include chain (acl_base.h) resolves; hostccl runs no models and declares
 * nothing here.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_MDL_H_
#define INC_EXTERNAL_ACL_ACL_BASE_MDL_H_

#include "acl_base_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_MDL_H_ */
