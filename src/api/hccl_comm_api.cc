// extern "C" communicator management (hccl/hccl_comm.h). Thin: check, call core, map the result.
#include <cstring>
#include <thread>
#include <vector>

#include "api/arg_check.h"
#include "api/comm_config.h"
#include "api/enum_bits.h"
#include "api/export.h"
#include "api/group.h"
#include "api/result.h"
#include "bootstrap/bootstrap.h"
#include "bootstrap/ranktable.h"
#include "common/log.h"
#include "core/comm_memory.h"
#include "core/communicator.h"
#include "hccl/hccl.h"
#include "runtime/runtime.h"

using hostccl::Code;
using hostccl::MakeStatus;
using hostccl::Status;
using hostccl::api::Guard;
using hostccl::api::Reject;
using hostccl::api::ToResult;
namespace core = hostccl::core;
namespace boot = hostccl::boot;

namespace {

HcclResult Fail(const char* fn, int rank, Status st) { return ToResult(Reject(fn, rank, std::move(st))); }

// Creates one rank's communicator from a decoded root info and registers its handle.
HcclResult InitFromRoot(const char* fn, const boot::RootInfo& root, uint32_t nranks, uint32_t rank,
                        int device, const core::CommConfig& cfg, HcclComm* comm) {
  std::shared_ptr<core::Communicator> c;
  Status st = core::Communicator::CreateFromRootInfo(root, nranks, rank, device, cfg, &c);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  *comm = core::RegisterComm(std::move(c));
  return HCCL_SUCCESS;
}

HcclResult InitRootInfoCommon(const char* fn, uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                              const HcclCommConfig* config, HcclComm* comm) {
  if (comm == nullptr) return Fail(fn, static_cast<int>(rank), Status(Code::kPtr, "comm is NULL"));
  if (rootInfo == nullptr) return Fail(fn, static_cast<int>(rank), Status(Code::kPtr, "rootInfo is NULL"));
  if (nRanks == 0) return Fail(fn, static_cast<int>(rank), Status(Code::kPara, "nRanks is 0"));
  if (rank >= nRanks)
    return Fail(fn, static_cast<int>(rank), MakeStatus(Code::kPara, "rank %u >= nRanks %u", rank, nRanks));
  core::CommConfig cfg;
  Status st = hostccl::api::ReadCommConfig(config, &cfg);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  boot::RootInfo root;
  st = boot::DecodeRootInfo(rootInfo, &root);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  return InitFromRoot(fn, root, nRanks, rank, hostccl::rt::CurrentDevice(), cfg, comm);
}

HcclResult InitClusterCommon(const char* fn, const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                             HcclComm* comm) {
  if (clusterInfo == nullptr) return Fail(fn, static_cast<int>(rank), Status(Code::kPtr, "clusterInfo is NULL"));
  if (comm == nullptr) return Fail(fn, static_cast<int>(rank), Status(Code::kPtr, "comm is NULL"));
  core::CommConfig cfg;
  Status st = hostccl::api::ReadCommConfig(config, &cfg);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  boot::RankTable table;
  std::string raw;
  hostccl::Deadline deadline = hostccl::Deadline::AfterMs(boot::ConnectTimeoutMs());
  st = boot::LoadRankTable(clusterInfo, deadline, &table, &raw);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  const uint32_t n = static_cast<uint32_t>(table.ranks.size());
  if (rank >= n)
    return Fail(fn, static_cast<int>(rank),
                MakeStatus(Code::kPara, "rank %u is not a rank_id of %s (it has %u ranks)", rank, clusterInfo, n));
  boot::RootInfo root;
  st = boot::RankTableRoot(table, raw, &root);
  if (!st.ok()) return Fail(fn, static_cast<int>(rank), st);
  if (cfg.name.empty()) cfg.name = "hccl_world_group";
  // Several servers: this rank's data listener goes on its server's host_ip (the address the table
  // says the other servers reach), not on the interface rule's choice.
  const std::string& my_host_ip = table.servers[table.ranks[rank].server_index].host_ip;
  if (table.servers.size() > 1 && !my_host_ip.empty()) cfg.listen_ip = my_host_ip;
  if (rank == 0) {
    std::unique_ptr<boot::RootServer> server;
    std::string served = hostccl::StrFormat("rank table '%s' (%u ranks)", clusterInfo, n);
    st = boot::StartRankTableRoot(root, n, served, deadline, &server);
    if (!st.ok()) return Fail(fn, 0, st);
    root = server->info();
    root.shared_port = true;
    boot::AdoptRootServer(std::move(server));
  }
  int device = table.ranks[rank].device_id;
  return InitFromRoot(fn, root, n, rank, device, cfg, comm);
}

}  // namespace

