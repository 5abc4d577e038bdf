/*
 * hostccl public header: HCCL kernel-launch API (hccl/hccl_launch.h).
 * Present because HCCL's hccl_comm.h includes it. HCCL's version declares device kernel launch
 * helpers, which hostccl does not provide; nothing is declared here.
 */
#ifndef HCCL_LAUNCH_H_
#define HCCL_LAUNCH_H_

#include "hccl_types.h"

#endif /* HCCL_LAUNCH_H_ */
