#include "api/arg_check.h"

#include <type_traits>
#include <vector>

#include "common/dtype.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "common/tls_ref.h"
#include "common/v_arrays.h"
#include "core/profiles.h"
#include "runtime/memory.h"

namespace hostccl::api {
namespace {

constexpr uint64_t kMaxCount = 0x7FFFFFFFFull;  // HCCL's SYS_MAX_COUNT

// The decisions both CheckOp's steps and CheckFast make, written once.
// Step 7: a root or peer names a rank of the communicator.
inline bool RootInRange(uint32_t root, int size) { return root < static_cast<uint32_t>(size); }
// Step 8, in-place block form: k is the root for rooted operators, this rank otherwise.
inline uint64_t BlockIndex(RootRule rule, uint32_t root, int rank) {
  return rule == RootRule::kRoot ? root : static_cast<uint64_t>(rank);
}
// Step 8, device-buffer size: `bytes` from p fit in the aclrtMalloc allocation `a`; *avail (if
// given) is what does.
inline bool FitsIn(const rt::Allocation& a, const void* p, uint64_t bytes, uint64_t* avail = nullptr) {
  const uint64_t offset = static_cast<uint64_t>(static_cast<const char*>(p) - static_cast<const char*>(a.base));
  const uint64_t room = offset >= a.requested ? 0 : a.requested - offset;
  if (avail != nullptr) *avail = room;
  return bytes <= room;
}
// Step 8, overlap of sendBuf [s, s + sb) and recvBuf [r, r + rb): disjoint, equal where in place is
// allowed (equal_ok), or the smaller one exactly `block` of the larger (blocks: the operator has
// that form; blocks_in_send: the larger is sendBuf).
enum class Overlap { kOk, kNotTheBlock, kPartial };
inline Overlap CheckOverlap(uintptr_t s, uint64_t sb, uintptr_t r, uint64_t rb, bool blocks, bool blocks_in_send,
                            uintptr_t block, bool equal_ok) {
  const bool overlap = sb != 0 && rb != 0 && s < r + rb && r < s + sb;
  if (!overlap || (s == r && equal_ok)) return Overlap::kOk;
  if (!blocks) return Overlap::kPartial;
  return (blocks_in_send ? r : s) == block ? Overlap::kOk : Overlap::kNotTheBlock;
}

// The "count is in elements" check for memory that came from aclrtMalloc.
Status CheckDeviceSize(const char* arg, const void* p, const std::optional<rt::Allocation>& alloc,
                       uint64_t count, int dtype) {
  if (!alloc) return Status::Ok();
  const uint64_t es = DataTypeSize(dtype);
  const uint64_t need = count * es;
  const uint64_t offset = static_cast<uint64_t>(static_cast<const char*>(p) - static_cast<const char*>(alloc->base));
  uint64_t avail = 0;
  if (FitsIn(*alloc, p, need, &avail)) return Status::Ok();
  return MakeStatus(Code::kPara,
                    "%s: count %llu x %s = %llu bytes, but the device buffer holds %llu bytes%s; count is a "
                    "number of elements, not bytes",
                    arg, static_cast<unsigned long long>(count), DataTypeName(dtype),
                    static_cast<unsigned long long>(need), static_cast<unsigned long long>(avail),
                    offset ? " from that address" : "");
}

// Fidelity: an operator buffer must be device memory (aclrtMalloc or the virtual-memory API),
// unless the communicator allows host buffers (HOSTCCL_FIDELITY=0, HostcclCommAllowHostBuffers).
Status CheckDeviceMemory(const char* arg, const void* p, const std::optional<rt::Allocation>& alloc) {
  if (alloc) return Status::Ok();
  return MakeStatus(Code::kPara,
                    "%s %p is host memory (malloc, new, the stack or aclrtMallocHost); on an NPU an operator "
                    "buffer must be device memory from aclrtMalloc (HOSTCCL_FIDELITY=0 accepts host buffers)",
                    arg, p);
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
    case BufRule::kNCount:
    case BufRule::kRootNCount: return count * static_cast<uint64_t>(n);
    default: return 0;
  }
}

}  // namespace

namespace {

// The buffers a successful check hands on, as the hostccl additions (step 8) see them.
struct Sides {
  void* send = nullptr;  // nullptr: the operator has no such buffer (or, V family, it is unused)
  void* recv = nullptr;
  uint64_t send_elems = 0, recv_elems = 0;  // extent in elements of send_dtype / recv_dtype
  int send_dtype = 0, recv_dtype = 0;
  const char* send_name = "sendBuf";
  bool one_buffer = false;  // Broadcast: send == recv by definition
  bool equal_ok = true;     // sendBuf == recvBuf is an in-place call (false: the V family)
  // The in-place block form of collectives.md 1.6: the smaller buffer may be exactly block k of
  // the larger (AllGather: sendBuf = recvBuf + rank x count; ReduceScatter: recvBuf = sendBuf +
  // rank x count; Scatter's root: recvBuf = sendBuf + root x count). block_bytes: k x count x
  // element size, UINT64_MAX when the operator has no such form; blocks_in_send: the larger buffer
  // is sendBuf.
  uint64_t block_bytes = UINT64_MAX;
  bool blocks_in_send = false;
  uint64_t block_index = 0;  // k, for the message
};

// Step 8, shared by every operator: alignment, device-buffer size, overlap of the two buffers,
// communicator state, live stream.
Status CheckAdditions(const char* fn, const OpCall& c, std::shared_ptr<core::Communicator> comm, const Sides& sd,
                      Checked* out) {
  const int rank = comm->rank();
  const uint64_t ses = DataTypeSize(sd.send_dtype), res = DataTypeSize(sd.recv_dtype);
  const char* send_name = sd.one_buffer ? "buf" : "sendBuf";
  if (sd.send && reinterpret_cast<uintptr_t>(sd.send) % ses != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "%s %p is not aligned to %zu bytes (the size of %s)", send_name,
                                       sd.send, static_cast<size_t>(ses), DataTypeName(sd.send_dtype)));
  if (sd.recv && reinterpret_cast<uintptr_t>(sd.recv) % res != 0)
    return Reject(fn, rank, MakeStatus(Code::kPara, "recvBuf %p is not aligned to %zu bytes (the size of %s)",
                                       sd.recv, static_cast<size_t>(res), DataTypeName(sd.recv_dtype)));
  // The size check comes before the overlap check: a count given in bytes makes two neighbouring
  // aclrtMalloc buffers look overlapping, and "count is a number of elements" is what happened.
  std::optional<rt::Allocation> send_alloc, recv_alloc;
  if (sd.send) send_alloc = rt::FindAllocation(sd.send);
  if (sd.recv) recv_alloc = sd.recv == sd.send ? send_alloc : rt::FindAllocation(sd.recv);
  if (!comm->host_buffers_allowed()) {
    Status dm = sd.send && sd.send_elems ? CheckDeviceMemory(send_name, sd.send, send_alloc) : Status::Ok();
    if (dm.ok() && sd.recv && sd.recv_elems) dm = CheckDeviceMemory("recvBuf", sd.recv, recv_alloc);
    if (!dm.ok()) return Reject(fn, rank, dm);
  }
  Status sz = sd.send ? CheckDeviceSize(send_name, sd.send, send_alloc, sd.send_elems, sd.send_dtype) : Status::Ok();
  if (sz.ok() && sd.recv) sz = CheckDeviceSize("recvBuf", sd.recv, recv_alloc, sd.recv_elems, sd.recv_dtype);
  if (!sz.ok()) return Reject(fn, rank, sz);
  if (sd.send && sd.recv) {
    // Disjoint, equal (in place, where allowed) or the in-place block form (where the operator has it).
    const uint64_t sb = sd.send_elems * ses, rb = sd.recv_elems * res;
    const uintptr_t s = reinterpret_cast<uintptr_t>(sd.send), r = reinterpret_cast<uintptr_t>(sd.recv);
    const bool blocks = sd.block_bytes != UINT64_MAX;
    const uintptr_t block = blocks ? (sd.blocks_in_send ? s : r) + sd.block_bytes : 0;
    const Overlap ov = CheckOverlap(s, sb, r, rb, blocks, sd.blocks_in_send, block, sd.equal_ok);
    if (ov == Overlap::kNotTheBlock)
      return Reject(fn, rank, MakeStatus(Code::kPara,
                                         "sendBuf %p (%llu bytes) and recvBuf %p (%llu bytes) overlap; in place the "
                                         "%s must be block %llu of the %s (%p)%s, otherwise they must be disjoint",
                                         sd.send, static_cast<unsigned long long>(sb), sd.recv,
                                         static_cast<unsigned long long>(rb), sd.blocks_in_send ? "recvBuf" : "sendBuf",
                                         static_cast<unsigned long long>(sd.block_index),
                                         sd.blocks_in_send ? "sendBuf" : "recvBuf", reinterpret_cast<void*>(block),
                                         sd.equal_ok ? " or equal to it" : ""));
    if (ov == Overlap::kPartial)
      return Reject(fn, rank, MakeStatus(Code::kPara,
                                         sd.equal_ok ? "sendBuf %p (%llu bytes) and recvBuf %p (%llu bytes) overlap "
                                                       "partially; they must be equal (in place) or disjoint"
                                                     : "sendBuf %p (%llu bytes) and recvBuf %p (%llu bytes) overlap; "
                                                       "they must be disjoint",
                                         sd.send, static_cast<unsigned long long>(sb), sd.recv,
                                         static_cast<unsigned long long>(rb)));
  }
  if (comm->failed()) {
    Status e = comm->error();
    return Reject(fn, rank, Status(e.code(), "communicator failed earlier: " + e.message()));
  }
  rt::Stream* stream = rt::LookupStream(c.stream);
  if (stream == nullptr)
    return Reject(fn, rank, MakeStatus(Code::kPara, "stream %p is not a live stream", c.stream));
  if (sd.one_buffer) recv_alloc = send_alloc;
  out->comm = std::move(comm);
  out->stream = stream;
  out->send_alloc = std::move(send_alloc);
  out->recv_alloc = std::move(recv_alloc);
  return Status::Ok();
}

}  // namespace

