// How an hccl_test tool learns its rank and creates its communicator. Two implementations, one
// per executable (chosen at link time):
//   bootstrap_env.cc - no MPI: HostcclCommInitFromEnv (hcclrun, srun, mpirun.openmpi and
//                      mpiexec.mpich all set rank variables it understands);
//   bootstrap_mpi.cc - MPI_Init, then the -r rank calls HcclGetRootInfo and MPI_Bcast's the
//                      4108-byte root info, exactly like Huawei's hccl_test (reduce_test_mpi).
// Used from the main thread only.
#pragma once

#include <hccl/hccl.h>

#include <memory>
#include <string>

namespace hostccl::tools {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Creates the communicator of all ranks. `root` is the -r rank (it creates the root info in
  // the MPI variant). Blocks until every rank has joined (bounded by HCCL_CONNECT_TIMEOUT).
  virtual HcclResult CreateComm(int root, HcclComm* comm, std::string* err) = 0;
  // Called once at the end, after the communicator is destroyed.
  virtual void Finalize() {}
};

// Initialises the launcher side (MPI_Init in the MPI variant); nullptr + *err on failure.
std::unique_ptr<Bootstrap> MakeBootstrap(int* argc, char*** argv, std::string* err);

}  // namespace hostccl::tools
