// aclrtMalloc (memfd-backed, shareable), aclrtMallocHost, copies and the allocation registry.
#include "runtime/memory.h"

#include <sys/mman.h>

#include <atomic>
#include <vector>
#include <functional>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "common/env.h"
#include "common/huge_pages.h"
#include "common/log.h"
#include "common/touch_pages.h"
#include "runtime/acl_codes.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/runtime.h"
#include "runtime/stream.h"

namespace hostccl::rt {
namespace {

struct Entry {
  Allocation a;
  bool owned;  // aclrtMalloc allocation (we unmap and close) vs a VMM mapping (vmm.cc owns it)
};

struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Entry> by_base;  // sorted: FindAllocation is one upper_bound
  std::mutex host_mu;
  std::set<void*> host;
};

// Bumped (under Reg().mu) by every change of by_base: a thread's cached lookups (FindAllocation)
// are valid while it is unchanged. Outside the registry so a cache hit needs no guard check.
std::atomic<uint64_t> g_generation{1};

Registry& Reg() {
  static Registry* r = new Registry();  // leaked: allocations may be freed from atexit handlers
  return *r;
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

bool IsHugePolicy(uint32_t policy) {
  switch (policy & 0xff) {
    case 0: case 1: case 3: case 4: case 6: case 7: return true;  // HUGE_FIRST/ONLY/1G (P2P too)
    default: return false;
  }
}

// Makes the memory backed now (like device memory): the page tables (MADV_POPULATE_WRITE, or
// MAP_POPULATE at the mmap when no huge-page advice must come first), then one write to every
// page (TouchPages, which keeps the memory's zeros). The write is not redundant: on virtual
// machines whose hypervisor maps each process's pages lazily, the first access of a page costs
// ~6.5 us even with populated page tables (docs/performance.md "First access through a new
// mapping"); paid here, it is not paid inside the first collectives.
void Prefault(void* p, size_t len, bool populated) {
#ifdef MADV_POPULATE_WRITE
  if (!populated) (void)madvise(p, len, MADV_POPULATE_WRITE);
#else
  (void)populated;
#endif
  TouchPages(p, len, /*write=*/true);
}

}  // namespace

namespace {

// The allocation containing p, from this thread's last two answers (found or not) while the
// registry is unchanged: every collective call looks up its sendBuf and recvBuf, so a buffer used
// again costs a compare (no lock, no tree walk). Any aclrtMalloc/aclrtFree/VMM map bumps the
// generation, so an address freed and allocated again is looked up again.
struct Cached {
  uint64_t generation = 0;  // 0: empty
  uintptr_t addr = 0;
  bool found = false;
  Allocation a;
};

const Cached& Lookup(const void* p) {
  thread_local Cached cache[2];
  thread_local unsigned next = 0;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (cache[0].generation == gen && cache[0].addr == addr) return cache[0];
  if (cache[1].generation == gen && cache[1].addr == addr) return cache[1];
  auto& r = Reg();
  Cached& slot = cache[next++ & 1];
  slot.found = false;
  std::shared_lock lk(r.mu);
  slot.generation = g_generation.load(std::memory_order_relaxed);
  slot.addr = addr;
  auto it = r.by_base.upper_bound(addr);
  if (it != r.by_base.begin()) {
    --it;
    if (addr < it->first + it->second.a.mapped) {
      slot.found = true;
      slot.a = it->second.a;
    }
  }
  return slot;
}

}  // namespace

bool FindAllocation(const void* p, Allocation* out) {
  const Cached& c = Lookup(p);
  if (c.found) *out = c.a;
  return c.found;
}

bool FindAllocation(const void* p, std::optional<Allocation>* out) {
  const Cached& c = Lookup(p);
  if (c.found) out->emplace(c.a);
  else out->reset();
  return c.found;
}

std::optional<Allocation> FindAllocation(const void* p) {
  const Cached& c = Lookup(p);
  if (!c.found) return std::nullopt;
  return c.a;
}

uint64_t AllocationGeneration() { return g_generation.load(std::memory_order_acquire); }

size_t LiveAllocationCount() {
  auto& r = Reg();
  std::shared_lock lk(r.mu);
  size_t n = 0;
  for (auto& [b, e] : r.by_base) n += e.owned ? 1 : 0;
  return n;
}

namespace {
uint64_t NextSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

int Malloc(void** ptr, size_t size, uint32_t policy) {
  ReleaseFreedMemory();
  if (ptr == nullptr) return Fail(kAclInvalidParam, "aclrtMalloc: devPtr is null");
  if (size == 0) return Fail(kAclInvalidParam, "aclrtMalloc: size is 0");
  const size_t page = PageSize();
  if (size > SIZE_MAX - page) return Fail(kAclInvalidParam, "aclrtMalloc: size %zu is too large", size);
  const size_t mapped = (size + page - 1) / page * page;
  int device = 0;
  if (int rc = RequireDevice("aclrtMalloc", &device); rc != kAclSuccess) return rc;
  // "Device" memory is host memory here: a request beyond what the host has left fails with a
  // clear error instead of ending in the kernel's out-of-memory killer (pre-faulted) or later.
  // Small requests skip the /proc read.
  if (mapped >= (size_t{256} << 20)) {
    size_t avail = 0, total = 0;
    if (GetMemInfo(0, &avail, &total) == kAclSuccess && avail > 0 && mapped > avail)
      return Fail(kAclRtMemoryAllocation,
                  "aclrtMalloc: %zu bytes on device %d exceed the host memory available (%zu of %zu bytes, "
                  "MemAvailable): device memory is host memory on this machine", size, device, avail, total);
  }
  const bool huge = IsHugePolicy(policy);
  const bool prefault = EnvBool(Knob::kMallocPrefault, true);

  char name[48];
  snprintf(name, sizeof(name), "hostccl-dev%d", device);
  int fd = memfd_create(name, MFD_CLOEXEC);
  void* p = MAP_FAILED;
  if (fd >= 0) {
    if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
      int err = errno;
      close(fd);
      return Fail(kAclRtMemoryAllocation, "aclrtMalloc: ftruncate(memfd, %zu) failed: %s", mapped, strerror(err));
    }
    // Huge policies: placed so that 2 MiB pages of the memfd map whole (common/huge_pages.h).
    p = huge ? MapSharedAligned(fd, mapped, 0, 0)
             : mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | (prefault ? MAP_POPULATE : 0), fd, 0);
  } else {
    // Out of descriptors (or no memfd): still allocate, but the memory cannot be shared.
    HLOG_WARN(kRuntime, "aclrtMalloc: memfd_create failed (%s); using anonymous shared memory", strerror(errno));
    int flags = MAP_SHARED | MAP_ANONYMOUS | ((prefault && !huge) ? MAP_POPULATE : 0);
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, -1, 0);
  }
  if (p == MAP_FAILED) {
    int err = errno;
    if (fd >= 0) close(fd);
    return Fail(kAclRtMemoryAllocation, "aclrtMalloc: cannot map %zu bytes on device %d: %s", size, device,
                strerror(err));
  }
  size_t in_huge = 0;
  if (huge) {
#ifdef MADV_HUGEPAGE
    (void)madvise(p, mapped, MADV_HUGEPAGE);  // best effort: no hugetlbfs needed, no failure
#endif
    // The memory is backed now anyway (prefault): in 2 MiB pages where the kernel can, whatever
    // the host's shmem huge-page setting (best effort; the rest keeps 4 KiB pages).
    if (prefault && fd >= 0) in_huge = CollapseToHugePages(p, mapped);
  }
  // The collapsed 2 MiB pages (from p: the mapping is 2 MiB aligned) are backed and mapped
  // already; the rest is pre-faulted page by page.
  if (prefault) Prefault(static_cast<char*>(p) + in_huge, mapped - in_huge, /*populated=*/!huge);
  Allocation a;
  a.serial = NextSerial();
  a.base = p;
  a.requested = size;
  a.mapped = mapped;
  a.memfd = fd;
  a.device = device;
  {
    auto& r = Reg();
    std::unique_lock lk(r.mu);
    r.by_base[reinterpret_cast<uintptr_t>(p)] = Entry{a, true};
    g_generation.fetch_add(1, std::memory_order_release);
  }
  HLOG_TRACE(kRuntime, "aclrtMalloc: %zu bytes at %p (device %d, policy %u, memfd %d, %zu bytes in 2 MiB pages)", size, p,
             device, policy, fd, in_huge);
  *ptr = p;
  return kAclSuccess;
}

