/*
 * hostccl public header: HCCL resource API (hccl/hccl_res.h).
 * Present because HCCL's hccl_comm.h includes it. HCCL's version declares device channel and
 * engine resources for custom kernels, which hostccl does not provide; nothing is declared here.
 */
#ifndef HCCL_RES_H_
#define HCCL_RES_H_

#include "hccl_types.h"

#endif /* HCCL_RES_H_ */
