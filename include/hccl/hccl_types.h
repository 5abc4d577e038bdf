/*
 * hostccl public header: HCCL types, enums and constants (hccl/hccl_types.h).
 *
 * Values, struct layouts and names match Huawei HCCL's hccl_types.h (HcclCommConfig version 11),
 * so programs written for HCCL compile unchanged and exchange the same bytes (root info,
 * config structs) with libhccl.so. Needs only <stdint.h>. Compiles as C99/C11 and as C++11 or
 * later. Constants are `static const` (internal linkage) so any number of translation units may
 * include this header. Do not edit values: they are ABI.
 */
#ifndef HCCL_TYPES_H_
#define HCCL_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return code of every HCCL function. */
typedef enum {
  HCCL_SUCCESS = 0,              /* success */
  HCCL_E_PARA = 1,               /* parameter error */
  HCCL_E_PTR = 2,                /* empty pointer */
  HCCL_E_MEMORY = 3,             /* memory error */
  HCCL_E_INTERNAL = 4,           /* internal error */
  HCCL_E_NOT_SUPPORT = 5,        /* not support feature */
  HCCL_E_NOT_FOUND = 6,          /* not found specific resource */
  HCCL_E_UNAVAIL = 7,            /* resource unavailable */
  HCCL_E_SYSCALL = 8,            /* call system interface error */
  HCCL_E_TIMEOUT = 9,            /* timeout */
  HCCL_E_OPEN_FILE_FAILURE = 10, /* open file fail */
  HCCL_E_TCP_CONNECT = 11,       /* tcp connect fail */
  HCCL_E_ROCE_CONNECT = 12,      /* roce connect fail */
  HCCL_E_TCP_TRANSFER = 13,      /* tcp transfer fail */
  HCCL_E_ROCE_TRANSFER = 14,     /* roce transfer fail */
  HCCL_E_RUNTIME = 15,           /* call runtime api fail */
  HCCL_E_DRV = 16,               /* call driver api fail */
  HCCL_E_PROFILING = 17,         /* call profiling api fail */
  HCCL_E_CCE = 18,               /* call cce api fail */
  HCCL_E_NETWORK = 19,           /* call network api fail */
  HCCL_E_AGAIN = 20,             /* try again */
  HCCL_E_REMOTE = 21,            /* error cqe */
  HCCL_E_SUSPENDING = 22,        /* error communicator suspending */
  HCCL_E_OPRETRY_FAIL = 23,      /* retry constraint */
  HCCL_E_OOM = 24,               /* out of memory */
  HCCL_E_IN_STATUS = 1041,       /* the error information is in the status */
  HCCL_E_RESERVED                /* reserved (1042) */
} HcclResult;

/* Opaque handles. */
typedef void *HcclComm;
typedef void *HcclConn;
typedef void *HcclCommSymWindow;

/* Reduction operation. */
typedef enum {
  HCCL_REDUCE_SUM = 0,
  HCCL_REDUCE_PROD = 1,
  HCCL_REDUCE_MAX = 2,
  HCCL_REDUCE_MIN = 3,
  HCCL_REDUCE_RESERVED = 255
} HcclReduceOp;

/* Element type. 13 is unused on purpose (gap in HCCL's numbering). */
typedef enum {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
  HCCL_DATA_TYPE_INT128 = 12,
  HCCL_DATA_TYPE_HIF8 = 14,
  HCCL_DATA_TYPE_FP8E4M3 = 15,
  HCCL_DATA_TYPE_FP8E5M2 = 16,
  HCCL_DATA_TYPE_FP8E8M0 = 17,
  HCCL_DATA_TYPE_RESERVED = 255
} HcclDataType;

/* Process-wide settings for HcclSetConfig/HcclGetConfig. */
typedef enum {
  HCCL_DETERMINISTIC = 0, /* value: 0 off, 1 deterministic, 2 strict (order preserving) */
  HCCL_CONFIG_RESERVED
} HcclConfig;

union HcclConfigValue {
  int32_t value;
};
#ifndef __cplusplus
/* C has no implicit tag names; C++ clients use the bare name as HCCL's header allows. */
typedef union HcclConfigValue HcclConfigValue;
#endif

