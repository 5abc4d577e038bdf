// HostcclCommInitFromEnv and friends (include/hostccl/hostccl.h): a communicator from the variables
// a launcher sets. Rank 0 publishes HcclGetRootInfo's 4108 bytes through a store and every rank
// calls HcclCommInitRootInfo with them. Store choice (docs/launching.md):
//   MASTER_ADDR + MASTER_PORT set -> TcpStore; hosted by the launcher when HOSTCCL_STORE_HOSTED=1
//     (hcclrun), else by rank 0 on MASTER_PORT for the duration of the call (torchrun style);
//     with HOSTCCL_STORE_SECRET (hcclrun sets it) both sides prove the secret before any key moves;
//   otherwise -> FileStore in $HOSTCCL_STORE_DIR (/tmp)/hostccl-<uid>-<job key>, single host only.
// Keys are "fromenv/<n>/root" and "fromenv/<n>/fetched" where n counts this process's calls (every
// rank calls the same number of times); the last rank to fetch deletes them.
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "acl/acl.h"
#include "api/export.h"
#include "api/result.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/store.h"
#include "bootstrap/store_auth.h"
#include "common/env.h"
#include "common/log.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"
#include "runtime/error.h"
#include "runtime/runtime.h"

namespace hostccl::api {
namespace {

struct LaunchEnv {
  uint32_t rank = 0;
  uint32_t size = 0;
  uint32_t local_rank = 0;
  uint32_t local_size = 0;
  bool multi_host = false;
  const char* launcher = "";
  std::string job_key;  // names the FileStore directory; empty = none known
};

// An optional non-negative integer variable: absent -> nullopt; malformed -> kPara naming it.
Status ReadCount(Knob k, std::optional<int64_t>* out) {
  out->reset();
  auto raw = EnvRaw(k);
  if (!raw) return Status::Ok();
  auto v = ParseInt(*raw);
  if (!v || *v < 0 || *v > (int64_t{1} << 30))
    return MakeStatus(Code::kPara, "%s=%s is not a non-negative integer", GetKnobInfo(k).name,
                      raw->c_str());
  *out = v;
  return Status::Ok();
}

// The launcher's parent process (hydra proxy, a shell) with its start time: a key every rank it
// started shares and that no later process reuses.
std::string ParentKey() {
  pid_t ppid = getppid();
  std::ifstream f("/proc/" + std::to_string(ppid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close_paren = stat.rfind(')');
  std::string start = "0";
  if (close_paren != std::string::npos) {
    // Fields after the command: state is field 3, starttime is field 22.
    size_t pos = close_paren + 2;
    for (int field = 3; field < 22 && pos != std::string::npos; ++field) {
      pos = stat.find(' ', pos);
      if (pos != std::string::npos) ++pos;
    }
    if (pos != std::string::npos) start = stat.substr(pos, stat.find(' ', pos) - pos);
  }
  return StrFormat("ppid%d-%s", static_cast<int>(ppid), start.c_str());
}

std::string SafeName(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out.substr(0, 160);
}

Status ReadLaunchEnv(LaunchEnv* env) {
  struct Source {
    const char* launcher;
    Knob rank, size, local_rank, local_size;
    bool has_local_size;
  };
  static const Source kSources[] = {
      {"RANK/WORLD_SIZE (hcclrun, torchrun)", Knob::kRank, Knob::kWorldSize, Knob::kLocalRank,
       Knob::kLocalWorldSize, true},
      {"Open MPI", Knob::kOmpiRank, Knob::kOmpiSize, Knob::kOmpiLocalRank, Knob::kOmpiLocalSize,
       true},
      {"MPICH/PMI", Knob::kPmiRank, Knob::kPmiSize, Knob::kMpiLocalRankId, Knob::kMpiLocalNRanks,
       true},
      {"Slurm", Knob::kSlurmProcId, Knob::kSlurmNTasks, Knob::kSlurmLocalId, Knob::kSlurmLocalId,
       false},
  };
  for (const Source& src : kSources) {
    std::optional<int64_t> rank, size, local_rank, local_size;
    HOSTCCL_RETURN_IF_ERROR(ReadCount(src.rank, &rank));
    HOSTCCL_RETURN_IF_ERROR(ReadCount(src.size, &size));
    if (!rank && !size) continue;
    const char* rank_name = GetKnobInfo(src.rank).name;
    const char* size_name = GetKnobInfo(src.size).name;
    if (!rank || !size) {
      return MakeStatus(Code::kPara, "%s is set but %s is not; a launcher sets both",
                        rank ? rank_name : size_name, rank ? size_name : rank_name);
    }
    if (*size < 1 || *rank >= *size)
      return MakeStatus(Code::kPara, "%s=%lld is not below %s=%lld", rank_name,
                        static_cast<long long>(*rank), size_name, static_cast<long long>(*size));
    HOSTCCL_RETURN_IF_ERROR(ReadCount(src.local_rank, &local_rank));
    if (src.has_local_size) HOSTCCL_RETURN_IF_ERROR(ReadCount(src.local_size, &local_size));
    env->launcher = src.launcher;
    env->rank = static_cast<uint32_t>(*rank);
    env->size = static_cast<uint32_t>(*size);
    env->local_rank = static_cast<uint32_t>(local_rank.value_or(*rank));
    env->local_size = static_cast<uint32_t>(local_size.value_or(*size));
    env->multi_host = env->local_size < env->size;
    if (src.rank == Knob::kSlurmProcId) {
      std::optional<int64_t> nodes;
      HOSTCCL_RETURN_IF_ERROR(ReadCount(Knob::kSlurmNNodes, &nodes));
      env->multi_host = nodes.value_or(1) > 1;
      auto job = EnvRaw(Knob::kSlurmJobId);
      if (job) env->job_key = "slurm-" + *job + "." + EnvString(Knob::kSlurmStepId, "0");
    } else if (src.rank == Knob::kOmpiRank) {
      auto job = EnvRaw(Knob::kOmpiJobId);
      if (!job) job = EnvRaw(Knob::kOmpiOrteJobId);
      if (job) env->job_key = "ompi-" + *job + "-" + EnvString(Knob::kOmpiJobKey, "");
    } else {
      env->job_key = ParentKey();  // hydra's proxy or the script that started the ranks
    }
    return Status::Ok();
  }
  return MakeStatus(Code::kNotFound,
                    "no launcher environment found: set RANK and WORLD_SIZE (hcclrun, torchrun) "
                    "or start the program under mpirun, mpiexec or srun");
}

// Makes sure this thread has a device: LOCAL_RANK % device count when none is set.
Status EnsureDevice(const LaunchEnv& env) {
  // rt::CurrentDevice() is aclrtGetDevice without its "no current device" error log.
  if (rt::CurrentDevice() >= 0) return Status::Ok();
  uint32_t count = rt::DeviceCount();
  if (count == 0)
    return MakeStatus(Code::kRuntime,
                      "no devices visible (HOSTCCL_DEVICE_COUNT / ASCEND_RT_VISIBLE_DEVICES)");
  int32_t pick = static_cast<int32_t>(env.local_rank % count);
  if (aclrtSetDevice(pick) != ACL_SUCCESS)
    return MakeStatus(Code::kRuntime, "aclrtSetDevice(%d) failed (local rank %u, %u devices)", pick,
                      env.local_rank, count);
  return Status::Ok();
}

struct StoreHandle {
  std::unique_ptr<boot::TcpStoreServer> server;  // rank 0's, when it hosts the store
  std::unique_ptr<boot::Store> store;
  std::string dir;  // FileStore directory, removed when empty
};

Status OpenStore(const LaunchEnv& env, Deadline deadline, StoreHandle* h) {
  auto addr = EnvRaw(Knob::kMasterAddr);
  auto port_raw = EnvRaw(Knob::kMasterPort);
  if (addr || port_raw) {
    if (!addr || !port_raw)
      return MakeStatus(Code::kPara, "%s is set but %s is not; export both",
                        addr ? "MASTER_ADDR" : "MASTER_PORT", addr ? "MASTER_PORT" : "MASTER_ADDR");
    auto port = ParseInt(*port_raw);
    if (!port || *port < 1 || *port > 65535)
      return MakeStatus(Code::kPara, "MASTER_PORT=%s is not a port number", port_raw->c_str());
    std::string secret = EnvRaw(Knob::kStoreSecret).value_or("");
    if (!secret.empty())
      HOSTCCL_RETURN_IF_ERROR(boot::CheckStoreSecret(secret, "HOSTCCL_STORE_SECRET"));
    if (env.rank == 0 && !EnvBool(Knob::kStoreHosted, false)) {
      Status st =
          boot::StartTcpStoreServer(*addr, static_cast<uint16_t>(*port), &h->server, secret);
      // MASTER_ADDR may name this host by an address it cannot bind: fall back to every interface.
      if (!st.ok()) {
        HLOG_WARN(kInit, "rank 0 cannot host the store on %s:%lld (%s); trying all interfaces",
                  addr->c_str(), static_cast<long long>(*port), st.message().c_str());
        HOSTCCL_RETURN_IF_ERROR(
            boot::StartTcpStoreServer("", static_cast<uint16_t>(*port), &h->server, secret));
      }
    }
    return boot::ConnectTcpStore(*addr, static_cast<uint16_t>(*port), deadline, &h->store, secret);
  }
  if (env.multi_host) {
    return MakeStatus(
        Code::kPara,
        "the %u ranks span several hosts (%u on this one) and MASTER_ADDR/MASTER_PORT "
        "are not set: export MASTER_ADDR=<rank 0's host> and MASTER_PORT=<a free port> on every "
        "rank",
        env.size, env.local_size);
  }
  if (env.job_key.empty()) {
    return MakeStatus(Code::kPara,
                      "%s: no job id to key the file rendezvous; export MASTER_ADDR=127.0.0.1 and "
                      "MASTER_PORT=<a free port>",
                      env.launcher);
  }
  h->dir = StrFormat("%s/hostccl-%u-%s", EnvString(Knob::kStoreDir, "/tmp").c_str(),
                     static_cast<unsigned>(getuid()), SafeName(env.job_key).c_str());
  return boot::NewFileStore(h->dir, &h->store);
}

std::atomic<uint32_t> g_calls{0};

// A failed inner HCCL call has logged its reason and left it in aclGetRecentErrMsg: the status
// keeps that reason (not a generic "failed") and is not logged a second time.
Status InnerFailure(HcclResult r, const std::string& what) {
  std::string reason = rt::RecentError();
  Status st(static_cast<Code>(r), reason.empty() ? what + " failed" : what + " failed: " + reason);
  if (!reason.empty()) st.MarkLogged();
  return st;
}

Status InitFromEnv(HcclComm* comm) {
  LaunchEnv env;
  Status st = ReadLaunchEnv(&env);
  if (st.code() == Code::kNotFound) return Status(Code::kPara, st.message());  // documented code
  HOSTCCL_RETURN_IF_ERROR(st);
  HOSTCCL_RETURN_IF_ERROR(EnsureDevice(env));
  HLOG_INFO(kInit, "HostcclCommInitFromEnv: rank %u of %u (local %u of %u) from %s", env.rank,
            env.size, env.local_rank, env.local_size, env.launcher);
  HcclRootInfo info;
  if (env.size == 1) {  // nothing to exchange
    HcclResult r = HcclGetRootInfo(&info);
    if (r == HCCL_SUCCESS) r = HcclCommInitRootInfo(1, &info, 0, comm);
    return r == HCCL_SUCCESS ? Status::Ok() : InnerFailure(r, "one-rank communicator creation");
  }
  Deadline deadline = Deadline::AfterMs(boot::ConnectTimeoutMs());
  uint32_t call = g_calls.fetch_add(1) + 1;
  std::string root_key = StrFormat("fromenv/%u/root", call),
              fetched_key = StrFormat("fromenv/%u/fetched", call);
  StoreHandle h;
  // Whatever happens, leave no empty file-store directory behind (rmdir keeps a non-empty one).
  struct DirCleanup {
    StoreHandle* h;
    ~DirCleanup() {
      h->store.reset();
      if (!h->dir.empty()) boot::RemoveFileStoreDir(h->dir);
    }
  } cleanup{&h};
  HOSTCCL_RETURN_IF_ERROR(OpenStore(env, deadline, &h));
  if (env.rank == 0) {
    HcclResult r = HcclGetRootInfo(&info);
    if (r != HCCL_SUCCESS)
      return InnerFailure(r, "rank 0: HcclGetRootInfo");
    HOSTCCL_RETURN_IF_ERROR(
        h.store->Set(root_key, std::string(info.internal, sizeof(info.internal))));
  } else {
    std::string bytes;
    Status st = h.store->Get(root_key, deadline, &bytes);
    if (!st.ok())
      return MakeStatus(st.code(), "rank %u: waiting for rank 0's root info: %s", env.rank,
                        st.message().c_str());
    if (bytes.size() != sizeof(info.internal))
      return MakeStatus(Code::kPara, "rank %u: the store's root info is %zu bytes, expected %zu",
                        env.rank, bytes.size(), sizeof(info.internal));
    memcpy(info.internal, bytes.data(), bytes.size());
  }
  int64_t fetched = 0;
  HOSTCCL_RETURN_IF_ERROR(h.store->Add(fetched_key, 1, &fetched));
  if (fetched == static_cast<int64_t>(env.size)) {  // last one out cleans up
    (void)h.store->Delete(root_key);
    (void)h.store->Delete(fetched_key);
  }
  HcclResult r = HcclCommInitRootInfo(env.size, &info, env.rank, comm);
  if (r != HCCL_SUCCESS)
    return InnerFailure(r, StrFormat("rank %u: HcclCommInitRootInfo", env.rank));
  return Status::Ok();
}

HcclResult Report(const char* fn, const Status& st) {
  if (!st.ok()) {
    if (!st.logged()) HLOG_ERROR(kInit, "%s: %s", fn, ReportString(st).c_str());
    rt::SetRecentError(StrFormat("%s: %s", fn, ReportString(st).c_str()));
  }
  return ToResult(st);
}

}  // namespace
}  // namespace hostccl::api

using namespace hostccl;

HOSTCCL_API HcclResult HostcclCommInitFromEnv(HcclComm* comm) {
  return api::Guard("HostcclCommInitFromEnv", [&] {
    if (comm == nullptr)
      return api::Report("HostcclCommInitFromEnv", MakeStatus(Code::kPtr, "comm is NULL"));
    return api::Report("HostcclCommInitFromEnv", api::InitFromEnv(comm));
  });
}

HOSTCCL_API HcclResult HostcclGetEnvRank(uint32_t* rank, uint32_t* size) {
  return api::Guard("HostcclGetEnvRank", [&] {
    if (rank == nullptr || size == nullptr)
      return api::Report("HostcclGetEnvRank", MakeStatus(Code::kPtr, "rank or size is NULL"));
    api::LaunchEnv env;
    Status st = api::ReadLaunchEnv(&env);
    if (st.ok()) {
      *rank = env.rank;
      *size = env.size;
    } else if (st.code() == Code::kNotFound) {
      // A probe: "not under a launcher" is an answer, not an error worth an error line.
      HLOG_INFO(kInit, "HostcclGetEnvRank: %s", st.message().c_str());
      rt::SetRecentError("HostcclGetEnvRank: " + st.message());
      return HCCL_E_NOT_FOUND;
    }
    return api::Report("HostcclGetEnvRank", st);
  });
}

HOSTCCL_API HcclResult HostcclGetEnvLocalRank(uint32_t* local_rank, uint32_t* local_size) {
  return api::Guard("HostcclGetEnvLocalRank", [&] {
    if (local_rank == nullptr || local_size == nullptr)
      return api::Report("HostcclGetEnvLocalRank",
                         MakeStatus(Code::kPtr, "localRank or localSize is NULL"));
    api::LaunchEnv env;
    Status st = api::ReadLaunchEnv(&env);
    if (st.ok()) {
      *local_rank = env.local_rank;
      *local_size = env.local_size;
    }
    return api::Report("HostcclGetEnvLocalRank", st);
  });
}
