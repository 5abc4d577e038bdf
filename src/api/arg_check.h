// Argument checks of the operators, in HCCL's order with HCCL's codes (semantics.md §1), plus
// hostccl's additions, in this order: alignment, "count is in bytes" (device-buffer size), partial
// overlap, communicator state.
// Every rejection logs one error line naming the function, rank, argument, value and expectation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "common/status.h"
#include "common/v_arrays.h"
#include "core/communicator.h"
#include "runtime/runtime.h"

namespace hostccl::api {

// One call of a buffer-and-count operator, as the entry point received it (dtype and op as raw
// ints: a C caller may pass any value). The operator's row (common/ops.h) says which fields apply.
struct OpCall {
  CollKind kind;
  void* send;  // Broadcast: its one buffer (send == recv)
  void* recv;
  uint64_t count;
  int dtype;
  int op;
  uint32_t root;  // root or peer
  void* comm;
  void* stream;
  // The AlltoAll family and the V operators (rows with BufRule::kV), in elements: host uint64_t[n]
  // arrays as the caller passed them (AlltoAllVC: `matrix`, n x n row-major); `count` is the
  // operator's own scalar count (AllGatherV sendCount, ReduceScatterV recvCount, AlltoAll
  // sendCount; 0 for AlltoAllV/VC), `dtype` its (send) type.
  const uint64_t* send_counts = nullptr;
  const uint64_t* send_displs = nullptr;
  const uint64_t* recv_counts = nullptr;
  const uint64_t* recv_displs = nullptr;
  const uint64_t* matrix = nullptr;
  uint64_t recv_count = 0;  // AlltoAll
  int recv_dtype = 0;       // AlltoAll family
};
// OpCall's V arrays in varr's field order (common/v_arrays.h).
inline constexpr const uint64_t* OpCall::*kArrayFields[varr::kFields] = {
    &OpCall::send_counts, &OpCall::send_displs, &OpCall::recv_counts, &OpCall::recv_displs, &OpCall::matrix};

// Elements each side of a V-family call spans (the extent its counts and displacements imply),
// for the size, overlap and null-buffer checks. Computed by VExtents after the count ranges were
// checked.
struct VExtents {
  uint64_t send = 0, recv = 0;         // elements from the buffer's start to its last used one
  bool send_data = false, recv_data = false;  // some block of that side is non-empty
};
// For kind AllGatherV / ReduceScatterV / AlltoAll / AlltoAllV / AlltoAllVC with n ranks and this
// rank r: fills *e, or returns E_PARA naming the array and index whose displacement + count
// overflows, or (receive side) the two blocks that overlap (collectives.md 2.5, 2.10).
Status ComputeVExtents(const OpCall& c, int n, int r, VExtents* e);

// What a successful check resolved, so the call does not look it up again.
struct Checked {
  std::shared_ptr<core::Communicator> comm;
  rt::Stream* stream = nullptr;
  std::optional<rt::Allocation> send_alloc;  // aclrtMalloc allocations holding the buffers, if any
  std::optional<rt::Allocation> recv_alloc;
  bool done = false;  // count == 0: return success without doing anything
};

// HCCL's checks in HCCL's order for the operator c.kind, driven by its row (semantics.md §1,
// collectives.md §2): 1 count == 0 -> success (out->done); 2 NULL comm, buffers the row requires,
// stream -> E_PTR; 3 count range -> E_PARA; 4 dtype (reducible set for reductions, a known type
// for data movement) -> E_NOT_SUPPORT; 5 reduce op (reductions) -> E_NOT_SUPPORT; 6 hardware
// profile -> E_NOT_SUPPORT; 7 root / peer < rankSize -> E_PARA; 8 hostccl's additions (alignment,
// overlap, device-buffer size, communicator state, live stream) -> E_PARA or the comm's error.
// The V family (AllGatherV, ReduceScatterV, AlltoAll, AlltoAllV, AlltoAllVC) follows its own
// per-operator order of the same steps (arg_check.cc kVOrders, from collectives.md 2.5, 2.7,
// 2.9-2.11), then the same hostccl additions.
// group_entry: the part that runs at the call inside HcclGroupStart/End (collectives.md 1.1):
// steps 1-2, and step 3 for Send/Recv; the rest runs at HcclGroupEnd (api/group.h). The V family
// runs the leading zero-count and NULL-pointer steps of its order.
Status CheckOp(const OpCall& c, Checked* out, bool group_entry = false);
// The success path of CheckOp (not group_entry) for the buffer-and-count operators and the V
// family, without a Status or any message: true when every check passes (*out filled exactly as
// CheckOp would); false when some check fails or the call is one it leaves to CheckOp (count 0,
// a V side without data, a chip profile, ...), and then CheckOp gives the verdict and the
// message. *out is unspecified after false. Its communicator is this thread's lookup for the call
// (core::LookupCommForCall: valid to the end of the call, no reference counted).
struct FastChecked {
  core::Communicator* comm = nullptr;
  rt::Stream* stream = nullptr;
  std::optional<rt::Allocation> send_alloc;
  std::optional<rt::Allocation> recv_alloc;
};
bool CheckFast(const OpCall& c, FastChecked* out);
// CheckFast for one call, remembered: the last four distinct calls that passed on this thread (so
// that calls issued in turn, a Send and a Recv, are each remembered) are kept with what they
// resolved (and, for the V family, a copy of what its arrays held: the caller may change them in
// place; arrays of more than 4096 words together are not remembered), and a call with the same
// arguments (the arrays' addresses and contents among them) passes again without its checks
// while no aclrtMalloc allocation or mapping was added or removed since
// (rt::AllocationGeneration). Its communicator and stream are still looked up (a destroyed one
// fails, and the lookup keeps the communicator for the call) and the communicator's state is read
// again. get() is the resolved call, or null where CheckFast says false (then CheckOp gives the
// verdict). A call made while an earlier one of this thread is still inside (a host callback run
// by a full queue) checks without the memory.
class FastCheck {
 public:
  explicit FastCheck(const OpCall& c);
  ~FastCheck();
  FastCheck(const FastCheck&) = delete;
  FastCheck& operator=(const FastCheck&) = delete;
  const FastChecked* get() const { return ok_; }
  // The remembered call's prepared record (core::PreparedCall), or null: enqueue get()'s call
  // with Communicator::EnqueuePrepared when set.
  core::PreparedCall* prepared() const { return prepared_; }
  // The calling thread's block (common/thread_state.h), set whenever prepared() is.
  ThreadState& thread() const { return *thread_; }

