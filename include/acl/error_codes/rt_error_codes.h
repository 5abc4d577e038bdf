/*
 * hostccl public header: AscendCL runtime error codes (acl/error_codes/rt_error_codes.h).
 * Plain #defines with the CANN runtime's values; returned as aclError by the acl* functions.
 */
#ifndef __INC_EXTERNEL_RT_ERROR_CODES_H__
#define __INC_EXTERNEL_RT_ERROR_CODES_H__

#include <stddef.h>

#define ACL_RT_SUCCESS 0                             /* success */
#define ACL_ERROR_RT_PARAM_INVALID 107000            /* param invalid */
#define ACL_ERROR_RT_INVALID_DEVICEID 107001         /* invalid device id */
#define ACL_ERROR_RT_CONTEXT_NULL 107002             /* current context null */
#define ACL_ERROR_RT_STREAM_CONTEXT 107003           /* stream not in current context */
#define ACL_ERROR_RT_MODEL_CONTEXT 107004            /* model not in current context */
#define ACL_ERROR_RT_STREAM_MODEL 107005             /* stream not in model */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID 107006  /* event timestamp invalid */
#define ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL 107007 /* event timestamp reversal */
#define ACL_ERROR_RT_ADDR_UNALIGNED 107008           /* memory address unaligned */
#define ACL_ERROR_RT_FILE_OPEN 107009                /* open file failed */
#define ACL_ERROR_RT_FILE_WRITE 107010               /* write file failed */
#define ACL_ERROR_RT_STREAM_SUBSCRIBE 107011         /* error subscribe stream */
#define ACL_ERROR_RT_THREAD_SUBSCRIBE 107012         /* error subscribe thread */
#define ACL_ERROR_RT_GROUP_NOT_SET 107013            /* group not set */
#define ACL_ERROR_RT_GROUP_NOT_CREATE 107014         /* group not create */
#define ACL_ERROR_RT_STREAM_NO_CB_REG 107015         /* callback not registered to stream */
#define ACL_ERROR_RT_INVALID_MEMORY_TYPE 107016      /* invalid memory type */
#define ACL_ERROR_RT_INVALID_HANDLE 107017           /* invalid handle */
#define ACL_ERROR_RT_INVALID_MALLOC_TYPE 107018      /* invalid malloc type */
#define ACL_ERROR_RT_WAIT_TIMEOUT 107019             /* wait timeout */
#define ACL_ERROR_RT_TASK_TIMEOUT 107020             /* task timeout */
#define ACL_ERROR_RT_SYSPARAMOPT_NOT_SET 107021      /* sysparamopt not set */
#define ACL_ERROR_RT_DEVICE_TASK_ABORT 107022        /* device task aborting */
#define ACL_ERROR_RT_STREAM_ABORT 107023             /* stream aborting */
#define ACL_ERROR_RT_CAPTURE_DEPENDENCY 107024       /* capture dependency failure */
#define ACL_ERROR_RT_STREAM_UNJOINED 107025          /* capture model has unjoined streams */
#define ACL_ERROR_RT_MODEL_CAPTURED 107026           /* model is being captured */
#define ACL_ERROR_RT_STREAM_CAPTURED 107027          /* stream is being captured */
#define ACL_ERROR_RT_EVENT_CAPTURED 107028           /* event is being captured */
#define ACL_ERROR_RT_STREAM_NOT_CAPTURED 107029      /* stream is not being captured */
#define ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT 107030 /* the capture mode forbids this call */
#define ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT 107031  /* implicit dependency on the default stream */
#define ACL_ERROR_STREAM_CAPTURE_CONFLICT 107032     /* interdependent streams cannot begin capture together */
#define ACL_ERROR_STREAM_TASK_GROUP_STATUS 107033    /* task group status error */
#define ACL_ERROR_STREAM_TASK_GROUP_INTR 107034      /* task group interrupted */
#define ACL_ERROR_RT_TASK_ABORT_STOP 107035          /* task abort stopped before post-processing */
#define ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED 107036 /* the capture was not begun on this stream */

#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000 /* feature not supported */
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001   /* out of memory */
#define ACL_ERROR_RT_MEMORY_FREE 207002         /* memory free error */
#define ACL_ERROR_RT_AICORE_OVER_FLOW 207003    /* aicore overflow */
#define ACL_ERROR_RT_NO_DEVICE 207004           /* no device */
#define ACL_ERROR_RT_RESOURCE_ALLOC_FAIL 207005 /* resource alloc fail */
#define ACL_ERROR_RT_NO_PERMISSION 207006       /* no permission */
#define ACL_ERROR_RT_NO_EVENT_RESOURCE 207007   /* no event resource */
#define ACL_ERROR_RT_NO_STREAM_RESOURCE 207008  /* no stream resource */
#define ACL_ERROR_RT_NO_NOTIFY_RESOURCE 207009  /* no notify resource */
#define ACL_ERROR_RT_NO_MODEL_RESOURCE 207010   /* no model resource */
#define ACL_ERROR_RT_NO_CDQ_RESOURCE 207011     /* no cdq resource */
#define ACL_ERROR_RT_OVER_LIMIT 207012          /* over limit */
#define ACL_ERROR_RT_QUEUE_EMPTY 207013         /* queue is empty */
#define ACL_ERROR_RT_QUEUE_FULL 207014          /* queue is full */
#define ACL_ERROR_RT_REPEATED_INIT 207015       /* repeated init */
#define ACL_ERROR_RT_AIVEC_OVER_FLOW 207016     /* aivec overflow */
#define ACL_ERROR_RT_OVER_FLOW 207017           /* common overflow */
#define ACL_ERROR_RT_DEVICE_OOM 207018          /* device oom */

#define ACL_ERROR_RT_INTERNAL_ERROR 507000        /* runtime internal error */
#define ACL_ERROR_RT_TS_ERROR 507001              /* ts internal error */
#define ACL_ERROR_RT_STREAM_TASK_FULL 507002      /* task full in stream */
#define ACL_ERROR_RT_STREAM_TASK_EMPTY 507003     /* task empty in stream */
#define ACL_ERROR_RT_STREAM_NOT_COMPLETE 507004   /* stream not complete */
#define ACL_ERROR_RT_END_OF_SEQUENCE 507005       /* end of sequence */
#define ACL_ERROR_RT_EVENT_NOT_COMPLETE 507006    /* event not complete */
#define ACL_ERROR_RT_CONTEXT_RELEASE_ERROR 507007 /* context release error */
#define ACL_ERROR_RT_SOC_VERSION 507008           /* soc version error */
#define ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT 507009 /* task type not supported */
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046   /* stream sync timed out */
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047    /* event sync timed out */
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR 507899    /* driver internal error */
#define ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED 507903 /* the capture was invalidated */
#define ACL_ERROR_RT_COMM_OP_RETRY_FAIL 507904    /* hccl operation retry failed */

#endif /* __INC_EXTERNEL_RT_ERROR_CODES_H__ */
