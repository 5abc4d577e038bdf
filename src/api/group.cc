// Group calls: rules in group.h.
#include "api/group.h"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "api/result.h"
#include "common/log.h"
#include "common/ops.h"
#include "common/thread_state.h"

namespace hostccl::api {
namespace {

// One deferred call; `arrays` own the V family's copies (OpCall's pointers are re-bound to them
// at the end, so the record may move).
struct Deferred {
  OpCall call;
  std::vector<uint64_t> arrays[varr::kFields];
};

struct GroupState {
  int depth = 0;
  int p2p = -1;  // -1: nothing appended yet; 1: Send/Recv; 0: collectives
  std::vector<Deferred> calls;
};

thread_local ExitMarked<GroupState> t_group;
// Threads whose group is open (depth > 0): while none is, GroupDepth answers without touching
// thread-local storage (every operator call asks). A thread always sees its own increment.
std::atomic<int> g_open_groups{0};

int RankOf(void* handle) {
  auto comm = handle ? core::LookupComm(handle) : nullptr;
  return comm ? comm->rank() : handle ? core::DestroyedCommRank(handle) : -1;
}

bool IsV(CollKind k) {
  return k == CollKind::kAllGatherV || k == CollKind::kReduceScatterV || k == CollKind::kAlltoAll ||
         k == CollKind::kAlltoAllV || k == CollKind::kAlltoAllVC;
}

// The full check of every deferred call (in call order), then the enqueues.
Status RunGroup(std::vector<Deferred>& calls, bool p2p) {
  std::vector<Checked> checked(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    for (int f = 0; f < varr::kFields; ++f)
      if (!calls[i].arrays[f].empty()) calls[i].call.*kArrayFields[f] = calls[i].arrays[f].data();
    HOSTCCL_RETURN_IF_ERROR(CheckOp(calls[i].call, &checked[i]));
    const OpInfo& o = *FindOp(calls[i].call.kind);
    if (!checked[i].done && !o.implemented)
      return Reject(o.api, checked[i].comm->rank(), MakeStatus(Code::kNotSupport, "%s is not implemented by hostccl yet",
                                                               o.api));
  }
  if (!p2p) {
    for (size_t i = 0; i < calls.size(); ++i) {
      const Checked& ck = checked[i];
      if (ck.done) continue;
      Status st = ck.comm->Enqueue(ck.stream, ToArgs(calls[i].call), ck.send_alloc, ck.recv_alloc);
      if (!st.ok()) return Reject(FindOp(calls[i].call.kind)->api, ck.comm->rank(), st);
    }
    return Status::Ok();
  }
  // Send/Recv: one batch per (communicator, stream), in the order of their first call.
  struct Batch {
    core::Communicator* comm;
    rt::Stream* stream;
    std::vector<size_t> calls;
  };
  std::vector<Batch> batches;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Checked& ck = checked[i];
    if (ck.done) continue;
    Batch* b = nullptr;
    for (auto& x : batches)
      if (x.comm == ck.comm.get() && x.stream == ck.stream) b = &x;
    if (b == nullptr) b = &batches.emplace_back(Batch{ck.comm.get(), ck.stream, {}});
    b->calls.push_back(i);
  }
  for (const Batch& b : batches) {
    const Checked& first = checked[b.calls.front()];
    Status st;
    if (b.calls.size() == 1) {
      st = first.comm->Enqueue(first.stream, ToArgs(calls[b.calls.front()].call), first.send_alloc, first.recv_alloc);
    } else {
      auto list = std::make_shared<std::vector<algo::P2PItem>>();
      for (size_t i : b.calls) {
        const OpCall& c = calls[i].call;
        algo::P2PItem p;
        p.send = c.kind == CollKind::kSend;
        p.peer = static_cast<int>(c.root);
        p.buf = p.send ? c.send : c.recv;
        p.count = c.count;
        p.dtype = static_cast<DataType>(c.dtype);
        list->push_back(p);
      }
      algo::OpArgs args;
      args.kind = CollKind::kBatchSendRecv;
      args.items = std::move(list);
      st = first.comm->Enqueue(first.stream, args);
    }
    if (!st.ok()) return Reject("HcclGroupEnd", first.comm->rank(), st);
  }
  return Status::Ok();
}

}  // namespace

int GroupDepth() { return g_open_groups.load(std::memory_order_relaxed) == 0 ? 0 : t_group.depth; }

HcclResult GroupStart() {
  if (Status st = RefuseAtThreadExit("HcclGroupStart"); !st.ok()) return ToResult(st);
  if (t_group.depth++ == 0) g_open_groups.fetch_add(1, std::memory_order_relaxed);
  return HCCL_SUCCESS;
}

HcclResult GroupEnd() {
  GroupState& g = t_group;
  if (g.depth == 0)
    return ToResult(Reject("HcclGroupEnd", -1, Status(Code::kPara, "HcclGroupEnd without a matching HcclGroupStart")));
  if (--g.depth > 0) return HCCL_SUCCESS;
  g_open_groups.fetch_sub(1, std::memory_order_relaxed);
  std::vector<Deferred> calls = std::move(g.calls);
  const bool p2p = g.p2p == 1;
  g.calls.clear();
  g.p2p = -1;
  if (calls.empty()) return HCCL_SUCCESS;
  return ToResult(RunGroup(calls, p2p));
}

HcclResult GroupAppend(const OpCall& call) {
  GroupState& g = t_group;
  const OpInfo& o = *FindOp(call.kind);
  Checked ck;
  const bool v = IsV(call.kind);
  Status st = CheckOp(call, &ck, /*group_entry=*/true);
  if (!st.ok()) return ToResult(st);
  if (ck.done) return HCCL_SUCCESS;
  const bool p2p = o.root == RootRule::kPeer;
  if (g.p2p >= 0 && g.p2p != static_cast<int>(p2p))
    return ToResult(Reject(o.api, RankOf(call.comm),
                           MakeStatus(Code::kNotSupport, "a group cannot mix collectives with HcclSend/HcclRecv "
                                      "(this group already holds %s); end the group first",
                                      p2p ? "collectives" : "HcclSend/HcclRecv calls")));
  Deferred d;
  d.call = call;
  bool arrays = false;
  for (int f = 0; v && f < varr::kFields; ++f) arrays = arrays || call.*kArrayFields[f] != nullptr;
  if (arrays) {
    // The arrays are copied now (the caller's need to live only during the call), which takes the
    // communicator's size: a handle that is not a live communicator gets its whole check here.
    const auto comm = core::LookupComm(call.comm);
    if (!comm) return ToResult(CheckOp(call, &ck));
    const uint64_t n = static_cast<uint64_t>(comm->size());
    for (int f = 0; f < varr::kFields; ++f) {
      const uint64_t* a = call.*kArrayFields[f];
      if (a == nullptr) continue;
      d.arrays[f].assign(a, a + varr::FieldWords(f, n));
      d.call.*kArrayFields[f] = nullptr;  // re-bound at the end
    }
  }
  g.calls.push_back(std::move(d));
  g.p2p = static_cast<int>(p2p);
  return HCCL_SUCCESS;
}

HcclResult GroupRejectCall(const char* fn, void* comm) {
  return ToResult(Reject(fn, RankOf(comm), MakeStatus(Code::kNotSupport, "%s cannot be called inside a group "
                                                      "(HcclGroupStart/HcclGroupEnd)", fn)));
}

}  // namespace hostccl::api
