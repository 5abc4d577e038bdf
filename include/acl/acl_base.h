/*
 * hostccl public header: AscendCL base (acl/acl_base.h).
 * Aggregates the base runtime types and the error-code headers, as CANN's acl_base.h does.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

/* clang-format off */
/* Include order as in HCCL/CANN. */
#include "acl_base_rt.h"
#include "acl_base_mdl.h"
#include "error_codes/rt_error_codes.h"
#include "error_codes/ge_error_codes.h"
/* clang-format on */

#endif /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
