// RunRanks: run one test body on N ranks of one fresh communicator, as threads or as processes.
//
//   kThreadsInitAll   the calling thread runs HcclCommInitAll(N, {0..N-1}); then one thread per rank
//                     does aclrtSetDevice(rank % deviceCount), creates its stream and runs the body.
//   kThreadsRootInfo  the calling thread runs HcclGetRootInfo; one thread per rank does
//                     aclrtSetDevice + HcclCommInitRootInfo concurrently, then the body.
//   kProcesses        N children are started by exec'ing this same test binary, filtered to the
//                     current gtest test (never fork() after threads exist). Child rank 0 calls
//                     HcclGetRootInfo and publishes the 4108 bytes in a shared memfd region with a
//                     ready flag; the others wait for it (bounded), init, run the body and exit 0/1.
//                     The parent waits up to the timeout and SIGKILLs stragglers: it never hangs.
//                     A child re-runs the test from the top; RunRanks calls before the one it was
//                     started for return "skipped" at once, so bodies must be deterministic.
// Every rank ends with aclrtDestroyStream + HcclCommDestroy. RunOptions::env is set before init
// (threads: setenv in the calling thread and restored afterwards; processes: the children's env).
// RunRanks is called from a gtest test body on the main thread; not reentrant.
#pragma once

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hostccl::test {

enum class Mode { kThreadsInitAll, kThreadsRootInfo, kProcesses };
const char* ModeName(Mode m);

struct RankContext {
  int rank = 0;
  int nranks = 0;
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  std::string error;  // first failure recorded by Fail()

  // Records msg (prefixed with the rank) if it is the first failure; returns false so a body can
  // `return ctx.Fail(...)`.
  bool Fail(const std::string& msg);
};

// A case that runs operators on host (malloc'd) buffers calls this first: NPU fidelity rejects them
// otherwise (docs/semantics.md §9). Calls HostcclCommAllowHostBuffers(ctx.comm); false (recorded
// with ctx.Fail) if that fails.
bool AllowHostBuffers(RankContext& ctx);

// Returns true if the rank passed; failures are recorded with ctx.Fail().
using RankBody = std::function<bool(RankContext&)>;

struct RunOptions {
  std::vector<std::pair<std::string, std::string>> env;  // e.g. {"HOSTCCL_ALGO", "reduce=chain"}
  int timeout_s = 150;                                   // whole run, init to destroy
  // Mode::kProcesses only: more environment for one rank, set in its process before its
  // communicator forms (e.g. HOSTCCL_NODE_ID per rank to emulate several hosts).
  std::function<std::vector<std::pair<std::string, std::string>>(int rank)> rank_env;
};

struct RunResult {
  bool ok = true;
  std::string message;  // every failing rank's first message, one per line
};

RunResult RunRanks(int nranks, Mode mode, const RankBody& body, const RunOptions& opts = {});

// True inside a child started by kProcesses (tests may use it to skip parent-only work).
bool IsRankChild();

// Call first in main(): records argv[0] and removes the --hostccl_child=... flag. Returns false if
// the flag is malformed. hostccl_test_main does this for you.
bool InitHarness(int* argc, char** argv);
// Exit status for main() of a child whose RunRanks call was never reached (a test bug).
int ChildFinishedWithoutRun();

}  // namespace hostccl::test