namespace {
struct Observers {
  std::mutex mu;
  int next = 1;
  std::vector<std::pair<int, std::function<void(uint64_t)>>> list;
};
Observers& Obs() {
  static Observers o;
  return o;
}
void NotifyFreed(uint64_t serial) {
  auto& o = Obs();
  std::lock_guard<std::mutex> lk(o.mu);
  for (auto& [id, fn] : o.list) fn(serial);
}
}  // namespace

int AddFreeObserver(std::function<void(uint64_t)> fn) {
  auto& o = Obs();
  std::lock_guard<std::mutex> lk(o.mu);
  o.list.emplace_back(o.next, std::move(fn));
  return o.next++;
}

void RemoveFreeObserver(int id) {
  auto& o = Obs();
  std::lock_guard<std::mutex> lk(o.mu);
  for (auto it = o.list.begin(); it != o.list.end(); ++it)
    if (it->first == id) {
      o.list.erase(it);
      return;
    }
}

namespace {

// Allocations freed while some stream still had work that may use them (Free).
struct Deferred {
  Allocation a;
  std::vector<StreamMark> marks;
};
std::mutex g_deferred_mu;
std::vector<Deferred> g_deferred;
std::atomic<bool> g_any_deferred{false};

void Unmap(const Allocation& a) {
  munmap(a.base, a.mapped);
  if (a.memfd >= 0) close(a.memfd);
  NotifyFreed(a.serial);
}

}  // namespace

