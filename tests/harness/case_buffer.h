// A case's buffer: aclrtMalloc'd memory, or malloc'd (host = true) to test calls on host memory,
// released at the end of the scope; Put/Get copy through aclrtMemcpy. Shared by the case checkers
// (harness/reduce_check.cc, collective_check.cc, reducescatter_check.cc) and the data-movement
// grids (collective/movement_cases.h).
#pragma once

#include <acl/acl.h>

#include <cstddef>
#include <cstdlib>
#include <vector>

namespace hostccl::test {

class CaseBuffer {
 public:
  CaseBuffer() = default;
  CaseBuffer(const CaseBuffer&) = delete;
  CaseBuffer& operator=(const CaseBuffer&) = delete;
  ~CaseBuffer() {
    if (ptr_ != nullptr && host_) std::free(ptr_);
    if (ptr_ != nullptr && !host_) (void)aclrtFree(ptr_);
  }
  bool Alloc(size_t bytes, bool host) {
    host_ = host;
    if (!host) return aclrtMalloc(&ptr_, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
    ptr_ = std::malloc(bytes);
    return ptr_ != nullptr;
  }
  bool Put(const std::vector<char>& h) {
    return aclrtMemcpy(ptr_, h.size(), h.data(), h.size(), ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
  }
  bool Get(std::vector<char>* h, size_t bytes) const {
    h->resize(bytes);
    return aclrtMemcpy(h->data(), bytes, ptr_, bytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
  }
  char* get() const { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  bool host_ = false;
};

}  // namespace hostccl::test
