#include "api/comm_config.h"

#include <cstring>

#include "common/log.h"
#include "hccl/hccl_comm.h"

namespace hostccl::api {

Status ReadCommConfig(const HcclCommConfig* config, core::CommConfig* out) {
  *out = core::CommConfig();
  if (config == nullptr) return Status::Ok();
  size_t size = 0;
  uint32_t magic = 0, version = 0;
  std::memcpy(&size, config->reserved, sizeof(size));
  std::memcpy(&magic, config->reserved + 8, sizeof(magic));
  std::memcpy(&version, config->reserved + 12, sizeof(version));
  if (magic != HCCL_COMM_CONFIG_MAGIC_WORD)
    return MakeStatus(Code::kPara, "config magic word 0x%x != 0x%x: the config must be initialized with "
                      "HcclCommConfigInit", magic, HCCL_COMM_CONFIG_MAGIC_WORD);
  if (size < 24) return MakeStatus(Code::kPara, "config size %zu is smaller than its 24-byte header", size);
  if (version != HCCL_COMM_CONFIG_VERSION)
    HLOG_DEBUG(kInit, "HcclCommConfig version %u (library knows %u); reading fields up to the older one",
               version, HCCL_COMM_CONFIG_VERSION);
  // Copy what the caller has (its size, clamped to ours) over our defaults.
  HcclCommConfig c;
  HcclCommConfigInit(&c);
  std::memcpy(&c, config, std::min(size, sizeof(HcclCommConfig)));
  if (version >= 1) {
    if (c.hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET) {
      if (c.hcclBufferSize < 1) return Status(Code::kPara, "config hcclBufferSize 0 must be >= 1 (MB)");
      out->buffer_mb = c.hcclBufferSize;
    }
    if (c.hcclDeterministic != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET && c.hcclDeterministic > 2)
      return MakeStatus(Code::kPara, "config hcclDeterministic %u must be 0, 1 or 2", c.hcclDeterministic);
  }
  if (version >= 2 && size >= 32 + 1) {
    size_t name_room = std::min<size_t>(sizeof(c.hcclCommName), size - 32);
    size_t len = strnlen(c.hcclCommName, name_room);
    if (len == name_room && len > 0)
      return Status(Code::kPara, "config hcclCommName is not NUL-terminated");
    out->name.assign(c.hcclCommName, len);
  }
  if (version >= 7 && size > 312 && c.aclGraphZeroCopyEnable > 1)
    return MakeStatus(Code::kPara, "config aclGraphZeroCopyEnable %u must be 0 or 1", c.aclGraphZeroCopyEnable);
  if (version >= 8 && size >= 320 && c.hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET) {
    if (c.hcclExecTimeOut < 0)
      return MakeStatus(Code::kPara, "config hcclExecTimeOut %d must be >= 0 seconds", c.hcclExecTimeOut);
    out->exec_timeout_s = c.hcclExecTimeOut;
  }
  // hcclSymWinMaxMemSizePerRank (GB, since v10); 0 keeps the default.
  if (version >= 10 && size >= 2240 && c.hcclSymWinMaxMemSizePerRank != 0) {
    if (c.hcclSymWinMaxMemSizePerRank > (uint64_t{1} << 20))
      return MakeStatus(Code::kPara, "config hcclSymWinMaxMemSizePerRank %llu GB is larger than 1 PiB",
                        static_cast<unsigned long long>(c.hcclSymWinMaxMemSizePerRank));
    out->sym_win_max_gb = c.hcclSymWinMaxMemSizePerRank;
  }
  return Status::Ok();
}

}  // namespace hostccl::api
