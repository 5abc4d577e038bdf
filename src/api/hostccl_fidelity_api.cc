// HostcclCommAllowHostBuffers and HostcclSetFidelity (include/hostccl/hostccl.h): the documented
// ways around NPU fidelity (docs/semantics.md "Fidelity") that do not depend on HOSTCCL_FIDELITY,
// for programs such as the Python backend whose tensors live in host memory.
#include "api/arg_check.h"
#include "api/export.h"
#include "api/result.h"
#include "common/log.h"
#include "core/communicator.h"
#include "hostccl/hostccl.h"
#include "runtime/device.h"

using namespace hostccl;

HOSTCCL_API HcclResult HostcclCommAllowHostBuffers(HcclComm comm) {
  const char* fn = "HostcclCommAllowHostBuffers";
  return api::Guard(fn, [&] {
    if (comm == nullptr) return api::ToResult(api::Reject(fn, -1, Status(Code::kPtr, "comm is NULL")));
    std::shared_ptr<core::Communicator> c = core::LookupComm(comm);
    if (!c)
      return api::ToResult(api::Reject(fn, core::DestroyedCommRank(comm),
                                       Status(Code::kPara, "comm is not a live communicator (destroyed or never created)")));
    c->AllowHostBuffers();
    HLOG_INFO(kCall, "%s: communicator '%s' (rank %d) accepts host buffers", fn, c->name().c_str(), c->rank());
    return HCCL_SUCCESS;
  });
}

HOSTCCL_API void HostcclSetFidelity(int mode) {
  rt::SetFidelityOverride(mode);
  HLOG_INFO(kCall, "HostcclSetFidelity(%d): NPU fidelity %s", mode,
            mode < 0 ? "follows HOSTCCL_FIDELITY" : mode ? "on" : "off");
}
