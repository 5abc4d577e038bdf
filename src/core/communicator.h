// Communicator: one rank's membership in a group of ranks, with its peers (a LocalGroup when
// every rank is a thread of this process, else a TCP mesh, over loopback on one host), its
// configuration, its sticky error state and its reusable scratch. Operations are enqueued on
// runtime streams and run there.
//
// Lifetime: owned by shared_ptr; the C handle (HcclComm) is a registered id, not a pointer, so a
// destroyed or garbage handle is recognised. Enqueued tasks hold a reference, so Destroy() may
// return before they finish: it interrupts waits, and the object is freed by the last holder.
// Threads: operations of one communicator run one at a time (exec_mu_); Destroy() and the
// error queries may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "algo/context.h"
#include "bootstrap/bootstrap.h"
#include "common/quick_lock.h"
#include "common/thread_state.h"
#include "core/profiles.h"
#include "core/selector.h"
#include "kernels/copy.h"
#include "runtime/runtime.h"
#include "transport/local/local_group.h"
#include "transport/shm/shm_group.h"
#include "transport/tcp/tcp_mesh.h"
#include "transport/transport.h"

namespace hostccl::core {

class FlightRecorder;  // core/flight_recorder.h: the last N operations, dumped on errors
class VBoard;  // communicator.cc: the V arrays of this process's ranks, for mismatch messages

// Per-communicator settings, already resolved from HcclCommConfig > environment > defaults.
struct CommConfig {
  std::string name;               // empty = default name
  int64_t buffer_mb = -1;         // -1 = HCCL_BUFFSIZE / default 200
  int64_t exec_timeout_s = -1;    // -1 = HCCL_EXEC_TIMEOUT / default
  std::string listen_ip;          // data listener address; empty = boot::ChooseLocalAddress()
  // Known before rendezvous (set by HcclCommInitAll, not by users): every rank is a thread of
  // this process, so no data listener is opened unless a TCP mesh is asked for.
  bool threads_of_one_process = false;
  uint64_t sym_win_max_gb = 16;   // hcclSymWinMaxMemSizePerRank: bound of a symmetric window
};

// A collective's record completed for one communicator once (descriptors, selection size, its
// fingerprint but the seq), for a caller that repeats the same call: the API's remembered argument
// check (api::FastCheck) keeps one per remembered call, so a repeated call skips building it.
// Valid while the allocations it describes are (rt::AllocationGeneration unchanged) and for the
// same arguments. A single HcclSend/HcclRecv is prepared but its transfer's number, given per
// call (in the record, which is therefore the caller's own); a batch is not (`ok` false).
struct PreparedCall {
  algo::OpArgs args;
  Fingerprint fp;  // collectives: seq 0
  bool ok = false;
  // A call without V arrays that the selection gives, as an inline attempt, to an algorithm of
  // this host's shared segment (a collective of process or thread ranks; a single HcclSend/
  // HcclRecv with another process whose payload fits a mail slot, to `mailbox`): its attempts run
  // through Communicator::RunPreparedAttempt, with this algorithm (a transfer with its single-
  // transfer entry, `P2PMailboxOne`) and the chunk size Run would give it. nullptr: Run selects
  // per call.
  const algo::Algorithm* attempt_algo = nullptr;
  size_t attempt_chunk_bytes = 0;
};

class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  // Thread ranks of one process (HOSTCCL_TRANSPORT=auto) share a segment (net::ShmGroup) for their
  // collectives up to this many ranks; above it its rings shrink to a few slots per rank, and the
  // in-process plans serve them.
  static constexpr int kThreadShmMaxRanks = 64;
  // Joins the communicator described by a root info (blocks until every rank joined, bounded by
  // the connect timeout).
  static Status CreateFromRootInfo(const boot::RootInfo& root, uint32_t nranks, uint32_t rank,
                                   int device, const CommConfig& config,
                                   std::shared_ptr<Communicator>* out);
  // Sub-communicator of `parent` made of parent ranks `members` (this rank is members[sub_rank]).
  static Status CreateSub(const std::shared_ptr<Communicator>& parent,
                          const std::vector<uint32_t>& members, uint32_t sub_rank, uint64_t sub_id,
                          const CommConfig& config, std::shared_ptr<Communicator>* out);
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  const std::string& name() const { return name_; }
  bool multi_node() const { return topology_.multi_node(); }
  // Hosts, ranks and devices, for the profiles' topology rules (core/profiles.h).
  const Topology& topology() const { return topology_; }
  // Hardware profile (HOSTCCL_SOC) read at creation; nullptr = host (core/profiles.h).
  const char* profile() const { return profile_; }
  // Whether operator buffers may be host memory: HOSTCCL_FIDELITY=0 (or HostcclSetFidelity(0)) at
  // creation, a parent that allowed them, or AllowHostBuffers (HostcclCommAllowHostBuffers: the
  // Python backend's host tensors). Otherwise a buffer outside aclrtMalloc/VMM memory is rejected.
  bool host_buffers_allowed() const { return host_buffers_ok_.load(std::memory_order_relaxed); }
  void AllowHostBuffers() { host_buffers_ok_.store(true, std::memory_order_relaxed); }