HOSTCCL_API HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  return Guard(__func__, [&] {
    if (rootInfo == nullptr) return Fail("HcclGetRootInfo", -1, Status(Code::kPtr, "rootInfo is NULL"));
    std::unique_ptr<boot::RootServer> server;
    Status st = boot::StartRootServer(hostccl::rt::CurrentDevice(), &server);
    if (!st.ok()) return Fail("HcclGetRootInfo", -1, st);
    boot::EncodeRootInfo(server->info(), rootInfo);
    boot::AdoptRootServer(std::move(server));
    return HCCL_SUCCESS;
  });
}

HOSTCCL_API HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                            HcclComm* comm) {
  return Guard(__func__, [&] { return InitRootInfoCommon("HcclCommInitRootInfo", nRanks, rootInfo, rank, nullptr, comm); });
}

HOSTCCL_API HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                                  const HcclCommConfig* config, HcclComm* comm) {
  return Guard(__func__, [&] {
    return InitRootInfoCommon("HcclCommInitRootInfoConfig", nRanks, rootInfo, rank, config, comm);
  });
}

HOSTCCL_API HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm) {
  return Guard(__func__, [&] { return InitClusterCommon("HcclCommInitClusterInfo", clusterInfo, rank, nullptr, comm); });
}

HOSTCCL_API HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                                                     HcclComm* comm) {
  return Guard(__func__, [&] {
    return InitClusterCommon("HcclCommInitClusterInfoConfig", clusterInfo, rank, config, comm);
  });
}

HOSTCCL_API HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms) {
  return Guard(__func__, [&] {
    const char* fn = "HcclCommInitAll";
    if (devices == nullptr) return Fail(fn, -1, Status(Code::kPtr, "devices is NULL"));
    if (comms == nullptr) return Fail(fn, -1, Status(Code::kPtr, "comms is NULL"));
    if (ndev == 0) return Fail(fn, -1, Status(Code::kPara, "ndev is 0"));
    const uint32_t count = hostccl::rt::DeviceCount();
    for (uint32_t i = 0; i < ndev; ++i) {
      if (devices[i] < 0 || static_cast<uint32_t>(devices[i]) >= count)
        return Fail(fn, -1, MakeStatus(Code::kPara, "devices[%u] = %d is not in [0, %u)", i, devices[i], count));
      for (uint32_t j = 0; j < i; ++j)
        if (devices[j] == devices[i])
          return Fail(fn, -1, MakeStatus(Code::kPara, "devices[%u] and devices[%u] are both %d", j, i, devices[i]));
    }
    std::unique_ptr<boot::RootServer> server;
    Status st = boot::StartRootServer(devices[0], &server);
    if (!st.ok()) return Fail(fn, -1, st);
    boot::RootInfo root = server->info();
    boot::AdoptRootServer(std::move(server));
    std::vector<std::shared_ptr<core::Communicator>> made(ndev);
    std::vector<Status> results(ndev);
    std::vector<std::thread> threads;
    core::CommConfig cfg;
    cfg.threads_of_one_process = true;  // no data listener, no TCP mesh: their segment and LocalGroup serve them
    for (uint32_t i = 0; i < ndev; ++i) {
      threads.emplace_back([&, i] {
        results[i] = core::Communicator::CreateFromRootInfo(root, ndev, i, devices[i], cfg, &made[i]);
      });
    }
    for (auto& t : threads) t.join();
    for (uint32_t i = 0; i < ndev; ++i)
      if (!results[i].ok()) return Fail(fn, static_cast<int>(i), results[i]);
    for (uint32_t i = 0; i < ndev; ++i) comms[i] = core::RegisterComm(std::move(made[i]));
    return HCCL_SUCCESS;
  });
}