void ReleaseFreedMemory() {
  if (!g_any_deferred.load(std::memory_order_acquire)) return;
  std::vector<Allocation> done;
  {
    std::lock_guard lk(g_deferred_mu);
    for (size_t i = 0; i < g_deferred.size();) {
      if (StreamsPassed(g_deferred[i].marks)) {
        done.push_back(g_deferred[i].a);
        g_deferred[i] = std::move(g_deferred.back());
        g_deferred.pop_back();
      } else {
        ++i;
      }
    }
    g_any_deferred.store(!g_deferred.empty(), std::memory_order_release);
  }
  for (const Allocation& a : done) Unmap(a);
}

int Free(void* ptr) {
  if (ptr == nullptr) return Fail(kAclInvalidParam, "aclrtFree: devPtr is null");
  Allocation a;
  {
    auto& r = Reg();
    std::unique_lock lk(r.mu);
    auto it = r.by_base.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == r.by_base.end() || !it->second.owned)
      return Fail(kAclInvalidParam, "aclrtFree: %p is not the start of an aclrtMalloc allocation", ptr);
    a = it->second.a;
    r.by_base.erase(it);
    g_generation.fetch_add(1, std::memory_order_release);
  }
  // Work enqueued before the free may still read or write this memory (a call not synchronized
  // yet): it stays mapped until that work completed.
  std::vector<StreamMark> marks = BusyStreams();
  if (marks.empty()) {
    Unmap(a);
  } else {
    HLOG_INFO(kRuntime, "aclrtFree(%p): %zu stream(s) still have work queued; unmapped once it is done", ptr,
              marks.size());
    std::lock_guard lk(g_deferred_mu);
    g_deferred.push_back({a, std::move(marks)});
    g_any_deferred.store(true, std::memory_order_release);
  }
  ReleaseFreedMemory();
  return kAclSuccess;
}

void RegisterMapping(void* base, size_t size, int memfd, size_t offset, int device) {
  Allocation a;
  a.serial = NextSerial();
  a.base = base;
  a.requested = size;
  a.mapped = size;
  a.memfd = memfd;
  a.memfd_offset = offset;
  a.device = device;
  auto& r = Reg();
  std::unique_lock lk(r.mu);
  r.by_base[reinterpret_cast<uintptr_t>(base)] = Entry{a, false};
  g_generation.fetch_add(1, std::memory_order_release);
}

void UnregisterMapping(void* base) {
  uint64_t serial = 0;
  {
    auto& r = Reg();
    std::unique_lock lk(r.mu);
    auto it = r.by_base.find(reinterpret_cast<uintptr_t>(base));
    if (it != r.by_base.end() && !it->second.owned) {
      serial = it->second.a.serial;
      r.by_base.erase(it);
      g_generation.fetch_add(1, std::memory_order_release);
    }
  }
  if (serial != 0) NotifyFreed(serial);
}

int MallocHost(void** ptr, size_t size) {
  if (ptr == nullptr) return Fail(kAclInvalidParam, "aclrtMallocHost: hostPtr is null");
  if (size == 0) return Fail(kAclInvalidParam, "aclrtMallocHost: size is 0");
  void* p = nullptr;
  if (posix_memalign(&p, 64, size) != 0 || p == nullptr)
    return Fail(kAclRtMemoryAllocation, "aclrtMallocHost: cannot allocate %zu bytes", size);
  auto& r = Reg();
  std::lock_guard lk(r.host_mu);
  r.host.insert(p);
  *ptr = p;
  return kAclSuccess;
}

