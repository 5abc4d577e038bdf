// MPI bootstrap (reduce_test_mpi): MPI_Init, the -r rank calls HcclGetRootInfo and broadcasts the
// 4108-byte root info with MPI_Bcast, every rank calls HcclCommInitRootInfo - hccl_test's flow.
// On a root-info failure the root broadcasts the string "invalid" so the others stop too.
#include <mpi.h>

#include <cstring>

#include "bootstrap.h"

namespace hostccl::tools {
namespace {

class MpiBootstrap : public Bootstrap {
 public:
  MpiBootstrap(int rank, int size) : rank_(rank), size_(size) {}
  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  HcclResult CreateComm(int root, HcclComm* comm, std::string* err) override {
    HcclRootInfo info;
    std::memset(&info, 0, sizeof info);
    HcclResult got = HCCL_SUCCESS;
    if (rank_ == root) {
      got = HcclGetRootInfo(&info);
      if (got != HCCL_SUCCESS) {
        std::memset(&info, 0, sizeof info);
        std::strcpy(info.internal, "invalid");
      }
    }
    MPI_Bcast(&info, HCCL_ROOT_INFO_BYTES, MPI_CHAR, root, MPI_COMM_WORLD);
    if (rank_ == root && got != HCCL_SUCCESS) {
      *err = "HcclGetRootInfo failed on root rank " + std::to_string(root);
      return got;
    }
    if (std::strcmp(info.internal, "invalid") == 0) {
      *err = "received an invalid root info from root rank " + std::to_string(root);
      return HCCL_E_INTERNAL;
    }
    HcclResult r = HcclCommInitRootInfo(static_cast<uint32_t>(size_), &info,
                                        static_cast<uint32_t>(rank_), comm);
    if (r != HCCL_SUCCESS) *err = "HcclCommInitRootInfo failed";
    return r;
  }

  void Finalize() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

 private:
  int rank_;
  int size_;
};

}  // namespace

std::unique_ptr<Bootstrap> MakeBootstrap(int* argc, char*** argv, std::string* err) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    *err = "MPI_Init failed";
    return nullptr;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiBootstrap>(rank, size);
}

}  // namespace hostccl::tools