// ---- The V family: AllGatherV, ReduceScatterV, AlltoAll, AlltoAllV, AlltoAllVC ----
namespace {

// The steps of the V family's checks; each operator lists them in HCCL's order (kVOrders).
enum class VStep : uint8_t {
  kEnd,
  kZeroBoth,    // AlltoAll: sendCount == 0 && recvCount == 0 -> success
  kNullArrays,  // NULL count / displacement arrays, in parameter order -> E_PTR
  kNullComm,
  kNullStream,
  kNullSend,    // NULL sendBuf although its side has data (AlltoAll: always) -> E_PTR
  kNullRecv,
  kCountEq,     // AlltoAll: sendCount != recvCount -> E_PARA
  kTypeEq,      // AlltoAll: sendType != recvType -> E_PARA
  kSameBuf,     // sendBuf == recvBuf (both non-NULL) -> E_PARA
  kCountRange,  // the scalar count > SYS_MAX_COUNT -> E_PARA
  kDtype,       // (send) dtype not a known HcclDataType -> E_NOT_SUPPORT
  kRecvDtype,
  kOp,          // reduce op -> E_NOT_SUPPORT
  kProfile,     // hardware profile, for each dtype -> E_NOT_SUPPORT
  kArrayRange,  // any count entry (AlltoAllVC: any matrix entry) > SYS_MAX_COUNT -> E_PARA
  kZeroSum,     // the shared count array sums to 0 -> success
  kOwnCount,    // this rank's entry of the shared count array != the scalar count -> E_PARA
  kReducible,   // dtype outside the reducible set -> E_NOT_SUPPORT
};

struct VOrder {
  CollKind kind;
  const char* count_name;  // the scalar count's parameter name (nullptr: none)
  const char* dtype_name;
  // Parameter names of the arrays the operator takes (nullptr: not taken).
  const char* send_counts;
  const char* send_displs;
  const char* recv_counts;
  const char* recv_displs;
  const char* matrix;
  VStep steps[20];
};

using S = VStep;
// collectives.md 2.5, 2.7, 2.9, 2.10, 2.11 (the legacy order); hostccl's own rejections
// (kSameBuf where HCCL's docs forbid but its code does not check) come last.
constexpr VOrder kVOrders[] = {
    {CollKind::kAllGatherV, "sendCount", "dataType", nullptr, nullptr, "recvCounts", "recvDispls", nullptr,
     {S::kNullArrays, S::kNullComm, S::kNullStream, S::kNullSend, S::kCountRange, S::kDtype, S::kArrayRange,
      S::kZeroSum, S::kNullRecv, S::kOwnCount, S::kProfile, S::kSameBuf}},
    {CollKind::kReduceScatterV, "recvCount", "dataType", "sendCounts", "sendDispls", nullptr, nullptr, nullptr,
     {S::kNullStream, S::kNullArrays, S::kNullComm, S::kNullRecv, S::kCountRange, S::kDtype, S::kOp, S::kProfile,
      S::kArrayRange, S::kZeroSum, S::kNullSend, S::kOwnCount, S::kReducible, S::kSameBuf}},
    {CollKind::kAlltoAll, "sendCount", "sendType", nullptr, nullptr, nullptr, nullptr, nullptr,
     {S::kZeroBoth, S::kNullSend, S::kNullRecv, S::kCountEq, S::kTypeEq, S::kNullStream, S::kNullComm, S::kSameBuf,
      S::kCountRange, S::kDtype, S::kRecvDtype, S::kProfile}},
    {CollKind::kAlltoAllV, nullptr, "sendType", "sendCounts", "sdispls", "recvCounts", "rdispls", nullptr,
     {S::kNullArrays, S::kNullStream, S::kNullComm, S::kSameBuf, S::kArrayRange, S::kNullSend, S::kNullRecv,
      S::kDtype, S::kRecvDtype, S::kProfile}},
    {CollKind::kAlltoAllVC, nullptr, "sendType", nullptr, nullptr, nullptr, nullptr, "sendCountMatrix",
     {S::kNullArrays, S::kNullComm, S::kNullStream, S::kSameBuf, S::kArrayRange, S::kNullSend, S::kNullRecv,
      S::kDtype, S::kRecvDtype, S::kProfile}},
};

const VOrder* FindVOrder(CollKind k) {
  for (const auto& v : kVOrders)
    if (v.kind == k) return &v;
  return nullptr;
}

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// Whether a side of the call carries data (its buffer is then required). Needs n for arrays.
bool SideHasData(const OpCall& c, bool send, int n, int r) {
  const uint64_t un = static_cast<uint64_t>(n), ur = static_cast<uint64_t>(r);
  switch (c.kind) {
    case CollKind::kAllGatherV: return send ? c.count > 0 : varr::AnyNonZero(c.recv_counts, un);
    case CollKind::kReduceScatterV: return send ? varr::AnyNonZero(c.send_counts, un) : c.count > 0;
    case CollKind::kAlltoAll: return true;  // checked before the count-equality check, as HCCL does
    case CollKind::kAlltoAllV: return varr::AnyNonZero(send ? c.send_counts : c.recv_counts, un);
    case CollKind::kAlltoAllVC:
      return send ? varr::AnyNonZero(c.matrix + ur * un, un) : varr::AnyNonZero(c.matrix + ur, un, un);
    default: return false;
  }
}

}  // namespace

