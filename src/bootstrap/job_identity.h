// Job identity: which launcher run this process belongs to, so that two jobs started from the same
// rank table (same address, same port, same file bytes) can never join each other's communicator.
//
// Sources, first one set wins (the most specific launcher first):
//   HOSTCCL_JOB_ID                         hcclrun exports a random one; any launcher or user may set it
//   PMIX_NAMESPACE / OMPI_MCA_ess_base_jobid  Open MPI (mpirun) and other PMIx launchers; Open MPI's
//                                          per-job random key OMPI_MCA_orte_precondition_transports
//                                          is appended when present
//   TORCHELASTIC_RUN_ID                    torchrun (its static default "none" is ignored)
//   SLURM_JOB_ID + SLURM_STEP_ID           srun
// MPICH's hydra exports no job id to its ranks (only PMI_RANK/PMI_SIZE/PMI_FD): no identity there.
#pragma once

#include <string>

namespace hostccl::boot {

struct JobIdentity {
  std::string source;  // the variable it came from, e.g. "HOSTCCL_JOB_ID"; "" when none
  std::string id;      // its value (bounded, printable)
  bool empty() const { return id.empty(); }
  // "HOSTCCL_JOB_ID=1f2e..." or "no launcher job id".
  std::string Describe() const;
};

// Reads the environment each call (cheap; tests change it).
JobIdentity LauncherJobIdentity();

// "pid 1234 on host <hostname>": how a process is named in conflict messages.
std::string ThisProcessName();

}  // namespace hostccl::boot
