// Client-compile check: one public header alone (HOSTCCL_HEADER is a <path> given by ctest).
#include HOSTCCL_HEADER

int StandaloneUse() { return 0; }
