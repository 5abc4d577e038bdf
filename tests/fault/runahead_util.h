// Shared by the pipelined-completion tests (runahead_test.cc: Reduce; runahead_rooted_test.cc:
// Broadcast, Scatter and eager sends): options for processes over shared memory, the message
// checks, and the "mismatch in the middle of a long queue" scenario.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "fault/fault_util.h"

namespace hostccl::faulttest {

constexpr int64_t kRunAheadFailWithinMs = 2000 * kSlowdown;

// Processes over shared memory, exec timeout 20 s; `dir` (when given) is the scratch directory of
// the marks the ranks exchange.
inline test::RunOptions RunAheadShmOptions(const std::string& dir = "") {
  test::RunOptions o;
  o.env = TransportEnv("shm");
  o.env.push_back({"HOSTCCL_EXEC_TIMEOUT_MS", "20000"});
  if (!dir.empty()) o.env.push_back({kDirVar, dir});
  o.timeout_s = 90;
  return o;
}

inline bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// "rank R" followed by something other than a digit.
inline bool NamesRank(const std::string& msg, int r) {
  const std::string key = "rank " + std::to_string(r);
  for (size_t p = msg.find(key); p != std::string::npos; p = msg.find(key, p + 1)) {
    const size_t e = p + key.size();
    if (e >= msg.size() || msg[e] < '0' || msg[e] > '9') return true;
  }
  return false;
}

// Every rank queues kQueueCalls calls (`enqueue`, which makes one of them differ; buffers of
// `buf_bytes`) and synchronizes once. Every rank's synchronize must fail within
// kRunAheadFailWithinMs with a message naming `odd` and `other` and saying "mismatch"; the
// communicator has failed, so a later call fails too (at enqueue or at its synchronize).
constexpr int kQueueCalls = 200;
inline void ExpectQueueFails(int nranks, int odd, int other, size_t buf_bytes,
                             const std::function<HcclResult(test::RankContext&, void*, void*, int call)>& enqueue,
                             int calls = kQueueCalls) {
  auto res = test::RunRanks(nranks, test::Mode::kProcesses, [&](test::RankContext& ctx) {
    DevBuf send, recv;
    if (!send.Alloc(buf_bytes, 1.0f) || !recv.Alloc(buf_bytes, 0.0f)) return ctx.Fail("aclrtMalloc failed");
    for (int i = 0; i < calls; ++i)
      if (enqueue(ctx, send.ptr, recv.ptr, i) != HCCL_SUCCESS) break;  // a later enqueue may see the failure
    const int64_t t0 = NowMs();
    const aclError rc = aclrtSynchronizeStream(ctx.stream);
    const int64_t took = NowMs() - t0;
    const std::string msg = aclGetRecentErrMsg();
    if (rc == ACL_SUCCESS) return ctx.Fail("synchronize succeeded despite the mismatch");
    if (took > kRunAheadFailWithinMs) return ctx.Fail("synchronize took " + std::to_string(took) + " ms");
    if (!Contains(msg, "mismatch")) return ctx.Fail("message does not say mismatch: " + msg);
    if (!NamesRank(msg, odd) || !NamesRank(msg, other))
      return ctx.Fail("message does not name ranks " + std::to_string(odd) + " and " + std::to_string(other) + ": " + msg);
    if (enqueue(ctx, send.ptr, recv.ptr, 0) == HCCL_SUCCESS && aclrtSynchronizeStream(ctx.stream) == ACL_SUCCESS)
      return ctx.Fail("a call after the failure succeeded");
    return true;
  }, RunAheadShmOptions());
  EXPECT_TRUE(res.ok) << res.message;
}

}  // namespace hostccl::faulttest
