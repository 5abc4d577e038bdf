// hostccl.torch's C++ half: a c10d::ProcessGroup (torch 1.13) whose every operation is one call of
// hostccl's public HCCL API on the tensor's own memory.
//
// Contract
//  - Creation (all ranks): rank 0 calls HcclGetRootInfo and sets its bytes under "hostccl/root"
//    in the store torch hands the creator (already prefixed per group); the others get them;
//    every rank calls HcclCommInitRootInfoConfig with hcclExecTimeOut = the group's timeout
//    (seconds, rounded up; HOSTCCL_EXEC_TIMEOUT_MS still overrides, as for any communicator).
//    The thread's device is LOCAL_RANK (else the rank) modulo the emulated device count; every
//    thread that issues an operation gets it set once.
//  - One stream per group; operations are issued in program order under a mutex (DDP issues from
//    autograd threads).
//  - send/recv/isend/irecv are deferred: they collect into a pending batch that is issued as one
//    HcclBatchSendRecv at the first wait() on any of them, before the next collective, or when a
//    second transfer in the same direction with the same peer joins (HCCL batches take one per
//    direction and peer). So isend/irecv in both directions (a ring, batch_isend_irecv) progress
//    together; a lone HcclSend would wait for its Recv and two ranks sending to each other first
//    would wait for each other.
//  - An operation enqueues its HCCL call and returns a Work holding its tensors. Work::wait()
//    synchronizes the stream, then asks HcclGetCommAsyncError (a stream reports only its first
//    failure): on failure it raises with hostccl's message (aclGetRecentErrMsg). After success it
//    runs the op's epilogue: copy back into non-contiguous tensors, AVG's divide, splitting a
//    staging buffer into a tensor list; it runs once, whichever thread waits first (the others
//    wait for it). getFuture() returns at once: the group's completer thread (started by the first
//    getFuture) waits for the works in the order their futures were asked for and completes each
//    future (value: the output tensors) or sets its error, so callbacks chained with then() (DDP's
//    comm hooks) run there and the caller's thread goes on meanwhile.
//  - Zero copies: all_reduce, broadcast, reduce, barrier, send/recv, _allgather_base,
//    _reduce_scatter_base and alltoall_base run on contiguous tensors in place. Tensor-list forms
//    (allgather, reduce_scatter, alltoall, gather, scatter) stage through one flat tensor; a
//    non-contiguous tensor goes through a contiguous copy.
//  - AVG = SUM, then divide by the group size (floating dtypes only). BAND/BOR/BXOR/PREMUL_SUM are
//    rejected. bool moves as uint8 and cannot be reduced.
//  - gather is an AlltoAllV in which every rank sends only to the root.
//  - Example: 2 ranks, all_reduce([1., 2.]) on rank 0 and ([10., 20.]) on rank 1 -> HcclAllReduce
//    (p, p, 2, FP32, SUM) on each -> [11., 22.] on both after wait().
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hccl/hccl_comm.h>
#include <hostccl/hostccl.h>
#include <pybind11/chrono.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/python.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hostccl_torch {

using c10d::OpType;

std::string RecentError() {
  const char* m = aclGetRecentErrMsg();
  return m && *m ? std::string(m) : std::string("(no message)");
}

HcclDataType ToHccl(const at::Tensor& t, bool reduce) {
  switch (t.scalar_type()) {
    case at::kFloat: return HCCL_DATA_TYPE_FP32;
    case at::kHalf: return HCCL_DATA_TYPE_FP16;
    case at::kBFloat16: return HCCL_DATA_TYPE_BFP16;
    case at::kDouble: return HCCL_DATA_TYPE_FP64;
    case at::kChar: return HCCL_DATA_TYPE_INT8;
    case at::kShort: return HCCL_DATA_TYPE_INT16;
    case at::kInt: return HCCL_DATA_TYPE_INT32;
    case at::kLong: return HCCL_DATA_TYPE_INT64;
    case at::kByte: return HCCL_DATA_TYPE_UINT8;
    case at::kBool:
      TORCH_CHECK(!reduce, "hostccl: bool tensors can be moved but not reduced");
      return HCCL_DATA_TYPE_UINT8;
    default:
      TORCH_CHECK(false, "hostccl: dtype ", t.scalar_type(),
                  " is not supported (float32, float16, bfloat16, float64, int8, int16, int32, "
                  "int64, uint8, bool for data movement)");
  }
}

// The HCCL op of a torch ReduceOp; *avg says "divide by the size afterwards".
HcclReduceOp ToHccl(const c10d::ReduceOp& op, const at::Tensor& t, bool* avg) {
  *avg = false;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return HCCL_REDUCE_SUM;
    case c10d::ReduceOp::PRODUCT: return HCCL_REDUCE_PROD;
    case c10d::ReduceOp::MIN: return HCCL_REDUCE_MIN;
    case c10d::ReduceOp::MAX: return HCCL_REDUCE_MAX;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(t.scalar_type()),
                  "hostccl: ReduceOp.AVG needs a floating dtype, got ", t.scalar_type());
      *avg = true;
      return HCCL_REDUCE_SUM;
    default:
      TORCH_CHECK(false, "hostccl: ReduceOp ", static_cast<int>(op.op_),
                  " is not supported (SUM, PRODUCT, MIN, MAX, AVG)");
  }
}