HOSTCCL_API HcclResult HcclCreateSubCommConfig(HcclComm* comm, uint32_t rankNum, uint32_t* rankIds,
                                               uint64_t subCommId, uint32_t subCommRankId, HcclCommConfig* config,
                                               HcclComm* subComm) {
  return Guard(__func__, [&] {
    const char* fn = "HcclCreateSubCommConfig";
    if (comm == nullptr || subComm == nullptr) return Fail(fn, -1, Status(Code::kPtr, "comm or subComm is NULL"));
    auto parent = core::LookupComm(*comm);
    if (!parent) return Fail(fn, -1, Status(Code::kPara, "*comm is not a live communicator"));
    const int me = parent->rank();
    if (rankIds == nullptr) {
      // Not a member of this split (HCCL's convention: null rankIds, subCommId 0xFFFFFFFF).
      *subComm = nullptr;
      return HCCL_SUCCESS;
    }
    if (rankNum == 0 || rankNum > static_cast<uint32_t>(parent->size()))
      return Fail(fn, me, MakeStatus(Code::kPara, "rankNum %u not in [1, %d]", rankNum, parent->size()));
    if (subCommRankId >= rankNum)
      return Fail(fn, me, MakeStatus(Code::kPara, "subCommRankId %u >= rankNum %u", subCommRankId, rankNum));
    std::vector<uint32_t> members(rankIds, rankIds + rankNum);
    for (uint32_t i = 0; i < rankNum; ++i) {
      if (members[i] >= static_cast<uint32_t>(parent->size()))
        return Fail(fn, me, MakeStatus(Code::kPara, "rankIds[%u] = %u >= parent rankSize %d", i, members[i],
                                       parent->size()));
      if (i > 0 && members[i] <= members[i - 1])
        return Fail(fn, me, MakeStatus(Code::kPara, "rankIds must be strictly ascending (rankIds[%u] = %u)", i,
                                       members[i]));
    }
    if (members[subCommRankId] != static_cast<uint32_t>(me))
      return Fail(fn, me, MakeStatus(Code::kPara, "rankIds[subCommRankId %u] = %u is not this rank (%d)",
                                     subCommRankId, members[subCommRankId], me));
    core::CommConfig cfg;
    Status st = hostccl::api::ReadCommConfig(config, &cfg);
    if (!st.ok()) return Fail(fn, me, st);
    std::shared_ptr<core::Communicator> sub;
    st = core::Communicator::CreateSub(parent, members, subCommRankId, subCommId, cfg, &sub);
    if (!st.ok()) return Fail(fn, me, st);
    *subComm = core::RegisterComm(std::move(sub));
    return HCCL_SUCCESS;
  });
}

