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
  std::string r = rank >= 0 ? std::to_string(rank) : "?";
  HLOG_ERROR(kCall, "%s(rank %s): %s", fn, r.c_str(), st.message().c_str());
  rt::SetRecentError(StrFormat("%s(rank %s): %s", fn, r.c_str(), st.message().c_str()));
  return st;
}

Status CheckReduce(const ReduceCall& c, Checked* out) {
  static const char* fn = "HcclReduce";
  *out = Checked();
  // 1. count == 0: success, nothing else checked.
  if (c.count == 0) {
    out->done = true;
    return Status::Ok();
  }
  std::shared_ptr<core::Communicator> comm = c.comm ? core::LookupComm(c.comm) : nullptr;
  const int rank = comm ? comm->rank() : -1;
  // 2. null pointers.
  if (c.comm == nullptr) return Reject(fn, rank, Status(Code::kPtr, "comm is NULL"));
  if (c.send == nullptr) return Reject(fn, rank, Status(Code::kPtr, "sendBuf is NULL"));
  if (c.recv == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, "recvBuf is NULL (required on every rank, root or not)"));
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
  if (!IsReducible(c.dtype))
    return Reject(fn, rank, MakeStatus(Code::kNotSupport,
                                       "dataType %d (%s) is not reducible; expected one of int8 int16 int32 "
                                       "int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16",
                                       c.dtype, DataTypeName(c.dtype)));
  if (!IsValidRedOp(c.op))
    return Reject(fn, rank, MakeStatus(Code::kNotSupport, "op %d is not one of sum(0) prod(1) max(2) min(3)", c.op));
  // 6. hardware profile.
  // A live communicator read HOSTCCL_SOC when it was created; otherwise read it now.
  Status prof = core::CheckReduceProfile(comm ? comm->profile() : core::ActiveProfile(),
                                         static_cast<DataType>(c.dtype), static_cast<RedOp>(c.op),
                                         comm && comm->multi_node());
  if (!prof.ok()) return Reject(fn, rank, prof);
  // 7. root range (needs a live communicator).
  if (!comm)
    return Reject(fn, rank, Status(Code::kPara, "comm is not a live communicator (destroyed or never created)"));
  if (c.root >= static_cast<uint32_t>(comm->size()))
    return Reject(fn, rank, MakeStatus(Code::kPara, "root %u >= rankSize %d", c.root, comm->size()));
  // 8. hostccl additions: alignment, device-buffer size, overlap, communicator state.
  if (reinterpret_cast<uintptr_t>(c.send) % es != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "sendBuf %p is not aligned to %zu bytes (the size of %s)",
                                       c.send, static_cast<size_t>(es), DataTypeName(c.dtype)));
  if (reinterpret_cast<uintptr_t>(c.recv) % es != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "recvBuf %p is not aligned to %zu bytes (the size of %s)",
                                       c.recv, static_cast<size_t>(es), DataTypeName(c.dtype)));
  // The size check comes before the overlap check: a count given in bytes makes two neighbouring
  // aclrtMalloc buffers look overlapping, and "count is a number of elements" is what happened.
  auto send_alloc = rt::FindAllocation(c.send);
  auto recv_alloc = c.recv == c.send ? send_alloc : rt::FindAllocation(c.recv);
  Status sz = CheckDeviceSize("sendBuf", c.send, send_alloc, c.count, c.dtype);
  if (sz.ok()) sz = CheckDeviceSize("recvBuf", c.recv, recv_alloc, c.count, c.dtype);
  if (!sz.ok()) return Reject(fn, rank, sz);
  const uint64_t bytes = c.count * es;
  const uintptr_t s = reinterpret_cast<uintptr_t>(c.send), r = reinterpret_cast<uintptr_t>(c.recv);
  if (s != r && s < r + bytes && r < s + bytes)
    return Reject(fn, rank, MakeStatus(Code::kPara,
                                       "sendBuf %p and recvBuf %p overlap partially (%llu bytes each); they "
                                       "must be equal (in place) or disjoint",
                                       c.send, c.recv, static_cast<unsigned long long>(bytes)));
  if (comm->failed()) {
    Status e = comm->error();
    return Reject(fn, rank, Status(e.code(), "communicator failed earlier: " + e.message()));
  }
  rt::Stream* stream = rt::LookupStream(c.stream);
  if (stream == nullptr)
    return Reject(fn, rank, MakeStatus(Code::kPara, "stream %p is not a live stream", c.stream));
  out->comm = std::move(comm);
  out->stream = stream;
  out->send_alloc = std::move(send_alloc);
  out->recv_alloc = std::move(recv_alloc);
  return Status::Ok();
}

}  // namespace hostccl::api