void CheckCpu(const at::Tensor& t) {
  TORCH_CHECK(t.device().is_cpu(), "hostccl: tensors must be on the CPU, got ", t.device());
  TORCH_CHECK(!t.is_sparse(), "hostccl: sparse tensors are not supported");
}

const at::Tensor& Single(const std::vector<at::Tensor>& ts, const char* what) {
  TORCH_CHECK(ts.size() == 1, "hostccl: ", what, " takes exactly one tensor, got ", ts.size());
  CheckCpu(ts[0]);
  return ts[0];
}

// A contiguous view of t: t itself, or a copy whose contents go back to t in the epilogue.
struct Contig {
  at::Tensor orig, buf;
  explicit Contig(const at::Tensor& t) : orig(t), buf(t.is_contiguous() ? t : t.contiguous()) {}
  bool copied() const { return !buf.is_same(orig); }
  void CopyBack() const {
    if (copied()) orig.copy_(buf);
  }
};

class ProcessGroupHostccl;

// The CPU allocator the backend installs at its first group (unless disabled): allocations of at
// least min_bytes come from aclrtMalloc (memfd-backed memory the other ranks of this host map), so
// the shared-memory algorithms work on tensors in place instead of staging them; smaller ones, and
// any aclrtMalloc failure, go to torch's own CPU allocator. Fork caveat: aclrtMalloc memory is a
// shared mapping, so a forked child's writes to a large tensor it inherited reach the parent.
class SharedCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    size_t min = min_bytes_.load(std::memory_order_relaxed);
    if (min == 0 || n < min) return base_->allocate(n);
    thread_local int32_t tls_device = -1;
    if (tls_device != device_) {
      if (aclrtSetDevice(device_) != ACL_SUCCESS) return base_->allocate(n);
      tls_device = device_;
    }
    void* p = nullptr;
    if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS || p == nullptr)
      return base_->allocate(n);
    return {p, p, &Free, c10::Device(c10::DeviceType::CPU)};
  }
  static void Free(void* p) { aclrtFree(p); }

  // Installs (min_bytes > 0) or removes (0) the allocator; the device is the one aclrtMalloc uses.
  static void Configure(size_t min_bytes, int32_t device) {
    static SharedCpuAllocator* self = new SharedCpuAllocator();  // lives to the end of the process
    std::lock_guard<std::mutex> lock(self->mu_);
    if (!self->base_) self->base_ = c10::GetAllocator(c10::DeviceType::CPU);
    if (device >= 0) self->device_ = device;
    self->min_bytes_.store(min_bytes);
    c10::SetAllocator(c10::DeviceType::CPU, min_bytes ? static_cast<c10::Allocator*>(self) : self->base_);
  }

 private:
  c10::Allocator* base_ = nullptr;
  int32_t device_ = 0;
  std::atomic<size_t> min_bytes_{0};
  std::mutex mu_;
};

// -1: not chosen yet (the first group installs the default); 0: off; else the threshold.
std::atomic<int64_t> g_alloc_min_bytes{-1};
constexpr int64_t kDefaultAllocMinBytes = int64_t{1} << 20;

// Deferred send/recv items of one HcclBatchSendRecv (see the contract).
struct P2PBatch {
  std::vector<HcclSendRecvItem> items;
  std::vector<at::Tensor> keep;
  bool issued = false;
};

class WorkHostccl : public c10d::Work {
 public:
  WorkHostccl(ProcessGroupHostccl* pg, aclrtStream stream, OpType type, int rank,
              std::vector<at::Tensor> keep, std::vector<at::Tensor> outputs,
              std::function<void()> epilogue, std::shared_ptr<P2PBatch> batch = nullptr)
      : c10d::Work(rank, type), pg_(pg), stream_(stream), keep_(std::move(keep)),
        outputs_(std::move(outputs)), epilogue_(std::move(epilogue)), batch_(std::move(batch)) {}

  bool isCompleted() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_;
  }
  bool isSuccess() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_ && !exception_;
  }
  std::vector<at::Tensor> result() override { return outputs_; }
  bool wait(std::chrono::milliseconds timeout) override;
  void synchronize() override { wait(kNoTimeout); }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  // The completer's end of getFuture(): waits for this work and completes its future.
  void CompleteFuture();

 private:
  ProcessGroupHostccl* pg_;
  aclrtStream stream_;
  std::vector<at::Tensor> keep_;     // alive until the stream is done with them
  std::vector<at::Tensor> outputs_;  // what result() and the future give
  std::function<void()> epilogue_;
  std::shared_ptr<P2PBatch> batch_;  // send/recv: issued at the first wait when still pending
  bool finishing_ = false;           // a thread runs the synchronize and epilogue (under mutex_)
  c10::intrusive_ptr<c10::ivalue::Future> future_;  // made by the first getFuture (under mutex_)
};