HOSTCCL_API HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
  if (comm == nullptr || rankSize == nullptr) return Fail("HcclGetRankSize", -1, Status(Code::kPtr, "comm or rankSize is NULL"));
  auto c = core::LookupComm(comm);
  if (!c) return Fail("HcclGetRankSize", -1, Status(Code::kPara, "comm is not a live communicator"));
  *rankSize = static_cast<uint32_t>(c->size());
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
  if (comm == nullptr || rank == nullptr) return Fail("HcclGetRankId", -1, Status(Code::kPtr, "comm or rank is NULL"));
  auto c = core::LookupComm(comm);
  if (!c) return Fail("HcclGetRankId", -1, Status(Code::kPara, "comm is not a live communicator"));
  *rank = static_cast<uint32_t>(c->rank());
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclGetCommName(HcclComm comm, char* commName) {
  if (comm == nullptr || commName == nullptr) return Fail("HcclGetCommName", -1, Status(Code::kPtr, "comm or commName is NULL"));
  auto c = core::LookupComm(comm);
  if (!c) return Fail("HcclGetCommName", -1, Status(Code::kPara, "comm is not a live communicator"));
  std::strncpy(commName, c->name().c_str(), COMM_NAME_MAX_LENGTH - 1);
  commName[COMM_NAME_MAX_LENGTH - 1] = '\0';
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm) {
  if (commName == nullptr || comm == nullptr) return Fail("HcclCommGetHandleWithName", -1, Status(Code::kPtr, "commName or comm is NULL"));
  void* h = core::FindCommHandleByName(commName);
  if (h == nullptr)
    return Fail("HcclCommGetHandleWithName", -1, MakeStatus(Code::kNotFound, "no communicator named '%s'", commName));
  *comm = h;
  return HCCL_SUCCESS;
}

HOSTCCL_API uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

namespace {
std::atomic<int32_t> g_deterministic{0};
}

HOSTCCL_API HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue) {
  if (const int c = hostccl::api::EnumBits(config); c != HCCL_DETERMINISTIC)
    return Fail("HcclSetConfig", -1, MakeStatus(Code::kNotSupport, "config %d is not supported", c));
  if (configValue.value < 0 || configValue.value > 2)
    return Fail("HcclSetConfig", -1, MakeStatus(Code::kPara, "HCCL_DETERMINISTIC value %d must be 0, 1 or 2", configValue.value));
  g_deterministic = configValue.value;  // hostccl reductions are always deterministic; recorded for GetConfig
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue) {
  if (configValue == nullptr) return Fail("HcclGetConfig", -1, Status(Code::kPtr, "configValue is NULL"));
  if (const int c = hostccl::api::EnumBits(config); c != HCCL_DETERMINISTIC)
    return Fail("HcclGetConfig", -1, MakeStatus(Code::kNotSupport, "config %d is not supported", c));
  configValue->value = g_deterministic.load();
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError) {
  if (comm == nullptr || asyncError == nullptr) return Fail("HcclGetCommAsyncError", -1, Status(Code::kPtr, "comm or asyncError is NULL"));
  auto c = core::LookupComm(comm);
  if (!c) return Fail("HcclGetCommAsyncError", -1, Status(Code::kPara, "comm is not a live communicator"));
  *asyncError = c->failed() ? ToResult(c->error()) : HCCL_SUCCESS;
  return HCCL_SUCCESS;
}

HOSTCCL_API HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    if (hostccl::api::GroupDepth() > 0) return hostccl::api::GroupRejectCall("HcclBarrier", comm);
    if (Status st = hostccl::api::RefuseAtThreadExit("HcclBarrier"); !st.ok()) return hostccl::api::ToResult(st);
    if (comm == nullptr || stream == nullptr) return Fail("HcclBarrier", -1, Status(Code::kPtr, "comm or stream is NULL"));
    auto c = core::LookupComm(comm);
    // The chip's operator list, as for every operator: after the null checks, before the handles.
    if (Status st = core::CheckCommProfile(c.get(), hostccl::CollKind::kBarrier, hostccl::DataType::kFp32,
                                           hostccl::RedOp::kSum);
        !st.ok())
      return Fail("HcclBarrier", c ? c->rank() : -1, st);
    if (!c) return Fail("HcclBarrier", -1, Status(Code::kPara, "comm is not a live communicator"));
    auto* s = hostccl::rt::LookupStream(stream);
    if (s == nullptr) return Fail("HcclBarrier", c->rank(), MakeStatus(Code::kPara, "stream %p is not a live stream", stream));
    Status st = c->EnqueueBarrier(s);
    return st.ok() ? HCCL_SUCCESS : Fail("HcclBarrier", c->rank(), st);
  });
}

