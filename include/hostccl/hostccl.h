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

/*
 * NPU fidelity (on by default; docs/semantics.md): operator buffers must be device memory
 * (aclrtMalloc or the virtual-memory API), else HCCL_E_PARA, and runtime calls on a thread
 * without a current device fail with ACL_ERROR_RT_CONTEXT_NULL (107002), as on an NPU.
 * HOSTCCL_FIDELITY=0 relaxes both; these two calls do it from code, whatever the variable says.
 *
 * HostcclCommAllowHostBuffers: from now on `comm` accepts host buffers (malloc, new, the stack,
 * aclrtMallocHost) in every operator; for programs whose data lives in host memory (the Python
 * backend's CPU tensors). Per communicator and rank (each rank calls it on its own handle);
 * sub-communicators split afterwards inherit it. Errors: HCCL_E_PTR (comm is NULL), HCCL_E_PARA
 * (not a live communicator).
 */
HcclResult HostcclCommAllowHostBuffers(HcclComm comm);

/* Process-wide fidelity: 1 on, 0 off (as HOSTCCL_FIDELITY=0), -1 follow HOSTCCL_FIDELITY again.
 * Host-buffer acceptance is decided when a communicator is created; the device check at each call. */
void HostcclSetFidelity(int mode);

/* "hostccl <version>" */
const char *HostcclVersionString(void);

#ifdef __cplusplus
}
#endif

#endif /* HOSTCCL_HOSTCCL_H_ */