Status ComputeVExtents(const OpCall& c, int n, int r, VExtents* e) {
  const VOrder* v = FindVOrder(c.kind);
  *e = VExtents();
  if (v == nullptr) return Status(Code::kInternal, "not a V-family operator");
  const uint64_t un = static_cast<uint64_t>(n), ur = static_cast<uint64_t>(r);
  // One side given by counts + displacements: its extent; `exclusive`: blocks must not overlap.
  auto side = [&](const uint64_t* counts, const uint64_t* displs, const char* cn, const char* dn, bool exclusive,
                  uint64_t* extent) -> Status {
    int bad = -1;
    if (!varr::Extent(counts, displs, n, extent, &bad))
      return MakeStatus(Code::kPara, "%s[%d] = %llu + %s[%d] = %llu overflows", dn, bad, Ull(displs[bad]), cn, bad,
                        Ull(counts[bad]));
    int i = -1, j = -1;
    if (exclusive && varr::FindOverlap(counts, displs, n, &i, &j))
      return MakeStatus(Code::kPara,
                        "blocks %d [%llu, %llu) and %d [%llu, %llu) of recvBuf overlap (%s/%s, in elements); "
                        "every element may be written by one block only",
                        i, Ull(displs[i]), Ull(displs[i] + counts[i]), j, Ull(displs[j]), Ull(displs[j] + counts[j]),
                        cn, dn);
    return Status::Ok();
  };
  switch (c.kind) {
    case CollKind::kAllGatherV:
      e->send = c.count;
      HOSTCCL_RETURN_IF_ERROR(side(c.recv_counts, c.recv_displs, v->recv_counts, v->recv_displs, true, &e->recv));
      break;
    case CollKind::kReduceScatterV:  // source blocks may overlap: they are only read
      HOSTCCL_RETURN_IF_ERROR(side(c.send_counts, c.send_displs, v->send_counts, v->send_displs, false, &e->send));
      e->recv = c.count;
      break;
    case CollKind::kAlltoAll:
      e->send = c.count * un;
      e->recv = c.recv_count * un;
      break;
    case CollKind::kAlltoAllV:
      HOSTCCL_RETURN_IF_ERROR(side(c.send_counts, c.send_displs, v->send_counts, v->send_displs, false, &e->send));
      HOSTCCL_RETURN_IF_ERROR(side(c.recv_counts, c.recv_displs, v->recv_counts, v->recv_displs, true, &e->recv));
      break;
    case CollKind::kAlltoAllVC:  // packed in rank order: row r and column r
      e->send = varr::Sum(c.matrix + ur * un, un);
      e->recv = varr::Sum(c.matrix + ur, un, un);
      break;
    default: break;
  }
  e->send_data = SideHasData(c, true, n, r) && e->send > 0;
  e->recv_data = SideHasData(c, false, n, r) && e->recv > 0;
  return Status::Ok();
}