HOSTCCL_API HcclResult HcclCommDestroy(HcclComm comm) {
  if (comm == nullptr) return Fail("HcclCommDestroy", -1, Status(Code::kPtr, "comm is NULL"));
  auto c = core::UnregisterComm(comm);
  if (!c) return Fail("HcclCommDestroy", -1, Status(Code::kPara, "comm is not a live communicator (destroyed twice?)"));
  core::DropCommWindows(c.get());
  c->Destroy();
  return HCCL_SUCCESS;
}

HOSTCCL_API const char* HcclGetErrorString(HcclResult code) {
  const int c = hostccl::api::EnumBits(code);
  switch (c) {
    case 0: return "no error";
    case 1: return "parameter error";
    case 2: return "empty pointer";
    case 3: return "memory error";
    case 4: return "internal error";
    case 5: return "not support feature";
    case 6: return "not found specific resource";
    case 7: return "resource unavailable";
    case 8: return "call system interface error";
    case 9: return "timeout";
    case 10: return "open file fail";
    case 11: return "tcp connect fail";
    case 12: return "roce connect fail";
    case 13: return "tcp transfer fail";
    case 14: return "roce transfer fail";
    case 15: return "call runtime api fail";
    case 16: return "call driver api fail";
    case 17: return "call profiling api fail";
    case 18: return "call cce api fail";
    case 19: return "call network api fail";
    case 20: return "try again";
    case 21: return "error cqe";
    case 22: return "error communicator suspending";
    case 23: return "retry constraint";
    case 24: return "out of memory";
    default: break;
  }
  if (c < 0 || c >= static_cast<int>(HCCL_E_RESERVED)) return "unknown error";
  return "unknown err";
}

