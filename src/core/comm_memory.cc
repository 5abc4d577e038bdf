// Zero-copy ranges and symmetric windows: checks and bookkeeping (see comm_memory.h).
#include "core/comm_memory.h"

#include <map>
#include <mutex>

#include "common/log.h"
#include "core/communicator.h"
#include "runtime/vmm.h"

namespace hostccl::core {
namespace {

struct Range {
  size_t size;
  uint64_t reservation;                // serial of the reservation it lies in
  std::map<uintptr_t, size_t> active;  // activated start -> size
};

struct Window {
  const Communicator* comm;
  int rank;
  uintptr_t addr;
  size_t extent;
};

struct State {
  std::mutex mu;
  std::map<int, std::map<uintptr_t, Range>> ranges;  // device -> range base -> range
  std::map<uintptr_t, Window> windows;               // handle value -> window
  uintptr_t next_handle = 0x5F10000;                 // handles: never reused
};

State& St() {
  static State* s = new State();  // leaked: usable from atexit handlers
  return *s;
}

void* P(uintptr_t v) { return reinterpret_cast<void*>(v); }

bool Overlaps(uintptr_t a, size_t as, uintptr_t b, size_t bs) { return a < b + bs && b < a + as; }

// The range of `ranges` containing [p, p + size), or end().
std::map<uintptr_t, Range>::iterator FindRange(std::map<uintptr_t, Range>& ranges, uintptr_t p, size_t size) {
  auto it = ranges.upper_bound(p);
  if (it == ranges.begin()) return ranges.end();
  --it;
  if (p + size > it->first + it->second.size) return ranges.end();
  return it;
}

// A range whose reservation was released (aclrtReleaseMemAddress) without UnsetMemoryRange is
// stale: forget it, so the address can be reserved and announced again.
void DropStale(std::map<uintptr_t, Range>& ranges) {
  for (auto it = ranges.begin(); it != ranges.end();) {
    rt::VmmInfo info;
    if (!rt::VmmQuery(P(it->first), it->second.size, &info) || info.reservation_serial != it->second.reservation) {
      HLOG_DEBUG(kInit, "memory range %p: its reservation was released; forgetting it", P(it->first));
      it = ranges.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

Status SetMemoryRange(const Communicator& comm, void* base, size_t size, size_t alignment, uint64_t flags) {
  if (size == 0) return Status(Code::kPara, "size is 0");
  if (alignment != 0) return MakeStatus(Code::kPara, "alignment %zu is reserved and must be 0", alignment);
  if (flags != 0)
    return MakeStatus(Code::kPara, "flags %llu are reserved and must be 0", static_cast<unsigned long long>(flags));
  uintptr_t b = reinterpret_cast<uintptr_t>(base);
  if (b + size < b) return MakeStatus(Code::kPara, "[%p, +%zu) wraps around the address space", base, size);
  rt::VmmInfo info;
  if (!rt::VmmQuery(base, size, &info))
    return MakeStatus(Code::kPara,
                      "[%p, +%zu) is not inside an address range reserved with aclrtReserveMemAddress", base, size);
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto& ranges = s.ranges[comm.device()];
  DropStale(ranges);
  for (const auto& [rb, r] : ranges)
    if (Overlaps(b, size, rb, r.size))
      return MakeStatus(Code::kPara, "[%p, +%zu) overlaps the memory range [%p, +%zu) already set on device %d", base,
                        size, P(rb), r.size, comm.device());
  ranges.emplace(b, Range{size, info.reservation_serial, {}});
  HLOG_INFO(kInit, "memory range [%p, +%zu) set on device %d", base, size, comm.device());
  return Status::Ok();
}

Status UnsetMemoryRange(const Communicator& comm, void* base) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto& ranges = s.ranges[comm.device()];
  auto it = ranges.find(reinterpret_cast<uintptr_t>(base));
  if (it == ranges.end())
    return MakeStatus(Code::kPara, "%p is not the base of a memory range set with HcclCommSetMemoryRange on device %d",
                      base, comm.device());
  if (!it->second.active.empty()) {
    auto a = it->second.active.begin();
    return MakeStatus(Code::kPara,
                      "memory range %p still has %zu activated block(s) (first [%p, +%zu)); "
                      "call HcclCommDeactivateCommMemory first",
                      base, it->second.active.size(), P(a->first), a->second);
  }
  ranges.erase(it);
  return Status::Ok();
}

Status ActivateCommMemory(const Communicator& comm, void* ptr, size_t size, size_t offset, void* handle,
                          uint64_t flags) {
  if (size == 0) return Status(Code::kPara, "size is 0");
  if (offset != 0) return MakeStatus(Code::kPara, "offset %zu is reserved and must be 0", offset);
  if (flags != 0)
    return MakeStatus(Code::kPara, "flags %llu are reserved and must be 0", static_cast<unsigned long long>(flags));
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  if (p + size < p) return MakeStatus(Code::kPara, "[%p, +%zu) wraps around the address space", ptr, size);
  if (!rt::VmmIsPhysical(handle))
    return MakeStatus(Code::kPara, "handle %p is not a live aclrtMallocPhysical handle", handle);
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto& ranges = s.ranges[comm.device()];
  DropStale(ranges);
  auto it = FindRange(ranges, p, size);
  if (it == ranges.end())
    return MakeStatus(Code::kPara, "[%p, +%zu) is not inside a memory range set with HcclCommSetMemoryRange on device %d",
                      ptr, size, comm.device());
  rt::VmmInfo info;
  (void)rt::VmmQuery(ptr, size, &info);
  if (info.map_base != p || info.handle != handle)
    return MakeStatus(Code::kPara, "%p is not the start of an aclrtMapMem map of handle %p", ptr, handle);
  if (size > info.map_size)
    return MakeStatus(Code::kPara, "size %zu exceeds the map at %p (%zu bytes)", size, ptr, info.map_size);
  for (const auto& [ab, as] : it->second.active)
    if (Overlaps(p, size, ab, as))
      return MakeStatus(Code::kPara, "[%p, +%zu) overlaps the activated memory [%p, +%zu)", ptr, size, P(ab), as);
  it->second.active.emplace(p, size);
  return Status::Ok();
}

Status DeactivateCommMemory(const Communicator& comm, void* ptr) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto& ranges = s.ranges[comm.device()];
  auto it = FindRange(ranges, p, 1);
  if (it == ranges.end() || it->second.active.erase(p) == 0)
    return MakeStatus(Code::kPara,
                      "%p is not the start of memory activated with HcclCommActivateCommMemory on device %d "
                      "(deactivated twice?)",
                      ptr, comm.device());
  return Status::Ok();
}

Status SymWinRegister(const std::shared_ptr<Communicator>& comm, void* addr, uint64_t size, void** win,
                      uint32_t flag) {
  if (flag != 1) return MakeStatus(Code::kPara, "flag %u is not supported (only 1: symmetric memory)", flag);
  const uint64_t max_bytes = comm->sym_win_max_bytes();
  if (size == 0 || size > max_bytes)
    return MakeStatus(Code::kPara,
                      "size %llu must be in (0, %llu] (hcclSymWinMaxMemSizePerRank = %llu GB)",
                      static_cast<unsigned long long>(size), static_cast<unsigned long long>(max_bytes),
                      static_cast<unsigned long long>(max_bytes >> 30));
  rt::VmmInfo info;
  if (!rt::VmmQuery(addr, 1, &info))
    return MakeStatus(Code::kPara, "%p is not inside an address range reserved with aclrtReserveMemAddress", addr);
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (info.map_base == 0)
    return MakeStatus(Code::kPara, "%p is not mapped to physical memory (aclrtMapMem)", addr);
  const size_t extent = info.map_base + info.map_size - a;
  if (size > extent)
    return MakeStatus(Code::kPara, "size %llu exceeds the physical memory mapped at %p (%zu bytes from it)",
                      static_cast<unsigned long long>(size), addr, extent);
  auto& s = St();
  std::lock_guard lk(s.mu);
  for (const auto& [h, w] : s.windows)
    if (w.comm == comm.get() && Overlaps(a, extent, w.addr, w.extent))
      return MakeStatus(Code::kPara, "[%p, +%zu) overlaps the window [%p, +%zu) already registered", addr, extent,
                        P(w.addr), w.extent);
  s.next_handle += 0x10;
  s.windows.emplace(s.next_handle, Window{comm.get(), comm->rank(), a, extent});
  *win = P(s.next_handle);
  HLOG_INFO(kInit, "symmetric window %p: [%p, +%zu)", *win, addr, extent);
  return Status::Ok();
}

Status SymWinDeregister(void* win, int* rank_out) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  auto it = s.windows.find(reinterpret_cast<uintptr_t>(win));
  *rank_out = -1;
  if (it == s.windows.end())
    return MakeStatus(Code::kPara, "%p is not a registered symmetric window (deregistered twice?)", win);
  *rank_out = it->second.rank;
  s.windows.erase(it);
  return Status::Ok();
}

Status SymWinGet(const Communicator& comm, void* ptr, size_t size, void** win, size_t* offset) {
  if (size == 0) return Status(Code::kPara, "size is 0");
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto& s = St();
  std::lock_guard lk(s.mu);
  for (const auto& [h, w] : s.windows) {
    if (w.comm != &comm || p < w.addr || p - w.addr >= w.extent) continue;
    if (size > w.extent - (p - w.addr))
      return MakeStatus(Code::kPara, "[%p, +%zu) runs past the end of window %p ([%p, +%zu))", ptr, size, P(h),
                        P(w.addr), w.extent);
    *win = P(h);
    *offset = p - w.addr;
    return Status::Ok();
  }
  return MakeStatus(Code::kPara, "%p is not inside a symmetric window registered on this communicator", ptr);
}

void DropCommWindows(const Communicator* comm) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  for (auto it = s.windows.begin(); it != s.windows.end();)
    it = it->second.comm == comm ? s.windows.erase(it) : std::next(it);
}

size_t ActiveRangeCount(int device) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  size_t n = 0;
  for (const auto& [b, r] : s.ranges[device]) n += r.active.size();
  return n;
}

size_t WindowCount(const Communicator* comm) {
  auto& s = St();
  std::lock_guard lk(s.mu);
  size_t n = 0;
  for (const auto& [h, w] : s.windows) n += w.comm == comm;
  return n;
}

}  // namespace hostccl::core
