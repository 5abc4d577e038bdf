// Reads a caller's HcclCommConfig by its self-described size and version (old and new headers),
// accepting both the old headers' real defaults and the new headers' "not set" sentinels.
#pragma once

#include "common/status.h"
#include "core/communicator.h"
#include "hccl/hccl_types.h"

namespace hostccl::api {

Status ReadCommConfig(const HcclCommConfig* config, core::CommConfig* out);

}  // namespace hostccl::api
