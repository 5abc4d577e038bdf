// LocalGroup: the ranks of one communicator that are threads of this process, sharing an
// address space. It offers what the direct (slice-parallel) algorithms need and nothing else:
//  - Publish(): each rank posts its buffers and fingerprint for the current operation;
//  - Barrier(): all ranks arrive (adaptive wait, see sync/group_barrier.h);
//  - Slot(r): another rank's published buffers, valid between the two barriers of an operation.
// Ownership: shared by the Communicator objects of its members (shared_ptr); created by the first
// member to join (keyed by the communicator's unique key), removed when the last member leaves.
// Thread-safety: each member calls Publish/Barrier from its own thread; Abort() from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/status.h"
#include "transport/peer_memory.h"
#include "transport/sync/group_barrier.h"

namespace hostccl::net {

struct LocalSlot {
  const void* send = nullptr;
  void* recv = nullptr;
  Fingerprint fp;
  const void* payload = nullptr;  // Exchange's payload: the owner's memory, read in place
};

class LocalGroup : public PeerMemory {
 public:
  LocalGroup(std::string key, int size);
  ~LocalGroup() override;
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  // Joins (or creates) the group `key` of `size` members in this process.
  static std::shared_ptr<LocalGroup> Join(const std::string& key, int size);

  int size() const { return size_; }
  void Publish(int rank, const LocalSlot& slot) { slots_[static_cast<size_t>(rank)] = slot; }
  const LocalSlot& Slot(int rank) const { return slots_[static_cast<size_t>(rank)]; }

  // Waits until all members called Barrier the same number of times, or the deadline (kTimeout
  // naming the ranks that have not arrived), or Abort (its code and reason).
  Status Barrier(int rank, Deadline deadline);

  // Fails current and future barriers of every member with `code` and `reason`.
  void Abort(Code code, const std::string& reason);

  // PeerMemory: pointers are the published ones (same address space).
  Status Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc& sd,
                  const BufDesc& rd, Deadline deadline, bool check, const void* payload = nullptr,
                  size_t payload_bytes = 0) override;
  const void* PeerPayload(int r) override { return slots_[static_cast<size_t>(r)].payload; }
  size_t PayloadLimit() const override { return SIZE_MAX; }
  const void* PeerSend(int r, std::string*) override { return slots_[static_cast<size_t>(r)].send; }
  void* PeerRecv(int r, std::string*) override { return slots_[static_cast<size_t>(r)].recv; }
  Status Barrier(int rank, Deadline deadline, uint64_t) override { return Barrier(rank, deadline); }
  void Abort(Code code, const std::string& reason, uint64_t) override { Abort(code, reason); }
  Status Check(uint64_t seq) override;

 private:
  std::string key_;
  int size_;
  std::vector<LocalSlot> slots_;
  BarrierWords words_{};
  std::unique_ptr<ArrivalWord[]> arrivals_;
  std::mutex abort_mu_;
  Code abort_code_ = Code::kRemote;
  std::string abort_reason_;
};

}  // namespace hostccl::net
