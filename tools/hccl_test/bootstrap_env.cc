// Launcher-environment bootstrap (reduce_test without MPI): rank and rank count from
// HostcclGetEnvRank (hcclrun/torchrun, Open MPI, MPICH/Hydra and Slurm variables), the
// communicator from HostcclCommInitFromEnv. Without launcher variables the tool runs as one rank.
#include <hostccl/hostccl.h>

#include "bootstrap.h"

namespace hostccl::tools {
namespace {

class EnvBootstrap : public Bootstrap {
 public:
  EnvBootstrap(int rank, int size) : rank_(rank), size_(size) {}
  const char* name() const override { return "env"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  HcclResult CreateComm(int root, HcclComm* comm, std::string* err) override {
    (void)root;  // the launcher's rendezvous is rank 0's store, whatever the -r rank
    if (single_) {
      // No launcher: a one-rank communicator made directly.
      HcclRootInfo info;
      HcclResult r = HcclGetRootInfo(&info);
      if (r == HCCL_SUCCESS) r = HcclCommInitRootInfo(1, &info, 0, comm);
      if (r != HCCL_SUCCESS) *err = "one-rank HcclGetRootInfo/HcclCommInitRootInfo failed";
      return r;
    }
    HcclResult r = HostcclCommInitFromEnv(comm);
    if (r != HCCL_SUCCESS)
      *err = "HostcclCommInitFromEnv failed (the log line above has the reason)";
    return r;
  }

  bool single_ = false;

 private:
  int rank_;
  int size_;
};

}  // namespace

std::unique_ptr<Bootstrap> MakeBootstrap(int*, char***, std::string*) {
  uint32_t rank = 0, size = 0;
  if (HostcclGetEnvRank(&rank, &size) != HCCL_SUCCESS || size == 0) {
    auto b = std::make_unique<EnvBootstrap>(0, 1);
    b->single_ = true;
    return b;
  }
  return std::make_unique<EnvBootstrap>(static_cast<int>(rank), static_cast<int>(size));
}

}  // namespace hostccl::tools
