// Marks the extern "C" entry points that libhccl.so exports (everything else is hidden).
#pragma once
#define HOSTCCL_API extern "C" __attribute__((visibility("default")))
