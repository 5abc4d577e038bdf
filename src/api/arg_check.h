// Argument checks of the operators, in HCCL's order with HCCL's codes (semantics.md §1), plus
// hostccl's additions (alignment, partial overlap, "count is in bytes", communicator state).
// Every rejection logs one error line naming the function, rank, argument, value and expectation.
#pragma once

#include <cstdint>
#include <memory>

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

// On success fills *comm and *stream (live objects). `done` is set when the call must return
// success without doing anything (count == 0).
Status CheckReduce(const ReduceCall& c, std::shared_ptr<core::Communicator>* comm, rt::Stream** stream,
                   bool* done);

// Logs and returns `st` (one line, error level): "<fn>(rank r): <message>".
Status Reject(const char* fn, int rank, Status st);

}  // namespace hostccl::api
