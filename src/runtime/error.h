// The thread-local "recent error message" (aclGetRecentErrMsg) and the helper every acl-shaped
// runtime function uses to reject a call: log one error line, remember the message for the
// calling thread, return the code. Thread-safe (all state is thread-local).
#pragma once

#include <string>

namespace hostccl::rt {

// Logs "<message>" at error level (subsystem RT), stores it as the calling thread's recent error
// and returns `code`.
int Fail(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The calling thread's most recent error message ("" when none); valid until the next error
// recorded on this thread.
const char* RecentError();

}  // namespace hostccl::rt