namespace {

// group_entry: only the order's leading zero-count and NULL-pointer steps (collectives.md 1.1).
Status CheckVOp(const OpInfo& o, const VOrder& v, const OpCall& c, Checked* out, bool group_entry) {
  const char* fn = o.api;
  std::shared_ptr<core::Communicator> comm = c.comm ? core::LookupComm(c.comm) : nullptr;
  const int rank = comm ? comm->rank() : -1;
  const int n = comm ? comm->size() : 0;
  const uint64_t un = static_cast<uint64_t>(n);
  const auto live = [&]() -> Status {
    return comm ? Status::Ok()
                : Status(Code::kPara, "comm is not a live communicator (destroyed or never created)");
  };
  // The array whose entries must equal every rank's own scalar count (AllGatherV, ReduceScatterV).
  const uint64_t* shared_counts = o.recv == BufRule::kV && o.send != BufRule::kV ? c.recv_counts : c.send_counts;
  const char* shared_name = o.recv == BufRule::kV && o.send != BufRule::kV ? v.recv_counts : v.send_counts;
  for (VStep step : v.steps) {
    if (group_entry && step != S::kZeroBoth && step != S::kNullArrays && step != S::kNullComm &&
        step != S::kNullStream && step != S::kNullSend && step != S::kNullRecv)
      return Status::Ok();
    switch (step) {
      case S::kEnd: break;
      case S::kZeroBoth:
        if (c.count == 0 && c.recv_count == 0) {
          out->done = true;
          return Status::Ok();
        }
        break;
      case S::kNullArrays: {
        const std::pair<const void*, const char*> arrays[] = {{c.send_counts, v.send_counts},
                                                              {c.send_displs, v.send_displs},
                                                              {c.recv_counts, v.recv_counts},
                                                              {c.recv_displs, v.recv_displs},
                                                              {c.matrix, v.matrix}};
        for (const auto& [p, name] : arrays)
          if (name && p == nullptr) return Reject(fn, rank, MakeStatus(Code::kPtr, "%s is NULL", name));
        break;
      }
      case S::kNullComm:
        if (c.comm == nullptr) return Reject(fn, rank, Status(Code::kPtr, "comm is NULL"));
        break;
      case S::kNullStream:
        if (c.stream == nullptr) return Reject(fn, rank, Status(Code::kPtr, "stream is NULL"));
        break;
      case S::kNullSend:
      case S::kNullRecv: {
        const bool send = step == S::kNullSend;
        if ((send ? c.send : c.recv) != nullptr) break;
        if (o.send == BufRule::kV || o.recv == BufRule::kV) {
          if (Status st = live(); !st.ok()) return Reject(fn, rank, st);
        }
        if (SideHasData(c, send, n, rank))
          return Reject(fn, rank, MakeStatus(Code::kPtr, "%s is NULL but this rank %s data", send ? "sendBuf" : "recvBuf",
                                             send ? "sends" : "receives"));
        break;
      }
      case S::kCountEq:
        if (c.count != c.recv_count)
          return Reject(fn, rank, MakeStatus(Code::kPara, "sendCount %llu != recvCount %llu", Ull(c.count),
                                             Ull(c.recv_count)));
        break;
      case S::kTypeEq:
        if (c.dtype != c.recv_dtype)
          return Reject(fn, rank, MakeStatus(Code::kPara, "sendType %d (%s) != recvType %d (%s)", c.dtype,
                                             DataTypeName(c.dtype), c.recv_dtype, DataTypeName(c.recv_dtype)));
        break;
      case S::kSameBuf:
        if (c.send != nullptr && c.send == c.recv)
          return Reject(fn, rank, MakeStatus(Code::kPara, "sendBuf and recvBuf are the same address %p; %s is not "
                                             "in place", c.send, fn));
        break;
      case S::kCountRange: {
        const uint64_t es = DataTypeSize(c.dtype);
        if (c.count > kMaxCount)
          return Reject(fn, rank, MakeStatus(Code::kPara, "%s %llu > maximum %llu", v.count_name, Ull(c.count),
                                             Ull(kMaxCount)));
        if (es != 0 && c.count > UINT64_MAX / es)
          return Reject(fn, rank, MakeStatus(Code::kPara, "%s %llu x %zu bytes overflows", v.count_name,
                                             Ull(c.count), static_cast<size_t>(es)));
        break;
      }
      case S::kDtype:
      case S::kRecvDtype: {
        const int dt = step == S::kDtype ? c.dtype : c.recv_dtype;
        if (!IsKnownDataType(dt))
          return Reject(fn, rank, MakeStatus(Code::kNotSupport, "%s %d is not a known HcclDataType",
                                             step == S::kDtype ? v.dtype_name : "recvType", dt));
        break;
      }
      case S::kOp:
        if (!IsValidRedOp(c.op))
          return Reject(fn, rank, MakeStatus(Code::kNotSupport, "op %d is not one of sum(0) prod(1) max(2) min(3)",
                                             c.op));
        break;
      case S::kProfile: {
        const RedOp rop = o.reduces ? static_cast<RedOp>(c.op) : RedOp::kSum;
        Status st = core::CheckCommProfile(comm.get(), c.kind, static_cast<DataType>(c.dtype), rop);
        if (st.ok() && v.dtype_name == std::string_view("sendType") && c.recv_dtype != c.dtype)
          st = core::CheckCommProfile(comm.get(), c.kind, static_cast<DataType>(c.recv_dtype), rop);
        if (!st.ok()) return Reject(fn, rank, st);
        break;
      }
      case S::kArrayRange: {
        if (Status st = live(); !st.ok()) return Reject(fn, rank, st);
        const std::pair<const uint64_t*, const char*> counts[] = {
            {c.send_counts, v.send_counts}, {c.recv_counts, v.recv_counts}, {c.matrix, v.matrix}};
        for (const auto& [p, name] : counts) {
          if (name == nullptr) continue;
          const uint64_t len = p == c.matrix ? un * un : un;
          if (int64_t i = varr::FirstAbove(p, len, kMaxCount); i >= 0)
            return Reject(fn, rank, MakeStatus(Code::kPara, "%s[%lld] = %llu > maximum %llu", name,
                                               static_cast<long long>(i), Ull(p[i]), Ull(kMaxCount)));
        }
        break;
      }
      case S::kZeroSum:
        if (varr::Sum(shared_counts, un) == 0) {
          out->done = true;
          return Status::Ok();
        }
        break;
      case S::kOwnCount:
        if (c.count != shared_counts[rank])
          return Reject(fn, rank, MakeStatus(Code::kPara, "%s %llu != %s[%d] = %llu (this rank's entry must equal it)",
                                             v.count_name, Ull(c.count), shared_name, rank,
                                             Ull(shared_counts[rank])));
        break;
      case S::kReducible:
        if (!IsReducible(c.dtype))
          return Reject(fn, rank, MakeStatus(Code::kNotSupport,
                                             "dataType %d (%s) is not reducible; expected one of int8 int16 int32 "
                                             "int64 uint8 uint16 uint32 uint64 fp16 fp32 fp64 bfp16",
                                             c.dtype, DataTypeName(c.dtype)));
        break;
    }
    if (step == S::kEnd) break;
  }
  // hostccl additions: element sizes of the pairing, extents, then step 8 of every operator.
  if (Status st = live(); !st.ok()) return Reject(fn, rank, st);
  const int rdt = v.dtype_name == std::string_view("sendType") ? c.recv_dtype : c.dtype;
  const uint64_t ses = DataTypeSize(c.dtype), res = DataTypeSize(rdt);
  if (ses != res)
    return Reject(fn, rank, MakeStatus(Code::kPara, "sendType %s (%llu bytes) and recvType %s (%llu bytes) differ in "
                                       "size; hostccl moves bytes, so the element sizes must be equal",
                                       DataTypeName(c.dtype), Ull(ses), DataTypeName(rdt), Ull(res)));
  VExtents e;
  if (Status st = ComputeVExtents(c, n, rank, &e); !st.ok()) return Reject(fn, rank, st);
  if (e.send > UINT64_MAX / ses || e.recv > UINT64_MAX / res)
    return Reject(fn, rank, MakeStatus(Code::kPara, "the buffers' extents (%llu and %llu elements) overflow in bytes",
                                       Ull(e.send), Ull(e.recv)));
  Sides sd;
  sd.send = e.send_data ? c.send : nullptr;
  sd.recv = e.recv_data ? c.recv : nullptr;
  sd.send_elems = e.send;
  sd.recv_elems = e.recv;
  sd.send_dtype = c.dtype;
  sd.recv_dtype = rdt;
  sd.equal_ok = false;
  return CheckAdditions(fn, c, std::move(comm), sd, out);
}

}  // namespace

namespace {

// The V family: its own check order (kVOrders) and its recv_dtype.
constexpr bool IsVKind(CollKind k) {
  return k == CollKind::kAllGatherV || k == CollKind::kReduceScatterV || k == CollKind::kAlltoAll ||
         k == CollKind::kAlltoAllV || k == CollKind::kAlltoAllVC;
}

// Alignment by mask: every element size is a power of two.
#define X(id, v, name, size, red) static_assert((size & (size - 1)) == 0, "element sizes are powers of two");
HOSTCCL_FOR_EACH_DTYPE(X)
#undef X

// An operator row (common/ops.h) resolved once for CheckFast, indexed by kind value: what the
// slow path (CheckOp's numbered steps) derives from the row on each call.
struct FastRow {
  bool on = false;          // buffer-and-count operator CheckFast handles (not V, not Barrier/Batch)
  bool reduces = false;     // dtype must be reducible and op valid; else a known dtype
  bool need_send = false;   // sendBuf (Broadcast: buf) must be non-NULL on every rank
  bool root_send = false;   // sendBuf exists on the root only (Scatter)
  bool has_recv = false;    // a recvBuf distinct from the send buffer
  bool one_buffer = false;  // Broadcast
  RootRule root = RootRule::kNoRoot;
  BufRule send = BufRule::kNone, recv = BufRule::kNone;
  // In-place forms (collectives.md 1.6), as CheckOp sets Sides: blocks: one side is n x count
  // and the other may be block k of it; equal_ok: sendBuf == recvBuf is in place.
  bool blocks = false, blocks_in_send = false, equal_ok = true;
};

struct FastRows {
  FastRow at[32];
  constexpr FastRows() : at() {
    for (const OpInfo& o : kOps) {
      FastRow& f = at[static_cast<unsigned>(o.kind)];
      if (IsVKind(o.kind) || (o.send == BufRule::kNone && o.recv == BufRule::kNone) || o.send == BufRule::kV ||
          o.recv == BufRule::kV || !o.implemented)
        continue;
      f.on = true;
      f.reduces = o.reduces;
      f.one_buffer = o.recv == BufRule::kSame;
      f.root_send = o.send == BufRule::kRootNCount;
      f.need_send = o.send != BufRule::kNone && !f.root_send;
      f.has_recv = o.recv != BufRule::kNone && !f.one_buffer;
      f.root = o.root;
      f.send = o.send;
      f.recv = o.recv;
      const bool n_send = o.send == BufRule::kNCount || o.send == BufRule::kRootNCount;
      const bool n_recv = o.recv == BufRule::kNCount;
      if (n_send != n_recv) {
        f.blocks = true;
        f.blocks_in_send = n_send;
        f.equal_ok = o.root == RootRule::kNoRoot;
      } else if (n_send && n_recv) {
        f.equal_ok = false;
      }
    }
  }
};
constexpr FastRows kFastRows{};

}  // namespace

