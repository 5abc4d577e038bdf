/*
 * hostccl public header: HCCL collective and point-to-point operators (hccl/hccl.h).
 *
 * The 14 operator entry points with HCCL's signatures, plus (through hccl_comm.h and acl/acl.h)
 * communicator management and the AscendCL runtime, so `#include "hccl/hccl.h"` is all a program
 * needs. Every operator enqueues its work on `stream` and returns; aclrtSynchronizeStream waits
 * for completion. Per communicator, operators are issued by one thread at a time and every rank
 * issues the same sequence with matching count/dataType/op/root. Count and displacement arrays
 * are host arrays of uint64_t (elements), one entry per rank; sendCountMatrix is
 * rankSize x rankSize uint64_t (row = sender). Compiles as C99 and C++11 or later.
 */
#ifndef HCCL_H_
#define HCCL_H_

/* clang-format off */
/* Include order as in HCCL/CANN. */
#include "hccl_types.h"
#include "hccl_comm.h"
#include "../acl/acl.h"
/* clang-format on */

#ifdef __cplusplus
extern "C" {
#endif

extern HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                HcclReduceOp op, HcclComm comm, aclrtStream stream);
extern HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                                HcclComm comm, aclrtStream stream);
extern HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                                    HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                    aclrtStream stream);
extern HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                                     void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                     HcclReduceOp op, HcclComm comm, aclrtStream stream);
/* Non-root ranks may pass sendBuf = NULL. */
extern HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                              HcclDataType dataType, uint32_t root, HcclComm comm,
                              aclrtStream stream);
extern HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
                                HcclDataType dataType, HcclComm comm, aclrtStream stream);
extern HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                                 const void *recvCounts, const void *recvDispls,
                                 HcclDataType dataType, HcclComm comm, aclrtStream stream);
/* Matched pairwise; behaves synchronously between the pair. */
extern HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                           HcclComm comm, aclrtStream stream);
extern HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                           HcclComm comm, aclrtStream stream);
/* recvBuf is written although declared const (as in HCCL). */
extern HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix,
                                 HcclDataType sendType, const void *recvBuf, HcclDataType recvType,
                                 HcclComm comm, aclrtStream stream);
extern HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                                HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                                const void *rdispls, HcclDataType recvType, HcclComm comm,
                                aclrtStream stream);
extern HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                               const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                               HcclComm comm, aclrtStream stream);
/* The reduction lands only in root's recvBuf; recvBuf must be non-null on every rank. */
extern HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                             HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);
/* Sends and receives of one call do not block each other; no duplicate (direction, peer). */
extern HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* HCCL_H_ */