  // The sticky error (ok while healthy).
  Status error() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Records the first error, tells the peers (abort) and fails later calls.
  void Fail(const Status& st);

  // Enqueue an operation (any operator: args.kind) on `stream`; its sequence number and its
  // fingerprint are taken now (issue order; the V arrays are only valid during the call).
  // `send_alloc`/`recv_alloc`: the aclrtMalloc allocations holding the buffers (as the argument
  // check found them), used to describe the buffers to peers on this host.
  Status Enqueue(rt::Stream* stream, algo::OpArgs args,
                 const std::optional<rt::Allocation>& send_alloc = std::nullopt,
                 const std::optional<rt::Allocation>& recv_alloc = std::nullopt);
  Status EnqueueBarrier(rt::Stream* stream);  // Enqueue of an OpArgs of kind kBarrier
  // Fills *out for a call this caller will repeat (PreparedCall); Enqueue of a prepared record
  // (the allocations as for Enqueue: a capturing stream takes the general path).
  void Prepare(algo::OpArgs args, const std::optional<rt::Allocation>& send_alloc,
               const std::optional<rt::Allocation>& recv_alloc, PreparedCall* out) const;
  // `ts`: the calling thread's block (common/thread_state.h), which the caller holds.
  Status EnqueuePrepared(rt::Stream* stream, PreparedCall& call,
                         const std::optional<rt::Allocation>& send_alloc,
                         const std::optional<rt::Allocation>& recv_alloc, ThreadState& ts);
  // Pipelined completion: operations that returned before their peers confirmed them (the
  // algorithm set algo::Context::ran_ahead) are settled here, at the stream's next synchronize
  // (rt::Stream::DeferSettle): waits, bounded by `deadline` and the exec timeout, until every
  // peer is done with them, and reports their mismatch or failure (then fails the communicator,
  // as a failed operation does). Ok when nothing is pending.
  Status Settle(Deadline deadline);

  // Interrupts running operations and marks the communicator destroyed.
  void Destroy();

  // The flight recorder (nullptr when HOSTCCL_FR_ENTRIES=0 and HOSTCCL_TRACE is unset).
  FlightRecorder* flight_recorder() const { return fr_.get(); }

  // Largest symmetric window (HcclCommSymWinRegister) this rank may register, in bytes
  // (hcclSymWinMaxMemSizePerRank; core/comm_memory.h).
  uint64_t sym_win_max_bytes() const { return sym_win_max_bytes_; }

