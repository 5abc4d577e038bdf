// TlsRef: a thread_local's address, looked up once per function.
//
// A shared library reaches a thread_local through a TLS descriptor call (the default model: the
// initial-exec model would put libhccl's whole thread-local block into glibc's small static
// surplus, which a dlopen'ed libhccl does not fit; common/wait_note.h). GCC computes that address
// again at each use that follows another call instead of keeping it in a register, so a small
// call's path made ~21 descriptor calls (docs/performance.md "Thread-local lookups"). A reference
// taken through TlsRef hides where the pointer came from, so the compiler keeps the pointer.
#pragma once

namespace hostccl {

template <typename T>
inline T& TlsRef(T& v) {
  T* p = &v;
  asm("" : "+r"(p));
  return *p;
}

}  // namespace hostccl