namespace {

// Step 8 of a fast check for one buffer: `bytes` from p fit its aclrtMalloc allocation (kept in
// *alloc), or p is host memory and the communicator allows that or nothing is moved.
bool BufferFits(void* p, uint64_t bytes, bool host_ok, std::optional<rt::Allocation>* alloc) {
  return rt::FindAllocation(p, alloc) ? FitsIn(**alloc, p, bytes) : host_ok || bytes == 0;
}

// The end of a fast check: the communicator has not failed and the stream is live; fills *out.
bool FinishFast(core::Communicator* comm, const OpCall& c, FastChecked* out) {
  if (comm->failed()) return false;
  rt::Stream* stream = rt::LookupStream(c.stream);
  if (stream == nullptr) return false;
  out->comm = comm;
  out->stream = stream;
  return true;
}

// CheckFast for the V family: every check of CheckVOp passing, with both buffers given, distinct
// and carrying data. AllGatherV / ReduceScatterV: the operator's one array pair (recvCounts/
// recvDispls, sendCounts/sendDispls) and this rank's own non-zero count; AlltoAll: equal non-zero
// counts and types; AlltoAllV: both array pairs, AlltoAllVC: the matrix, each side with some data.
// Anything else (an error to name, a zero count or sum, a side without data, a chip profile) goes
// through CheckVOp's steps.
bool CheckFastV(const OpCall& c, FastChecked* out) {
  if (c.comm == nullptr || c.stream == nullptr || c.send == nullptr || c.recv == nullptr || c.send == c.recv)
    return false;
  const uint64_t ses = DataTypeSize(c.dtype);
  uint64_t res = ses;  // the receive side's element size (AlltoAll(V): recvType)
  uint64_t send_elems = 0, recv_elems = 0;
  core::Communicator* comm = nullptr;
  int n = 0;
  auto live = [&] {
    comm = core::LookupCommForCall(c.comm);
    if (comm == nullptr || comm->profile() != nullptr) return false;
    n = comm->size();
    return true;
  };
  int bad = -1, i = -1, j = -1;
  switch (c.kind) {
    case CollKind::kAllGatherV:
    case CollKind::kReduceScatterV: {
      const bool agv = c.kind == CollKind::kAllGatherV;
      const uint64_t* counts = agv ? c.recv_counts : c.send_counts;
      const uint64_t* displs = agv ? c.recv_displs : c.send_displs;
      if (counts == nullptr || displs == nullptr || c.count == 0 || c.count > kMaxCount) return false;
      if (agv ? ses == 0 : !IsReducible(c.dtype) || !IsValidRedOp(c.op)) return false;
      if (!live() || counts[comm->rank()] != c.count ||
          varr::FirstAbove(counts, static_cast<uint64_t>(n), kMaxCount) >= 0)
        return false;
      // The array side's blocks must not overflow, and (AllGatherV: written blocks) not overlap.
      uint64_t extent = 0;
      if (!varr::Extent(counts, displs, n, &extent, &bad) || (agv && varr::FindOverlap(counts, displs, n, &i, &j)))
        return false;
      send_elems = agv ? c.count : extent;
      recv_elems = agv ? extent : c.count;
      break;
    }
    case CollKind::kAlltoAll:
      if (c.count == 0 || c.count > kMaxCount || c.recv_count != c.count || c.recv_dtype != c.dtype || ses == 0 ||
          !live())
        return false;
      send_elems = recv_elems = c.count * static_cast<uint64_t>(n);
      break;
    case CollKind::kAlltoAllV: {
      res = DataTypeSize(c.recv_dtype);
      if (c.send_counts == nullptr || c.send_displs == nullptr || c.recv_counts == nullptr ||
          c.recv_displs == nullptr || ses == 0 || res != ses || !live())
        return false;
      const uint64_t un = static_cast<uint64_t>(n);
      if (varr::FirstAbove(c.send_counts, un, kMaxCount) >= 0 || varr::FirstAbove(c.recv_counts, un, kMaxCount) >= 0 ||
          !varr::Extent(c.send_counts, c.send_displs, n, &send_elems, &bad) ||
          !varr::Extent(c.recv_counts, c.recv_displs, n, &recv_elems, &bad) ||
          varr::FindOverlap(c.recv_counts, c.recv_displs, n, &i, &j))
        return false;
      if (send_elems == 0 || recv_elems == 0) return false;  // a side without data: CheckVOp
      break;
    }
    case CollKind::kAlltoAllVC: {
      res = DataTypeSize(c.recv_dtype);
      if (c.matrix == nullptr || ses == 0 || res != ses || !live()) return false;
      const uint64_t un = static_cast<uint64_t>(n), ur = static_cast<uint64_t>(comm->rank());
      if (varr::FirstAbove(c.matrix, un * un, kMaxCount) >= 0) return false;
      send_elems = varr::Sum(c.matrix + ur * un, un);  // packed in rank order: row and column r
      recv_elems = varr::Sum(c.matrix + ur, un, un);
      if (send_elems == 0 || recv_elems == 0) return false;  // a side without data: CheckVOp
      break;
    }
    default:
      return false;
  }
  if (send_elems > UINT64_MAX / ses || recv_elems > UINT64_MAX / res) return false;
  const uint64_t send_bytes = send_elems * ses, recv_bytes = recv_elems * res;
  // Alignment, device memory and size, disjoint buffers, communicator state, live stream.
  const uintptr_t s = reinterpret_cast<uintptr_t>(c.send), r = reinterpret_cast<uintptr_t>(c.recv);
  if ((s & (ses - 1)) != 0 || (r & (res - 1)) != 0) return false;
  const bool host_ok = comm->host_buffers_allowed();
  if (!BufferFits(c.send, send_bytes, host_ok, &out->send_alloc) ||
      !BufferFits(c.recv, recv_bytes, host_ok, &out->recv_alloc) ||
      CheckOverlap(s, send_bytes, r, recv_bytes, false, false, 0, false) != Overlap::kOk)
    return false;
  return FinishFast(comm, c, out);
}

}  // namespace