static const uint32_t HCCL_ROOT_INFO_BYTES = 4108;             /* sizeof(HcclRootInfo) */
static const uint32_t COMM_NAME_MAX_LENGTH = 128;              /* hcclCommName buffer */
static const uint32_t BUFFER_NAME_MAX_LENGTH = 128;            /* hcclBufferName buffer */
static const uint32_t UDI_MAX_LENGTH = 128;                    /* hcclUdi buffer */
static const uint32_t HCCL_COMM_ALGO_MAX_LENGTH = 1600;        /* hcclAlgo buffer */
static const uint32_t HCCL_COMM_RETRY_ENABLE_MAX_LENGTH = 50;  /* hcclRetryEnable buffer */
static const uint32_t HCCL_COMM_RETRY_PARAMS_MAX_LENGTH = 128; /* hcclRetryParams buffer */

/*
 * Root info: produced by HcclGetRootInfo on one rank, copied byte for byte to every rank
 * (e.g. MPI_Bcast of HCCL_ROOT_INFO_BYTES chars), consumed by HcclCommInitRootInfo[Config].
 * Holds no pointers. Array sizes are literals so the header also compiles as C.
 */
typedef struct HcclRootInfoDef {
  char internal[4108]; /* HCCL_ROOT_INFO_BYTES */
} HcclRootInfo;

static const uint32_t HCCL_COMM_CONFIG_INFO_BYTES = 24;
static const uint32_t HCCL_COMM_CONFIG_MAGIC_WORD = 0xf0f0f0f0;
static const uint32_t HCCL_COMM_CONFIG_VERSION = 11;
static const uint32_t HCCL_COMM_DEFAULT_BUFFSIZE = 200; /* MB */
static const uint32_t HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET = 0xffffffff;
static const uint32_t HCCL_COMM_DEFAULT_DETERMINISTIC = 0;
static const uint32_t HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET = 0xffffffff;
static const uint32_t HCCL_COMM_DEFAULT_OP_EXPANSION_MODE = 0;
static const uint32_t HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET = 0xffffffff;
static const uint32_t HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET = 0xffffffff;
static const int32_t HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET = -1; /* (int32_t)0xffffffff */
static const uint32_t HCCL_COMM_QOS_CONFIG_NOT_SET = 0xffffffff;
static const uint32_t HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET = 0xffffffff;
static const uint64_t HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE = 16ULL; /* GB */

/*
 * Per-communicator configuration, version 11 (2248 bytes on LP64). Initialise with
 * HcclCommConfigInit (hccl_comm.h) before setting fields: the first 24 bytes carry the struct
 * size, a magic word and the version, which let the library accept older, smaller layouts.
 * Plain C aggregate on purpose: `HcclCommConfig c = {0};` must compile in C++11.
 */
typedef struct HcclCommConfigDef {
  char reserved[24];                    /* HCCL_COMM_CONFIG_INFO_BYTES: size/magic/version */
  uint32_t hcclBufferSize;              /* MB; since v1 */
  uint32_t hcclDeterministic;           /* 0/1/2; since v1 */
  char hcclCommName[128];               /* COMM_NAME_MAX_LENGTH; since v2 */
  char hcclUdi[128];                    /* UDI_MAX_LENGTH; since v3 */
  uint32_t hcclOpExpansionMode;         /* since v4 */
  uint32_t hcclRdmaTrafficClass;        /* since v5 */
  uint32_t hcclRdmaServiceLevel;        /* since v5 */
  uint32_t hcclWorldRankID;             /* since v6 */
  uint64_t hcclJobID;                   /* since v6 */
  uint8_t aclGraphZeroCopyEnable;       /* since v7 */
  int32_t hcclExecTimeOut;              /* seconds; since v8 */
  char hcclAlgo[1600];                  /* HCCL_COMM_ALGO_MAX_LENGTH; since v8 */
  char hcclRetryEnable[50];             /* HCCL_COMM_RETRY_ENABLE_MAX_LENGTH; since v8 */
  char hcclRetryParams[128];            /* HCCL_COMM_RETRY_PARAMS_MAX_LENGTH; since v8 */
  char hcclBufferName[128];             /* BUFFER_NAME_MAX_LENGTH; since v9 */
  uint32_t hcclQos;                     /* since v10 */
  uint64_t hcclSymWinMaxMemSizePerRank; /* GB; since v10 */
  uint32_t hcclChannelSqDepth;          /* since v11 */
} HcclCommConfig;

