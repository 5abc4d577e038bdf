#include "api/arg_check.h"

#include "common/dtype.h"
#include "common/log.h"
#include "core/profiles.h"

namespace hostccl::api {
namespace {

constexpr uint64_t kMaxCount = 0x7FFFFFFFFull;  // HCCL's SYS_MAX_COUNT

// The "count is in elements" check for memory that came from aclrtMalloc.
Status CheckDeviceSize(const char* arg, const void* p, const std::optional<rt::Allocation>& alloc,
                       uint64_t count, int dtype) {
  if (!alloc) return Status::Ok();
  const uint64_t es = DataTypeSize(dtype);
  const uint64_t need = count * es;
  const uint64_t offset = static_cast<uint64_t>(static_cast<const char*>(p) - static_cast<const char*>(alloc->base));
  const uint64_t avail = offset >= alloc->requested ? 0 : alloc->requested - offset;
  if (need <= avail) return Status::Ok();
  return MakeStatus(Code::kPara,
                    "%s: count %llu x %s = %llu bytes, but the device buffer holds %llu bytes%s; count is a "
                    "number of elements, not bytes",
                    arg, static_cast<unsigned long long>(count), DataTypeName(dtype),
                    static_cast<unsigned long long>(need), static_cast<unsigned long long>(avail),
                    offset ? " from that address" : "");
}

}  // namespace

Status Reject(const char* fn, int rank, Status st) {
  // Without a live communicator the rank is the one this thread runs as, when it is known.
  if (rank < 0) rank = LogRank();
  std::string r = rank >= 0 ? std::to_string(rank) : "?";
  const char* ei = EiCode(st);
  std::string line = StrFormat("%s%s%s(rank %s): %s", ei ? ei : "", ei ? ": " : "", fn, r.c_str(), st.message().c_str());
  HLOG_ERROR(kCall, "%s", line.c_str());
  rt::SetRecentError(line);
  st.MarkLogged();
  return st;
}

namespace {

// Elements of a buffer by its rule (kV is the operator's own business).
uint64_t Elems(BufRule rule, uint64_t count, int n) {
  switch (rule) {
    case BufRule::kCount:
    case BufRule::kSame: return count;
    case BufRule::kNCount: return count * static_cast<uint64_t>(n);
    default: return 0;
  }
}

}  // namespace

algo::OpArgs ToArgs(const OpCall& c) {
  algo::OpArgs a;
  a.kind = c.kind;
  a.send = c.send;
  a.recv = c.recv;
  a.count = c.count;
  a.dtype = static_cast<DataType>(c.dtype);
  a.op = static_cast<RedOp>(c.op);  // enters the fingerprint only for reductions (the row says)
  a.root = static_cast<int>(c.root);
  return a;
}

Status CheckOp(const OpCall& c, Checked* out) {
  const OpInfo& o = *FindOp(c.kind);
  const char* fn = o.api;
  *out = Checked();
  // 1. count == 0: success, nothing else checked.
  if (c.count == 0) {
    out->done = true;
    return Status::Ok();
  }
  std::shared_ptr<core::Communicator> comm = c.comm ? core::LookupComm(c.comm) : nullptr;
  const int rank = comm ? comm->rank() : c.comm ? core::DestroyedCommRank(c.comm) : -1;
  const bool one_buffer = o.recv == BufRule::kSame;
  // 2. null pointers.
  if (c.comm == nullptr) return Reject(fn, rank, Status(Code::kPtr, "comm is NULL"));
  if (o.send != BufRule::kNone && c.send == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, one_buffer ? "buf is NULL" : "sendBuf is NULL"));
  if (o.recv != BufRule::kNone && !one_buffer && c.recv == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, o.root == RootRule::kRoot
                                                   ? "recvBuf is NULL (required on every rank, root or not)"
                                                   : "recvBuf is NULL"));
  if (c.stream == nullptr) return Reject(fn, rank, Status(Code::kPtr, "stream is NULL"));
  // 3. count range.
  const uint64_t es = DataTypeSize(c.dtype);
  if (c.count > kMaxCount)
    return Reject(fn, rank, MakeStatus(Code::kPara, "count %llu > maximum %llu",
                                       static_cast<unsigned long long>(c.count),
                                       static_cast<unsigned long long>(kMaxCount)));
  if (es != 0 && c.count > UINT64_MAX / es)
    return Reject(fn, rank, MakeStatus(Code::kPara, "count %llu x %zu bytes overflows",
                                       static_cast<unsigned long long>(c.count), static_cast<size_t>(es)));
  // 4-5. dtype and op.
  if (o.reduces && !IsReducible(c.dtype))
    return Reject(fn, rank, MakeStatus(Code::kNotSupport,
                                       "dataType %d (%s) is not reducible; expected one of int8 int16 int32 "
                                       "int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16",
                                       c.dtype, DataTypeName(c.dtype)));
  if (!o.reduces && es == 0)
    return Reject(fn, rank, MakeStatus(Code::kNotSupport, "dataType %d is not a known HcclDataType", c.dtype));
  if (o.reduces && !IsValidRedOp(c.op))
    return Reject(fn, rank, MakeStatus(Code::kNotSupport, "op %d is not one of sum(0) prod(1) max(2) min(3)", c.op));
  // 6. hardware profile.
  // A live communicator read HOSTCCL_SOC when it was created; otherwise read it now.
  Status prof = core::CheckProfile(comm ? comm->profile() : core::ActiveProfile(), c.kind,
                                   static_cast<DataType>(c.dtype),
                                   o.reduces ? static_cast<RedOp>(c.op) : RedOp::kSum, comm && comm->multi_node());
  if (!prof.ok()) return Reject(fn, rank, prof);
  // 7. root range (needs a live communicator).
  if (!comm)
    return Reject(fn, rank, Status(Code::kPara, "comm is not a live communicator (destroyed or never created)"));
  if (o.root != RootRule::kNoRoot && c.root >= static_cast<uint32_t>(comm->size()))
    return Reject(fn, rank, MakeStatus(Code::kPara, "%s %u >= rankSize %d", o.root == RootRule::kRoot ? "root" : "peer",
                                       c.root, comm->size()));
  // 8. hostccl additions: alignment, device-buffer size, overlap, communicator state.
  const bool has_send = o.send != BufRule::kNone, has_recv = o.recv != BufRule::kNone && !one_buffer;
  if (has_send && reinterpret_cast<uintptr_t>(c.send) % es != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "%s %p is not aligned to %zu bytes (the size of %s)",
                                       one_buffer ? "buf" : "sendBuf", c.send, static_cast<size_t>(es),
                                       DataTypeName(c.dtype)));
  if (has_recv && reinterpret_cast<uintptr_t>(c.recv) % es != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "recvBuf %p is not aligned to %zu bytes (the size of %s)",
                                       c.recv, static_cast<size_t>(es), DataTypeName(c.dtype)));
  const uint64_t send_elems = Elems(o.send, c.count, comm->size());
  const uint64_t recv_elems = Elems(o.recv, c.count, comm->size());
  // The size check comes before the overlap check: a count given in bytes makes two neighbouring
  // aclrtMalloc buffers look overlapping, and "count is a number of elements" is what happened.
  std::optional<rt::Allocation> send_alloc, recv_alloc;
  if (has_send) send_alloc = rt::FindAllocation(c.send);
  if (has_recv) recv_alloc = c.recv == c.send ? send_alloc : rt::FindAllocation(c.recv);
  Status sz = has_send ? CheckDeviceSize(one_buffer ? "buf" : "sendBuf", c.send, send_alloc, send_elems, c.dtype)
                       : Status::Ok();
  if (sz.ok() && has_recv) sz = CheckDeviceSize("recvBuf", c.recv, recv_alloc, recv_elems, c.dtype);
  if (!sz.ok()) return Reject(fn, rank, sz);
  if (has_send && has_recv) {
    // Equal (in place) or disjoint. TODO(AllGather/ReduceScatter/Scatter): their NCCL-style
    // in-place offsets (collectives.md 1.6) when those operators land.
    const uint64_t sb = send_elems * es, rb = recv_elems * es;
    const uintptr_t s = reinterpret_cast<uintptr_t>(c.send), r = reinterpret_cast<uintptr_t>(c.recv);
    if (s != r && s < r + rb && r < s + sb)
      return Reject(fn, rank, MakeStatus(Code::kPara,
                                         "sendBuf %p and recvBuf %p overlap partially (%llu bytes each); they "
                                         "must be equal (in place) or disjoint",
                                         c.send, c.recv, static_cast<unsigned long long>(sb)));
  }
  if (comm->failed()) {
    Status e = comm->error();
    return Reject(fn, rank, Status(e.code(), "communicator failed earlier: " + e.message()));
  }
  rt::Stream* stream = rt::LookupStream(c.stream);
  if (stream == nullptr)
    return Reject(fn, rank, MakeStatus(Code::kPara, "stream %p is not a live stream", c.stream));
  if (one_buffer) recv_alloc = send_alloc;
  out->comm = std::move(comm);
  out->stream = stream;
  out->send_alloc = std::move(send_alloc);
  out->recv_alloc = std::move(recv_alloc);
  return Status::Ok();
}

}  // namespace hostccl::api