// ---- Not supported on hosts (yet): each returns HCCL_E_NOT_SUPPORT with one log line. ----
#define HOSTCCL_NOT_SUPPORTED(name) \
  Fail(#name, -1, Status(Code::kNotSupport, #name " is not supported by hostccl yet"))

HOSTCCL_API HcclResult HcclCommSuspend(HcclComm) { return HOSTCCL_NOT_SUPPORTED(HcclCommSuspend); }
HOSTCCL_API HcclResult HcclCommResume(HcclComm) { return HOSTCCL_NOT_SUPPORTED(HcclCommResume); }
HOSTCCL_API HcclResult HcclCommRegCommStateCallback(const char*, HcclCommStateCallback, void*) {
  return HOSTCCL_NOT_SUPPORTED(HcclCommRegCommStateCallback);
}
HOSTCCL_API HcclResult HcclCommGetStatus(const char*, HcclCommStatus*) { return HOSTCCL_NOT_SUPPORTED(HcclCommGetStatus); }
HOSTCCL_API HcclResult HcclCommWorkingDevNicSet(HcclComm, uint32_t*, bool*, uint32_t) {
  return HOSTCCL_NOT_SUPPORTED(HcclCommWorkingDevNicSet);
}
// Group calls: api/group.h.
HOSTCCL_API HcclResult HcclGroupStart(void) {
  return Guard(__func__, [] { return hostccl::api::GroupStart(); });
}
HOSTCCL_API HcclResult HcclGroupEnd(void) {
  return Guard(__func__, [] { return hostccl::api::GroupEnd(); });
}
HOSTCCL_API HcclResult HcclGroupStatusGet(bool* isGroupEnabled) {
  if (isGroupEnabled == nullptr) return Fail("HcclGroupStatusGet", -1, Status(Code::kPtr, "isGroupEnabled is NULL"));
  *isGroupEnabled = hostccl::api::GroupDepth() > 0;
  return HCCL_SUCCESS;
}
HOSTCCL_API HcclResult HcclConfigGetInfo(HcclComm, HcclConfigType, uint32_t, void*) {
  return HOSTCCL_NOT_SUPPORTED(HcclConfigGetInfo);
}

// ---- Memory registered with the communicator (core/comm_memory.h, docs/memory_registration.md) ----
namespace {

// The live communicator of a memory-registration call, or the failure to return. Pointer
// arguments are checked first (HCCL_E_PTR), in the prototype's order, then the communicator.
template <typename Fn>
HcclResult WithComm(const char* fn, HcclComm comm, std::initializer_list<std::pair<const void*, const char*>> ptrs,
                    Fn&& body) {
  if (comm == nullptr) return Fail(fn, -1, Status(Code::kPtr, "comm is NULL"));
  for (const auto& [p, name] : ptrs)
    if (p == nullptr) return Fail(fn, -1, MakeStatus(Code::kPtr, "%s is NULL", name));
  auto c = core::LookupComm(comm);
  if (!c) return Fail(fn, core::DestroyedCommRank(comm), Status(Code::kPara, "comm is not a live communicator"));
  Status st = body(c);
  if (!st.ok()) return Fail(fn, c->rank(), st);
  return HCCL_SUCCESS;
}

}  // namespace

HOSTCCL_API HcclResult HcclCommSetMemoryRange(HcclComm comm, void* baseVirPtr, size_t size, size_t alignment,
                                              uint64_t flags) {
  return WithComm(__func__, comm, {{baseVirPtr, "baseVirPtr"}}, [&](const std::shared_ptr<core::Communicator>& c) {
    return core::SetMemoryRange(*c, baseVirPtr, size, alignment, flags);
  });
}
HOSTCCL_API HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void* baseVirPtr) {
  return WithComm(__func__, comm, {{baseVirPtr, "baseVirPtr"}}, [&](const std::shared_ptr<core::Communicator>& c) {
    return core::UnsetMemoryRange(*c, baseVirPtr);
  });
}
HOSTCCL_API HcclResult HcclCommActivateCommMemory(HcclComm comm, void* virPtr, size_t size, size_t offset,
                                                  aclrtDrvMemHandle handle, uint64_t flags) {
  return WithComm(__func__, comm, {{virPtr, "virPtr"}, {handle, "handle"}},
                  [&](const std::shared_ptr<core::Communicator>& c) {
                    return core::ActivateCommMemory(*c, virPtr, size, offset, handle, flags);
                  });
}
HOSTCCL_API HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void* virPtr) {
  return WithComm(__func__, comm, {{virPtr, "virPtr"}}, [&](const std::shared_ptr<core::Communicator>& c) {
    return core::DeactivateCommMemory(*c, virPtr);
  });
}
HOSTCCL_API HcclResult HcclCommSymWinRegister(HcclComm comm, void* addr, uint64_t size, HcclCommSymWindow* winHandle,
                                              uint32_t flag) {
  return WithComm(__func__, comm, {{addr, "addr"}, {winHandle, "winHandle"}},
                  [&](const std::shared_ptr<core::Communicator>& c) {
                    return core::SymWinRegister(c, addr, size, winHandle, flag);
                  });
}
HOSTCCL_API HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle) {
  if (winHandle == nullptr) return Fail(__func__, -1, Status(Code::kPtr, "winHandle is NULL"));
  int rank = -1;
  Status st = core::SymWinDeregister(winHandle, &rank);
  if (!st.ok()) return Fail(__func__, rank, st);
  return HCCL_SUCCESS;
}
HOSTCCL_API HcclResult HcclCommSymWinGet(HcclComm comm, void* ptr, size_t size, HcclCommSymWindow* winHandle,
                                         size_t* offset) {
  return WithComm(__func__, comm, {{ptr, "ptr"}, {winHandle, "winHandle"}, {offset, "offset"}},
                  [&](const std::shared_ptr<core::Communicator>& c) {
                    return core::SymWinGet(*c, ptr, size, winHandle, offset);
                  });
}