 private:
  FastChecked local_;
  const FastChecked* ok_ = nullptr;
  bool* busy_ = nullptr;  // the thread's memo flag this check holds (cleared by the destructor)
  core::PreparedCall* prepared_ = nullptr;
  ThreadState* thread_ = nullptr;
};
// One HcclSendRecvItem as the entry point received it (type and dtype as raw ints).
struct BatchItem {
  int type;  // HCCL_SEND = 0, HCCL_RECV = 1
  void* buf;
  uint64_t count;
  int dtype;
  uint32_t remote;
};
// HcclBatchSendRecv's checks in hostccl's order (collectives.md 2.13): itemNum == 0 -> success
// (out->done); NULL comm, stream, item list -> E_PTR; per item in list order: type -> E_PARA,
// count > 0 with a NULL buf -> E_PTR, count -> E_PARA, dtype -> E_NOT_SUPPORT, profile ->
// E_NOT_SUPPORT, live communicator and remoteRank < rankSize -> E_PARA; then two items with the
// same direction and remoteRank -> E_PARA; self items (remoteRank == own rank) unpaired or with
// different count or dtype -> E_PARA; then per item alignment and device-buffer size -> E_PARA,
// the communicator's earlier failure, a live stream. On success *args holds the transfers.
Status CheckBatch(const BatchItem* items, uint32_t n, void* comm, void* stream, Checked* out, algo::OpArgs* args);

// The record an entry point enqueues after a successful check.
algo::OpArgs ToArgs(const OpCall& c);

// Logs and returns `st` (one line, error level): "<fn>(rank r): <message>".
Status Reject(const char* fn, int rank, Status st);
// An operation called while its thread exits, from a thread_local destructor of the program that
// runs after the library's per-thread state was destroyed (common/thread_state.h, ExitMarked):
// kInternal, named through Reject; nothing is enqueued. Ok otherwise. CheckOp, CheckBatch,
// HcclBarrier and HcclGroupStart ask first.
Status RefuseAtThreadExit(const char* fn);

}  // namespace hostccl::api