 private:
  Communicator() = default;
  Status Connect(const boot::RootInfo& root, uint32_t nranks, uint32_t rank, int device,
                 const CommConfig& config);
  Status ConnectSub(const Communicator& parent, const std::vector<uint32_t>& members,
                    uint32_t sub_rank, uint64_t sub_id, const CommConfig& config);
  void ApplyConfig(const CommConfig& config);
  Status SetupNodeGroups();
  void ClassifyRanks();
  Status OpenListeners(const boot::RootInfo& root, const CommConfig& config,
                       std::unique_ptr<net::TcpListener>* external, std::unique_ptr<net::TcpListener>* loopback);
  Status CheckDescriptorBudget(int sockets_per_peer) const;
  uint64_t TcpBusyPollNs() const;
  Status FinishSetup(const std::string& local_key);
  algo::Context MakeContext(const Fingerprint& fp, Deadline deadline, const ThreadState& ts);
  Deadline OpDeadline() const;
  // The pipeline chunk of a call of `bytes` with algorithm `a`: HOSTCCL_CHUNK_BYTES or the default.
  size_t ChunkBytes(uint64_t bytes, const algo::Algorithm* a) const;
  // The one run path of every operator: select, log, run the algorithm, finish. `ts`: the
  // running thread's block (common/thread_state.h), which the caller already holds.
  Status Run(const Fingerprint& fp, const algo::OpArgs& args, ThreadState& ts);
  // Run for the inline attempt of a prepared call with PreparedCall::attempt_algo (Submit's
  // short path): Run's steps such a call takes, with nothing to select, log or compare (the
  // selection and the chunk size were made by Prepare; a call with V arrays, or under an info log,
  // takes Run). An attempt that gives up is queued as RunTask, which runs Run.
  template <bool kTransfer>
  Status RunPreparedAttempt(const Fingerprint& fp, const algo::OpArgs& args, const PreparedCall& call,
                            ThreadState& ts);
  // The flight recorder's start of collective `fr_seq` (0: none) with algorithm `a`, at the
  // reading `deadline` took; the transports' blocking waits then note in it whom they wait for.
  void RecordStarted(uint64_t fr_seq, const algo::Algorithm& a, Deadline deadline, ThreadState& ts);
  // After an algorithm returned `st` for operation `seq` (Run and RunPreparedAttempt): ends the
  // inline attempt, keeps a settle, clears the in-flight mark and closes the flight recorder's
  // entry; a small collective asks for its next arrival's lines. An ok call returns ok; a failed
  // one goes to AfterFailedRun: kAgain (an attempt that gave up) is returned as it is, an error as
  // Finish gives it.
  Status AfterRun(const algo::Context& ctx, const algo::OpArgs& args, uint64_t seq, uint64_t fr_seq, bool attempt,
                  bool collective, Status&& st, ThreadState& ts);
  Status AfterFailedRun(const algo::OpArgs& args, uint64_t seq, uint64_t fr_seq, bool attempt, Status st);
  // How messages name an operation: "HcclAllReduce #3"; point-to-point by its transfer.
  std::string CallName(const algo::OpArgs& args, uint64_t seq) const;
  // Where this communicator's ranks are, for the selection (fixed at creation).
  Placement Where() const;
  // A call of operation `seq` completed ahead of its peers (ctx.ran_ahead): its settle is kept
  // for the stream's next synchronize (Submit and RunTask hand it over: DeferSettle).
  void KeepRanAhead(const algo::Context& ctx, CollKind kind, uint64_t seq, ThreadState& ts);
  // An inline attempt on the shared segment starts: notes which rank this thread drives (a thread
  // that drives several thread ranks looks once) and arms the segment's attempt for `seq`.
  void BeginShmAttempt(ThreadState& ts, uint64_t seq);
  // Transfers to (send) or from `peer` numbered so far (docs/semantics.md "Point-to-point");
  // the caller holds p2p_mu_.
  uint64_t& PairCount(bool send, int peer);
  // Hands this communicator's pending settle to `stream` (after a task whose operation ran ahead).
  void DeferSettle(rt::Stream* stream, ThreadState& ts);
  // The settle a stream runs at its synchronize (rt::Stream::Settle::fn; `self` is this object).
  static Status RunDeferredSettle(void* self, Deadline deadline);
  // A call's way to its stream: run at once as an inline attempt (on `args` as they are, valid
  // during the call; by RunPreparedAttempt when `prepared` is given), or queued as the task
  // make_task() builds (RunTask, or with V arrays a task that owns their copies).
  template <typename MakeTask>
  Status Submit(rt::Stream* stream, const Fingerprint& fp, const algo::OpArgs& args, bool attempt, ThreadState& ts,
                MakeTask&& make_task, const PreparedCall* prepared = nullptr);
  rt::Task RunTask(rt::Stream* stream, const Fingerprint& fp, algo::OpArgs&& args);
  // fr_seq: the flight-recorder entry to close (0: none).
  Status Finish(uint64_t fr_seq, const std::string& what, Status st);

