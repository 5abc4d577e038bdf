/*
 * hostccl public header: HCCL communicator management (hccl/hccl_comm.h).
 *
 * Creating, querying, configuring and destroying communicators, with HCCL's signatures. Like
 * HCCL, most functions are declared weak (HCOMM_WEAK_SYMBOL): a program that links without them
 * sees a null address instead of a link error. The library itself is built with
 * -DHCOMM_WEAK_SYMBOL= so its definitions are strong. HcclCommSymWin* and the other functions
 * HCCL declares without the attribute stay strong here too.
 *
 * Contract (as HCCL): HcclGetRootInfo runs on one rank and its bytes are copied to all ranks;
 * HcclCommInitRootInfo[Config] and HcclCommInitClusterInfo[Config] block until every rank has
 * joined or the connect timeout expires; per communicator, calls are issued by one thread at a
 * time; HcclCommDestroy may be called from another thread and returns HCCL_E_AGAIN while an
 * operation is in progress. Compiles as C99 and C++11 or later.
 */
#ifndef HCCL_COMM_H_
#define HCCL_COMM_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

/* clang-format off */
/* Include order as in HCCL/CANN. */
#include "hccl_types.h"
#include "hccl_res.h"
#include "hccl_launch.h"
#include "../acl/acl.h"
/* clang-format on */

#ifndef HCOMM_WEAK_SYMBOL
#define HCOMM_WEAK_SYMBOL __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Communicator creation. clusterInfo is the path of a rank table JSON file. */
extern HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank,
                                          HcclComm *comm) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                                HcclCommConfig *config,
                                                HcclComm *comm) HCOMM_WEAK_SYMBOL;
/* Split of a global communicator; non-members pass rankIds = NULL, subCommId = 0xFFFFFFFF. */
extern HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                          uint64_t subCommId, uint32_t subCommRankId,
                                          HcclCommConfig *config,
                                          HcclComm *subComm) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                       HcclComm *comm) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                             uint32_t rank, const HcclCommConfig *config,
                                             HcclComm *comm) HCOMM_WEAK_SYMBOL;
/* Single process, one communicator per entry of devices; comms has ndev entries. */
extern HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices,
                                  HcclComm *comms) HCOMM_WEAK_SYMBOL;

/* Process-wide settings. */
extern HcclResult HcclSetConfig(HcclConfig config,
                                union HcclConfigValue configValue) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclGetConfig(HcclConfig config,
                                union HcclConfigValue *configValue) HCOMM_WEAK_SYMBOL;

/* Queries. commName buffers must hold COMM_NAME_MAX_LENGTH (128) bytes. */
extern HcclResult HcclGetCommName(HcclComm comm, char *commName) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm);
extern HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError) HCOMM_WEAK_SYMBOL;
extern const char *HcclGetErrorString(HcclResult code) HCOMM_WEAK_SYMBOL;
extern uint32_t HcclGetCommConfigCapability(void) HCOMM_WEAK_SYMBOL;

/* Blocks the stream of every rank until all ranks reach it (enqueued on stream). */
extern HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommDestroy(HcclComm comm) HCOMM_WEAK_SYMBOL;

/*
 * Fills config with this header's version (11) and "not set" sentinels, so unset fields fall
 * back to environment variables and then built-in defaults. Zeroes every byte first.
 */
static inline void HcclCommConfigInit(HcclCommConfig *config) {
  struct HcclCommConfigInfoHead {
    size_t size;
    uint32_t magicWord;
    uint32_t version;
    uint64_t reserved;
  } head;
  if (config == NULL) {
    return;
  }
  memset(config, 0, sizeof(*config));
  head.size = sizeof(HcclCommConfig);
  head.magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
  head.version = HCCL_COMM_CONFIG_VERSION;
  head.reserved = 0;
  memcpy(config->reserved, &head, sizeof(head));
  config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
  config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
  config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
  config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
  config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
  config->hcclWorldRankID = 0;
  config->hcclJobID = 0;
  config->aclGraphZeroCopyEnable = 0;
  config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
  config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
  config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
  config->hcclChannelSqDepth = HCCL_COMM_SQ_DEPTH_CONFIG_NOT_SET;
}

/* Fault handling: suspend/resume and state callbacks. */
extern HcclResult HcclCommSuspend(HcclComm comm) HCOMM_WEAK_SYMBOL;
typedef HcclResult (*HcclCommStateCallback)(HcclComm comm, HcclCommStatePhase state, void *args);
extern HcclResult HcclCommRegCommStateCallback(const char *regName, HcclCommStateCallback cb,
                                               void *args);
extern HcclResult HcclCommResume(HcclComm comm) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status);

/* Zero-copy memory ranges (alignment and flags: only 0). */
extern HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size,
                                         size_t alignment, uint64_t flags) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size,
                                             size_t offset, aclrtDrvMemHandle handle,
                                             uint64_t flags) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr) HCOMM_WEAK_SYMBOL;
extern HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t *ranks, bool *useBackup,
                                           uint32_t nRanks) HCOMM_WEAK_SYMBOL;

/* Grouping (experimental in HCCL). */
extern HcclResult HcclGroupStart(void);
extern HcclResult HcclGroupEnd(void);
extern HcclResult HcclGroupStatusGet(bool *isGroupEnabled);

/* Symmetric memory windows (flag: only 1). Strong symbols, as in HCCL. */
extern HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size,
                                         HcclCommSymWindow *winHandle, uint32_t flag);
extern HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle);
extern HcclResult HcclCommSymWinGet(HcclComm comm, void *ptr, size_t size,
                                    HcclCommSymWindow *winHandle, size_t *offset);

/* HcclConfigGetInfo. NOTE: this numbering differs from the hcclOpExpansionMode config field. */
typedef enum {
  HCCL_OP_EXPANSION_MODE_INVALID = -1,
  HCCL_OP_EXPANSION_MODE_AI_CPU = 0,
  HCCL_OP_EXPANSION_MODE_AIV = 1,
  HCCL_OP_EXPANSION_MODE_HOST = 2,
  HCCL_OP_EXPANSION_MODE_HOST_TS = 3,
  HCCL_OP_EXPANSION_MODE_CCU_MS = 4,
  HCCL_OP_EXPANSION_MODE_CCU_SCHED = 5,
  HCCL_OP_EXPANSION_AIV_ONLY = 6
} HcclOpExpansionMode;

typedef enum {
  HCCL_CONFIG_TYPE_INVALID = -1,
  HCCL_CONFIG_TYPE_OP_EXPANSION_MODE = 0,
  HCCL_CONFIG_TYPE_HCCL_ALGO = 1,
  HCCL_CONFIG_TYPE_UB_MULTI_CHANNEL_NUM = 2
} HcclConfigType;

typedef HcclOpExpansionMode HcclConfigTypeOpExpansionMode;

extern HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType, uint32_t infoLen,
                                    void *info);

#ifdef __cplusplus
}
#endif

#endif /* HCCL_COMM_H_ */