class ProcessGroupHostccl : public c10d::ProcessGroup {
 public:
  ProcessGroupHostccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                      std::chrono::milliseconds timeout)
      : c10d::ProcessGroup(rank, size), timeout_(timeout) {
    uint32_t count = 0;
    if (aclrtGetDeviceCount(&count) != ACL_SUCCESS || count == 0) count = 1;
    const char* lr = std::getenv("LOCAL_RANK");
    int local = lr && *lr ? std::atoi(lr) : rank;
    device_ = static_cast<int32_t>(static_cast<uint32_t>(local < 0 ? 0 : local) % count);
    EnsureDevice();
    int64_t expected = -1;
    if (g_alloc_min_bytes.compare_exchange_strong(expected, kDefaultAllocMinBytes))
      SharedCpuAllocator::Configure(static_cast<size_t>(kDefaultAllocMinBytes), device_);
    HcclRootInfo info;
    const std::string key = "hostccl/root";
    if (rank == 0) {
      HcclResult r = HcclGetRootInfo(&info);
      TORCH_CHECK(r == HCCL_SUCCESS, "hostccl: HcclGetRootInfo failed (", static_cast<int>(r),
                  "): ", RecentError());
      const auto* p = reinterpret_cast<const uint8_t*>(&info);
      store->set(key, std::vector<uint8_t>(p, p + sizeof(info)));
    } else {
      std::vector<uint8_t> bytes = store->get(key);  // waits up to the store's timeout
      TORCH_CHECK(bytes.size() == sizeof(info), "hostccl: the store's root info has ",
                  bytes.size(), " bytes, expected ", sizeof(info));
      std::memcpy(&info, bytes.data(), sizeof(info));
    }
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    if (timeout.count() > 0) {
      int64_t s = (timeout.count() + 999) / 1000;
      cfg.hcclExecTimeOut = static_cast<int32_t>(std::min<int64_t>(s, 2147483647));
    }
    HcclResult r = HcclCommInitRootInfoConfig(static_cast<uint32_t>(size), &info,
                                              static_cast<uint32_t>(rank), &cfg, &comm_);
    TORCH_CHECK(r == HCCL_SUCCESS, "hostccl: HcclCommInitRootInfoConfig (rank ", rank, " of ", size,
                ") failed (", static_cast<int>(r), "): ", RecentError());
    // CPU tensors below the shared allocator's threshold live in host memory: accept host
    // buffers whatever HOSTCCL_FIDELITY says (docs/python.md).
    r = HostcclCommAllowHostBuffers(comm_);
    TORCH_CHECK(r == HCCL_SUCCESS, "hostccl: HostcclCommAllowHostBuffers failed: ", RecentError());
    for (aclrtStream* s : {&coll_}) {
      TORCH_CHECK(aclrtCreateStream(s) == ACL_SUCCESS, "hostccl: aclrtCreateStream failed: ",
                  RecentError());
    }
  }

  ~ProcessGroupHostccl() override {
    {
      std::lock_guard<std::mutex> lock(cq_mu_);
      cq_stop_ = true;
    }
    cq_cv_.notify_all();
    if (completer_.joinable()) completer_.join();  // completes every future asked for so far
    try {
      FlushP2P();
    } catch (...) {
    }
    for (aclrtStream s : {coll_}) {
      if (s) {
        aclrtSynchronizeStream(s);
        aclrtDestroyStream(s);
      }
    }
    if (comm_) HcclCommDestroy(comm_);
  }

  const std::string getBackendName() const override { return "hostccl"; }

  static c10::intrusive_ptr<c10d::ProcessGroup> Create(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
      const std::chrono::duration<float>& timeout) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
    return c10::make_intrusive<ProcessGroupHostccl>(store, rank, size, ms);
  }

  // The failure a wait() saw: thrown again by every later wait (the communicator stays failed).
  std::string Failure(OpType op, aclError rc) {
    std::lock_guard<std::mutex> lock(err_mu_);
    HcclResult async = HCCL_SUCCESS;
    HcclGetCommAsyncError(comm_, &async);
    if (rc == ACL_SUCCESS && async == HCCL_SUCCESS) return "";
    if (first_error_.empty()) {
      first_error_ = RecentError();
      if (first_error_ == "(no message)")
        first_error_ = "communicator failed (HCCL code " + std::to_string(async) + ")";
    }
 return std::string("hostccl: ") + c10d::opTypeToString(op) + " failed on rank " + std::to_string(getRank()) + ": " +
           first_error_;
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override {
    Contig c(Single(tensors, "broadcast"));
    HcclDataType dt = ToHccl(c.buf, false);
    CheckRoot(opts.rootRank);
    return Issue(OpType::BROADCAST, "HcclBroadcast", coll_, {c.buf}, tensors, [c] { c.CopyBack(); },
                 [&](aclrtStream s) {
                   return HcclBroadcast(c.buf.data_ptr(), c.buf.numel(), dt,
                                        static_cast<uint32_t>(opts.rootRank), comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override {
    Contig c(Single(tensors, "allreduce"));
    HcclDataType dt = ToHccl(c.buf, true);
    bool avg = false;
    HcclReduceOp op = ToHccl(opts.reduceOp, c.buf, &avg);
    int size = getSize();
    return Issue(OpType::ALLREDUCE, "HcclAllReduce", coll_, {c.buf}, tensors,
                 [c, avg, size] {
                   if (avg) c.buf.div_(size);
                   c.CopyBack();
                 },
                 [&](aclrtStream s) {
                   void* p = c.buf.data_ptr();
                   return HcclAllReduce(p, p, c.buf.numel(), dt, op, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override {
    Contig c(Single(tensors, "reduce"));
    HcclDataType dt = ToHccl(c.buf, true);
    bool avg = false;
    HcclReduceOp op = ToHccl(opts.reduceOp, c.buf, &avg);
    CheckRoot(opts.rootRank);
    bool root = opts.rootRank == getRank();
    int size = getSize();
    return Issue(OpType::REDUCE, "HcclReduce", coll_, {c.buf}, tensors,
                 [c, avg, root, size] {
                   if (!root) return;  // HcclReduce writes only the root's buffer
                   if (avg) c.buf.div_(size);
                   c.CopyBack();
                 },
                 [&](aclrtStream s) {
                   void* p = c.buf.data_ptr();
                   return HcclReduce(p, p, c.buf.numel(), dt, op,
                                     static_cast<uint32_t>(opts.rootRank), comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& out, at::Tensor& in,
                                                 const c10d::AllgatherOptions&) override {
    CheckCpu(out);
    CheckCpu(in);
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "hostccl: all_gather_into_tensor: dtypes differ");
    TORCH_CHECK(out.numel() == in.numel() * getSize(), "hostccl: all_gather_into_tensor: output has ",
                out.numel(), " elements, expected ", in.numel() * getSize());
    Contig ci(in), co(out);
    HcclDataType dt = ToHccl(ci.buf, false);
    return Issue(OpType::_ALLGATHER_BASE, "HcclAllGather", coll_, {ci.buf, co.buf}, {out},
                 [co] { co.CopyBack(); },
                 [&](aclrtStream s) {
                   return HcclAllGather(ci.buf.data_ptr(), co.buf.data_ptr(), ci.buf.numel(), dt,
                                        comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outs,
                                           std::vector<at::Tensor>& ins,
                                           const c10d::AllgatherOptions&) override {
    Contig ci(Single(ins, "allgather"));
    TORCH_CHECK(outs.size() == 1 && outs[0].size() == static_cast<size_t>(getSize()),
                "hostccl: allgather needs one output list of ", getSize(), " tensors");
    for (const auto& o : outs[0]) CheckSame(o, ci.buf, "allgather", true);
    HcclDataType dt = ToHccl(ci.buf, false);
    at::Tensor flat = at::empty({getSize() * ci.buf.numel()}, ci.buf.options());
    std::vector<at::Tensor> list = outs[0];
    int64_t n = ci.buf.numel();
    return Issue(OpType::ALLGATHER, "HcclAllGather", coll_, {ci.buf, flat}, list,
                 [flat, list, n] {
                   for (size_t i = 0; i < list.size(); ++i)
                     list[i].copy_(flat.narrow(0, i * n, n).view(list[i].sizes()));
                 },
                 [&](aclrtStream s) {
                   return HcclAllGather(ci.buf.data_ptr(), flat.data_ptr(), n, dt, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                                                      const c10d::ReduceScatterOptions& opts) override {
    CheckCpu(out);
    CheckCpu(in);
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "hostccl: reduce_scatter_tensor: dtypes differ");
    TORCH_CHECK(in.numel() == out.numel() * getSize(), "hostccl: reduce_scatter_tensor: input has ",
                in.numel(), " elements, expected ", out.numel() * getSize());
    Contig ci(in), co(out);
    HcclDataType dt = ToHccl(ci.buf, true);
    bool avg = false;
    HcclReduceOp op = ToHccl(opts.reduceOp, ci.buf, &avg);
    int size = getSize();
    return Issue(OpType::_REDUCE_SCATTER_BASE, "HcclReduceScatter", coll_, {ci.buf, co.buf}, {out},
                 [co, avg, size] {
                   if (avg) co.buf.div_(size);
                   co.CopyBack();
                 },
                 [&](aclrtStream s) {
                   return HcclReduceScatter(ci.buf.data_ptr(), co.buf.data_ptr(), co.buf.numel(),
                                            dt, op, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outs,
                                                std::vector<std::vector<at::Tensor>>& ins,
                                                const c10d::ReduceScatterOptions& opts) override {
    Contig co(Single(outs, "reduce_scatter"));
    TORCH_CHECK(ins.size() == 1 && ins[0].size() == static_cast<size_t>(getSize()),
                "hostccl: reduce_scatter needs one input list of ", getSize(), " tensors");
    for (const auto& t : ins[0]) CheckSame(t, co.buf, "reduce_scatter", true);
    HcclDataType dt = ToHccl(co.buf, true);
    bool avg = false;
    HcclReduceOp op = ToHccl(opts.reduceOp, co.buf, &avg);
    std::vector<at::Tensor> flat_parts;
    for (const auto& t : ins[0]) flat_parts.push_back(t.reshape({-1}));
    at::Tensor flat = at::cat(flat_parts);
    int size = getSize();
    return Issue(OpType::REDUCE_SCATTER, "HcclReduceScatter", coll_, {flat, co.buf}, outs,
                 [co, avg, size] {
                   if (avg) co.buf.div_(size);
                   co.CopyBack();
                 },
                 [&](aclrtStream s) {
                   return HcclReduceScatter(flat.data_ptr(), co.buf.data_ptr(), co.buf.numel(), dt,
                                            op, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& out, at::Tensor& in,
                                               std::vector<int64_t>& out_splits,
                                               std::vector<int64_t>& in_splits,
                                               const c10d::AllToAllOptions&) override {
    CheckCpu(out);
    CheckCpu(in);
    TORCH_CHECK(out.scalar_type() == in.scalar_type(), "hostccl: all_to_all_single: dtypes differ");
    Contig ci(in), co(out);
    HcclDataType dt = ToHccl(ci.buf, false);
    const size_t n = static_cast<size_t>(getSize());
    if (out_splits.empty() && in_splits.empty()) {
      TORCH_CHECK(in.numel() % getSize() == 0 && out.numel() == in.numel(),
                  "hostccl: all_to_all_single without split sizes needs equal input and output "
                  "sizes divisible by the group size (input ", in.numel(), ", output ", out.numel(),
                  ")");
      uint64_t cnt = static_cast<uint64_t>(in.numel() / getSize());
      return Issue(OpType::ALLTOALL_BASE, "HcclAlltoAll", coll_, {ci.buf, co.buf}, {out},
                   [co] { co.CopyBack(); },
                   [&](aclrtStream s) {
                     return HcclAlltoAll(ci.buf.data_ptr(), cnt, dt, co.buf.data_ptr(), cnt, dt,
                                         comm_, s);
                   });
    }
    // Split sizes count rows of dim 0: elements = rows * (numel / size(0)).
    auto counts = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* which,
                      std::vector<uint64_t>* c, std::vector<uint64_t>* d) {
      int64_t rows = t.dim() > 0 ? t.size(0) : 1;
      int64_t row = rows > 0 ? t.numel() / rows : 0;
      c->assign(n, 0);
      d->assign(n, 0);
      if (splits.empty()) {
        TORCH_CHECK(rows % getSize() == 0, "hostccl: all_to_all_single: ", which, " has ", rows,
                    " rows, not divisible by the group size");
        for (size_t i = 0; i < n; ++i) (*c)[i] = static_cast<uint64_t>(rows / getSize() * row);
      } else {
        TORCH_CHECK(splits.size() == n, "hostccl: all_to_all_single: ", which, " split sizes has ",
                    splits.size(), " entries, expected ", n);
        int64_t sum = 0;
        for (size_t i = 0; i < n; ++i) {
          TORCH_CHECK(splits[i] >= 0, "hostccl: all_to_all_single: negative split size");
          (*c)[i] = static_cast<uint64_t>(splits[i] * row);
          sum += splits[i];
        }
        TORCH_CHECK(sum == rows, "hostccl: all_to_all_single: ", which, " split sizes sum to ", sum,
                    ", the tensor has ", rows, " rows");
      }
      uint64_t off = 0;
      for (size_t i = 0; i < n; ++i) {
        (*d)[i] = off;
        off += (*c)[i];
      }
    };
    std::vector<uint64_t> sc, sd, rc, rd;
    counts(ci.buf, in_splits, "input", &sc, &sd);
    counts(co.buf, out_splits, "output", &rc, &rd);
    return Issue(OpType::ALLTOALL_BASE, "HcclAlltoAllV", coll_, {ci.buf, co.buf}, {out},
                 [co] { co.CopyBack(); },
                 [&](aclrtStream s) {
                   return HcclAlltoAllV(ci.buf.data_ptr(), sc.data(), sd.data(), dt,
                                        co.buf.data_ptr(), rc.data(), rd.data(), dt, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outs,
                                          std::vector<at::Tensor>& ins,
                                          const c10d::AllToAllOptions&) override {
    const size_t n = static_cast<size_t>(getSize());
    TORCH_CHECK(outs.size() == n && ins.size() == n, "hostccl: all_to_all needs ", n,
                " input and ", n, " output tensors");
    for (const auto& t : ins) CheckSame(t, ins[0], "all_to_all");
    for (const auto& t : outs) CheckSame(t, ins[0], "all_to_all");
    HcclDataType dt = ToHccl(ins[0], false);
    std::vector<uint64_t> sc(n), sd(n), rc(n), rd(n);
    uint64_t so = 0, ro = 0;
    std::vector<at::Tensor> parts;
    for (size_t i = 0; i < n; ++i) {
      sc[i] = ins[i].numel();
      sd[i] = so;
      so += sc[i];
      rc[i] = outs[i].numel();
      rd[i] = ro;
      ro += rc[i];
      parts.push_back(ins[i].reshape({-1}));
    }
    at::Tensor sflat = at::cat(parts);
    at::Tensor rflat = at::empty({static_cast<int64_t>(ro)}, ins[0].options());
    std::vector<at::Tensor> list = outs;
    return Issue(OpType::ALLTOALL, "HcclAlltoAllV", coll_, {sflat, rflat}, list,
                 [rflat, list, rc, rd] {
                   for (size_t i = 0; i < list.size(); ++i)
                     list[i].copy_(rflat.narrow(0, rd[i], rc[i]).view(list[i].sizes()));
                 },
                 [&](aclrtStream s) {
                   return HcclAlltoAllV(sflat.data_ptr(), sc.data(), sd.data(), dt, rflat.data_ptr(),
                                        rc.data(), rd.data(), dt, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outs,
                                        std::vector<at::Tensor>& ins,
                                        const c10d::GatherOptions& opts) override {
    Contig ci(Single(ins, "gather"));
    CheckRoot(opts.rootRank);
    const size_t n = static_cast<size_t>(getSize());
    bool root = opts.rootRank == getRank();
    if (root) {
      TORCH_CHECK(outs.size() == 1 && outs[0].size() == n, "hostccl: gather needs one output list of ",
                  n, " tensors on the root");
      for (const auto& o : outs[0]) CheckSame(o, ci.buf, "gather", true);
    } else {
      TORCH_CHECK(outs.empty() || (outs.size() == 1 && outs[0].empty()),
                  "hostccl: gather takes output tensors only on the root");
    }
    HcclDataType dt = ToHccl(ci.buf, false);
    uint64_t cnt = ci.buf.numel();
    std::vector<uint64_t> sc(n, 0), sd(n, 0), rc(n, 0), rd(n, 0);
    sc[opts.rootRank] = cnt;
    at::Tensor flat = at::empty({root ? static_cast<int64_t>(n * cnt) : 1}, ci.buf.options());
    if (root) {
      for (size_t i = 0; i < n; ++i) {
        rc[i] = cnt;
        rd[i] = i * cnt;
      }
    }
    std::vector<at::Tensor> list = root ? outs[0] : std::vector<at::Tensor>{};
    return Issue(OpType::GATHER, "HcclAlltoAllV (gather)", coll_, {ci.buf, flat}, list,
                 [flat, list, cnt] {
                   for (size_t i = 0; i < list.size(); ++i)
                     list[i].copy_(flat.narrow(0, i * cnt, cnt).view(list[i].sizes()));
                 },
                 [&](aclrtStream s) {
                   return HcclAlltoAllV(ci.buf.data_ptr(), sc.data(), sd.data(), dt, flat.data_ptr(),
                                        rc.data(), rd.data(), dt, comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outs,
                                         std::vector<std::vector<at::Tensor>>& ins,
                                         const c10d::ScatterOptions& opts) override {
    Contig co(Single(outs, "scatter"));
    CheckRoot(opts.rootRank);
    const size_t n = static_cast<size_t>(getSize());
    bool root = opts.rootRank == getRank();
    at::Tensor flat;
    if (root) {
      TORCH_CHECK(ins.size() == 1 && ins[0].size() == n, "hostccl: scatter needs one input list of ",
                  n, " tensors on the root");
      std::vector<at::Tensor> parts;
      for (const auto& t : ins[0]) {
        CheckSame(t, co.buf, "scatter", true);
        parts.push_back(t.reshape({-1}));
      }
      flat = at::cat(parts);
    } else {
      TORCH_CHECK(ins.empty() || (ins.size() == 1 && ins[0].empty()),
                  "hostccl: scatter takes input tensors only on the root");
    }
    HcclDataType dt = ToHccl(co.buf, false);
    std::vector<at::Tensor> keep{co.buf};
    if (root) keep.push_back(flat);
    return Issue(OpType::SCATTER, "HcclScatter", coll_, keep, outs, [co] { co.CopyBack(); },
                 [&](aclrtStream s) {
                   return HcclScatter(root ? flat.data_ptr() : nullptr, co.buf.data_ptr(),
                                      co.buf.numel(), dt, static_cast<uint32_t>(opts.rootRank),
                                      comm_, s);
                 });
  }

  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int) override {
    return Defer(OpType::SEND, HCCL_SEND, tensors, dst);
  }

  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int) override {
    return Defer(OpType::RECV, HCCL_RECV, tensors, src);
  }

  // Issues the pending batch (if any): at a p2p wait, before a collective, at destruction.
  void FlushP2P() {
    std::lock_guard<std::mutex> lock(issue_mu_);
    FlushLocked();
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions&) override {
    return Issue(OpType::BARRIER, "HcclBarrier", coll_, {}, {}, [] {},
                 [&](aclrtStream s) { return HcclBarrier(comm_, s); });
  }

  HcclComm comm() const { return comm_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // For bench/torch_bench.py: `iters` in-place SUM all-reduces of t straight through the C API
  // (HcclAllReduce + aclrtSynchronizeStream on this group's communicator and stream), the
  // baseline of the backend's per-call overhead. Returns the seconds they took.
  double TimeCApiAllReduce(const at::Tensor& t, int iters) {
    TORCH_CHECK(t.is_contiguous() && t.device().is_cpu(), "hostccl: a contiguous CPU tensor");
    HcclDataType dt = ToHccl(t, true);
    EnsureDevice();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      HcclResult r = HcclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, HCCL_REDUCE_SUM, comm_,
                                   coll_);
      TORCH_CHECK(r == HCCL_SUCCESS && aclrtSynchronizeStream(coll_) == ACL_SUCCESS,
                  "hostccl: C API all-reduce failed: ", RecentError());
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  void EnsureDevice() {
    thread_local int32_t tls_device = -1;
    if (tls_device == device_) return;
    TORCH_CHECK(aclrtSetDevice(device_) == ACL_SUCCESS, "hostccl: aclrtSetDevice(", device_,
                ") failed: ", RecentError());
    tls_device = device_;
  }

  void CheckRoot(int64_t root) const {
    TORCH_CHECK(root >= 0 && root < getSize(), "hostccl: root ", root, " is not a rank of this group (size ",
                getSize(), ")");
  }

  // Same dtype as ref (and, with numel, as many elements).
  static void CheckSame(const at::Tensor& t, const at::Tensor& ref, const char* what,
                        bool numel = false) {
    CheckCpu(t);
    TORCH_CHECK(t.scalar_type() == ref.scalar_type(), "hostccl: ", what, ": tensors have dtypes ",
                t.scalar_type(), " and ", ref.scalar_type());
    TORCH_CHECK(!numel || t.numel() == ref.numel(), "hostccl: ", what, ": a list tensor has ",
                t.numel(), " elements, the single tensor ", ref.numel());
  }

  c10::intrusive_ptr<c10d::Work> Defer(OpType type, HcclSendRecvType dir,
                                       std::vector<at::Tensor>& tensors, int peer) {
    Contig c(Single(tensors, dir == HCCL_SEND ? "send" : "recv"));
    HcclDataType dt = ToHccl(c.buf, false);
    TORCH_CHECK(peer >= 0 && peer < getSize() && peer != getRank(), "hostccl: ",
                dir == HCCL_SEND ? "send to " : "recv from ", peer, " is not another rank of this group");
    std::lock_guard<std::mutex> lock(issue_mu_);
    if (pending_) {
      for (const auto& it : pending_->items)
        if (it.sendRecvType == dir && it.remoteRank == static_cast<uint32_t>(peer)) {
          FlushLocked();
          break;
        }
    }
    if (!pending_) pending_ = std::make_shared<P2PBatch>();
    pending_->items.push_back(HcclSendRecvItem{dir, c.buf.data_ptr(),
                                               static_cast<uint64_t>(c.buf.numel()), dt,
                                               static_cast<uint32_t>(peer)});
    pending_->keep.push_back(c.buf);
    std::function<void()> epi = [] {};
    if (dir == HCCL_RECV) epi = [c] { c.CopyBack(); };
    return c10::make_intrusive<WorkHostccl>(this, coll_, type, getRank(), std::vector<at::Tensor>{},
                                            tensors, std::move(epi), pending_);
  }

  void FlushLocked() {
    if (!pending_) return;
    std::shared_ptr<P2PBatch> b = std::move(pending_);
    pending_.reset();
    EnsureDevice();
    b->issued = true;
    HcclResult r = HcclBatchSendRecv(b->items.data(), static_cast<uint32_t>(b->items.size()),
                                     comm_, coll_);
    TORCH_CHECK(r == HCCL_SUCCESS, "hostccl: HcclBatchSendRecv (", b->items.size(),
                " send/recv items) failed on rank ", getRank(), " (HCCL code ",
                static_cast<int>(r), "): ", RecentError());
  }

  template <typename Call>
  c10::intrusive_ptr<c10d::Work> Issue(OpType type, const char* name, aclrtStream stream,
                                       std::vector<at::Tensor> keep,
                                       std::vector<at::Tensor> outputs,
                                       std::function<void()> epilogue, Call&& call) {
    HcclResult r;
    {
      std::lock_guard<std::mutex> lock(issue_mu_);
      FlushLocked();
      EnsureDevice();
      r = call(stream);
    }
    if (r != HCCL_SUCCESS) {
      std::string msg = RecentError();
      TORCH_CHECK(false, "hostccl: ", name, " failed on rank ", getRank(), " (HCCL code ",
                  static_cast<int>(r), "): ", msg);
    }
    return c10::make_intrusive<WorkHostccl>(this, stream, type, getRank(), std::move(keep),
                                            std::move(outputs), std::move(epilogue));
  }

  // Hands a work whose future was asked for to the completer thread (started on first use).
  void QueueFuture(c10::intrusive_ptr<WorkHostccl> work) {
    {
      std::lock_guard<std::mutex> lock(cq_mu_);
      cq_.push_back(std::move(work));
      if (!completer_.joinable()) completer_ = std::thread([this] { CompleterLoop(); });
    }
    cq_cv_.notify_one();
  }
  void CompleterLoop() {
    EnsureDevice();
    std::unique_lock<std::mutex> lock(cq_mu_);
    for (;;) {
      cq_cv_.wait(lock, [this] { return cq_stop_ || !cq_.empty(); });
      if (cq_.empty()) return;  // stopping, nothing left
      c10::intrusive_ptr<WorkHostccl> work = std::move(cq_.front());
      cq_.pop_front();
      lock.unlock();
      work->CompleteFuture();
      work.reset();
      lock.lock();
    }
  }

  friend class WorkHostccl;
  std::chrono::milliseconds timeout_;
  int32_t device_ = 0;
  HcclComm comm_ = nullptr;
  aclrtStream coll_ = nullptr;
  std::mutex issue_mu_, err_mu_;
  std::string first_error_;
  std::shared_ptr<P2PBatch> pending_;  // deferred send/recv items, guarded by issue_mu_
  std::mutex cq_mu_;                   // the completer's queue
  std::condition_variable cq_cv_;
  std::deque<c10::intrusive_ptr<WorkHostccl>> cq_;
  bool cq_stop_ = false;
  std::thread completer_;
};

bool WorkHostccl::wait(std::chrono::milliseconds timeout) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (finishing_ && !completed_) {
      // Another thread (the completer, or a second waiter) synchronizes: wait for its verdict.
      if (timeout.count() > 0) {
        if (!cv_.wait_for(lock, timeout, [this] { return completed_; }))
          throw std::runtime_error("hostccl: " + std::string(c10d::opTypeToString(opType_)) +
                                   " timed out after " + std::to_string(timeout.count()) + " ms");
      } else {
        cv_.wait(lock, [this] { return completed_; });
      }
    }
    if (completed_) {
      if (exception_) std::rethrow_exception(exception_);
      return true;
    }
    finishing_ = true;
  }
  if (batch_ && !batch_->issued) pg_->FlushP2P();
  aclError rc = timeout.count() > 0
                    ? aclrtSynchronizeStreamWithTimeout(
                          stream_, static_cast<int32_t>(std::min<int64_t>(timeout.count(), INT32_MAX)))
                    : aclrtSynchronizeStream(stream_);
  std::string failure = pg_->Failure(opType_, rc);
  std::exception_ptr ex;
  if (failure.empty()) {
    try {
      epilogue_();
    } catch (...) {
      ex = std::current_exception();
    }
  } else {
    ex = std::make_exception_ptr(std::runtime_error(failure));
  }
  keep_.clear();
  batch_.reset();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    exception_ = ex;
  }
  cv_.notify_all();
  if (ex) std::rethrow_exception(ex);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> WorkHostccl::getFuture() {
  bool queue = false;
  c10::intrusive_ptr<c10::ivalue::Future> fut;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!future_) {
      future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
      queue = true;
    }
    fut = future_;
  }
  if (queue) pg_->QueueFuture(c10::intrusive_ptr<WorkHostccl>::reclaim_copy(this));
  return fut;
}

void WorkHostccl::CompleteFuture() {
  c10::intrusive_ptr<c10::ivalue::Future> fut;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fut = future_;
  }
  try {
    wait(kNoTimeout);
    fut->markCompleted(c10::IValue(outputs_));
  } catch (...) {
    fut->setError(std::current_exception());
  }
}

}  // namespace hostccl_torch

PYBIND11_MODULE(_c10d, m) {
  namespace py = pybind11;
  m.doc() = "hostccl's torch.distributed backend (c10d ProcessGroup over the HCCL C API)";
  py::object pg_base = py::module_::import("torch._C._distributed_c10d").attr("ProcessGroup");
  (void)pg_base;  // the base class must be registered before the subclass
  py::class_<hostccl_torch::ProcessGroupHostccl, c10d::ProcessGroup,
             c10::intrusive_ptr<hostccl_torch::ProcessGroupHostccl>>(m, "ProcessGroupHostccl")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       const std::chrono::duration<float>& timeout) {
             return c10::make_intrusive<hostccl_torch::ProcessGroupHostccl>(
                 store, rank, size,
                 std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());
  m.def("_time_c_api_all_reduce",
        [](const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const at::Tensor& t, int iters) {
          auto* h = dynamic_cast<hostccl_torch::ProcessGroupHostccl*>(pg.get());
          TORCH_CHECK(h, "hostccl: not a hostccl process group");
          return h->TimeCApiAllReduce(t, iters);
        },
        py::arg("pg"), py::arg("tensor"), py::arg("iters"), py::call_guard<py::gil_scoped_release>());
  m.def("set_shared_allocator",
        [](int64_t min_bytes) {
          TORCH_CHECK(min_bytes >= 0, "hostccl: min_bytes must be >= 0");
          hostccl_torch::g_alloc_min_bytes.store(min_bytes);
          uint32_t count = 0;
          if (aclrtGetDeviceCount(&count) != ACL_SUCCESS || count == 0) count = 1;
          const char* lr = std::getenv("LOCAL_RANK");
          int32_t dev = static_cast<int32_t>(static_cast<uint32_t>(lr && *lr ? std::atoi(lr) : 0) % count);
          hostccl_torch::SharedCpuAllocator::Configure(static_cast<size_t>(min_bytes), dev);
        },
        py::arg("min_bytes"));
  m.def("shared_allocator_min_bytes", [] { return hostccl_torch::g_alloc_min_bytes.load(); });
  m.def("create_process_group", &hostccl_torch::ProcessGroupHostccl::Create, py::arg("store"),
        py::arg("rank"), py::arg("size"), py::arg("timeout"),
        py::call_guard<py::gil_scoped_release>());
}
