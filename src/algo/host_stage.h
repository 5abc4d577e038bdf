// The host half of every node plan (ctx.nodes: ranks on several hosts, TCP between hosts, shared
// memory inside each): this host's shared-memory group and rank range, the transport's progress
// while a rank waits in that group, and failing the host's ranks together. The node plans
// (algo/*/*_node*.cc) are written on it, so each states only its own steps.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "algo/context.h"

namespace hostccl::algo {

class HostStage {
 public:
  explicit HostStage(Context& ctx);
  // kInternal naming `plan` ("node allgather") when this call has no per-host groups or no
  // transport; every other member needs it to have returned Ok.
  Status Ready(const char* plan) const;

  int hosts() const { return ctx_.nodes->nodes(); }
  int host() const { return host_; }  // this rank's host, 0 .. hosts() - 1
  // This host's ranks, [lo, hi): communicator ranks, contiguous per host.
  int lo() const { return lo_; }
  int hi() const { return hi_; }
  // The first rank of host `host` (first_of(hosts()) == the communicator's size).
  int first_of(int host) const { return ctx_.nodes->first[static_cast<size_t>(host)]; }
  net::ShmGroup* group() const { return ctx_.node_shm; }
  // The transport's progress, run while a rank sleeps in the host group: other hosts' stall probes
  // are answered (a rank asleep here is not taken for stopped) and their aborts received.
  const std::function<Status()>* progress() const { return &progress_; }
  Status Progress() const { return progress_(); }

  // Publishes this rank's buffers in the host group and arrives (HostArrive, algo/primitives.h).
  Status Arrive(const OpArgs& a, Deadline deadline, uint64_t* ticket, const void* payload = nullptr,
                size_t payload_bytes = 0);
  Status Barrier(Deadline deadline);
  // Aborts the host group with `st` (the host's other ranks fail with this message instead of
  // timing out on this rank) and returns `st`.
  Status Fail(const Status& st);
  // The recvBuf / sendBuf of host rank `i` (rank lo + i) mapped here; when it is not aclrtMalloc
  // memory, nullptr and *st = kNotSupport, "<which buffer is not>; across hosts hostccl needs
  // <need>" (need: "the host leaders' recvBufs from aclrtMalloc"), the host group aborted.
  char* PeerRecv(int i, const char* need, Status* st);
  const char* PeerSend(int i, const char* need, Status* st);

 private:
  Status Unmapped(const std::string& why, const char* need);

  Context& ctx_;
  int host_ = -1, lo_ = 0, hi_ = 0;
  std::function<Status()> progress_;
};

// A block copied inside a host: past the cache (non-temporal stores) from 4 MiB on, memcpy below;
// nothing when it is empty or already in place.
void CopyHostBlock(void* dst, const void* src, uint64_t bytes);

}  // namespace hostccl::algo
