// HcclReduce correctness across hosts: one rank per process, started by scripts/netns_rig.sh (or by
// any launcher on real machines). The communicator comes from the environment
// (HostcclCommInitFromEnv: RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, OMPI_*, PMI_*, SLURM_*) or,
// with --ranktable FILE, from a rank table through HcclCommInitClusterInfo(FILE, RANK).
// Every rank runs the same case list (dtypes x ops x counts x roots, in place or not, including
// 1M+3 fp32 so the chunked chain runs across the link). Inputs come from GenerateInput(seed, rank),
// so the root regenerates every rank's input, folds them in rank order with the test harness's
// independent scalar reference and compares bitwise (NaN == NaN); non-roots check that their
// recvBuf kept its guard pattern, and every rank that its sendBuf is unchanged (unless in place).
// --perturb-rank R (a negative test of the checks themselves): rank R flips one bit of element 0
// of its input, so the root must report wrong results.
// Exit status: 0 all cases passed on this rank, 1 a result was wrong, 2 a call failed (the ranks
// may be out of step, so the case list stops there), 3 usage error.
// Public API only (plus the harness's reference pieces, which need only the public enum values).
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/dtypes.h"
#include "harness/input_gen.h"
#include "harness/reference_fold.h"

namespace {

using hostccl::test::CompareBytes;
using hostccl::test::CompareElems;
using hostccl::test::Desc;
using hostccl::test::DtypeDesc;
using hostccl::test::FillGuard;
using hostccl::test::FoldInto;
using hostccl::test::GenerateInput;
using hostccl::test::OpName;
using hostccl::test::ReduceOps;
using hostccl::test::ReducibleDtypes;

constexpr uint64_t kSeed = 0x6d756c7469686f73ull;  // "multihos"
constexpr size_t kGuardElems = 61;                 // guard tail after count on every recvBuf

struct Case {
  HcclDataType dtype;
  HcclReduceOp op;
  uint64_t count;
  uint32_t root;
  bool in_place;
};

// The same list on every rank (depends only on the rank count).
std::vector<Case> MakeCases(uint32_t nranks) {
  std::vector<Case> cases;
  // The big ones: fp32 sum 1M+3 to the first and last rank (chunked chain across hosts).
  cases.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, (1u << 20) + 3, 0, false});
  cases.push_back({HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, (1u << 20) + 3, nranks - 1, true});
  cases.push_back({HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM, 300007, 1 % nranks, false});
  cases.push_back({HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MAX, 200003, nranks / 2, false});
  // Every dtype x op at small, varied counts and rotating roots.
  uint32_t i = 0;
  for (const DtypeDesc& d : ReducibleDtypes()) {
    for (HcclReduceOp op : ReduceOps()) {
      uint64_t count = 1 + (static_cast<uint64_t>(i) * 7919u) % 4099u;
      cases.push_back({d.type, op, count, i % nranks, i % 5 == 3});
      ++i;
    }
  }
  cases.push_back({HCCL_DATA_TYPE_INT8, HCCL_REDUCE_MAX, 0, 0, false});  // count 0: nothing changes
  cases.push_back({HCCL_DATA_TYPE_FP16, HCCL_REDUCE_PROD, 1, nranks - 1, false});
  return cases;
}

std::string CaseName(const Case& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s %s count=%llu root=%u%s", Desc(c.dtype).name, OpName(c.op),
                static_cast<unsigned long long>(c.count), c.root, c.in_place ? " in-place" : "");
  return buf;
}

// Outcome of one case on this rank.
enum class Outcome { kPass, kWrong, kCallFailed };

#define CALL(expr)                                                                                 \
  do {                                                                                             \
    int rc_ = static_cast<int>(expr);                                                              \
    if (rc_ != 0) {                                                                                \
      std::fprintf(stderr, "rank %u: %s: %s failed with %d (%s)\n", rank, name.c_str(), #expr, rc_, \
                   aclGetRecentErrMsg());                                                          \
      return Outcome::kCallFailed;                                                                 \
    }                                                                                              \
  } while (0)

