// The shared driver of the hccl_test tools: options, devices, communicator, size x dtype x op
// sweep, timing (back-to-back between two events, or isolated calls after a barrier), checking,
// statistics over ranks and output. Each tool (reduce_test.cc, all_reduce_test.cc,
// broadcast_test.cc, ...) is one small file: its CollectiveModel (collective.h) plus the library
// call, passed to RunHcclTest from main().
// Single-threaded; every rank runs the same sequence of collective calls.
#pragma once

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <string>

#include "collective.h"

namespace hostccl::tools {

// Everything one call of the collective needs.
struct CallArgs {
  void* send = nullptr;
  void* recv = nullptr;  // == send for one-buffer collectives (Broadcast)
  uint64_t count = 0;  // elements per rank (hccl_test: bytes / element size)
  int dtype = 4;       // HcclDataType value
  int op = 0;          // HcclReduceOp value
  uint32_t root = 0;
  int rank = 0;
  int ranks = 1;
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
};

// A tool = the collective's model (collective.h: buffers, expected results, bus factor) + the call.
struct CollectiveSpec {
  const CollectiveModel* model = nullptr;
  HcclResult (*run)(const CallArgs& a) = nullptr;  // enqueue one call on a.stream
};

// Exit status of a run skipped with --skip-unimplemented (the ctest SKIP_RETURN_CODE of the e2e
// tests): the library answered the tool's very first call with HCCL_E_NOT_SUPPORT and a message
// saying the operator is not implemented.
constexpr int kExitSkipped = 77;

// Runs the tool; returns the process exit status (0 = all ran and every check passed).
int RunHcclTest(int argc, char** argv, const CollectiveSpec& spec);

}  // namespace hostccl::tools