bool CheckFast(const OpCall& c, FastChecked* out) {
  const unsigned kv = static_cast<unsigned>(c.kind);
  if (kv >= 32) return false;
  const FastRow& f = kFastRows.at[kv];
  if (!f.on) return CheckFastV(c, out);
  // Steps 1-5 (CheckOp): count, NULL pointers, count range, dtype and op.
  if (c.count == 0 || c.count > kMaxCount || c.comm == nullptr || c.stream == nullptr) return false;
  if ((f.need_send && c.send == nullptr) || (f.has_recv && c.recv == nullptr)) return false;
  const uint64_t es = DataTypeSize(c.dtype);
  if (f.reduces ? !IsReducible(c.dtype) || !IsValidRedOp(c.op) : es == 0) return false;
  // Step 6: the host default has no chip limits; a chip profile takes the slow path.
  core::Communicator* comm = core::LookupCommForCall(c.comm);
  if (comm == nullptr || comm->profile() != nullptr) return false;
  // Step 7: root / peer.
  const uint32_t rank = static_cast<uint32_t>(comm->rank());
  const int n = comm->size();
  if (f.root != RootRule::kNoRoot && !RootInRange(c.root, n)) return false;
  if (f.root == RootRule::kPeer && c.root == rank) return false;
  // Step 8: alignment, device memory and size, overlap, communicator state, live stream.
  void* send = f.root_send ? (c.root == rank ? c.send : nullptr) : f.need_send ? c.send : nullptr;
  if (f.root_send && c.root == rank && send == nullptr) return false;  // sendBuf NULL on the root
  void* recv = f.has_recv ? c.recv : nullptr;
  const uintptr_t s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
  if (((s | r) & (es - 1)) != 0) return false;
  const uint64_t send_elems = Elems(f.send, c.count, n), recv_elems = Elems(f.recv, c.count, n);
  const bool host_ok = comm->host_buffers_allowed();
  if (send != nullptr) {
    if (!BufferFits(send, send_elems * es, host_ok, &out->send_alloc)) return false;
  } else {
    out->send_alloc.reset();
  }
  if (recv == nullptr) {
    out->recv_alloc.reset();
  } else {
    if (recv == send) {
      out->recv_alloc = out->send_alloc;
      if (out->recv_alloc ? !FitsIn(*out->recv_alloc, recv, recv_elems * es) : !host_ok && recv_elems != 0)
        return false;
    } else if (!BufferFits(recv, recv_elems * es, host_ok, &out->recv_alloc)) {
      return false;
    }
    if (send != nullptr) {
      const uintptr_t block =
          f.blocks ? (f.blocks_in_send ? s : r) + BlockIndex(f.root, c.root, static_cast<int>(rank)) * c.count * es : 0;
      if (CheckOverlap(s, send_elems * es, r, recv_elems * es, f.blocks, f.blocks_in_send, block, f.equal_ok) !=
          Overlap::kOk)
        return false;
    }
  }
  if (f.one_buffer) out->recv_alloc = out->send_alloc;
  return FinishFast(comm, c, out);
}

namespace {
// One call of this thread that FastCheck passed (generation 0: an empty entry).
struct MemoEntry {
  OpCall call{};            // its arguments, the V arrays' addresses among them
  bool v = false;           // a V-family call: its V fields and t_memo_arrays are compared too
  uint64_t generation = 0;  // rt::AllocationGeneration() before the checks ran (0: empty)
  FastChecked out;
};
// The last few distinct calls, so that calls issued in turn (a Send and a Recv, two buffers'
// AllReduce) are each remembered; the entry that came after the last one the previous time is
// tried first (the last one again for a repeated call, the other one for calls in turn).
constexpr int kMemoEntries = 4;
struct FastMemo {
  MemoEntry e[kMemoEntries];
  int last = 0;       // the entry that matched or was filled last
  int follow[kMemoEntries] = {};  // follow[i]: the entry that matched or was filled after entry i
  int next = 0;       // the entry a new call replaces (round robin)
  bool busy = false;  // a FastCheck of this thread holds an entry's `out`
  // Entry i's record for its communicator (core::PreparedCall, filled with `generation`): in
  // t_memo_prepared, which has a destructor; pointed at from its first fill on, so that a hit
  // reads no second thread_local.
  core::PreparedCall* prepared = nullptr;
};
thread_local FastMemo t_memo;
static_assert(std::is_trivially_destructible_v<FastMemo>, "t_memo's accesses must need no init guard");
thread_local ExitMarked<core::PreparedCall> t_memo_prepared[kMemoEntries];
// What entry i's V arrays held, in field order (the caller may change them in place); kept apart
// from t_memo so that only V calls pay for a thread_local with a destructor.
thread_local ExitMarked<std::vector<uint64_t>> t_memo_arrays[kMemoEntries];

// Arrays longer than this (all of a call's together, in words) are checked every time.
constexpr uint64_t kMemoArrayWords = 4096;

bool SameCall(const OpCall& a, const OpCall& c) {
  return a.kind == c.kind && a.send == c.send && a.recv == c.recv && a.count == c.count && a.dtype == c.dtype &&
         a.op == c.op && a.root == c.root && a.comm == c.comm && a.stream == c.stream;
}

// The V family's own fields, compared when the kinds are the same V kind (other rows leave them
// at their defaults).
bool SameVFields(const OpCall& a, const OpCall& c) {
  return a.send_counts == c.send_counts && a.send_displs == c.send_displs && a.recv_counts == c.recv_counts &&
         a.recv_displs == c.recv_displs && a.matrix == c.matrix && a.recv_count == c.recv_count &&
         a.recv_dtype == c.recv_dtype;
}

// Whether the call's arrays hold what `kept` holds.
bool SameArrays(const OpCall& c, uint64_t n, const std::vector<uint64_t>& kept) {
  const uint64_t* w = kept.data();
  uint64_t left = kept.size();
  for (int i = 0; i < varr::kFields; ++i) {
    const uint64_t* p = c.*kArrayFields[i];
    if (p == nullptr) continue;
    const uint64_t words = varr::FieldWords(i, n);
    if (words > left) return false;
    for (uint64_t j = 0; j < words; ++j)
      if (p[j] != w[j]) return false;
    w += words;
    left -= words;
  }
  return left == 0;
}

// Keeps what the call's arrays hold in *kept; false when they are too long to remember.
bool KeepArrays(const OpCall& c, uint64_t n, std::vector<uint64_t>* kept) {
  uint64_t total = 0;
  for (int i = 0; i < varr::kFields; ++i)
    if (c.*kArrayFields[i] != nullptr) total += varr::FieldWords(i, n);
  if (total > kMemoArrayWords) return false;
  kept->clear();
  for (int i = 0; i < varr::kFields; ++i)
    if (const uint64_t* p = c.*kArrayFields[i]) kept->insert(kept->end(), p, p + varr::FieldWords(i, n));
  return true;
}

// Whether entry `e` holds call c, with its communicator and stream still live.
inline bool Matches(MemoEntry& e, int i, const OpCall& c, uint64_t gen, ThreadState& ts) {
  if (e.generation != gen || !SameCall(e.call, c)) return false;
  core::Communicator* comm = core::LookupCommForCall(c.comm, ts);  // handles are never reused
  rt::Stream* stream = rt::LookupStream(c.stream, ts);
  if (comm != e.out.comm || stream == nullptr || comm->failed()) return false;
  if (e.v && !(SameVFields(e.call, c) && SameArrays(c, static_cast<uint64_t>(comm->size()), t_memo_arrays[i])))
    return false;
  e.out.stream = stream;
  return true;
}
}  // namespace

