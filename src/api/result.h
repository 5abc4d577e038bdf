// Status -> HcclResult, and the guard that keeps C++ exceptions from crossing the C boundary.
#pragma once

#include <exception>
#include <new>

#include "common/log.h"
#include "common/status.h"
#include "hccl/hccl_types.h"

namespace hostccl::api {

inline HcclResult ToResult(const Status& st) { return static_cast<HcclResult>(static_cast<int>(st.code())); }

// Runs `body` (returning HcclResult); bad_alloc -> HCCL_E_MEMORY, anything else -> HCCL_E_INTERNAL.
template <typename F>
HcclResult Guard(const char* fn, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    HLOG_ERROR(kCall, "%s: out of memory", fn);
    return HCCL_E_MEMORY;
  } catch (const std::exception& e) {
    HLOG_ERROR(kCall, "%s: internal error: %s", fn, e.what());
    return HCCL_E_INTERNAL;
  } catch (...) {
    HLOG_ERROR(kCall, "%s: internal error", fn);
    return HCCL_E_INTERNAL;
  }
}

}  // namespace hostccl::api
