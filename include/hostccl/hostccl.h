/*
 * hostccl public extensions (not part of HCCL): creating a communicator from the environment a
 * launcher sets up, so one line replaces the HcclGetRootInfo + broadcast + HcclCommInitRootInfo
 * dance. C and C++11 compatible; link with -lhccl.
 *
 * Launchers recognised (first match wins):
 *   hcclrun / torchrun      RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 *                           MASTER_ADDR, MASTER_PORT
 *   Open MPI (mpirun)       OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE
 *   MPICH (mpiexec, hydra)  PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
 *   Slurm (srun)            SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NNODES
 * See docs/launching.md for how the rendezvous store is chosen.
 */
#ifndef HOSTCCL_HOSTCCL_H_
#define HOSTCCL_HOSTCCL_H_

#include <stdint.h>

#include "../hccl/hccl_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Creates this process's communicator of WORLD_SIZE ranks (all ranks call it). Rank 0 calls
 * HcclGetRootInfo and publishes the root info through a store (TCP at MASTER_ADDR:MASTER_PORT,
 * else a file store under /tmp keyed by the launcher's job id); every rank then calls
 * HcclCommInitRootInfo. When the calling thread has no current device, it first calls
 * aclrtSetDevice(LOCAL_RANK % device count). Blocks at most the connect timeout
 * (HCCL_CONNECT_TIMEOUT). Errors: HCCL_E_PTR (comm is NULL), HCCL_E_PARA (no or inconsistent
 * launcher variables; multi-host run without MASTER_ADDR/MASTER_PORT), HCCL_E_TIMEOUT,
 * HCCL_E_TCP_CONNECT, or what HcclCommInitRootInfo returns. The reason is logged.
 */
HcclResult HostcclCommInitFromEnv(HcclComm *comm);

/* The rank and rank count the environment describes (no communication). Returns
 * HCCL_E_NOT_FOUND, quietly (info log; aclGetRecentErrMsg has the reason), when no launcher
 * environment is present, so programs can probe for one. */
HcclResult HostcclGetEnvRank(uint32_t *rank, uint32_t *size);

/* The rank within this host and the ranks on this host (localSize = size when unknown). */
HcclResult HostcclGetEnvLocalRank(uint32_t *localRank, uint32_t *localSize);

/* "hostccl <version>" */
const char *HostcclVersionString(void);

#ifdef __cplusplus
}
#endif

#endif /* HOSTCCL_HOSTCCL_H_ */
