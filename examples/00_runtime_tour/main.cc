// A tour of the host runtime through the AscendCL API only: devices, device and host memory,
// a stream with asynchronous copies and memsets, events with timing, and a bounded synchronize.
// Build: g++ -std=c++11 main.cc -I<prefix>/include -L<prefix>/lib64 -lhccl -lascendcl
#include <cstdio>
#include <cstring>

#include "acl/acl.h"

#define CHECK(call)                                                          \
  do {                                                                       \
    aclError rc_ = (call);                                                   \
    if (rc_ != ACL_SUCCESS) {                                                \
      std::printf("%s failed: %d (%s)\n", #call, rc_, aclGetRecentErrMsg()); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main() {
  // Device count and SoC name work before aclInit (HOSTCCL_DEVICE_COUNT, HOSTCCL_SOC).
  uint32_t count = 0;
  CHECK(aclrtGetDeviceCount(&count));
  std::printf("devices: %u, SoC: %s\n", count, aclrtGetSocName());
  CHECK(aclInit(NULL));
  int32_t major = 0, minor = 0, patch = 0;
  CHECK(aclrtGetVersion(&major, &minor, &patch));
  std::printf("AscendCL interface %d.%d.%d\n", major, minor, patch);

  const int32_t device = count > 1 ? 1 : 0;
  CHECK(aclrtSetDevice(device));
  int32_t current = -1;
  CHECK(aclrtGetDevice(&current));
  std::printf("current device of this thread: %d\n", current);

  // Device memory (shareable, pre-faulted) and host memory the CPU uses directly.
  const size_t n = 1 << 20;
  float* host = NULL;
  void* dev_a = NULL;
  void* dev_b = NULL;
  CHECK(aclrtMallocHost(reinterpret_cast<void**>(&host), n * sizeof(float)));
  CHECK(aclrtMalloc(&dev_a, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&dev_b, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  std::printf("allocated 2 x %zu bytes of device memory and %zu bytes of host memory\n",
              n * sizeof(float), n * sizeof(float));

  // Work on a stream runs in order; the calls return at once.
  aclrtStream stream = NULL;
  aclrtEvent start = NULL, end = NULL;
  CHECK(aclrtCreateStream(&stream));
  CHECK(aclrtCreateEvent(&start));
  CHECK(aclrtCreateEvent(&end));
  CHECK(aclrtRecordEvent(start, stream));
  CHECK(aclrtMemcpyAsync(dev_a, n * sizeof(float), host, n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, stream));
  CHECK(aclrtMemcpyAsync(dev_b, n * sizeof(float), dev_a, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_DEVICE, stream));
  CHECK(aclrtMemsetAsync(dev_a, n * sizeof(float), 0, n * sizeof(float), stream));
  CHECK(aclrtRecordEvent(end, stream));
  std::printf("enqueued: record, H2D copy, D2D copy, memset, record\n");
  CHECK(aclrtSynchronizeStreamWithTimeout(stream, 10000));
  float ms = 0;
  CHECK(aclrtEventElapsedTime(&ms, start, end));
  std::printf("stream done; the three operations took %.3f ms\n", ms);

  // Read back: dev_b holds the copy, dev_a was cleared after it was copied.
  std::memset(host, 0xff, n * sizeof(float));
  CHECK(aclrtMemcpy(host, n * sizeof(float), dev_b, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
  bool ok = host[0] == 0.0f && host[12345] == 12345.0f && host[n - 1] == static_cast<float>(n - 1);
  float first_a = -1;
  CHECK(aclrtMemcpy(&first_a, sizeof(first_a), dev_a, sizeof(first_a), ACL_MEMCPY_DEVICE_TO_HOST));
  ok = ok && first_a == 0.0f;
  std::printf("check: dev_b[12345] = %.1f, dev_a[0] = %.1f -> %s\n", host[12345], first_a, ok ? "ok" : "WRONG");

  // fp16 helpers.
  aclFloat16 h = aclFloatToFloat16(3.14159f);
  std::printf("fp16(3.14159) = 0x%04x -> %.5f\n", h, aclFloat16ToFloat(h));

  // A bad argument returns a code and leaves a message.
  aclError rc = aclrtMemcpy(host, 4, dev_b, 8, ACL_MEMCPY_DEVICE_TO_HOST);
  std::printf("aclrtMemcpy with count > destMax -> %d: %s\n", rc, aclGetRecentErrMsg());

  CHECK(aclrtDestroyEvent(start));
  CHECK(aclrtDestroyEvent(end));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtFree(dev_a));
  CHECK(aclrtFree(dev_b));
  CHECK(aclrtFreeHost(host));
  CHECK(aclrtResetDevice(device));
  CHECK(aclFinalize());
  std::printf("runtime tour: %s\n", ok && rc == ACL_ERROR_INVALID_PARAM ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
