/*
 * hostccl public header: graph-engine error codes (acl/error_codes/ge_error_codes.h).
 * Present so CANN's include chain (acl_base.h) resolves; hostccl has no graph engine and
 * defines no GE codes.
 */
#ifndef INC_EXTERNAL_GE_GE_ERROR_CODES_H_
#define INC_EXTERNAL_GE_GE_ERROR_CODES_H_

#include <stddef.h>

#endif /* INC_EXTERNAL_GE_GE_ERROR_CODES_H_ */
