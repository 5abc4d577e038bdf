// The calls the small-call probes time (callpath_bench, thread_ranks_bench): one rank's handles
// and buffers, and the operators without V arrays, each as a call of `count` fp32 elements per
// rank (root 0, sum). Buffers: send and recv of n x count elements for n ranks (AllGather's recv,
// ReduceScatter's, Scatter's and AlltoAll's send).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace hostccl::bench {

struct CallEnv {
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

struct SmallOp {
  const char* name;
  std::function<HcclResult(const CallEnv&)> call;
};

inline std::vector<SmallOp> FixedCountOps(uint64_t c) {
  return {
      {"broadcast", [c](const CallEnv& e) { return HcclBroadcast(e.send, c, HCCL_DATA_TYPE_FP32, 0, e.comm, e.stream); }},
      {"allreduce", [c](const CallEnv& e) {
         return HcclAllReduce(e.send, e.recv, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, e.comm, e.stream); }},
      {"reduce", [c](const CallEnv& e) {
         return HcclReduce(e.send, e.recv, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, e.comm, e.stream); }},
      {"allgather", [c](const CallEnv& e) {
         return HcclAllGather(e.send, e.recv, c, HCCL_DATA_TYPE_FP32, e.comm, e.stream); }},
      {"reducescatter", [c](const CallEnv& e) {
         return HcclReduceScatter(e.send, e.recv, c, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, e.comm, e.stream); }},
      {"scatter", [c](const CallEnv& e) { return HcclScatter(e.send, e.recv, c, HCCL_DATA_TYPE_FP32, 0, e.comm, e.stream); }},
      {"alltoall", [c](const CallEnv& e) {
         return HcclAlltoAll(e.send, c, HCCL_DATA_TYPE_FP32, e.recv, c, HCCL_DATA_TYPE_FP32, e.comm, e.stream); }},
  };
}

}  // namespace hostccl::bench
