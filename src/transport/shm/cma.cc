#include "transport/shm/cma.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::net {
namespace {

constexpr uint64_t kProbeMagic = 0x616d632d6c636374ull;  // "tccl-cma"
// Read by peers' probes; volatile so the compiler keeps it in memory with this exact value.
volatile uint64_t g_probe_word = kProbeMagic;
// A transfer that stops short is continued; this many calls without progress end it.
constexpr int kMaxStalls = 4;

Fingerprint ProbeFp() {
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(CollKind::kInternal);
  return fp;
}

// Every member's `bytes` of `mine`, in member order, on every member (through members[0]).
Status AllGather(int index, const std::vector<int>& members, Transport* t, const void* mine, size_t bytes,
                 Deadline deadline, std::vector<char>* all) {
  const int n = static_cast<int>(members.size());
  const Fingerprint fp = ProbeFp();
  all->assign(bytes * static_cast<size_t>(n), 0);
  std::memcpy(all->data() + bytes * static_cast<size_t>(index), mine, bytes);
  std::vector<RequestId> ids;
  RequestId id;
  if (index == 0) {
    for (int r = 1; r < n; ++r) {
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(members[static_cast<size_t>(r)], all->data() + bytes * static_cast<size_t>(r),
                                       bytes, fp, &id));
      ids.push_back(id);
    }
    HOSTCCL_RETURN_IF_ERROR(t->WaitAll(ids.data(), ids.size(), deadline));
    ids.clear();
    for (int r = 1; r < n; ++r) {
      HOSTCCL_RETURN_IF_ERROR(t->Isend(members[static_cast<size_t>(r)], all->data(), all->size(), fp, &id));
      ids.push_back(id);
    }
    return t->WaitAll(ids.data(), ids.size(), deadline);
  }
  HOSTCCL_RETURN_IF_ERROR(t->Isend(members[0], mine, bytes, fp, &id));
  HOSTCCL_RETURN_IF_ERROR(t->Wait(id, deadline));
  HOSTCCL_RETURN_IF_ERROR(t->Irecv(members[0], all->data(), all->size(), fp, &id));
  return t->Wait(id, deadline);
}

struct ProbeHello {
  uint64_t addr;   // of g_probe_word in this process
  uint32_t want;   // 0 when HOSTCCL_CMA=off here
  uint32_t reserved;
};

struct ProbeResult {
  int32_t failed_peer;  // -1 = every peer readable
  int32_t err;          // errno of the failed read (0: read the wrong value)
};

Status Transfer(bool write, uint32_t pid, int rank, uint64_t remote_addr, char* local, size_t bytes) {
  size_t done = 0;
  int stalls = 0;
  while (done < bytes) {
    iovec l{local + done, bytes - done};
    iovec r{reinterpret_cast<void*>(remote_addr + done), bytes - done};
    const ssize_t n = write ? process_vm_writev(static_cast<pid_t>(pid), &l, 1, &r, 1, 0)
                            : process_vm_readv(static_cast<pid_t>(pid), &l, 1, &r, 1, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      stalls = 0;
      continue;
    }
    const int e = n < 0 ? errno : 0;
    if ((e == EINTR || e == 0) && ++stalls < kMaxStalls) continue;
    const char* fn = write ? "process_vm_writev" : "process_vm_readv";
    if (e == ESRCH)
      return MakeStatus(Code::kRemote, "rank %d (pid %u) exited or was killed (%s: %s)", rank, pid, fn, strerror(e));
    return MakeStatus(e == EFAULT || e == 0 ? Code::kRemote : Code::kSyscall,
                      "%s of %zu bytes at %#llx in rank %d (pid %u) stopped after %zu bytes: %s", fn, bytes,
                      static_cast<unsigned long long>(remote_addr), rank, pid, done,
                      e == 0 ? "no progress" : strerror(e));
  }
  return Status::Ok();
}

}  // namespace

Status CmaRead(uint32_t pid, int rank, uint64_t remote_addr, void* local, size_t bytes) {
  return Transfer(false, pid, rank, remote_addr, static_cast<char*>(local), bytes);
}

Status CmaWrite(uint32_t pid, int rank, uint64_t remote_addr, const void* local, size_t bytes) {
  // process_vm_writev only reads the local iovec.
  return Transfer(true, pid, rank, remote_addr, const_cast<char*>(static_cast<const char*>(local)), bytes);
}

Status ProbeCma(int index, const std::vector<int>& members, Transport* t, const std::vector<uint32_t>& pids,
                Deadline deadline, bool* allowed, std::string* why) {
  *allowed = false;
  const int n = static_cast<int>(members.size());
  std::string mode = EnvString(Knob::kCma, "auto");
  if (mode != "auto" && mode != "off") {
    HLOG_ERROR(kEnv, "HOSTCCL_CMA=%s: expected auto or off; using auto", mode.c_str());
    mode = "auto";
  }
  ProbeHello hello{reinterpret_cast<uint64_t>(&g_probe_word), mode == "auto" ? 1u : 0u, 0};
  std::vector<char> hellos;
  HOSTCCL_RETURN_IF_ERROR(AllGather(index, members, t, &hello, sizeof(hello), deadline, &hellos));
  auto hello_of = [&](int r) {
    ProbeHello h;
    std::memcpy(&h, hellos.data() + sizeof(ProbeHello) * static_cast<size_t>(r), sizeof(h));
    return h;
  };
  for (int r = 0; r < n; ++r)
    if (hello_of(r).want == 0) {
      *why = StrFormat("HOSTCCL_CMA=off on rank %d", r);
      return Status::Ok();
    }
  ProbeResult mine{-1, 0};
  const uint32_t own_pid = static_cast<uint32_t>(getpid());
  for (int r = 0; r < n && mine.failed_peer < 0; ++r) {
    if (r == index || pids[static_cast<size_t>(r)] == own_pid) continue;
    uint64_t word = 0;
    iovec l{&word, sizeof(word)};
    iovec rv{reinterpret_cast<void*>(hello_of(r).addr), sizeof(word)};
    const ssize_t got = process_vm_readv(static_cast<pid_t>(pids[static_cast<size_t>(r)]), &l, 1, &rv, 1, 0);
    if (got != static_cast<ssize_t>(sizeof(word)) || word != kProbeMagic)
      mine = ProbeResult{r, got < 0 ? errno : 0};
  }
  std::vector<char> results;
  HOSTCCL_RETURN_IF_ERROR(AllGather(index, members, t, &mine, sizeof(mine), deadline, &results));
  for (int r = 0; r < n; ++r) {
    ProbeResult res;
    std::memcpy(&res, results.data() + sizeof(ProbeResult) * static_cast<size_t>(r), sizeof(res));
    if (res.failed_peer >= 0) {
      *why = StrFormat("rank %d cannot read rank %d (pid %u) with process_vm_readv: %s", r, res.failed_peer,
                       pids[static_cast<size_t>(res.failed_peer)],
                       res.err ? strerror(res.err) : "read a wrong value");
      return Status::Ok();
    }
  }
  *allowed = true;
  return Status::Ok();
}

}  // namespace hostccl::net