  int rank_ = 0;
  int size_ = 1;
  int device_ = -1;
  std::string name_;
  std::string key_;  // unique across the job: identifies this communicator's members
  boot::RootInfo root_;
  std::vector<boot::RankInfo> ranks_;
  Topology topology_;
  const char* profile_ = nullptr;
  bool all_local_ = false;
  // Another rank of this communicator is a thread of this process (whatever the transport): one
  // thread may drive both, so a call must never wait for the enqueue of a peer's call (Submit).
  bool shares_process_ = false;
  uint64_t staging_bytes_ = 200ull << 20;
  int64_t exec_timeout_ms_ = 0;  // 0 = no limit
  std::vector<AlgoRule> forced_;
  bool check_args_ = true;             // HOSTCCL_CHECK_ARGS, read once at creation
  // HOSTCCL_RUN_AHEAD: pipelined completion when the stream holds the next task (auto), always, never.
  enum class RunAhead { kQueued, kAlways, kNever };
  RunAhead run_ahead_ = RunAhead::kQueued;
  // Small calls may run as inline attempts (HOSTCCL_INLINE_CALLS, rt::Stream::EnqueueAttempt):
  // processes of one host, no other transport path in the selection (fixed at creation).
  bool inline_calls_ = false;
  int64_t chunk_bytes_override_ = 0;  // HOSTCCL_CHUNK_BYTES, read once at creation
  bool accumulate_fp32_ = false;      // HOSTCCL_ACCUMULATE=fp32, read once at creation
  std::atomic<bool> host_buffers_ok_{false};  // see host_buffers_allowed()

  // The listener the mesh was made on (loopback when every rank is on this host), kept for
  // sub-communicators; none when the ranks are threads of this process and need no mesh.
  std::unique_ptr<net::TcpListener> listener_;
  std::unique_ptr<net::Transport> transport_;
  std::shared_ptr<net::LocalGroup> local_;
  std::unique_ptr<net::ShmGroup> shm_;
  std::unique_ptr<net::ShmGroup> node_shm_;  // this host's ranks, when the communicator spans hosts
  algo::NodeLayout nodes_;
  int free_observer_ = 0;  // runtime observer that forwards our frees to the shm groups
  algo::Scratch scratch_;
  kern::StoreLearner alltoall_stores_;  // AlltoAll(V/VC)'s stores, learned per footprint class
  // Vectors for the tasks' copies of the V arrays, reused (no allocation per call in steady state).
  QuickLock arrays_mu_;
  std::vector<std::vector<uint64_t>> arrays_pool_;
  void KeepArrays(std::vector<uint64_t>&& words);  // back to the pool (at most 8 kept)
  std::shared_ptr<VBoard> vboard_;  // set at the first V operation whose arrays must match

