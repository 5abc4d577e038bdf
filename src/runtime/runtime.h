// The host runtime (AscendCL subset) as seen from inside hostccl.
// Implemented in src/runtime/; the extern "C" acl* entry points live in src/api/acl_api.cc.
//
// Ownership and threads:
//  - A Stream is an in-order executor. Tasks are enqueued by any thread and run one at a time,
//    in order, either by the stream's worker thread or by a thread that synchronizes the stream
//    and finds tasks not yet started (it runs them itself: no cross-core wake-up on the
//    enqueue-then-synchronize path).
//  - The first failing task makes the stream's error sticky until it is reported by a
//    synchronize; later tasks still run (collectives on a failed communicator fail at once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace hostccl::rt {

class Stream {
 public:
  using Task = std::function<Status()>;
  virtual ~Stream() = default;
  // Appends a task; it runs after every task enqueued before it on this stream.
  virtual Status Enqueue(Task task) = 0;
  // Waits until every task enqueued so far has finished (running pending ones on this thread
  // when the deadline is infinite). Returns the first task error since the last synchronize,
  // or kTimeout when the deadline passed first.
  virtual Status Synchronize(Deadline deadline) = 0;
  // Device this stream was created on.
  virtual int device() const = 0;
  // Stream capture (runtime/capture.h): while this stream captures, records `replay` (how to
  // issue the work again on a given stream) into the capture and returns true; returns false
  // when it does not capture, and the caller issues the work itself.
  using Replay = std::function<Status(Stream*)>;
  virtual bool Capture(const Replay& replay) {
    (void)replay;
    return false;
  }
  // Cheap hint that Capture would take work now (it may stop meanwhile: Capture decides).
  virtual bool capturing() const { return false; }

  // Work a task left unconfirmed (a collective that returned before its peers confirmed it, its
  // data out and safe): `settle` runs at the stream's next synchronize, after the tasks, bounded by
  // the synchronize's deadline, and its error is reported like a task's. One per key: a later one
  // replaces it (settling an owner's last operation settles its earlier ones).
  using Settle = std::function<Status(Deadline)>;
  virtual void DeferSettle(const void* key, Settle settle) = 0;
};

// Resolves an aclrtStream handle; nullptr when it is not a live stream (never created,
// destroyed, or a garbage pointer). Handles are registered, never dereferenced blindly.
Stream* LookupStream(void* handle);

// Describes the aclrtMalloc allocation that contains an address.
struct Allocation {
  void* base = nullptr;       // start of the allocation (the pointer aclrtMalloc returned)
  size_t requested = 0;       // size the caller asked for
  size_t mapped = 0;          // bytes mapped (requested rounded up to pages)
  int memfd = -1;             // backing memfd (shareable with other processes of the node);
                              // -1 when none could be created (then the memory is not shareable)
  size_t memfd_offset = 0;    // offset of `base` inside the memfd (non-zero only for VMM maps)
  int device = -1;
  uint64_t serial = 0;        // process-unique id of this allocation (never reused): peers key
                              // their cached mappings by it, so a freed-and-reused address or fd
                              // number can never alias an old mapping
};
// The allocation containing p (base <= p < base + mapped), or nullopt for memory that did
// not come from aclrtMalloc (aclrtMallocHost, malloc, stack...).
std::optional<Allocation> FindAllocation(const void* p);

// Observers told the serial of every allocation that is freed (aclrtFree, VMM unmap), so that
// peers that mapped it can drop their mappings. Called on the freeing thread, after the memory is
// unregistered; must be quick and must not call back into the runtime. Returns an id for removal.
int AddFreeObserver(std::function<void(uint64_t serial)> fn);
void RemoveFreeObserver(int id);

// The calling thread's current device (aclrtSetDevice), or -1 when none is set.
int CurrentDevice();
// Number of visible devices (HOSTCCL_DEVICE_COUNT filtered by ASCEND_RT_VISIBLE_DEVICES).
uint32_t DeviceCount();

// Name reported by aclrtGetSocName: the active hardware profile (HOSTCCL_SOC) when set, else a
// host name ("HostCPU").
const char* SocName();

// Thread-local "recent error message" behind aclGetRecentErrMsg.
void SetRecentError(const std::string& msg);

}  // namespace hostccl::rt