FastCheck::FastCheck(const OpCall& c) {
  FastMemo& m = TlsRef(t_memo);  // one thread-local lookup for the whole check
  if (m.busy) {  // nested in a call of this thread: leave its answer alone
    if (CheckFast(c, &local_)) ok_ = &local_;
    return;
  }
  const uint64_t gen = rt::AllocationGeneration();
  ThreadState& ts = ThisThread();  // the lookups' answers (the memo's entries hold the rest)
  if (ts.exiting) return;  // CheckOp refuses the call
  thread_ = &ts;
  const int guess = m.follow[m.last];
  for (int k = 0; k < kMemoEntries; ++k) {
    const int i = k == 0 ? guess : k - 1 < guess ? k - 1 : k;  // the guess first
    if (!Matches(m.e[i], i, c, gen, ts)) continue;
    m.follow[m.last] = i;
    m.last = i;
    m.busy = true;
    busy_ = &m.busy;
    ok_ = &m.e[i].out;
    if (m.prepared != nullptr && m.prepared[i].ok) prepared_ = &m.prepared[i];
    return;
  }
  const int i = m.next;
  m.next = (i + 1) % kMemoEntries;
  MemoEntry& e = m.e[i];
  e.generation = 0;
  if (!CheckFast(c, &e.out)) return;
  m.follow[m.last] = i;
  m.last = i;
  m.busy = true;
  busy_ = &m.busy;
  ok_ = &e.out;
  e.v = !kFastRows.at[static_cast<unsigned>(c.kind)].on;
  if (e.v && !KeepArrays(c, static_cast<uint64_t>(e.out.comm->size()), &t_memo_arrays[i])) return;
  e.call = c;
  e.generation = gen;
  if (m.prepared == nullptr) m.prepared = t_memo_prepared;
  e.out.comm->Prepare(ToArgs(c), e.out.send_alloc, e.out.recv_alloc, &m.prepared[i]);
  if (m.prepared[i].ok) prepared_ = &m.prepared[i];
}

FastCheck::~FastCheck() {
  if (busy_ != nullptr) *busy_ = false;
}

algo::OpArgs ToArgs(const OpCall& c) {
  // Each member written once (the record is built on every call).
  return algo::OpArgs{
      .kind = c.kind,
      .send = c.send,
      .recv = c.recv,
      .count = c.count,
      .dtype = static_cast<DataType>(c.dtype),
      .op = static_cast<RedOp>(c.op),  // enters the fingerprint only for reductions (the row says)
      .root = static_cast<int>(c.root),
      .recv_dtype = static_cast<DataType>(IsVKind(c.kind) ? c.recv_dtype : c.dtype),
      .send_counts = c.send_counts,  // the caller's arrays: Communicator::Enqueue copies them
      .send_displs = c.send_displs,
      .recv_counts = c.recv_counts,
      .recv_displs = c.recv_displs,
      .matrix = c.matrix,
      .recv_count = c.recv_count,
      .one = {},
      .items = nullptr,
      .send_desc = {},
      .recv_desc = {},
  };
}

Status RefuseAtThreadExit(const char* fn) {
  if (!ThisThread().exiting) return Status::Ok();
  return Reject(fn, -1, Status(Code::kInternal, "called while this thread exits, from a thread_local destructor that runs after "
                                                "hostccl's per-thread state was destroyed; nothing was enqueued (issue operations "
                                                "before the thread ends; HcclCommDestroy still works there)"));
}

Status CheckOp(const OpCall& c, Checked* out, bool group_entry) {
  HOSTCCL_RETURN_IF_ERROR(RefuseAtThreadExit(FindOp(c.kind)->api));
  if (FastChecked f; !group_entry && CheckFast(c, &f)) {
    *out = Checked{f.comm->shared_from_this(), f.stream, std::move(f.send_alloc), std::move(f.recv_alloc), false};
    return Status::Ok();
  }
  const OpInfo& o = *FindOp(c.kind);
  const char* fn = o.api;
  *out = Checked();
  if (const VOrder* v = FindVOrder(c.kind)) return CheckVOp(o, *v, c, out, group_entry);
  // 1. count == 0: success, nothing else checked.
  if (c.count == 0) {
    out->done = true;
    return Status::Ok();
  }
  std::shared_ptr<core::Communicator> comm = c.comm ? core::LookupComm(c.comm) : nullptr;
  const int rank = comm ? comm->rank() : c.comm ? core::DestroyedCommRank(c.comm) : -1;
  const bool one_buffer = o.recv == BufRule::kSame;
  // A root-only send buffer (Scatter) exists on the root only; elsewhere it is ignored.
  const bool root_send = o.send == BufRule::kRootNCount;
  const bool send_here = o.send != BufRule::kNone && (!root_send || (comm && c.root == static_cast<uint32_t>(rank)));
  // 2. null pointers; Broadcast and ReduceScatter look at the stream first (collectives.md 2.2,
  // 2.6), the others last.
  if (c.stream == nullptr && (c.kind == CollKind::kBroadcast || c.kind == CollKind::kReduceScatter))
    return Reject(fn, rank, Status(Code::kPtr, "stream is NULL"));
  if (c.comm == nullptr) return Reject(fn, rank, Status(Code::kPtr, "comm is NULL"));
  if (o.send != BufRule::kNone && !root_send && c.send == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, one_buffer ? "buf is NULL" : "sendBuf is NULL"));
  if (o.recv != BufRule::kNone && !one_buffer && c.recv == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, o.root == RootRule::kRoot
                                                   ? "recvBuf is NULL (required on every rank, root or not)"
                                                   : "recvBuf is NULL"));
  if (c.stream == nullptr) return Reject(fn, rank, Status(Code::kPtr, "stream is NULL"));
  if (root_send && send_here && c.send == nullptr)
    return Reject(fn, rank, Status(Code::kPtr, "sendBuf is NULL on the root"));
  // Inside a group a collective stops here; Send/Recv also check the count range.
  const bool p2p = o.root == RootRule::kPeer;
  if (group_entry && !p2p) return Status::Ok();
  // 3. count range.
  const uint64_t es = DataTypeSize(c.dtype);
  if (c.count > kMaxCount)
    return Reject(fn, rank, MakeStatus(Code::kPara, "count %llu > maximum %llu",
                                       static_cast<unsigned long long>(c.count),
                                       static_cast<unsigned long long>(kMaxCount)));
  if (es != 0 && c.count > UINT64_MAX / es)
    return Reject(fn, rank, MakeStatus(Code::kPara, "count %llu x %zu bytes overflows",
                                       static_cast<unsigned long long>(c.count), static_cast<size_t>(es)));
  if (group_entry) return Status::Ok();
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
  Status prof = core::CheckCommProfile(comm.get(), c.kind, static_cast<DataType>(c.dtype),
                                       o.reduces ? static_cast<RedOp>(c.op) : RedOp::kSum);
  if (!prof.ok()) return Reject(fn, rank, prof);
  // 7. root range (needs a live communicator).
  if (!comm)
    return Reject(fn, rank, Status(Code::kPara, "comm is not a live communicator (destroyed or never created)"));
  const char* root_name = o.root == RootRule::kRoot ? "root" : c.kind == CollKind::kSend ? "destRank" : "srcRank";
  if (o.root != RootRule::kNoRoot && !RootInRange(c.root, comm->size()))
    return Reject(fn, rank, MakeStatus(Code::kPara, "%s %u >= rankSize %d", root_name, c.root, comm->size()));
  // Send/Recv to this rank itself: not supported (as HCCL's Ascend 950 path; use
  // HcclBatchSendRecv's self items for a local copy).
  if (o.root == RootRule::kPeer && c.root == static_cast<uint32_t>(comm->rank()))
    return Reject(fn, rank, MakeStatus(Code::kNotSupport, "%s %u is this rank itself; a transfer to oneself is not "
                                       "supported (HcclBatchSendRecv's self items copy locally)", root_name, c.root));
  // 8. hostccl additions: alignment, device-buffer size, overlap, communicator state.
  Sides sd;
  sd.send = send_here ? c.send : nullptr;
  sd.recv = o.recv != BufRule::kNone && !one_buffer ? c.recv : nullptr;
  sd.send_elems = Elems(o.send, c.count, comm->size());
  sd.recv_elems = Elems(o.recv, c.count, comm->size());
  sd.send_dtype = sd.recv_dtype = c.dtype;
  sd.one_buffer = one_buffer;
  // In-place forms from the row's size rules (collectives.md 1.6): where exactly one side is
  // n x count, the other may be block k of it (k = the root for rooted operators, this rank
  // otherwise), and equal pointers only where there is no root.
  const bool n_send = o.send == BufRule::kNCount || o.send == BufRule::kRootNCount;
  const bool n_recv = o.recv == BufRule::kNCount;
  if (n_send != n_recv) {
    sd.block_index = BlockIndex(o.root, c.root, comm->rank());
    sd.block_bytes = sd.block_index * c.count * es;
    sd.blocks_in_send = n_send;
    sd.equal_ok = o.root == RootRule::kNoRoot;
  } else if (n_send && n_recv) {
    sd.equal_ok = false;
  }
  return CheckAdditions(fn, c, std::move(comm), sd, out);
}

