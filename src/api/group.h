// HcclGroupStart / HcclGroupEnd / HcclGroupStatusGet (collectives.md 1.1; docs/semantics.md §8
// "Group calls"). The group state is per thread (each thread has its own depth and its own list
// of deferred operations), like NCCL's.
//
// Inside a group an operator entry point runs only the group part of its check (CheckOp with
// group_entry: count 0 -> success and nothing appended; NULL comm, buffers, stream -> E_PTR;
// Send/Recv also the count range -> E_PARA), appends the call and returns HCCL_SUCCESS. The V
// family (AllGatherV, ReduceScatterV, AlltoAll, AlltoAllV, AlltoAllVC) runs the leading zero-count
// and NULL-pointer steps of its own order, and its arrays are copied (the caller's are valid only
// during the call); on a handle that is not a live communicator (its size unknown) it is checked
// whole at the call.
// HcclBatchSendRecv, HcclBarrier, and mixing collectives with Send/Recv in one group fail at the
// offending call with HCCL_E_NOT_SUPPORT (the call is not appended; the group goes on).
// At the outermost HcclGroupEnd every deferred call gets its full check, in call order; the first
// failure is returned and nothing of the group is enqueued. Then: Send/Recv calls on one
// communicator and stream run as one batch (like HcclBatchSendRecv: its sends and receives
// progress together, so matching pairs complete in any order); batches are enqueued in the order
// of their first call. Collectives are enqueued one by one in call order. The group is cleared
// whatever HcclGroupEnd returns.
#pragma once

#include "api/arg_check.h"
#include "hccl/hccl_types.h"

namespace hostccl::api {

// Depth of the calling thread's group (0: not in a group).
int GroupDepth();
// Starts (or nests) a group.
HcclResult GroupStart();
// Ends one level; at the outermost level runs the deferred calls (above).
HcclResult GroupEnd();
// Inside a group: the group part of the check of `call`, then appends it (see above).
HcclResult GroupAppend(const OpCall& call);
// Inside a group: `fn` (HcclBatchSendRecv, HcclBarrier) cannot be part of a group.
HcclResult GroupRejectCall(const char* fn, void* comm);

}  // namespace hostccl::api
