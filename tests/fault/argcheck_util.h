// Helpers shared by the argument-check tests (argcheck_test.cc, argcheck_collectives_test.cc,
// argcheck_v_test.cc): enum values HCCL's headers do not name, and a device buffer filled with a
// guard pattern, so that a test can tell that a rejected call wrote nothing.
// Public API only (acl/acl.h, hccl/hccl.h).
#pragma once

#include <acl/acl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace hostccl::argtest {

// Any int as an HcclDataType / HcclReduceOp, in range or not (memcpy: no cast, so no sanitizer or
// compiler assumption about the enum's range applies).
inline HcclDataType AsDtype(int v) {
  HcclDataType t;
  std::memcpy(&t, &v, sizeof(t));
  return t;
}
inline HcclReduceOp AsOp(int v) {
  HcclReduceOp o;
  std::memcpy(&o, &v, sizeof(o));
  return o;
}

// An aclrtMalloc allocation of `n` bytes holding the pattern salt + 13 i; Unchanged() compares it
// with the pattern, Reset() writes it again.
struct GuardedBuf {
  void* ptr = nullptr;
  size_t bytes = 0;
  std::vector<unsigned char> guard;
  void Alloc(size_t n, unsigned char salt) {
    bytes = n;
    ASSERT_EQ(aclrtMalloc(&ptr, n, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    guard.resize(n);
    for (size_t i = 0; i < n; ++i) guard[i] = static_cast<unsigned char>(salt + i * 13);
    Reset();
  }
  void Reset() { ASSERT_EQ(aclrtMemcpy(ptr, bytes, guard.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS); }
  bool Unchanged() const {
    std::vector<unsigned char> now(bytes);
    if (aclrtMemcpy(now.data(), bytes, ptr, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return false;
    return now == guard;
  }
  char* at(size_t off) const { return static_cast<char*>(ptr) + off; }
  GuardedBuf() = default;
  GuardedBuf(const GuardedBuf&) = delete;
  GuardedBuf& operator=(const GuardedBuf&) = delete;
  ~GuardedBuf() {
    if (ptr) (void)aclrtFree(ptr);
  }
};

}  // namespace hostccl::argtest