Outcome RunCase(const Case& c, uint64_t seed, uint32_t rank, uint32_t nranks, bool perturb, HcclComm comm,
                aclrtStream stream) {
  const std::string name = CaseName(c);
  const DtypeDesc& d = Desc(c.dtype);
  const size_t data_bytes = c.count * d.size;
  const size_t recv_bytes = data_bytes + kGuardElems * d.size;
  std::vector<char> input(data_bytes + 1), guard(recv_bytes), got(recv_bytes);
  GenerateInput(d, c.op, seed, static_cast<int>(rank), c.count, input.data());
  if (perturb && c.count > 0) input[d.size - 1] ^= 0x20;  // a high-order bit of element 0
  FillGuard(guard.data(), recv_bytes, seed ^ rank);
  if (c.in_place) std::memcpy(guard.data(), input.data(), data_bytes);  // recvBuf holds the input

  void* send = nullptr;
  void* recv = nullptr;
  CALL(aclrtMalloc(&recv, recv_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CALL(aclrtMemcpy(recv, recv_bytes, guard.data(), recv_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  if (c.in_place) {
    send = recv;
  } else {
    CALL(aclrtMalloc(&send, data_bytes + 1, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(aclrtMemcpy(send, data_bytes + 1, input.data(), data_bytes + 1, ACL_MEMCPY_HOST_TO_DEVICE));
  }
  CALL(HcclReduce(send, recv, c.count, c.dtype, c.op, c.root, comm, stream));
  CALL(aclrtSynchronizeStream(stream));

  std::vector<std::string> errors;
  CALL(aclrtMemcpy(got.data(), recv_bytes, recv, recv_bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  if (rank == c.root && c.count > 0) {
    // Rank-order left fold of every rank's regenerated input.
    std::vector<char> expected(data_bytes), other(data_bytes);
    GenerateInput(d, c.op, seed, 0, c.count, expected.data());
    for (uint32_t r = 1; r < nranks; ++r) {
      GenerateInput(d, c.op, seed, static_cast<int>(r), c.count, other.data());
      FoldInto(d, c.op, expected.data(), other.data(), c.count);
    }
    errors.push_back(CompareElems(d, expected.data(), got.data(), c.count, "root recvBuf"));
    errors.push_back(CompareBytes(guard.data() + data_bytes, got.data() + data_bytes, recv_bytes - data_bytes,
                                  "root recvBuf past count"));
  } else {
    errors.push_back(CompareBytes(guard.data(), got.data(), recv_bytes, "non-root recvBuf"));
  }
  if (!c.in_place) {
    std::vector<char> send_after(data_bytes + 1);
    CALL(aclrtMemcpy(send_after.data(), data_bytes + 1, send, data_bytes + 1, ACL_MEMCPY_DEVICE_TO_HOST));
    errors.push_back(CompareBytes(input.data(), send_after.data(), data_bytes + 1, "sendBuf"));
    CALL(aclrtFree(send));
  }
  CALL(aclrtFree(recv));
  bool wrong = false;
  for (const auto& e : errors) {
    if (e.empty()) continue;
    std::fprintf(stderr, "rank %u: %s: %s\n", rank, name.c_str(), e.c_str());
    wrong = true;
  }
  return wrong ? Outcome::kWrong : Outcome::kPass;
}

#undef CALL

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--ranktable FILE] [--seed N] [--perturb-rank R]\n"
               "  rank and size come from the launcher's environment (RANK/WORLD_SIZE, OMPI_*, PMI_*, SLURM_*);\n"
               "  without --ranktable the communicator comes from HostcclCommInitFromEnv (MASTER_ADDR/PORT).\n",
               argv0);
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ranktable;
  uint64_t seed = kSeed;
  long perturb_rank = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranktable" && i + 1 < argc) {
      ranktable = argv[++i];
    } else if (a == "--perturb-rank" && i + 1 < argc) {
      perturb_rank = std::strtol(argv[++i], nullptr, 0);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 0);
    } else {
      return Usage(argv[0]);
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  uint32_t rank = 0, nranks = 0, local_rank = 0, local_size = 0;
  if (HostcclGetEnvRank(&rank, &nranks) != HCCL_SUCCESS ||
      HostcclGetEnvLocalRank(&local_rank, &local_size) != HCCL_SUCCESS) {
    std::fprintf(stderr, "multihost_reduce: no launcher environment (RANK/WORLD_SIZE, OMPI_*, PMI_*, SLURM_*)\n");
    return 3;
  }
  if (aclInit(nullptr) != ACL_SUCCESS) return 2;
  HcclComm comm = nullptr;
  HcclResult rc;
  if (ranktable.empty()) {
    rc = HostcclCommInitFromEnv(&comm);
  } else {
    // The table's device_id becomes the communicator's device; the stream needs a current device.
    if (aclrtSetDevice(static_cast<int32_t>(local_rank)) != ACL_SUCCESS) return 2;
    rc = HcclCommInitClusterInfo(ranktable.c_str(), rank, &comm);
  }
  if (rc != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %u: communicator creation failed with %d (%s)\n", rank, static_cast<int>(rc),
                 aclGetRecentErrMsg());
    return 2;
  }
  uint32_t comm_rank = 0, comm_size = 0;
  if (HcclGetRankId(comm, &comm_rank) != HCCL_SUCCESS || HcclGetRankSize(comm, &comm_size) != HCCL_SUCCESS ||
      comm_rank != rank || comm_size != nranks) {
    std::fprintf(stderr, "rank %u: communicator says rank %u of %u, the environment rank %u of %u\n", rank,
                 comm_rank, comm_size, rank, nranks);
    return 2;
  }
  aclrtStream stream = nullptr;
  if (aclrtCreateStream(&stream) != ACL_SUCCESS) return 2;

  const std::vector<Case> cases = MakeCases(nranks);
  int passed = 0, wrong = 0;
  bool call_failed = false;
  for (size_t i = 0; i < cases.size() && !call_failed; ++i) {
    Outcome o = RunCase(cases[i], seed + i, rank, nranks, perturb_rank == static_cast<long>(rank), comm, stream);
    passed += o == Outcome::kPass;
    wrong += o == Outcome::kWrong;
    call_failed = o == Outcome::kCallFailed;
  }
  // Destroy even after a failure: the peers' pending operations end with an error, not a hang.
  bool teardown_ok = aclrtDestroyStream(stream) == ACL_SUCCESS;
  teardown_ok = HcclCommDestroy(comm) == HCCL_SUCCESS && teardown_ok;
  aclFinalize();
  std::printf("multihost_reduce: rank %u of %u (%s): %d of %zu cases passed, %d wrong%s%s\n", rank, nranks,
              ranktable.empty() ? "HostcclCommInitFromEnv" : "rank table", passed, cases.size(), wrong,
              call_failed ? ", stopped after a failed call" : "", teardown_ok ? "" : ", teardown failed");
  if (call_failed || !teardown_ok) return 2;
  return wrong > 0 ? 1 : 0;
}
