// The shared driver of the hccl_test tools: options, devices, communicator, size x dtype x op
// sweep, timing (back-to-back between two events, or isolated calls after a barrier), checking,
// statistics over ranks and output. Each tool (reduce_test.cc, later all_reduce_test.cc, ...) is
// one small file that fills a CollectiveSpec and calls RunHcclTest from main().
// Single-threaded; every rank runs the same sequence of collective calls.
#pragma once

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <string>

namespace hostccl::tools {

// Everything one call of the collective needs.
struct CallArgs {
  void* send = nullptr;
  void* recv = nullptr;
  uint64_t count = 0;  // elements per rank (hccl_test: bytes / element size)
  int dtype = 4;       // HcclDataType value
  int op = 0;          // HcclReduceOp value
  uint32_t root = 0;
  int rank = 0;
  int ranks = 1;
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
};

struct CollectiveSpec {
  const char* name = "";  // executable name for messages ("reduce_test")
  bool uses_op = true;    // -o matters (reduction collectives)
  // Element counts of the send and recv buffers for a per-rank count.
  uint64_t (*send_count)(uint64_t count, int ranks) = nullptr;
  uint64_t (*recv_count)(uint64_t count, int ranks) = nullptr;
  double (*bus_factor)(int ranks) = nullptr;       // busbw = algbw x factor
  HcclResult (*run)(const CallArgs& a) = nullptr;  // enqueue one call on a.stream
  // Before the checked call: fill the host recv image (e.g. guard pattern or anti-expected).
  void (*prepare_recv)(const CallArgs& a, void* host_recv, uint64_t recv_bytes) = nullptr;
  // After the checked call: number of wrong elements / guard bytes at this rank. Verbose details
  // are appended to *report when report != nullptr.
  uint64_t (*check)(const CallArgs& a, const void* host_recv, uint64_t recv_bytes,
                    std::string* report) = nullptr;
};

// Runs the tool; returns the process exit status (0 = all ran and every check passed).
int RunHcclTest(int argc, char** argv, const CollectiveSpec& spec);

}  // namespace hostccl::tools
