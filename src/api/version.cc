// Library identity, queried by hccl_info and logged at communicator creation.
#include "api/export.h"

HOSTCCL_API const char* HostcclVersionString() { return "hostccl 0.1.0"; }