  std::atomic<uint64_t> next_seq_{0};
  // Point-to-point numbering (docs/semantics.md "Point-to-point"): transfers to / from each peer
  // so far. P2P takes no collective sequence number.
  QuickLock p2p_mu_;
  std::vector<uint64_t> p2p_sent_, p2p_received_;
  std::atomic<uint64_t> running_seq_{0};  // operation being executed (or last executed)
  net::ShmGroup* ran_ahead_ = nullptr;  // group of the last operation that ran ahead (exec_mu_)
  uint64_t ran_ahead_seq_ = 0;
  CollKind ran_ahead_kind_ = CollKind::kReduce;
  // The stream that holds this communicator's pending settle (DeferSettle), or nullptr: calls that
  // run ahead back to back defer it once, not once per call. Cleared as the settle starts.
  std::atomic<rt::Stream*> settle_on_{nullptr};
  // Run's last selection per operator (exec_mu_), reused for a call of the same size.
  struct Selected {
    CollKind kind = CollKind::kNone;
    uint64_t bytes = 0;
    const algo::Algorithm* algo = nullptr;
    const char* why = "";
  };
  std::array<Selected, 32> selected_{};
  QuickLock exec_mu_;  // one operation at a time per communicator (common/quick_lock.h)
  std::atomic<int> inflight_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> destroyed_{false};
  uint64_t sym_win_max_bytes_ = 16ull << 30;
  mutable std::mutex err_mu_;
  Status error_;
  std::unique_ptr<FlightRecorder> fr_;  // set up by FinishSetup; its hooks are Record* below
  void RecordEnqueued(const Fingerprint& fp, const algo::OpArgs& args);
  // Descriptors and selection size of a record (Enqueue, Prepare).
  void Complete(algo::OpArgs* args, const std::optional<rt::Allocation>& send_alloc,
                const std::optional<rt::Allocation>& recv_alloc) const;
  // A collective's record, complete, with its fingerprint but the seq: numbered and submitted
  // (`prepared`: its attempt runs through RunPreparedAttempt).
  Status EnqueueCollective(rt::Stream* stream, const algo::OpArgs& args, Fingerprint fp, ThreadState& ts,
                           const PreparedCall* prepared = nullptr);
  // Point-to-point: a single HcclSend/HcclRecv's transfer in args->one (FillTransfer); each
  // transfer numbered in its ordered pair's order, then submitted; the fingerprint's seq is the
  // collective count so far (the "epoch"), not a number of its own.
  static void FillTransfer(algo::OpArgs* args);
  // Whether a call's size lets it run as an inline attempt (HOSTCCL_INLINE_CALLS; a single
  // transfer that fits a mail slot, a collective of at most ShmGroup::kInlineBytes per rank):
  // EnqueueTransfers, EnqueueCollective and Prepare ask the same question.
  bool MayAttempt(const algo::OpArgs& args) const {
    if (!inline_calls_) return false;
    if (IsP2PKind(static_cast<uint8_t>(args.kind))) return !args.items && args.one.bytes() <= net::MailSlot::kInline;
    return args.selection_bytes <= net::ShmGroup::kInlineBytes;
  }
  // `prepared`: a prepared transfer whose attempt runs through RunPreparedAttempt.
  Status EnqueueTransfers(rt::Stream* stream, algo::OpArgs& args, std::span<algo::P2PItem> items, ThreadState& ts,
                          const PreparedCall* prepared = nullptr);
};

// The hardware profile's rule (core/profiles.h) for operator `k` called on `comm`: its profile and
// shape from its creation; without a live communicator (nullptr) the current HOSTCCL_SOC and a
// one-rank shape.
Status CheckCommProfile(const Communicator* comm, CollKind k, DataType t, RedOp op);

// Handle registry for the C API.
void* RegisterComm(std::shared_ptr<Communicator> comm);
std::shared_ptr<Communicator> LookupComm(void* handle);
// The same answer for one API call on this thread, without touching a reference count: the
// thread keeps it (a strong reference) until its next lookup of another handle, a change of the
// registry, or its own HcclCommDestroy of that handle, so the pointer stays valid for the whole
// call even if another thread destroys the handle meanwhile. nullptr for an unknown handle.
// `ts`: the calling thread's block (common/thread_state.h), which keeps the answer.
// Every call looks up its communicator: no lock, no tree walk and no reference count while the
// registry is unchanged (the thread's block holds the last answer; the slow path refills it).
extern std::atomic<uint64_t> g_reg_generation;  // communicator.cc's registry, bumped under its lock
Communicator* LookupCommForCallSlow(void* handle, ThreadState& ts);
inline Communicator* LookupCommForCall(void* handle, ThreadState& ts) {
  const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  if (h != 0 && h == ts.comm_handle && ts.comm_generation == g_reg_generation.load(std::memory_order_acquire))
    return static_cast<Communicator*>(ts.comm);
  return LookupCommForCallSlow(handle, ts);
}
inline Communicator* LookupCommForCall(void* handle) { return LookupCommForCall(handle, ThisThread()); }
// The rank a destroyed communicator's handle had (-1 when the handle never was a communicator), so
// a call on it can still name the rank.
int DestroyedCommRank(void* handle);
std::shared_ptr<Communicator> UnregisterComm(void* handle);
void* FindCommHandleByName(const std::string& name);

// Connect timeout for creation and exec timeout resolution, shared with the api layer.
int64_t ResolveExecTimeoutMs(int64_t config_seconds);

}  // namespace hostccl::core
