// Argument checks of the operators, in HCCL's order with HCCL's codes (semantics.md §1), plus
// hostccl's additions, in this order: alignment, "count is in bytes" (device-buffer size), partial
// overlap, communicator state.
// Every rejection logs one error line naming the function, rank, argument, value and expectation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/status.h"
#include "core/communicator.h"
#include "runtime/runtime.h"

namespace hostccl::api {

struct ReduceCall {
  void* send;
  void* recv;
  uint64_t count;
  int dtype;
  int op;
  uint32_t root;
  void* comm;
  void* stream;
};

// What a successful check resolved, so the call does not look it up again.
struct Checked {
  std::shared_ptr<core::Communicator> comm;
  rt::Stream* stream = nullptr;
  std::optional<rt::Allocation> send_alloc;  // aclrtMalloc allocations holding the buffers, if any
  std::optional<rt::Allocation> recv_alloc;
  bool done = false;  // count == 0: return success without doing anything
};

Status CheckReduce(const ReduceCall& c, Checked* out);

// Logs and returns `st` (one line, error level): "<fn>(rank r): <message>".
Status Reject(const char* fn, int rank, Status st);

}  // namespace hostccl::api