Status CheckBatch(const BatchItem* items, uint32_t n, void* comm_handle, void* stream_handle, Checked* out,
                  algo::OpArgs* args) {
  const char* fn = "HcclBatchSendRecv";
  *out = Checked();
  HOSTCCL_RETURN_IF_ERROR(RefuseAtThreadExit(fn));
  if (n == 0) {
    out->done = true;
    return Status::Ok();
  }
  std::shared_ptr<core::Communicator> comm = comm_handle ? core::LookupComm(comm_handle) : nullptr;
  const int rank = comm ? comm->rank() : -1;
  if (comm_handle == nullptr) return Reject(fn, rank, Status(Code::kPtr, "comm is NULL"));
  if (stream_handle == nullptr) return Reject(fn, rank, Status(Code::kPtr, "stream is NULL"));
  if (items == nullptr) return Reject(fn, rank, Status(Code::kPtr, "sendRecvInfo is NULL"));
  for (uint32_t i = 0; i < n; ++i) {
    const BatchItem& it = items[i];
    if (it.type != 0 && it.type != 1)
      return Reject(fn, rank, MakeStatus(Code::kPara, "item %u: sendRecvType %d is not HCCL_SEND(0) or HCCL_RECV(1)",
                                         i, it.type));
    if (it.count > 0 && it.buf == nullptr)
      return Reject(fn, rank, MakeStatus(Code::kPtr, "item %u: buf is NULL with count %llu", i,
                                         static_cast<unsigned long long>(it.count)));
    const uint64_t es = DataTypeSize(it.dtype);
    if (it.count > kMaxCount || (es != 0 && it.count > UINT64_MAX / es))
      return Reject(fn, rank, MakeStatus(Code::kPara, "item %u: count %llu > maximum %llu", i,
                                         static_cast<unsigned long long>(it.count),
                                         static_cast<unsigned long long>(kMaxCount)));
    if (es == 0)
      return Reject(fn, rank, MakeStatus(Code::kNotSupport, "item %u: dataType %d is not a known HcclDataType", i,
                                         it.dtype));
    Status prof = core::CheckCommProfile(comm.get(), CollKind::kBatchSendRecv, static_cast<DataType>(it.dtype),
                                         RedOp::kSum);
    if (!prof.ok()) return Reject(fn, rank, prof);
    if (!comm)
      return Reject(fn, rank, Status(Code::kPara, "comm is not a live communicator (destroyed or never created)"));
    if (it.remote >= static_cast<uint32_t>(comm->size()))
      return Reject(fn, rank, MakeStatus(Code::kPara, "item %u: remoteRank %u >= rankSize %d", i, it.remote,
                                         comm->size()));
  }
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = 0; j < i; ++j)
      if (items[i].type == items[j].type && items[i].remote == items[j].remote)
        return Reject(fn, rank, MakeStatus(Code::kPara, "items %u and %u are both %s rank %u; at most one send and "
                                           "one receive per peer", j, i, items[i].type == 0 ? "sends to" :
                                           "receives from", items[i].remote));
  const BatchItem* self_send = nullptr;
  const BatchItem* self_recv = nullptr;
  for (uint32_t i = 0; i < n; ++i)
    if (items[i].remote == static_cast<uint32_t>(rank)) (items[i].type == 0 ? self_send : self_recv) = &items[i];
  if ((self_send == nullptr) != (self_recv == nullptr))
    return Reject(fn, rank, MakeStatus(Code::kPara, "a %s item to this rank itself (remoteRank %d) needs a matching "
                                       "%s item (self items are a local copy)", self_send ? "send" : "receive", rank,
                                       self_send ? "receive" : "send"));
  if (self_send && (self_send->count != self_recv->count || self_send->dtype != self_recv->dtype))
    return Reject(fn, rank, MakeStatus(Code::kPara, "self items differ: send count=%llu %s, receive count=%llu %s",
                                       static_cast<unsigned long long>(self_send->count),
                                       DataTypeName(self_send->dtype),
                                       static_cast<unsigned long long>(self_recv->count),
                                       DataTypeName(self_recv->dtype)));
  auto list = std::make_shared<std::vector<algo::P2PItem>>();
  for (uint32_t i = 0; i < n; ++i) {
    const BatchItem& it = items[i];
    const uint64_t es = DataTypeSize(it.dtype);
    if (it.count > 0 && reinterpret_cast<uintptr_t>(it.buf) % es != 0)
      return Reject(fn, rank, MakeStatus(Code::kPara, "item %u: buf %p is not aligned to %zu bytes (the size of %s)",
                                         i, it.buf, static_cast<size_t>(es), DataTypeName(it.dtype)));
    if (it.count > 0) {
      const std::string arg = StrFormat("item %u: buf", i);
      const std::optional<rt::Allocation> alloc = rt::FindAllocation(it.buf);
      Status sz = comm->host_buffers_allowed() ? Status::Ok() : CheckDeviceMemory(arg.c_str(), it.buf, alloc);
      if (sz.ok()) sz = CheckDeviceSize(arg.c_str(), it.buf, alloc, it.count, it.dtype);
      if (!sz.ok()) return Reject(fn, rank, sz);
    }
    algo::P2PItem p;
    p.send = it.type == 0;
    p.peer = static_cast<int>(it.remote);
    p.buf = it.buf;
    p.count = it.count;
    p.dtype = static_cast<DataType>(it.dtype);
    list->push_back(p);
  }
  if (comm->failed()) {
    Status e = comm->error();
    return Reject(fn, rank, Status(e.code(), "communicator failed earlier: " + e.message()));
  }
  rt::Stream* stream = rt::LookupStream(stream_handle);
  if (stream == nullptr)
    return Reject(fn, rank, MakeStatus(Code::kPara, "stream %p is not a live stream", stream_handle));
  *args = algo::OpArgs();
  args->kind = CollKind::kBatchSendRecv;
  args->items = std::move(list);
  out->comm = std::move(comm);
  out->stream = stream;
  return Status::Ok();
}

}  // namespace hostccl::api