/* HcclGetCommConfigCapability() returns N; capability X is supported iff N > X. */
typedef enum {
  HCCL_COMM_CONFIG_BUFFER_SIZE = 0,
  HCCL_COMM_CONFIG_DETERMINISTIC = 1,
  HCCL_COMM_CONFIG_COMM_NAME = 2,
  HCCL_COMM_CONFIG_OP_EXPANSION_MODE = 3,
  HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV = 4,
  HCCL_COMM_CONFIG_WORLD_RANKID = 5,
  HCCL_COMM_CONFIG_JOBID = 6,
  HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE = 7,
  HCCL_COMM_CONFIG_EXEC_TIMEOUT = 8,
  HCCL_COMM_CONFIG_ALGO = 9,
  HCCL_COMM_CONFIG_RETRY = 10,
  HCCL_COMM_CONFIG_BUFFER_NAME = 11,
  HCCL_COMM_CONFIG_RESERVED
} HcclCommConfigCapability;

/* One item of HcclBatchSendRecv (32 bytes on LP64; member order is ABI). */
typedef enum { HCCL_SEND = 0, HCCL_RECV = 1, HCCL_SEND_RECV_RESERVED } HcclSendRecvType;

typedef struct HcclSendRecvItemDef {
  HcclSendRecvType sendRecvType;
  void *buf;
  uint64_t count; /* elements */
  HcclDataType dataType;
  uint32_t remoteRank;
} HcclSendRecvItem;

/* Operation kinds (used by tuner plugins and diagnostics). */
typedef enum {
  HCCL_CMD_INVALID = 0,
  HCCL_CMD_BROADCAST = 1,
  HCCL_CMD_ALLREDUCE = 2,
  HCCL_CMD_REDUCE = 3,
  HCCL_CMD_SEND = 4,
  HCCL_CMD_RECEIVE = 5,
  HCCL_CMD_ALLGATHER = 6,
  HCCL_CMD_REDUCE_SCATTER = 7,
  HCCL_CMD_ALLTOALLV = 8,
  HCCL_CMD_ALLTOALLVC = 9,
  HCCL_CMD_ALLTOALL = 10,
  HCCL_CMD_GATHER = 11,
  HCCL_CMD_SCATTER = 12,
  HCCL_CMD_BATCH_SEND_RECV = 13,
  HCCL_CMD_BATCH_PUT = 14,
  HCCL_CMD_BATCH_GET = 15,
  HCCL_CMD_ALLGATHER_V = 16,
  HCCL_CMD_REDUCE_SCATTER_V = 17,
  HCCL_CMD_BATCH_WRITE = 18,
  HCCL_CMD_HALF_ALLTOALLV = 20,
  HCCL_CMD_ALL = 21,
  HCCL_CMD_FINALIZE = 100,
  HCCL_CMD_INTER_GROUP_SYNC = 101,
  HCCL_CMD_INIT = 102,
  HCCL_CMD_BARRIER = 103,
  HCCL_CMD_MAX = 104
} HcclCMDType;

/* Result of HcclCommGetStatus. */
typedef enum {
  HCCL_COMM_STATUS_READY = 0,
  HCCL_COMM_STATUS_SUSPENDING = 1,
  HCCL_COMM_STATUS_INVALID = 254,
  HCCL_COMM_STATUS_RESERVED = 255
} HcclCommStatus;

/* Phase passed to an HcclCommStateCallback. */
typedef enum {
  HCCL_COMM_STATE_PHASE_INVALID = -1,
  HCCL_COMM_STATE_PHASE_DESTROY_PRE = 0,  /* before HcclCommDestroy releases the comm */
  HCCL_COMM_STATE_PHASE_DESTROY_POST = 1, /* after HcclCommDestroy */
  HCCL_COMM_STATE_PHASE_RESUME_PRE = 2,   /* before HcclCommResume */
  HCCL_COMM_STATE_PHASE_RESUME_POST = 3   /* after HcclCommResume */
} HcclCommStatePhase;

#ifdef __cplusplus
}
#endif

#endif /* HCCL_TYPES_H_ */
