// extern "C" operators (hccl/hccl.h): a few lines each: build the call record, check it
// (api/arg_check.cc, driven by the operator's row in common/ops.h) and enqueue it
// (Communicator::Enqueue -> Run). Operators whose row says "not implemented" return
// HCCL_E_NOT_SUPPORT with one log line.
#include <vector>

#include "api/arg_check.h"
#include "api/enum_bits.h"
#include "api/export.h"
#include "api/group.h"
#include "api/result.h"
#include "common/dtype.h"
#include "common/log.h"
#include "hccl/hccl.h"

using hostccl::Code;
using hostccl::Status;
using hostccl::api::Guard;
using hostccl::api::Reject;
using hostccl::api::ToResult;

// Our one dtype/op list must agree with the public header's values.
#define X(id, v, name, size, red) \
  static_assert(static_cast<int>(hostccl::DataType::k##id) == v, "dtype list out of sync");
HOSTCCL_FOR_EACH_DTYPE(X)
#undef X
static_assert(HCCL_DATA_TYPE_INT8 == 0 && HCCL_DATA_TYPE_FP16 == 3 && HCCL_DATA_TYPE_FP32 == 4 &&
                  HCCL_DATA_TYPE_BFP16 == 11 && HCCL_DATA_TYPE_HIF8 == 14 && HCCL_DATA_TYPE_FP8E8M0 == 17,
              "HcclDataType values");
static_assert(HCCL_REDUCE_SUM == 0 && HCCL_REDUCE_PROD == 1 && HCCL_REDUCE_MAX == 2 && HCCL_REDUCE_MIN == 3,
              "HcclReduceOp values");

using hostccl::api::EnumBits;  // HcclDataType / HcclReduceOp arguments may be any int

namespace {

// The V arrays: host uint64_t arrays passed as `const void*`.
const uint64_t* Words(const void* p) { return static_cast<const uint64_t*>(p); }

// Every buffer-and-count operator: check (in the operator's order, from its row), build the
// record, enqueue. Nothing is enqueued when a check fails.
// Inside HcclGroupStart/End: the group part of the check, and the call is deferred (api/group.h).
HcclResult CheckAndEnqueue(const hostccl::api::OpCall& call) {
  if (hostccl::api::GroupDepth() > 0) return hostccl::api::GroupAppend(call);
  // The success path of an ordinary call needs no Status, no message and no reference count
  // (CheckFast); anything else gets CheckOp's verdict.
  if (const hostccl::api::FastCheck fc(call); const hostccl::api::FastChecked* f = fc.get()) {
    // A remembered call reuses its record (core::PreparedCall); a new one builds it.
    Status st = fc.prepared() != nullptr
                    ? f->comm->EnqueuePrepared(f->stream, *fc.prepared(), f->send_alloc, f->recv_alloc, fc.thread())
                    : f->comm->Enqueue(f->stream, hostccl::api::ToArgs(call), f->send_alloc, f->recv_alloc);
    if (!st.ok()) return ToResult(Reject(hostccl::FindOp(call.kind)->api, f->comm->rank(), st));
    return HCCL_SUCCESS;
  }
  hostccl::api::Checked ck;
  Status st = hostccl::api::CheckOp(call, &ck);
  if (!st.ok()) return ToResult(st);
  if (ck.done) return HCCL_SUCCESS;
  // Checked but not implemented yet: its row's `impl` is false (common/ops.h).
  const hostccl::OpInfo& o = *hostccl::FindOp(call.kind);
  if (!o.implemented)
    return ToResult(Reject(o.api, ck.comm->rank(),
                           MakeStatus(Code::kNotSupport, "%s is not implemented by hostccl yet", o.api)));
  st = ck.comm->Enqueue(ck.stream, hostccl::api::ToArgs(call), ck.send_alloc, ck.recv_alloc);
  if (!st.ok()) return ToResult(Reject(o.api, ck.comm->rank(), st));
  return HCCL_SUCCESS;
}

}  // namespace

HOSTCCL_API HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                  HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kReduce, sendBuf, recvBuf, count, EnumBits(dataType), EnumBits(op),
                            root, comm, stream});
  });
}

HOSTCCL_API HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                     HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kAllReduce, sendBuf, recvBuf, count, EnumBits(dataType), EnumBits(op),
                            0, comm, stream});
  });
}

// One buffer, in place by definition: it is both the record's send (read on the root) and recv
// (written on the others).
HOSTCCL_API HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                     aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kBroadcast, buf, buf, count, EnumBits(dataType), 0, root, comm, stream});
  });
}

// sendBuf holds n blocks of recvCount elements; rank r receives the fold of every rank's block r.
HOSTCCL_API HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                         HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kReduceScatter, sendBuf, recvBuf, recvCount, EnumBits(dataType),
                            EnumBits(op), 0, comm, stream});
  });
}

