/*
 * hostccl public header: custom allocator hooks (acl/acl_rt_allocator.h).
 * Present so CANN's include chain (acl_rt.h) resolves; hostccl does not support external
 * allocators and declares nothing here.
 */
#ifndef INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_
#define INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_

#include "acl_base.h"

#endif /* INC_EXTERNAL_ACL_ACL_RT_ALLOCATOR_H_ */
