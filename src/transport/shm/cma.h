// Cross-memory attach (CMA): copying straight between this process and a peer process of the same
// host with process_vm_readv / process_vm_writev, for buffers that are not shareable (plain
// malloc/new/stack memory, so no memfd to map).
//
// Whether it is allowed depends on ptrace access (same uid and no Yama restriction, or
// CAP_SYS_PTRACE; containers and seccomp may forbid it). ProbeCma decides once per group,
// collectively: every member reads a known word from every other member and rank 0 broadcasts one
// verdict, so either every rank uses CMA or none does. HOSTCCL_CMA=off makes the probe fail (tests
// of the fallback; ranks with different settings still agree: one "off" turns it off for all).
// Copies: CmaRead/CmaWrite move `bytes` or fail; a short transfer is continued from where it
// stopped (bounded: no progress -> failure). A peer that exited (ESRCH) is HCCL_E_REMOTE naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/transport.h"

namespace hostccl::net {

// Collective over `t` among `members` (index = this process's entry, pids[i] = members[i]'s pid).
// *allowed is the group verdict; *why explains a "no" (which rank could not read which, errno).
Status ProbeCma(int index, const std::vector<int>& members, Transport* t, const std::vector<uint32_t>& pids,
                Deadline deadline, bool* allowed, std::string* why);

// Copies `bytes` from `remote_addr` in process `pid` (group rank `rank`, for messages) to `local`.
Status CmaRead(uint32_t pid, int rank, uint64_t remote_addr, void* local, size_t bytes);
// Copies `bytes` from `local` to `remote_addr` in process `pid`.
Status CmaWrite(uint32_t pid, int rank, uint64_t remote_addr, const void* local, size_t bytes);

}  // namespace hostccl::net