int FreeHost(void* ptr) {
  if (ptr == nullptr) return Fail(kAclInvalidParam, "aclrtFreeHost: hostPtr is null");
  auto& r = Reg();
  {
    std::lock_guard lk(r.host_mu);
    if (r.host.erase(ptr) == 0)
      return Fail(kAclInvalidParam, "aclrtFreeHost: %p did not come from aclrtMallocHost", ptr);
  }
  free(ptr);
  return kAclSuccess;
}

namespace {
int CheckCopy(const char* func, void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  if (dst == nullptr) return Fail(kAclInvalidParam, "%s: dst is null", func);
  if (src == nullptr) return Fail(kAclInvalidParam, "%s: src is null", func);
  if (count > dest_max)
    return Fail(kAclInvalidParam, "%s: count %zu bytes > destMax %zu bytes", func, count, dest_max);
  if (kind < 0 || kind > 7)
    return Fail(kAclInvalidParam, "%s: kind %d is not an aclrtMemcpyKind (0..7)", func, kind);
  return kAclSuccess;
}

int CheckSet(const char* func, void* dst, size_t max_count, size_t count) {
  if (dst == nullptr) return Fail(kAclInvalidParam, "%s: devPtr is null", func);
  if (count > max_count)
    return Fail(kAclInvalidParam, "%s: count %zu bytes > maxCount %zu bytes", func, count, max_count);
  return kAclSuccess;
}
}  // namespace

int Memcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  if (int rc = CheckCopy("aclrtMemcpy", dst, dest_max, src, count, kind); rc != kAclSuccess) return rc;
  if (count > 0 && dst != src) memmove(dst, src, count);
  return kAclSuccess;
}

int MemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, int kind, void* stream) {
  if (int rc = CheckCopy("aclrtMemcpyAsync", dst, dest_max, src, count, kind); rc != kAclSuccess) return rc;
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclrtMemcpyAsync", &s); rc != kAclSuccess) return rc;
  if (count == 0) return kAclSuccess;
  Status st = s->Enqueue([dst, src, count]() {
    if (dst != src) memmove(dst, src, count);
    return Status::Ok();
  });
  if (!st.ok()) return Fail(kAclRtInternalError, "aclrtMemcpyAsync: %s", st.ToString().c_str());
  return kAclSuccess;
}

int Memset(void* dst, size_t max_count, int32_t value, size_t count) {
  if (int rc = CheckSet("aclrtMemset", dst, max_count, count); rc != kAclSuccess) return rc;
  memset(dst, value, count);
  return kAclSuccess;
}

int MemsetAsync(void* dst, size_t max_count, int32_t value, size_t count, void* stream) {
  if (int rc = CheckSet("aclrtMemsetAsync", dst, max_count, count); rc != kAclSuccess) return rc;
  std::shared_ptr<StreamImpl> s;
  if (int rc = ResolveStream(stream, "aclrtMemsetAsync", &s); rc != kAclSuccess) return rc;
  if (count == 0) return kAclSuccess;
  Status st = s->Enqueue([dst, value, count]() {
    memset(dst, value, count);
    return Status::Ok();
  });
  if (!st.ok()) return Fail(kAclRtInternalError, "aclrtMemsetAsync: %s", st.ToString().c_str());
  return kAclSuccess;
}

int GetMemInfo(int attr, size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr)
    return Fail(kAclInvalidParam, "aclrtGetMemInfo: %s is null", free_bytes == nullptr ? "free" : "total");
  if (attr < 0 || attr > 17) return Fail(kAclInvalidParam, "aclrtGetMemInfo: attr %d is not an aclrtMemAttr", attr);
  FILE* f = fopen("/proc/meminfo", "re");
  unsigned long long total_kb = 0, avail_kb = 0, free_kb = 0;
  if (f != nullptr) {
    char line[256];
    while (fgets(line, sizeof(line), f)) {
      unsigned long long v;
      if (sscanf(line, "MemTotal: %llu kB", &v) == 1) total_kb = v;
      else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1) avail_kb = v;
      else if (sscanf(line, "MemFree: %llu kB", &v) == 1) free_kb = v;
    }
    fclose(f);
  }
  if (total_kb == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    total_kb = static_cast<unsigned long long>(pages) * PageSize() / 1024;
    free_kb = static_cast<unsigned long long>(avail) * PageSize() / 1024;
  }
  if (avail_kb == 0) avail_kb = free_kb;
  *total_bytes = static_cast<size_t>(total_kb * 1024);
  *free_bytes = static_cast<size_t>(avail_kb * 1024);
  return kAclSuccess;
}

}  // namespace hostccl::rt