HOSTCCL_API HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType,
                                     HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kAllGather, sendBuf, recvBuf, sendCount, EnumBits(dataType), 0, 0, comm,
                            stream});
  });
}

// Point-to-point (matching and blocking: docs/semantics.md "Point-to-point"): the peer travels
// in the record's root field; Recv's buffer is its recv.
HOSTCCL_API HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                                aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kSend, sendBuf, nullptr, count, EnumBits(dataType), 0, destRank, comm,
                            stream});
  });
}

// sendBuf is read on the root only (the others may pass NULL).
HOSTCCL_API HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                                   uint32_t root, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kScatter, sendBuf, recvBuf, recvCount, EnumBits(dataType), 0, root,
                            comm, stream});
  });
}

HOSTCCL_API HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                                aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({hostccl::CollKind::kRecv, nullptr, recvBuf, count, EnumBits(dataType), 0, srcRank, comm,
                            stream});
  });
}

HOSTCCL_API HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                         aclrtStream stream) {
  return Guard(__func__, [&] {
    if (hostccl::api::GroupDepth() > 0) return hostccl::api::GroupRejectCall("HcclBatchSendRecv", comm);
    std::vector<hostccl::api::BatchItem> items;
    if (sendRecvInfo != nullptr) {
      items.reserve(itemNum);
      for (uint32_t i = 0; i < itemNum; ++i) {
        const HcclSendRecvItem& it = sendRecvInfo[i];
        items.push_back({EnumBits(it.sendRecvType), it.buf, it.count, EnumBits(it.dataType), it.remoteRank});
      }
    }
    hostccl::api::Checked ck;
    hostccl::algo::OpArgs args;
    Status st = hostccl::api::CheckBatch(sendRecvInfo ? items.data() : nullptr, itemNum, comm, stream, &ck, &args);
    if (!st.ok()) return ToResult(st);
    if (ck.done) return HCCL_SUCCESS;
    st = ck.comm->Enqueue(ck.stream, args);
    if (!st.ok()) return ToResult(Reject("HcclBatchSendRecv", ck.comm->rank(), st));
    return HCCL_SUCCESS;
  });
}


HOSTCCL_API HcclResult HcclReduceScatterV(void* sendBuf, const void* sendCounts, const void* sendDispls, void* recvBuf,
                                          uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                          aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({.kind = hostccl::CollKind::kReduceScatterV, .send = sendBuf, .recv = recvBuf,
                            .count = recvCount, .dtype = EnumBits(dataType), .op = EnumBits(op), .root = 0,
                            .comm = comm, .stream = stream, .send_counts = Words(sendCounts),
                            .send_displs = Words(sendDispls)});
  });
}
HOSTCCL_API HcclResult HcclAllGatherV(void* sendBuf, uint64_t sendCount, void* recvBuf, const void* recvCounts,
                                      const void* recvDispls, HcclDataType dataType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({.kind = hostccl::CollKind::kAllGatherV, .send = sendBuf, .recv = recvBuf,
                            .count = sendCount, .dtype = EnumBits(dataType), .op = 0, .root = 0, .comm = comm,
                            .stream = stream, .recv_counts = Words(recvCounts), .recv_displs = Words(recvDispls)});
  });
}
// The AlltoAll family declares recvBuf `const void*` although it is written (HCCL's header).
HOSTCCL_API HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType,
                                      const void* recvBuf, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({.kind = hostccl::CollKind::kAlltoAllVC, .send = const_cast<void*>(sendBuf),
                            .recv = const_cast<void*>(recvBuf), .count = 0, .dtype = EnumBits(sendType), .op = 0,
                            .root = 0, .comm = comm, .stream = stream, .matrix = Words(sendCountMatrix),
                            .recv_dtype = EnumBits(recvType)});
  });
}
HOSTCCL_API HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls,
                                     HcclDataType sendType, const void* recvBuf, const void* recvCounts,
                                     const void* rdispls, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({.kind = hostccl::CollKind::kAlltoAllV, .send = const_cast<void*>(sendBuf),
                            .recv = const_cast<void*>(recvBuf), .count = 0, .dtype = EnumBits(sendType), .op = 0,
                            .root = 0, .comm = comm, .stream = stream, .send_counts = Words(sendCounts),
                            .send_displs = Words(sdispls), .recv_counts = Words(recvCounts),
                            .recv_displs = Words(rdispls), .recv_dtype = EnumBits(recvType)});
  });
}
HOSTCCL_API HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType, const void* recvBuf,
                                    uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
  return Guard(__func__, [&] {
    return CheckAndEnqueue({.kind = hostccl::CollKind::kAlltoAll, .send = const_cast<void*>(sendBuf),
                            .recv = const_cast<void*>(recvBuf), .count = sendCount, .dtype = EnumBits(sendType),
                            .op = 0, .root = 0, .comm = comm, .stream = stream, .recv_count = recvCount,
                            .recv_dtype = EnumBits(recvType)});
  });
}
