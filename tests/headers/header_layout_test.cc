// Pins every value, size and offset of the public HCCL/AscendCL headers that is ABI: enum values,
// constants, struct sizes and field offsets (LP64), and what HcclCommConfigInit writes. A wrong
// number fails to compile (static_assert) or fails a test, never silently.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

namespace hostccl::headers {
namespace {

// HcclResult (the 13.. gap values and the 1041/1042 tail included).
static_assert(HCCL_SUCCESS == 0 && HCCL_E_PARA == 1 && HCCL_E_PTR == 2 && HCCL_E_MEMORY == 3);
static_assert(HCCL_E_INTERNAL == 4 && HCCL_E_NOT_SUPPORT == 5 && HCCL_E_NOT_FOUND == 6);
static_assert(HCCL_E_UNAVAIL == 7 && HCCL_E_SYSCALL == 8 && HCCL_E_TIMEOUT == 9);
static_assert(HCCL_E_OPEN_FILE_FAILURE == 10 && HCCL_E_TCP_CONNECT == 11);
static_assert(HCCL_E_ROCE_CONNECT == 12 && HCCL_E_TCP_TRANSFER == 13);
static_assert(HCCL_E_ROCE_TRANSFER == 14 && HCCL_E_RUNTIME == 15 && HCCL_E_DRV == 16);
static_assert(HCCL_E_PROFILING == 17 && HCCL_E_CCE == 18 && HCCL_E_NETWORK == 19);
static_assert(HCCL_E_AGAIN == 20 && HCCL_E_REMOTE == 21 && HCCL_E_SUSPENDING == 22);
static_assert(HCCL_E_OPRETRY_FAIL == 23 && HCCL_E_OOM == 24);
static_assert(HCCL_E_IN_STATUS == 1041 && HCCL_E_RESERVED == 1042);
static_assert(sizeof(HcclResult) == sizeof(int));

static_assert(HCCL_REDUCE_SUM == 0 && HCCL_REDUCE_PROD == 1 && HCCL_REDUCE_MAX == 2);
static_assert(HCCL_REDUCE_MIN == 3 && HCCL_REDUCE_RESERVED == 255);

static_assert(HCCL_DATA_TYPE_INT8 == 0 && HCCL_DATA_TYPE_INT16 == 1 && HCCL_DATA_TYPE_INT32 == 2);
static_assert(HCCL_DATA_TYPE_FP16 == 3 && HCCL_DATA_TYPE_FP32 == 4 && HCCL_DATA_TYPE_INT64 == 5);
static_assert(HCCL_DATA_TYPE_UINT64 == 6 && HCCL_DATA_TYPE_UINT8 == 7);
static_assert(HCCL_DATA_TYPE_UINT16 == 8 && HCCL_DATA_TYPE_UINT32 == 9);
static_assert(HCCL_DATA_TYPE_FP64 == 10 && HCCL_DATA_TYPE_BFP16 == 11);
static_assert(HCCL_DATA_TYPE_INT128 == 12 && HCCL_DATA_TYPE_HIF8 == 14);
static_assert(HCCL_DATA_TYPE_FP8E4M3 == 15 && HCCL_DATA_TYPE_FP8E5M2 == 16);
static_assert(HCCL_DATA_TYPE_FP8E8M0 == 17 && HCCL_DATA_TYPE_RESERVED == 255);

static_assert(HCCL_DETERMINISTIC == 0 && HCCL_CONFIG_RESERVED == 1);
static_assert(sizeof(HcclConfigValue) == 4);

// Constants, with their types.
static_assert(std::is_same_v<decltype(HCCL_ROOT_INFO_BYTES), const uint32_t>);
static_assert(HCCL_ROOT_INFO_BYTES == 4108 && COMM_NAME_MAX_LENGTH == 128);
static_assert(BUFFER_NAME_MAX_LENGTH == 128 && UDI_MAX_LENGTH == 128);
static_assert(HCCL_COMM_ALGO_MAX_LENGTH == 1600 && HCCL_COMM_RETRY_ENABLE_MAX_LENGTH == 50);
static_assert(HCCL_COMM_RETRY_PARAMS_MAX_LENGTH == 128 && HCCL_COMM_CONFIG_INFO_BYTES == 24);
static_assert(HCCL_COMM_CONFIG_MAGIC_WORD == 0xf0f0f0f0u && HCCL_COMM_CONFIG_VERSION == 11);
static_assert(HCCL_COMM_DEFAULT_BUFFSIZE == 200 && HCCL_COMM_DEFAULT_DETERMINISTIC == 0);
static_assert(HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET == 0xffffffffu);
static_assert(HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET == 0xffffffffu);
static_assert(HCCL_COMM_DEFAULT_OP_EXPANSION_MODE == 0);
static_assert(HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET == 0xffffffffu);
static_assert(HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET == 0xffffffffu);
static_assert(std::is_same_v<decltype(HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET), const int32_t>);
static_assert(HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET == -1);
static_assert(HCCL_COMM_QOS_CONFIG_NOT_SET == 0xffffffffu);
static_assert(HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET == 0xffffffffu);
static_assert(HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE == 16u);

// HcclRootInfo: 4108 raw bytes, alignment 1.
static_assert(sizeof(HcclRootInfo) == 4108 && alignof(HcclRootInfo) == 1);
static_assert(offsetof(HcclRootInfo, internal) == 0);
static_assert(std::is_same_v<HcclRootInfo, HcclRootInfoDef>);

// HcclCommConfig v11: 2248 bytes, every field at HCCL's offset, a C++11 aggregate.
static_assert(sizeof(HcclCommConfig) == 2248 && alignof(HcclCommConfig) == 8);
static_assert(offsetof(HcclCommConfig, reserved) == 0);
static_assert(offsetof(HcclCommConfig, hcclBufferSize) == 24);
static_assert(offsetof(HcclCommConfig, hcclDeterministic) == 28);
static_assert(offsetof(HcclCommConfig, hcclCommName) == 32);
static_assert(offsetof(HcclCommConfig, hcclUdi) == 160);
static_assert(offsetof(HcclCommConfig, hcclOpExpansionMode) == 288);
static_assert(offsetof(HcclCommConfig, hcclRdmaTrafficClass) == 292);
static_assert(offsetof(HcclCommConfig, hcclRdmaServiceLevel) == 296);
static_assert(offsetof(HcclCommConfig, hcclWorldRankID) == 300);
static_assert(offsetof(HcclCommConfig, hcclJobID) == 304);
static_assert(offsetof(HcclCommConfig, aclGraphZeroCopyEnable) == 312);
static_assert(offsetof(HcclCommConfig, hcclExecTimeOut) == 316);
static_assert(offsetof(HcclCommConfig, hcclAlgo) == 320);
static_assert(offsetof(HcclCommConfig, hcclRetryEnable) == 1920);
static_assert(offsetof(HcclCommConfig, hcclRetryParams) == 1970);
static_assert(offsetof(HcclCommConfig, hcclBufferName) == 2098);
static_assert(offsetof(HcclCommConfig, hcclQos) == 2228);
static_assert(offsetof(HcclCommConfig, hcclSymWinMaxMemSizePerRank) == 2232);
static_assert(offsetof(HcclCommConfig, hcclChannelSqDepth) == 2240);
static_assert(sizeof(HcclCommConfig::reserved) == 24 &&
              sizeof(HcclCommConfig::hcclCommName) == 128);
static_assert(sizeof(HcclCommConfig::hcclUdi) == 128 && sizeof(HcclCommConfig::hcclAlgo) == 1600);
static_assert(sizeof(HcclCommConfig::hcclRetryEnable) == 50);
static_assert(sizeof(HcclCommConfig::hcclRetryParams) == 128);
static_assert(sizeof(HcclCommConfig::hcclBufferName) == 128);
static_assert(std::is_same_v<decltype(HcclCommConfig::hcclJobID), uint64_t>);
static_assert(std::is_same_v<decltype(HcclCommConfig::aclGraphZeroCopyEnable), uint8_t>);
static_assert(std::is_same_v<decltype(HcclCommConfig::hcclExecTimeOut), int32_t>);
static_assert(std::is_same_v<decltype(HcclCommConfig::hcclSymWinMaxMemSizePerRank), uint64_t>);
static_assert(std::is_aggregate_v<HcclCommConfig> && std::is_trivial_v<HcclCommConfig>);
static_assert(std::is_standard_layout_v<HcclCommConfig>);
static_assert(std::is_same_v<HcclCommConfig, HcclCommConfigDef>);

static_assert(HCCL_COMM_CONFIG_BUFFER_SIZE == 0 && HCCL_COMM_CONFIG_DETERMINISTIC == 1);
static_assert(HCCL_COMM_CONFIG_COMM_NAME == 2 && HCCL_COMM_CONFIG_OP_EXPANSION_MODE == 3);
static_assert(HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV == 4 && HCCL_COMM_CONFIG_WORLD_RANKID == 5);
static_assert(HCCL_COMM_CONFIG_JOBID == 6 && HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE == 7);
static_assert(HCCL_COMM_CONFIG_EXEC_TIMEOUT == 8 && HCCL_COMM_CONFIG_ALGO == 9);
static_assert(HCCL_COMM_CONFIG_RETRY == 10 && HCCL_COMM_CONFIG_BUFFER_NAME == 11);
static_assert(HCCL_COMM_CONFIG_RESERVED == 12);

// Batch send/recv: 32 bytes, HCCL's member order.
static_assert(HCCL_SEND == 0 && HCCL_RECV == 1 && HCCL_SEND_RECV_RESERVED == 2);
static_assert(sizeof(HcclSendRecvItem) == 32 && alignof(HcclSendRecvItem) == 8);
static_assert(offsetof(HcclSendRecvItem, sendRecvType) == 0);
static_assert(offsetof(HcclSendRecvItem, buf) == 8);
static_assert(offsetof(HcclSendRecvItem, count) == 16);
static_assert(offsetof(HcclSendRecvItem, dataType) == 24);
static_assert(offsetof(HcclSendRecvItem, remoteRank) == 28);
static_assert(std::is_same_v<decltype(HcclSendRecvItem::count), uint64_t>);
static_assert(std::is_same_v<decltype(HcclSendRecvItem::remoteRank), uint32_t>);
static_assert(std::is_aggregate_v<HcclSendRecvItem>);

// Section 2.11 enums.
static_assert(HCCL_CMD_INVALID == 0 && HCCL_CMD_BROADCAST == 1 && HCCL_CMD_ALLREDUCE == 2);
static_assert(HCCL_CMD_REDUCE == 3 && HCCL_CMD_SEND == 4 && HCCL_CMD_RECEIVE == 5);
static_assert(HCCL_CMD_ALLGATHER == 6 && HCCL_CMD_REDUCE_SCATTER == 7);
static_assert(HCCL_CMD_ALLTOALLV == 8 && HCCL_CMD_ALLTOALLVC == 9 && HCCL_CMD_ALLTOALL == 10);
static_assert(HCCL_CMD_GATHER == 11 && HCCL_CMD_SCATTER == 12 && HCCL_CMD_BATCH_SEND_RECV == 13);
static_assert(HCCL_CMD_BATCH_PUT == 14 && HCCL_CMD_BATCH_GET == 15 && HCCL_CMD_ALLGATHER_V == 16);
static_assert(HCCL_CMD_REDUCE_SCATTER_V == 17 && HCCL_CMD_BATCH_WRITE == 18);
static_assert(HCCL_CMD_HALF_ALLTOALLV == 20 && HCCL_CMD_ALL == 21 && HCCL_CMD_FINALIZE == 100);
static_assert(HCCL_CMD_INTER_GROUP_SYNC == 101 && HCCL_CMD_INIT == 102);
static_assert(HCCL_CMD_BARRIER == 103 && HCCL_CMD_MAX == 104);
static_assert(HCCL_COMM_STATUS_READY == 0 && HCCL_COMM_STATUS_SUSPENDING == 1);
static_assert(HCCL_COMM_STATUS_INVALID == 254 && HCCL_COMM_STATUS_RESERVED == 255);
static_assert(HCCL_COMM_STATE_PHASE_INVALID == -1 && HCCL_COMM_STATE_PHASE_DESTROY_PRE == 0);
static_assert(HCCL_COMM_STATE_PHASE_DESTROY_POST == 1 && HCCL_COMM_STATE_PHASE_RESUME_PRE == 2);
static_assert(HCCL_COMM_STATE_PHASE_RESUME_POST == 3);
static_assert(HCCL_OP_EXPANSION_MODE_INVALID == -1 && HCCL_OP_EXPANSION_MODE_AI_CPU == 0);
static_assert(HCCL_OP_EXPANSION_MODE_AIV == 1 && HCCL_OP_EXPANSION_MODE_HOST == 2);
static_assert(HCCL_OP_EXPANSION_MODE_HOST_TS == 3 && HCCL_OP_EXPANSION_MODE_CCU_MS == 4);
static_assert(HCCL_OP_EXPANSION_MODE_CCU_SCHED == 5 && HCCL_OP_EXPANSION_AIV_ONLY == 6);
static_assert(HCCL_CONFIG_TYPE_INVALID == -1 && HCCL_CONFIG_TYPE_OP_EXPANSION_MODE == 0);
static_assert(HCCL_CONFIG_TYPE_HCCL_ALGO == 1);

// Handles are plain pointers.
static_assert(std::is_same_v<HcclComm, void*> && std::is_same_v<HcclConn, void*>);
static_assert(std::is_same_v<HcclCommSymWindow, void*>);
static_assert(std::is_same_v<aclrtStream, void*> && std::is_same_v<aclrtEvent, void*>);
static_assert(std::is_same_v<aclrtContext, void*> && std::is_same_v<aclrtDrvMemHandle, void*>);
static_assert(std::is_same_v<aclError, int> && std::is_same_v<aclFloat16, uint16_t>);

// AscendCL codes.
static_assert(ACL_SUCCESS == 0 && ACL_ERROR_NONE == 0 && ACL_RT_SUCCESS == 0);
static_assert(ACL_ERROR_INVALID_PARAM == 100000 && ACL_ERROR_UNINITIALIZE == 100001);
static_assert(ACL_ERROR_REPEAT_INITIALIZE == 100002 && ACL_ERROR_INVALID_FILE == 100003);
static_assert(ACL_ERROR_REPEAT_FINALIZE == 100037);
static_assert(ACL_ERROR_BAD_ALLOC == 200000 && ACL_ERROR_API_NOT_SUPPORT == 200001);
static_assert(ACL_ERROR_INVALID_DEVICE == 200002 && ACL_ERROR_MEMORY_ADDRESS_UNALIGNED == 200003);
static_assert(ACL_ERROR_RESOURCE_NOT_MATCH == 200004);
static_assert(ACL_ERROR_INVALID_RESOURCE_HANDLE == 200005);
static_assert(ACL_ERROR_FEATURE_UNSUPPORTED == 200006 && ACL_ERROR_STORAGE_OVER_LIMIT == 300000);
static_assert(ACL_ERROR_INTERNAL_ERROR == 500000 && ACL_ERROR_FAILURE == 500001);
static_assert(ACL_ERROR_GE_FAILURE == 500002 && ACL_ERROR_RT_FAILURE == 500003);
static_assert(ACL_ERROR_DRV_FAILURE == 500004 && ACL_ERROR_PROFILING_FAILURE == 500005);
static_assert(ACL_ERROR_RT_PARAM_INVALID == 107000 && ACL_ERROR_RT_INVALID_DEVICEID == 107001);
static_assert(ACL_ERROR_RT_CONTEXT_NULL == 107002 && ACL_ERROR_RT_STREAM_CONTEXT == 107003);
static_assert(ACL_ERROR_RT_WAIT_TIMEOUT == 107019 && ACL_ERROR_RT_TASK_TIMEOUT == 107020);
static_assert(ACL_ERROR_RT_FEATURE_NOT_SUPPORT == 207000);
static_assert(ACL_ERROR_RT_MEMORY_ALLOCATION == 207001 && ACL_ERROR_RT_MEMORY_FREE == 207002);
static_assert(ACL_ERROR_RT_NO_DEVICE == 207004 && ACL_ERROR_RT_DEVICE_OOM == 207018);
static_assert(ACL_ERROR_RT_INTERNAL_ERROR == 507000);
static_assert(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT == 507046);
static_assert(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT == 507047);
static_assert(ACL_ERROR_RT_COMM_OP_RETRY_FAIL == 507904);
static_assert(ACL_EVENT_SYNC == 0x1u && ACL_EVENT_CAPTURE_STREAM_PROGRESS == 0x2u);
static_assert(ACL_EVENT_TIME_LINE == 0x8u);
static_assert(ACL_CONTINUE_ON_FAILURE == 0u && ACL_STOP_ON_FAILURE == 1u);

static_assert(ACL_MEM_MALLOC_HUGE_FIRST == 0 && ACL_MEM_MALLOC_HUGE_ONLY == 1);
static_assert(ACL_MEM_MALLOC_NORMAL_ONLY == 2 && ACL_MEM_MALLOC_HUGE_FIRST_P2P == 3);
static_assert(ACL_MEM_MALLOC_HUGE_ONLY_P2P == 4 && ACL_MEM_MALLOC_NORMAL_ONLY_P2P == 5);
static_assert(ACL_MEM_MALLOC_HUGE1G_ONLY == 6 && ACL_MEM_MALLOC_HUGE1G_ONLY_P2P == 7);
static_assert(ACL_MEM_TYPE_LOW_BAND_WIDTH == 0x0100 && ACL_MEM_TYPE_HIGH_BAND_WIDTH == 0x1000);
static_assert(ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000);
static_assert(ACL_MEMCPY_HOST_TO_HOST == 0 && ACL_MEMCPY_HOST_TO_DEVICE == 1);
static_assert(ACL_MEMCPY_DEVICE_TO_HOST == 2 && ACL_MEMCPY_DEVICE_TO_DEVICE == 3);
static_assert(ACL_MEMCPY_DEFAULT == 4 && ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE == 5);
static_assert(ACL_MEMCPY_INNER_DEVICE_TO_DEVICE == 6 && ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7);
static_assert(ACL_DEVICE == 0 && ACL_HOST == 1);
static_assert(ACL_RT_OVERFLOW_MODE_SATURATION == 0 && ACL_RT_OVERFLOW_MODE_INFNAN == 1);
static_assert(ACL_RT_OVERFLOW_MODE_UNDEF == 2);
static_assert(aclrtMemAttr::ACL_DDR_MEM == 0 && ACL_HBM_MEM == 1 && ACL_DDR_MEM_HUGE == 2);
static_assert(ACL_DDR_MEM_NORMAL == 3 && ACL_HBM_MEM_HUGE == 4 && ACL_HBM_MEM_NORMAL == 5);
static_assert(ACL_DDR_MEM_P2P_HUGE == 6 && ACL_DDR_MEM_P2P_NORMAL == 7);
static_assert(ACL_HBM_MEM_P2P_HUGE == 8 && ACL_HBM_MEM_P2P_NORMAL == 9);
static_assert(ACL_HBM_MEM_HUGE1G == 10 && ACL_HBM_MEM_P2P_HUGE1G == 11 && ACL_MEM_NORMAL == 12);
static_assert(ACL_MEM_HUGE == 13 && ACL_MEM_HUGE1G == 14 && ACL_MEM_P2P_NORMAL == 15);
static_assert(ACL_MEM_P2P_HUGE == 16 && ACL_MEM_P2P_HUGE1G == 17);
static_assert(ACL_MEM_HANDLE_TYPE_NONE == 0 && ACL_MEM_HANDLE_TYPE_POSIX == 2);
static_assert(ACL_MEM_ALLOCATION_TYPE_PINNED == 0);
static_assert(ACL_MEM_LOCATION_TYPE_HOST == 0 && ACL_MEM_LOCATION_TYPE_DEVICE == 1);
static_assert(ACL_MEM_LOCATION_TYPE_UNREGISTERED == 2 && ACL_MEM_LOCATION_TYPE_MANAGED == 3);
static_assert(ACL_MEM_LOCATION_TYPE_HOST_NUMA == 4);
static_assert(ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM == 0);
static_assert(ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED == 1);
static_assert(ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF == 0xFFFF);

static_assert(sizeof(aclrtMemLocation) == 8 && offsetof(aclrtMemLocation, id) == 0);
static_assert(offsetof(aclrtMemLocation, type) == 4);
static_assert(std::is_same_v<decltype(aclrtMemLocation::id), uint32_t>);
static_assert(sizeof(aclrtPhysicalMemProp) == 32 && alignof(aclrtPhysicalMemProp) == 8);
static_assert(offsetof(aclrtPhysicalMemProp, handleType) == 0);
static_assert(offsetof(aclrtPhysicalMemProp, allocationType) == 4);
static_assert(offsetof(aclrtPhysicalMemProp, memAttr) == 8);
static_assert(offsetof(aclrtPhysicalMemProp, location) == 12);
static_assert(offsetof(aclrtPhysicalMemProp, reserve) == 24);

// Profiler.
static_assert(ACL_PROF_ACL_API == 0x0001 && ACL_PROF_TASK_TIME == 0x0002);
static_assert(ACL_PROF_AICORE_METRICS == 0x0004 && ACL_PROF_AICPU == 0x0008);
static_assert(ACL_PROF_L2CACHE == 0x0010 && ACL_PROF_HCCL_TRACE == 0x0020);
static_assert(ACL_PROF_TRAINING_TRACE == 0x0040 && ACL_PROF_MSPROFTX == 0x0080);
static_assert(ACL_PROF_RUNTIME_API == 0x0100 && ACL_PROF_GE_API_L0 == 0x0200);
static_assert(ACL_PROF_TASK_TIME_L0 == 0x0800 && ACL_PROF_TASK_MEMORY == 0x1000);
static_assert(ACL_PROF_GE_API_L1 == 0x01000000 && ACL_PROF_TASK_TIME_L2 == 0x2000);
static_assert(ACL_PROF_OP_ATTR == 0x4000 && ACL_PROF_TASK_TIME_L3 == 0x8000);
static_assert(ACL_PROF_API_STATS == 0x400000000ULL);
static_assert(std::is_same_v<decltype(ACL_PROF_ACL_API), unsigned long long>);
static_assert((ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
               ACL_PROF_HCCL_TRACE | ACL_PROF_MSPROFTX | ACL_PROF_RUNTIME_API) == 0x1AF);
static_assert(ACL_AICORE_ARITHMETIC_UTILIZATION == 0 && ACL_AICORE_PIPE_UTILIZATION == 1);
static_assert(ACL_AICORE_MEMORY_BANDWIDTH == 2 && ACL_AICORE_L0B_AND_WIDTH == 3);
static_assert(ACL_AICORE_RESOURCE_CONFLICT_RATIO == 4 && ACL_AICORE_MEMORY_UB == 5);
static_assert(ACL_AICORE_L2_CACHE == 6 && ACL_AICORE_PIPE_EXECUTE_UTILIZATION == 7);
static_assert(ACL_AICORE_MEMORY_ACCESS == 8 && ACL_AICORE_NONE == 0xFF);

// Signatures that clients take the address of keep HCCL's exact types.
static_assert(std::is_same_v<decltype(&HcclReduce),
                             HcclResult (*)(void*, void*, uint64_t, HcclDataType, HcclReduceOp,
                                            uint32_t, HcclComm, aclrtStream)>);
static_assert(std::is_same_v<decltype(&HcclCommInitRootInfo),
                             HcclResult (*)(uint32_t, const HcclRootInfo*, uint32_t, HcclComm*)>);
static_assert(std::is_same_v<decltype(&aclrtMemcpy),
                             aclError (*)(void*, size_t, const void*, size_t, aclrtMemcpyKind)>);
static_assert(std::is_same_v<decltype(&aclprofCreateConfig),
                             aclprofConfig* (*)(uint32_t*, uint32_t, aclprofAicoreMetrics,
                                                const aclprofAicoreEvents*, uint64_t)>);

// Reads a trivially copyable value at a byte offset (the header fields have no named members).
template <typename T>
T ReadAt(const HcclCommConfig& config, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const char*>(&config) + offset, sizeof(T));
  return value;
}

TEST(HeaderLayoutTest, CommConfigInitWritesHeaderAndSentinels) {
  HcclCommConfig config;
  std::memset(&config, 0xab, sizeof(config));  // garbage everywhere first
  HcclCommConfigInit(&config);
  EXPECT_EQ(ReadAt<size_t>(config, 0), 2248u);
  EXPECT_EQ(ReadAt<uint32_t>(config, 8), 0xf0f0f0f0u);
  EXPECT_EQ(ReadAt<uint32_t>(config, 12), 11u);
  EXPECT_EQ(ReadAt<uint64_t>(config, 16), 0u);
  EXPECT_EQ(config.hcclBufferSize, 0xffffffffu);
  EXPECT_EQ(config.hcclDeterministic, 0xffffffffu);
  EXPECT_STREQ(config.hcclCommName, "");
  EXPECT_STREQ(config.hcclUdi, "");
  EXPECT_EQ(config.hcclOpExpansionMode, 0u);
  EXPECT_EQ(config.hcclRdmaTrafficClass, 0xffffffffu);
  EXPECT_EQ(config.hcclRdmaServiceLevel, 0xffffffffu);
  EXPECT_EQ(config.hcclWorldRankID, 0u);
  EXPECT_EQ(config.hcclJobID, 0u);
  EXPECT_EQ(config.aclGraphZeroCopyEnable, 0u);
  EXPECT_EQ(config.hcclExecTimeOut, -1);
  EXPECT_STREQ(config.hcclAlgo, "");
  EXPECT_STREQ(config.hcclRetryEnable, "");
  EXPECT_STREQ(config.hcclRetryParams, "");
  EXPECT_STREQ(config.hcclBufferName, "");
  EXPECT_EQ(config.hcclQos, 0xffffffffu);
  EXPECT_EQ(config.hcclSymWinMaxMemSizePerRank, 16u);
  EXPECT_EQ(config.hcclChannelSqDepth, 0xffffffffu);
}

TEST(HeaderLayoutTest, CommConfigInitZeroesPaddingSoConfigsCompareBytewise) {
  HcclCommConfig a;
  HcclCommConfig b;
  std::memset(&a, 0x11, sizeof(a));
  std::memset(&b, 0x77, sizeof(b));
  HcclCommConfigInit(&a);
  HcclCommConfigInit(&b);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
}

TEST(HeaderLayoutTest, CommConfigInitAcceptsNull) {
  HcclCommConfigInit(nullptr);  // must not crash
  SUCCEED();
}

TEST(HeaderLayoutTest, BraceZeroInitClearsEveryByte) {
  // hccl_test's spelling; -Wextra flags it in C++, hccl_test builds without -Wextra.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
  HcclCommConfig config = {0};
#pragma GCC diagnostic pop
  const auto* bytes = reinterpret_cast<const unsigned char*>(&config);
  for (size_t i = 0; i < offsetof(HcclCommConfig, aclGraphZeroCopyEnable) + 1; ++i) {
    ASSERT_EQ(bytes[i], 0u) << "byte " << i;
  }
  EXPECT_EQ(config.hcclChannelSqDepth, 0u);
}

TEST(HeaderLayoutTest, SendRecvItemPositionalInitKeepsOrder) {
  uint64_t count = 1ull << 40;
  uint32_t peer = 7;
  int dummy = 0;
  HcclSendRecvItem item = {HCCL_RECV, &dummy, count, HCCL_DATA_TYPE_BFP16, peer};
  EXPECT_EQ(item.sendRecvType, HCCL_RECV);
  EXPECT_EQ(item.buf, &dummy);
  EXPECT_EQ(item.count, count);
  EXPECT_EQ(item.dataType, HCCL_DATA_TYPE_BFP16);
  EXPECT_EQ(item.remoteRank, peer);
}

}  // namespace
}  // namespace hostccl::headers
