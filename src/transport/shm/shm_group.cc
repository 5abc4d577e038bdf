#include "transport/shm/shm_group.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <map>
#include <numeric>
#include <new>
#include <thread>

#include "common/dtype.h"
#include "common/env.h"
#include "common/futex.h"
#include "common/huge_pages.h"
#include "common/log.h"
#include "common/touch_pages.h"
#include "transport/shm/cma.h"
#include "transport/sync/group_barrier.h"
#include "transport/sync/prefetch_write.h"
#include "transport/sync/shared_cpu.h"
#include "transport/sync/spin_poll.h"
#include "transport/sync/wake_fence.h"

namespace hostccl::net {

namespace {
constexpr uint64_t kMagic = 0x686f737463636c53ull;  // "hostcclS"
// 3: a ring of arrival slots, done words, fingerprint history; 4: work words; 5: mail answers per
// pair; 6: 16 mail slots per pair up to 16 ranks; 7: each member's CPU in its DoneLine; 8: the
// point-to-point waits in SlotData
constexpr uint32_t kVersion = 8;
constexpr size_t kMaxMappings = 512;

constexpr uint64_t kFreedRing = 64;
}  // namespace

struct alignas(64) ShmGroup::SlotData {
  BufDesc send;
  BufDesc recv;
  std::atomic<uint64_t> freed_head;  // owner's freed allocation serials (ring of kFreedRing)
  std::atomic<uint64_t> freed[kFreedRing];
  // Set once when this rank fails or destroys its communicator (Abort): the code (-1 while the
  // reason is written) and the reason. Point-to-point waits look only at their peers' words, so a
  // rank that leaves fails only transfers with itself.
  std::atomic<int32_t> gone;
  char gone_reason[380];
  // SetRecvWait: (peer + 1) | dtype << 16 | message << 24 while an HcclRecv waits (0: none), and
  // the receive's count (written first).
  std::atomic<uint64_t> recv_wait;
  std::atomic<uint64_t> recv_count;
  // SetSendWait: (peer + 1) | message << 24 while this rank waits for `peer` to take a message
  // it sent (0: none).
  std::atomic<uint64_t> send_wait;
};

namespace {
Fingerprint InternalFp() {
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(CollKind::kInternal);
  return fp;
}

struct Hello {
  uint32_t pid;
  int32_t fd;
  uint64_t bytes;
};

// Members that are threads of one process share one mapping of their segment, so that its words
// have one address: ThreadSanitizer then sees the order their atomics give (with a mapping per
// member it saw none, and reported a thread rank's in-place read of a peer's buffer as a race),
// and the members' TLB entries are the same. Rank 0 registers its mapping under (pid, memfd) while
// it keeps the memfd open; a member of the same process takes a reference instead of mapping it
// again; the last reference unmaps it.
struct SegmentKey {
  uint32_t pid;
  int32_t fd;
  bool operator<(const SegmentKey& o) const { return pid != o.pid ? pid < o.pid : fd < o.fd; }
};
std::mutex g_segments_mu;
std::map<SegmentKey, std::weak_ptr<void>>& Segments() {
  static auto* m = new std::map<SegmentKey, std::weak_ptr<void>>;  // never destroyed: used at exit
  return *m;
}
std::shared_ptr<void> OwnMapping(void* p, size_t bytes) {
  return std::shared_ptr<void>(p, [bytes](void* q) { munmap(q, bytes); });
}

// Members that are threads of one process with no transport between them (CreateInProcess):
// whichever member comes first maps the segment and offers it here under the communicator's key;
// each member takes a reference, and the last one removes the offer. Nobody waits for anybody
// (one thread may create every rank's communicator in turn, in any order, as for
// sub-communicators). An offer some member never took (its setup failed first) is removed by the
// next CreateInProcess after the connect timeout.
struct Offer {
  std::shared_ptr<void> seg;  // null: the member that came first could not map it (failure says why)
  std::string failure;
  int takers = 0;             // members that have not taken it yet
  Deadline expires = Deadline::Infinite();
};
std::mutex g_offers_mu;
std::map<std::string, Offer>& Offers() {
  static auto* m = new std::map<std::string, Offer>;  // never destroyed: used at exit
  return *m;
}
}  // namespace

// One arrival of one rank: the ticket, the fingerprint and the first 32 payload bytes share the
// first cache line, the rest of the payload follows contiguously.
struct alignas(64) ShmGroup::ArrivalSlot {
  std::atomic<uint64_t> ticket;  // written last (release): the slot describes this arrival
  Fingerprint fp;
  char payload[ShmGroup::kInlineBytes];
};

// Per rank: the last ticket it finished with (it reads none of that ticket's slots any more), for
// operations that return before their peers (ShmGroup::Post, MarkDone), and 1 + the CPU of its
// last arrival (0: none yet; written when it changes, ShmGroup::PublishCpu). Its own cache line.
struct alignas(64) ShmGroup::DoneLine {
  std::atomic<uint64_t> done;
  std::atomic<int32_t> cpu;
};
// Per rank: the fingerprints of its last 4 x ring arrivals, so a rank that ran ahead can compare
// them later (ShmGroup::Post). Entry of ticket t: t % (4 x ring). A member compares tickets newer
// than its own minus 2 x ring and no member is more than ring tickets ahead of it (flow control),
// so 2 x ring would do; 4 x ring is the margin.
constexpr uint64_t kHistoryPerSlot = 4;
struct ShmGroup::FpEntry {
  std::atomic<uint64_t> ticket;
  Fingerprint fp;
};

using SlotData = ShmGroup::SlotData;
using DoneLine = ShmGroup::DoneLine;
using FpEntry = ShmGroup::FpEntry;

struct ShmSegment {
  uint64_t magic;
  uint32_t version;
  uint32_t nranks;
  std::atomic<int32_t> abort_code;
  std::atomic<uint64_t> abort_seq;
  char abort_reason[440];
  BarrierWords barrier;  // wake word, sleepers and the abort flag (arrivals use the slots)
  struct alignas(64) WorkLine {
    std::atomic<uint64_t> word;
  } work[PeerMemory::kMaxWorkers];  // PeerMemory::WorkWord (one cache line each)
  // followed by ArrivalSlot[nranks][ring] (ring = ShmGroup::RingSlots(nranks); ticket t in slot
  // t % ring), SlotData[nranks], DoneLine[nranks], FpEntry[nranks][4 x ring] (each rank's block
  // padded to 64 bytes), then (groups of at most kMailMaxRanks)
  // MailSlot[nranks][nranks][MailSlots(nranks)] and MailAnswer[nranks][nranks]
  static size_t Ring(int n) { return static_cast<size_t>(ShmGroup::RingSlots(n)); }
  static size_t HistoryBytes(int n) { return (kHistoryPerSlot * Ring(n) * sizeof(FpEntry) + 63) & ~size_t{63}; }
  ShmGroup::ArrivalSlot* arrivals() { return reinterpret_cast<ShmGroup::ArrivalSlot*>(this + 1); }
  SlotData* slots() { return reinterpret_cast<SlotData*>(arrivals() + Ring(static_cast<int>(nranks)) * nranks); }
  DoneLine* done() { return reinterpret_cast<DoneLine*>(slots() + nranks); }
  FpEntry* history(int r) {
    return reinterpret_cast<FpEntry*>(reinterpret_cast<char*>(done() + nranks) +
                                      static_cast<size_t>(r) * HistoryBytes(static_cast<int>(nranks)));
  }
  MailSlot* mail() { return reinterpret_cast<MailSlot*>(reinterpret_cast<char*>(history(static_cast<int>(nranks)))); }
  MailAnswer* answers() {
    const size_t n = nranks;
    return reinterpret_cast<MailAnswer*>(mail() + n * n * ShmGroup::MailSlots(static_cast<int>(nranks)));
  }
  static bool HasMail(int n) { return n <= ShmGroup::kMailMaxRanks; }
  static size_t Bytes(int n) {
    const size_t un = static_cast<size_t>(n);
    return sizeof(ShmSegment) + Ring(n) * sizeof(ShmGroup::ArrivalSlot) * un + sizeof(SlotData) * un +
           sizeof(DoneLine) * un + HistoryBytes(n) * un +
           (HasMail(n) ? (sizeof(MailSlot) * ShmGroup::MailSlots(n) + sizeof(MailAnswer)) * un * un : 0);
  }
};
static_assert(sizeof(ShmSegment) % 64 == 0, "segment header keeps 64-byte alignment");
static_assert([] {
  for (int n : {1, 8, 9, 16, 17, 64, 65})
    if ((ShmGroup::RingSlots(n) & (ShmGroup::RingSlots(n) - 1)) != 0) return false;
  for (int n : {16, 17})
    if ((ShmGroup::MailSlots(n) & (ShmGroup::MailSlots(n) - 1)) != 0) return false;
  return (kHistoryPerSlot & (kHistoryPerSlot - 1)) == 0;
}(), "ring, history and mailbox sizes are powers of two (indexes are masks)");
static_assert(sizeof(MailSlot) == 640 && offsetof(MailSlot, bad) == 512 && offsetof(MailSlot, posted) == 576,
              "a mail slot: one sender part, two receiver lines");
static_assert(sizeof(MailAnswer) == 64, "a pair's answer: one line");

// The segment's arrays, located once per mapping (ShmSegment's accessors compute the layout from
// nranks on every use; the ring and history sizes are powers of two, so an index is a mask).
void ShmGroup::Locate() {
  arrivals_ = seg_->arrivals();
  slot_data_ = seg_->slots();
  done_ = seg_->done();
  history_ = reinterpret_cast<char*>(seg_->history(0));
  history_bytes_ = ShmSegment::HistoryBytes(size_);
  ring_mask_ = ring_ - 1;
  history_mask_ = kHistoryPerSlot * ring_ - 1;
}

ShmGroup::FpEntry* ShmGroup::History(int r) const {
  return reinterpret_cast<FpEntry*>(history_ + static_cast<size_t>(r) * history_bytes_);
}

std::unique_ptr<ShmGroup> ShmGroup::NewGroup(int rank, const std::vector<int>& members,
                                             const std::vector<uint32_t>& pids, size_t staging_bytes) {
  std::unique_ptr<ShmGroup> g(new ShmGroup());
  const int size = static_cast<int>(members.size());
  g->ring_ = static_cast<uint64_t>(RingSlots(size));
  g->rank_ = rank;
  g->size_ = size;
  g->spin_ok_ = !Oversubscribed(size);
  g->workers_ = std::min(size, WorkerLimit());
  g->pids_ = pids;
  g->members_ = members;
  g->own_pid_ = static_cast<uint32_t>(getpid());
  const uint32_t own_pid = g->own_pid_;
  g->one_process_ = std::all_of(pids.begin(), pids.end(), [own_pid](uint32_t p) { return p == own_pid; });
  g->control_bytes_ = (ShmSegment::Bytes(size) + 4095) & ~size_t{4095};
  g->staging_bytes_ = (staging_bytes + 4095) & ~size_t{4095};
  g->seg_bytes_ = g->control_bytes_ + g->staging_bytes_;
  return g;
}

void ShmGroup::WriteHeader() {
  seg_->magic = kMagic;
  seg_->version = kVersion;
  seg_->nranks = static_cast<uint32_t>(size_);
  Locate();
}

void ShmGroup::AttachShared() {
  if (staging_bytes_ > 0) staging_ = reinterpret_cast<char*>(seg_) + control_bytes_;
  if (ShmSegment::HasMail(size_)) {
    mail_ = seg_->mail();
    mail_sent_.assign(static_cast<size_t>(size_), 0);
    mail_taken_.assign(static_cast<size_t>(size_), 0);
    mail_checked_.assign(static_cast<size_t>(size_), 0);
    mail_known_taken_.assign(static_cast<size_t>(size_), 0);
    answers_ = seg_->answers();
  }
  for (int r = 0; r < size_; ++r) {
    int pfd = -1;
    if (r != rank_ && pids_[static_cast<size_t>(r)] != own_pid_)
      pfd = static_cast<int>(syscall(SYS_pidfd_open, pids_[static_cast<size_t>(r)], 0));
    pidfds_.push_back(pfd);
  }
}

Status ShmGroup::CreateInProcess(int rank, int size, const std::string& key, Deadline deadline,
                                 std::unique_ptr<ShmGroup>* out) {
  std::vector<int> members(static_cast<size_t>(size));
  std::iota(members.begin(), members.end(), 0);
  std::unique_ptr<ShmGroup> g =
      NewGroup(rank, members, std::vector<uint32_t>(static_cast<size_t>(size), static_cast<uint32_t>(getpid())), 0);
  std::string failure;
  {
    std::lock_guard<std::mutex> lk(g_offers_mu);
    std::erase_if(Offers(), [](const auto& o) { return o.second.expires.Expired(); });
    auto it = Offers().find(key);
    if (it == Offers().end()) {
      // The first member here maps the segment. One address space: private anonymous memory is
      // shared by the threads (and a fork's child gets a copy of it, not the members' words).
      Offer offer;
      offer.takers = size;
      offer.expires = deadline;
      void* p = mmap(nullptr, g->seg_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (p == MAP_FAILED) {
        offer.failure = StrFormat("shared memory unavailable: rank %d could not map %zu bytes: %s", rank,
                                  g->seg_bytes_, strerror(errno));
      } else {
        offer.seg = OwnMapping(p, g->seg_bytes_);
        g->seg_ = static_cast<ShmSegment*>(p);
        g->WriteHeader();  // before any other member can take it (under the lock)
      }
      it = Offers().emplace(key, std::move(offer)).first;
    }
    g->seg_map_ = it->second.seg;
    failure = it->second.failure;
    if (--it->second.takers == 0) Offers().erase(it);
  }
  if (!g->seg_map_) return Status(Code::kNotSupport, failure);
  g->seg_ = static_cast<ShmSegment*>(g->seg_map_.get());
  g->Locate();
  g->asym_wake_ = AsymmetricWakeAvailable();
  g->cma_ = true;  // process_vm_readv of its own pid needs no permission (no plan needs it: SameProcess)
  HLOG_INFO(kShm, "shared memory group of %d threads of this process: wake-ups %s; every buffer is read in place", size,
            g->asym_wake_ ? "paid by the sleeper (membarrier)" : "fenced by every waker");
  g->AttachShared();
  *out = std::move(g);
  return Status::Ok();
}

Status ShmGroup::Create(int rank, const std::vector<int>& members, Transport* t, const std::vector<uint32_t>& pids,
                        size_t staging_bytes, Deadline deadline, std::unique_ptr<ShmGroup>* out) {
  std::unique_ptr<ShmGroup> g = NewGroup(rank, members, pids, staging_bytes);
  const int size = static_cast<int>(members.size());
  const size_t control = g->control_bytes_;
  auto peer = [&](int i) { return members[static_cast<size_t>(i)]; };
  const Fingerprint fp = InternalFp();
  std::string failure;
  // The setup handshake's bytes: each member's ack and rank 0's verdict carry kMapped (the segment
  // is usable) and kNoWakeFence (its process registered for membarrier; in the verdict: every
  // member's did, so the group's wakers run no fence).
  constexpr uint8_t kMapped = 1, kNoWakeFence = 2;
  const uint8_t own_fence_bit = AsymmetricWakeAvailable() ? kNoWakeFence : 0;
  uint8_t ok = kMapped | own_fence_bit;
  if (rank == 0) {
    g->memfd_ = memfd_create("hostccl-shm", MFD_CLOEXEC);
    void* p = MAP_FAILED;
    if (g->memfd_ >= 0 && ftruncate(g->memfd_, static_cast<off_t>(g->seg_bytes_)) == 0)
      p = mmap(nullptr, g->seg_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, g->memfd_, 0);
    if (p == MAP_FAILED) return MakeStatus(Code::kSyscall, "shared segment: %s", strerror(errno));
    std::memset(p, 0, g->seg_bytes_);
    g->seg_ = static_cast<ShmSegment*>(p);
    g->seg_map_ = OwnMapping(p, g->seg_bytes_);
    {
      std::lock_guard<std::mutex> lk(g_segments_mu);
      Segments()[SegmentKey{g->own_pid_, g->memfd_}] = g->seg_map_;
    }
    g->WriteHeader();
    Hello hello{static_cast<uint32_t>(getpid()), g->memfd_, g->seg_bytes_};
    std::vector<RequestId> ids;
    std::vector<uint8_t> acks(static_cast<size_t>(size), 0);
    for (int r = 1; r < size; ++r) {
      RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend(peer(r), &hello, sizeof(hello), fp, &id));
      ids.push_back(id);
      HOSTCCL_RETURN_IF_ERROR(t->Irecv(peer(r), &acks[static_cast<size_t>(r)], 1, fp, &id));
      ids.push_back(id);
    }
    HOSTCCL_RETURN_IF_ERROR(t->WaitAll(ids.data(), ids.size(), deadline));
    for (int r = 1; r < size; ++r) {
      if ((acks[static_cast<size_t>(r)] & kMapped) == 0) {
        ok = 0;
        failure = StrFormat("rank %d could not map the shared segment", r);
      }
      if ((acks[static_cast<size_t>(r)] & kNoWakeFence) == 0) ok &= static_cast<uint8_t>(~kNoWakeFence);
    }
    ids.clear();
    for (int r = 1; r < size; ++r) {
      RequestId id;
      HOSTCCL_RETURN_IF_ERROR(t->Isend(peer(r), &ok, 1, fp, &id));
      ids.push_back(id);
    }
    HOSTCCL_RETURN_IF_ERROR(t->WaitAll(ids.data(), ids.size(), deadline));
  } else {
    Hello hello{};
    RequestId id;
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(peer(0), &hello, sizeof(hello), fp, &id));
    HOSTCCL_RETURN_IF_ERROR(t->Wait(id, deadline));
    uint8_t mine = 0;
    const auto usable = [&] {
      return g->seg_->magic == kMagic && g->seg_->nranks == static_cast<uint32_t>(size) ? (kMapped | own_fence_bit) : 0;
    };
    if (hello.pid == g->own_pid_ && hello.bytes == g->seg_bytes_) {  // rank 0 is a thread of this process
      std::lock_guard<std::mutex> lk(g_segments_mu);
      auto it = Segments().find(SegmentKey{hello.pid, hello.fd});
      if (it != Segments().end()) g->seg_map_ = it->second.lock();
    }
    if (g->seg_map_) {
      g->seg_ = static_cast<ShmSegment*>(g->seg_map_.get());
      mine = static_cast<uint8_t>(usable());
      if (mine) g->Locate();  // rank 0 wrote every page of this mapping (memset)
    }
    if (!g->seg_map_) {  // another process's segment: map it from rank 0's memfd
      std::string path = StrFormat("/proc/%u/fd/%d", hello.pid, hello.fd);
      int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0 && hello.bytes == g->seg_bytes_) {
        void* p = mmap(nullptr, g->seg_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED) {
          g->seg_ = static_cast<ShmSegment*>(p);
          g->seg_map_ = OwnMapping(p, g->seg_bytes_);
          mine = static_cast<uint8_t>(usable());
          // Every page of the control part (arrival rings, histories, mailboxes) once now, from this
          // mapping: on a VM that builds each process's mapping of a page at its first access
          // (~1.5 us read, ~6.5 us written; TouchPages), the first ring of calls paid it in every
          // call, 5-6 us per 8 B Reduce at 2 ranks instead of 0.6 (docs/performance.md "Pages of
          // the shared segment, touched at creation"). Read, but written where this rank writes on
          // every call: its ring and its fingerprint history. Rank 0 wrote every page (memset).
          if (mine) {
            g->Locate();
            TouchPages(p, control, false);
            TouchPages(g->Slot(rank, 0), g->ring_ * sizeof(ArrivalSlot), true);
            TouchPages(g->History(rank), ShmSegment::HistoryBytes(size), true);
          }
        }
      }
      if (fd < 0) failure = StrFormat("open %s: %s", path.c_str(), strerror(errno));
      if (fd >= 0) close(fd);
    }
    HOSTCCL_RETURN_IF_ERROR(t->Isend(peer(0), &mine, 1, fp, &id));
    HOSTCCL_RETURN_IF_ERROR(t->Wait(id, deadline));
    HOSTCCL_RETURN_IF_ERROR(t->Irecv(peer(0), &ok, 1, fp, &id));
    HOSTCCL_RETURN_IF_ERROR(t->Wait(id, deadline));
    if (!mine && failure.empty()) failure = "segment mapping failed";
    if ((ok & kMapped) == 0 && failure.empty()) failure = "another rank could not map the shared segment";
  }
  if ((ok & kMapped) == 0) return Status(Code::kNotSupport, "shared memory unavailable: " + failure);
  g->asym_wake_ = (ok & kNoWakeFence) != 0;
  std::string no_cma;
  HOSTCCL_RETURN_IF_ERROR(ProbeCma(rank, members, t, pids, deadline, &g->cma_, &no_cma));
  HLOG_INFO(kShm, "shared memory group of %d ranks: wake-ups %s; buffers not from aclrtMalloc %s%s", size,
            g->asym_wake_ ? "paid by the sleeper (membarrier)" : "fenced by every waker",
            g->cma_ ? "are copied single-copy with process_vm_readv/writev (probe passed)"
                    : "are staged through the shared segment: ",
            no_cma.c_str());
  g->AttachShared();
  *out = std::move(g);
  return Status::Ok();
}

ShmGroup::~ShmGroup() {
  if (const uint64_t sleeps = sleep_stats_.sleeps.load(std::memory_order_relaxed); sleeps > 0)
    HLOG_INFO(kShm, "rank %d of a shared memory group of %d: %llu sleeps on its futex, %llu missed wake-ups (the "
              "sleep ran out with the wait over)", members_.empty() ? -1 : members_[static_cast<size_t>(rank_)], size_,
              static_cast<unsigned long long>(sleeps),
              static_cast<unsigned long long>(sleep_stats_.missed.load(std::memory_order_relaxed)));
  for (auto& [k, m] : maps_) munmap(m.local, m.length);
  for (int fd : pidfds_)
    if (fd >= 0) close(fd);
  if (memfd_ >= 0) {
    {
      std::lock_guard<std::mutex> lk(g_segments_mu);
      Segments().erase(SegmentKey{own_pid_, memfd_});  // before the number can be reused
    }
    close(memfd_);
  }
  seg_map_.reset();  // the last member of this process unmaps the segment
}

void ShmGroup::NoteFreed(uint64_t serial) {
  SlotData& s = slot_data_[rank_];
  uint64_t i = s.freed_head.fetch_add(1, std::memory_order_acq_rel);
  s.freed[i % kFreedRing].store(serial, std::memory_order_release);
}

void ShmGroup::Unmap(int r, uint64_t serial) {
  auto it = maps_.find((static_cast<uint64_t>(r) << 48) ^ serial);
  if (it == maps_.end()) return;
  munmap(it->second.local, it->second.length);
  maps_.erase(it);
}

// Runs at the start of an operation only, so no pointer resolved during an operation goes stale.
void ShmGroup::DropFreedMappings() {
  if (freed_seen_.size() != static_cast<size_t>(size_)) freed_seen_.assign(static_cast<size_t>(size_), 0);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    SlotData& s = slot_data_[r];
    const uint64_t head = s.freed_head.load(std::memory_order_acquire);
    uint64_t& seen = freed_seen_[static_cast<size_t>(r)];
    if (head == seen) continue;
    if (head - seen > kFreedRing) {  // ring overran: drop every mapping of that peer
      for (auto it = maps_.begin(); it != maps_.end();) {
        if ((it->first >> 48) == static_cast<uint64_t>(r)) {
          munmap(it->second.local, it->second.length);
          it = maps_.erase(it);
        } else {
          ++it;
        }
      }
    } else {
      for (uint64_t i = seen; i < head; ++i) Unmap(r, s.freed[i % kFreedRing].load(std::memory_order_acquire));
    }
    seen = head;
  }
  if (maps_.size() >= kMaxMappings) {  // safety net for allocations freed without notice
    for (auto& [k, m] : maps_) munmap(m.local, m.length);
    maps_.clear();
  }
}

void ShmGroup::Publish(int rank, const BufDesc& send, const BufDesc& recv) {
  DropFreedMappings();
  SlotData& s = slot_data_[rank];
  // Stored only when they changed: a store takes the lines from the peers that read them (the
  // recv descriptor shares a line with freed_head, which every peer reads at the start of each
  // exchange), so repeating the same buffers cost each peer a cross-core miss per call.
  if (std::memcmp(&s.send, &send, sizeof send) != 0) s.send = send;
  if (std::memcmp(&s.recv, &recv, sizeof recv) != 0) s.recv = recv;
}

ShmGroup::ArrivalSlot* ShmGroup::Slot(int r, uint64_t ticket) const {
  return arrivals_ + ring_ * static_cast<size_t>(r) + (ticket & ring_mask_);
}
const Fingerprint& ShmGroup::ArrivedFp(int r, uint64_t ticket) const { return Slot(r, ticket)->fp; }
const char* ShmGroup::ArrivedPayload(int r, uint64_t ticket) const { return Slot(r, ticket)->payload; }

int ShmGroup::FirstMismatch(uint64_t ticket) const {
  for (int r = 1; r < size_; ++r)
    if (Slot(r, ticket)->fp != Slot(0, ticket)->fp) return r;
  return -1;
}

bool ShmGroup::AllArrived(uint64_t ticket) const {
  for (int r = 0; r < size_; ++r)
    if (Slot(r, ticket)->ticket.load(std::memory_order_seq_cst) < ticket) return false;
  return true;
}

const BufDesc& ShmGroup::SendDesc(int r) const { return slot_data_[r].send; }
const BufDesc& ShmGroup::RecvDesc(int r) const { return slot_data_[r].recv; }

int ShmGroup::FirstUnmappable(bool recv_too) const {
  for (int r = 0; r < size_; ++r)
    if (!Shareable(SendDesc(r)) || (recv_too && !Shareable(RecvDesc(r)))) return r;
  return -1;
}

void* ShmGroup::Resolve(int r, const BufDesc& d, std::string* why, bool write) {
  if (SameProcess(r)) return reinterpret_cast<void*>(d.addr);  // any memory: one address space
  if (d.serial == 0) {
    *why = StrFormat("rank %d's buffer %p is not device memory from aclrtMalloc", r,
                     reinterpret_cast<void*>(d.addr));
    return nullptr;
  }
  const uint64_t key = (static_cast<uint64_t>(r) << 48) ^ d.serial;
  auto it = maps_.find(key);
  if (it == maps_.end() || it->second.base != d.base) {
    std::string path = StrFormat("/proc/%u/fd/%d", pids_[static_cast<size_t>(r)], d.memfd);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      // A peer that failed (and published why) and exited, or died, since its arrival takes its
      // memory with it: report the first cause another member published (F4: a slow survivor
      // named the healthy rank 0, which had failed on rank 2's death and left), else the dead
      // peer (its communicator rank), and only else that the memory cannot be opened.
      std::string cause;
      Status alive = PublishedAbort(&cause) ? Status(Code::kRemote, cause) : CheckPeersAlive();
      *why = !alive.ok() ? alive.message()
                         : StrFormat("cannot open rank %d's device memory (%s): %s", members_[static_cast<size_t>(r)],
                                     path.c_str(), strerror(err));
      return nullptr;
    }
    // Placed like the owner's mapping, so the owner's 2 MiB pages map whole here too.
    void* p = MapSharedAligned(fd, d.length, d.file_offset, MAP_POPULATE);
    close(fd);
    if (p == MAP_FAILED) {
      *why = StrFormat("cannot map rank %d's device memory: %s", r, strerror(errno));
      return nullptr;
    }
    HLOG_DEBUG(kShm, "mapped rank %d allocation #%llu (%llu bytes)", r, static_cast<unsigned long long>(d.serial),
               static_cast<unsigned long long>(d.length));
    // Every page now (common/touch_pages.h): the first call that maps the buffer pays it all. Left
    // to the copies, claimed pieces spread it over every call until each rank had touched every
    // page once, which took more than 10 calls of 64 MiB at 4 ranks.
    TouchPages(p, d.length, write);
    it = maps_.insert_or_assign(key, Mapping{p, d.length, d.base, write}).first;
  } else if (write && !it->second.written) {  // first mapped to be read (an in-place buffer)
    TouchPages(it->second.local, it->second.length, true);
    it->second.written = true;
  }
  return static_cast<char*>(it->second.local) + (d.addr - d.base);
}

const void* ShmGroup::PeerSend(int r, std::string* why) { return Resolve(r, SendDesc(r), why, false); }
void* ShmGroup::PeerRecv(int r, std::string* why) { return Resolve(r, RecvDesc(r), why, true); }

Status ShmGroup::CheckPeersAlive() {
  for (size_t r = 0; r < pidfds_.size(); ++r) {
    if (pidfds_[r] < 0) continue;
    pollfd p{pidfds_[r], POLLIN, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
      return MakeStatus(Code::kRemote, "rank %d (pid %u) exited or was killed", members_[r], pids_[r]);
  }
  return Status::Ok();
}

bool ShmGroup::Released(uint64_t u) const {
  // Known from an earlier look (released stays released: `done` and tickets only grow), so a
  // rank that runs ahead reads the others' lines once per several calls, not on every call.
  if (u <= released_known_) return true;
  uint64_t least_done = ~uint64_t{0};  // every ticket up to it is released too
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    // `done` first: the one line per member polled here, so that the member's slot lines stay
    // in its cache while it runs behind (its arrival at u + 1 also releases u).
    const uint64_t done = done_[r].done.load(std::memory_order_seq_cst);
    least_done = std::min(least_done, done);
    if (done >= u) continue;
    if (Slot(r, u + 1)->ticket.load(std::memory_order_seq_cst) > u) continue;
    return false;
  }
  released_known_ = std::max(u, least_done);
  return true;
}

// Waits of a rank that ran ahead (flow control, Settle) need no waker: nobody bumps the futex
// for them, so the ranks they wait for pay nothing (no fence or wake-up per call on their path).
// Spin ~2 us when the group fits on the cores, poll with sched_yield up to 200 us, then sleep
// in growing steps (20 us to 200 us: a rank that waited out a full ring must be back soon once
// the slower rank caught up); abort, peer death (every ~100 ms, and `also_check`) and the
// deadline end it.
Status ShmGroup::PollUntil(bool (ShmGroup::*ready)(uint64_t) const, uint64_t arg, Deadline deadline,
                           const std::function<Status()>* also_check, uint64_t missing_ticket, uint64_t seq) {
  if ((this->*ready)(arg)) return Status::Ok();
  const uint64_t start = NowNs();
  if (!Oversubscribed(size_) && SpinPoll([&] { return (this->*ready)(arg); }, start, kSpinNs)) return Status::Ok();
  uint64_t nap_us = 20;
  uint64_t next_check = start + 100000000;
  while (true) {
    if ((this->*ready)(arg)) return Status::Ok();
    if (seg_->barrier.aborted.load(std::memory_order_acquire) != 0) {
      // A published abort from a later operation leaves this wait alone (the peers it waits for
      // finished this operation or are caught by the liveness check and the deadline); one still
      // being published is looked at again on the next round.
      const int32_t code = seg_->abort_code.load(std::memory_order_acquire);
      if (code > 0 && seq >= seg_->abort_seq.load(std::memory_order_acquire)) return Status(Code::kRemote, "aborted");
    }
    const uint64_t now = NowNs();
    if (now >= next_check) {
      next_check = now + 100000000;
      Status alive = CheckPeersAlive();
      if (alive.ok() && also_check != nullptr && *also_check) alive = (*also_check)();
      if (!alive.ok()) return (this->*ready)(arg) ? Status::Ok() : alive;
    }
    if (deadline.Expired())
      return MakeStatus(Code::kTimeout,
                        "timed out waiting for the calls this rank ran ahead of; not done with them: rank(s) %s",
                        Missing(missing_ticket, true).c_str());
    if (now - start < 200000) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
      nap_us = std::min<uint64_t>(nap_us * 2, 200);
    }
  }
}

namespace {
// A published wait (SlotData::recv_wait, send_wait): (peer + 1) | dtype << 16 | message << 24.
uint64_t WaitWord(int peer, uint64_t m, uint8_t dtype = 0) {
  return static_cast<uint64_t>(peer + 1) | static_cast<uint64_t>(dtype) << 16 | m << 24;
}
int WaitPeer(uint64_t w) { return static_cast<int>(w & 0xffff) - 1; }
uint64_t WaitMessage(uint64_t w) { return w >> 24; }

// Member d's published receive wait: its word (peer, dtype, message; 0: none, or changing while
// read) and the message's fingerprint (count, dtype, the message number in `root`).
uint64_t ReadRecvWait(const SlotData& d, Fingerprint* msg) {
  const uint64_t w = d.recv_wait.load(std::memory_order_acquire);
  const uint64_t count = d.recv_count.load(std::memory_order_relaxed);
  if (w == 0 || w != d.recv_wait.load(std::memory_order_acquire)) return 0;
  msg->root = static_cast<uint32_t>(WaitMessage(w));
  msg->count = count;
  msg->dtype = static_cast<uint8_t>(w >> 16);
  return w;
}
}  // namespace

void ShmGroup::SetRecvWait(int peer, uint64_t m, uint64_t count, uint8_t dtype) {
  SlotData& s = slot_data_[rank_];
  s.recv_count.store(count, std::memory_order_relaxed);
  s.recv_wait.store(WaitWord(peer, m, dtype), std::memory_order_release);
}

void ShmGroup::ClearRecvWait() { slot_data_[rank_].recv_wait.store(0, std::memory_order_release); }

void ShmGroup::SetSendWait(int peer, uint64_t m) {
  slot_data_[rank_].send_wait.store(WaitWord(peer, m), std::memory_order_release);
}

void ShmGroup::ClearSendWait() { slot_data_[rank_].send_wait.store(0, std::memory_order_release); }

// A sender of a message above the inline size waits for the copy (a smaller one went on, unless
// it published that it waits for its answer: a synchronize, a batch); a receiver waits for a
// message this rank never posted. Either will not arrive while this rank waits here, and this
// rank neither takes nor posts a message before its wait ends: different operations on the two
// ranks, reported at once instead of at the exec timeout.
Status ShmGroup::BlockedPeer(uint64_t t, int only) const {
  if (mail_ == nullptr) return Status::Ok();
  auto blocked = [&](int r, const Fingerprint& msg, bool receives) {
    // Named by the first of this rank's calls up to t that r has not arrived at (r arrives in
    // order; a slot this rank has reused since no longer holds its call).
    uint64_t x = t;
    while (x > 1 && Slot(rank_, x - 1)->ticket.load(std::memory_order_relaxed) == x - 1 &&
           Slot(r, x - 1)->ticket.load(std::memory_order_acquire) < x - 1)
      --x;
    return Status(Code::kPara, FormatBlockedPeer(Slot(rank_, x)->fp, members_[static_cast<size_t>(rank_)], msg,
                                                 members_[static_cast<size_t>(r)], receives));
  };
  auto posted = [&](int r, uint64_t m) { return Mail(r, rank_, m)->full.load(std::memory_order_acquire) == m; };
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || (only >= 0 && r != only) || Slot(r, t)->ticket.load(std::memory_order_acquire) >= t) continue;
    const uint64_t m = mail_taken_[static_cast<size_t>(r)] + 1;  // the next message this rank would take from r
    // r waits for this rank to take its message: the next one when it is above the inline size
    // (a sender of a smaller one went on), or the one it published that it waits on.
    const SlotData& d = slot_data_[r];
    const uint64_t sw = d.send_wait.load(std::memory_order_acquire);
    const Fingerprint& next = Mail(r, rank_, m)->fp;
    uint64_t stuck = 0;
    if (posted(r, m) && next.count * DataTypeSize(next.dtype) > MailSlot::kInline)
      stuck = m;
    else if (sw != 0 && WaitPeer(sw) == rank_ && WaitMessage(sw) >= m && posted(r, WaitMessage(sw)))
      stuck = WaitMessage(sw);
    if (stuck != 0) return blocked(r, Mail(r, rank_, stuck)->fp, false);
    // r waits in HcclRecv for a message this rank never posted.
    Fingerprint f;
    const uint64_t w = ReadRecvWait(d, &f);
    if (w == 0 || WaitPeer(w) != rank_ || WaitMessage(w) <= mail_sent_[static_cast<size_t>(r)]) continue;
    return blocked(r, f, true);
  }
  return Status::Ok();
}

BarrierOptions ShmGroup::WaitOptions(const std::function<Status()>* also_check) {
  BarrierOptions opt;
  opt.shared = true;
  opt.spin = !Oversubscribed(size_);
  opt.what = "rank(s)";
  opt.asymmetric_wake = asym_wake_;
  opt.stats = &sleep_stats_;
  opt.check = [this, also_check] {
    Status alive = CheckPeersAlive();
    if (alive.ok() && also_check != nullptr && *also_check) alive = (*also_check)();
    if (alive.ok() && arrival_wait_ != 0) alive = BlockedPeer(arrival_wait_, arrival_only_);
    return alive;
  };
  return opt;
}

std::string ShmGroup::Missing(uint64_t t, bool done_too) const {
  std::string m;
  std::vector<char> late(static_cast<size_t>(size_), 0);
  auto list = [&](bool not_done) {
    for (int r = 0; r < size_; ++r) {
      late[static_cast<size_t>(r)] = not_done ? done_[r].done.load(std::memory_order_acquire) < t &&
                                                    Slot(r, t + 1)->ticket.load(std::memory_order_acquire) <= t
                                              : Slot(r, t)->ticket.load(std::memory_order_acquire) < t;
      if (late[static_cast<size_t>(r)]) m += (m.empty() ? "" : ", ") + std::to_string(members_[static_cast<size_t>(r)]);
    }
  };
  // The ranks that have not arrived at t; waiting for ranks to be done with t and all arrived:
  // those not done yet (naming the missing ranks first, not the ones waiting for them).
  list(false);
  if (m.empty() && done_too) list(true);
  // Communicator ranks, not indices in the group: a host's group of several hosts' communicator
  // holds ranks 2 and 3 as members 0 and 1.
  bool identity = true;
  for (int r = 0; r < size_; ++r) identity = identity && members_[static_cast<size_t>(r)] == r;
  m += (identity ? " of " : " of this host's ") + std::to_string(size_);
  if (mail_ == nullptr) return m;
  // What the late ranks wait in, from the transfer waits they publish (SetSendWait, SetRecvWait).
  std::vector<LateTransfer> members(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (!late[static_cast<size_t>(r)]) continue;
    LateTransfer& lt = members[static_cast<size_t>(r)];
    lt.late = true;
    if (const uint64_t sw = slot_data_[r].send_wait.load(std::memory_order_acquire); sw != 0) {
      lt.send_to = WaitPeer(sw);
      if (lt.send_to < 0 || lt.send_to >= size_) continue;
      const MailSlot* slot = Mail(r, lt.send_to, WaitMessage(sw));
      if (slot->full.load(std::memory_order_acquire) == WaitMessage(sw)) lt.send_msg = &slot->fp;
    } else if (const uint64_t w = ReadRecvWait(slot_data_[r], &lt.recv_msg); w != 0) {
      lt.recv_from = WaitPeer(w);
    }
  }
  const std::string waits = FormatLateTransfers(members, members_);
  return waits.empty() ? m : m + ": " + waits;
}

Status ShmGroup::Announce(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq,
                          uint64_t* ticket, const std::function<Status()>* also_check, uint64_t* known,
                          bool attempt) {
  const uint64_t t = ++ticket_;
  *ticket = t;
  announced_bytes_ = bytes;
  if (attempt && all_arrived_ + ring_ <= t && !Released(t - ring_) && !AwaitRingAttempt(t)) {
    --ticket_;  // the attempt gives up before announcing: the operation runs again from the start
    LeaveSharedCpu();
    return Status(Code::kAgain, "the arrival ring is full");
  }
  // Flow control: ticket t reuses the slots of t - ring, which every member must be done with
  // (it arrived later, or marked it done). After a completed arrival at t - ring + 1 or later
  // nothing needs checking (the usual case when no operation ran ahead).
  *known = all_arrived_;
  if (all_arrived_ + ring_ <= t && !Released(t - ring_)) {
    // Full ring: wait until half of it is free (a ring of at least 8), so that a rank which runs
    // ahead of a slower one posts half a ring per wait instead of one call per hand-off. No two
    // members can wait for each other here: each waits only for tickets below its own.
    ++flow_waits_;
    const uint64_t u = ring_ >= 8 ? t - ring_ / 2 : t - ring_;
    // A member that has not arrived at u may be waiting in a transfer with this rank, which posts
    // or takes nothing before this wait ends: a mismatch, as for Settle (BlockedPeer).
    const std::function<Status()> blocked = [this, u, also_check] {
      if (also_check != nullptr && *also_check) HOSTCCL_RETURN_IF_ERROR((*also_check)());
      return BlockedPeer(u);
    };
    Status st = PollUntil(&ShmGroup::Released, u, deadline, &blocked, u, seq);
    if (!st.ok()) return AfterWait(std::move(st), seq);
  }
  if (t > ring_) *known = std::max(*known, t - ring_);
  PublishCpu();
  ArrivalSlot* mine = Slot(rank_, t);
  if (bytes > 0) std::memcpy(mine->payload, payload, bytes);
  mine->fp = fp;
  FpEntry& h = History(rank_)[t & history_mask_];
  h.fp = fp;
  h.ticket.store(t, std::memory_order_release);
  // Waking sleepers (a rank that went to the futex before our ticket was visible): whoever sees
  // every ticket — here, or in WaitUntil below — passes WakerFence and then looks at `sleepers`.
  // A sleeper counts itself with a seq_cst RMW, passes SleeperFence and then loads the tickets,
  // so either it sees our ticket or we see it counted (wake_fence.h); of several would-be
  // sleepers the last to count itself sees the others' tickets. The ticket itself is a release
  // store: unlike an xchg it does not stall this core until the line is ours, so the loads of the
  // others' tickets overlap that transfer.
#if defined(__SANITIZE_THREAD__)
  mine->ticket.store(t, std::memory_order_seq_cst);  // GCC's TSan rejects fences: no fence below
#else
  mine->ticket.store(t, std::memory_order_release);
#endif
  return Status::Ok();
}

namespace {
// An inline attempt's wait: ready() within kAttemptSpinNs of spinning; one look when `spin` is
// false (more members on this host than cores).
template <typename F>
bool SpinWithin(bool spin, const F& ready) {
  if (ready()) return true;
  if (!spin) return false;
  return SpinPoll(ready, NowNs(), ShmGroup::kAttemptSpinNs);
}
}  // namespace

bool ShmGroup::SpinBriefly(bool (ShmGroup::*ready)(uint64_t) const, uint64_t arg) const {
  return SpinWithin(attempt_spin_, [&] { return (this->*ready)(arg); });
}

// Looks once per kRingPollNs, not in a tight loop: every look reads the lines the slowest member
// writes on each of its calls (its `done`, its next slot), and a line read between two of its
// writes costs that member's next write a cross-core invalidation. Polled continuously, the
// ahead rank got one slot per look and the root paid that on every call.
bool ShmGroup::AwaitRingAttempt(uint64_t t) const {
  if (!attempt_spin_) return false;
  const uint64_t half = ring_ >= 8 ? t - ring_ / 2 : t - ring_;
  const uint64_t start = NowNs();
  uint64_t now = start;
  while (true) {
    const uint64_t next = now + kRingPollNs;
    while ((now = NowNs()) < next) __builtin_ia32_pause();
    if (Released(half)) return true;
    if (now - start >= kAttemptRingWaitNs) return Released(t - ring_);
  }
}

bool ShmGroup::SpinFor(bool (*ready)(const void*), const void* arg) const {
  return SpinWithin(attempt_spin_, [&] { return ready(arg); });
}

Status ShmGroup::Arrive(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq,
                        uint64_t* ticket, const std::function<Status()>* also_check) {
  read_all_ = true;
  const bool attempt = TakeAttempt(seq);
  if (Resuming(seq)) {  // announced by the operation's attempt: wait for that ticket
    *ticket = resume_ticket_;
    resume_seq_ = 0;
  } else {
    uint64_t known = 0;
    HOSTCCL_RETURN_IF_ERROR(Announce(fp, payload, bytes, deadline, seq, ticket, also_check, &known, attempt));
  }
  const uint64_t t = *ticket;
  Status st;
  if (AllArrived(t) || (attempt && SpinBriefly(&ShmGroup::AllArrived, t))) {
    WakeSleepers();
  } else if (attempt) {
    resume_seq_ = seq;
    resume_ticket_ = t;
    LeaveSharedCpu();
    return Status(Code::kAgain, "not every member arrived yet");
  } else {
    arrival_wait_ = t;
    st = WaitUntil([this, t] { return AllArrived(t); }, &seg_->barrier, deadline, WaitOptions(also_check),
                   [this, t] { return Missing(t, false); });
    arrival_wait_ = 0;
    if (st.ok()) WakeSleepers();
  }
  if (st.ok()) {
    all_arrived_ = t;
    if (verify_hi_ != 0) st = VerifyUpTo(t);
  }
  return AfterWait(std::move(st), seq);
}

Status ShmGroup::Post(const Fingerprint& fp, const void* payload, size_t bytes, Deadline deadline, uint64_t seq,
                      bool check, uint64_t* ticket, bool reads, bool wake) {
  read_all_ = false;
  const bool attempt = TakeAttempt(seq);
  HOSTCCL_RETURN_IF_ERROR(AfterWait(Status::Ok(), seq));  // the group gave up on this operation
  uint64_t known = 0;
  if (Resuming(seq)) {
    // An attempt announced this ticket as an arrival (the same announcement a Post makes) and
    // gave up; run from the stream with work behind it, the operation now runs ahead instead.
    *ticket = resume_ticket_;
    resume_seq_ = 0;
    known = all_arrived_;  // compares less now, the rest later
  } else {
    HOSTCCL_RETURN_IF_ERROR(Announce(fp, payload, bytes, deadline, seq, ticket, nullptr, &known, attempt));
  }
  const uint64_t t = *ticket;
  // Compare earlier posts before marking t done: until then no member gets past ticket
  // t + ring - 1, so the history entries compared here (tickets > t - 2 x ring) are intact.
  if (verify_hi_ != 0) HOSTCCL_RETURN_IF_ERROR(VerifyUpTo(known));
  if (check) {
    if (verify_lo_ == 0) verify_lo_ = t;
    verify_hi_ = t;
  }
  ran_ahead_ = true;
  last_post_ = t;
  last_post_seq_ = seq;
  settle_on_arrival_ = reads || wake;
  if (!reads) done_[rank_].done.store(t, std::memory_order_release);  // it reads none of the slots
  // The last arrival of ticket t wakes members sleeping for it (as Arrive does); with `wake`, any
  // arrival (members wait for this one alone). The fence orders our ticket before the loads (a
  // member that counted itself asleep and then missed our ticket is seen here; one that did not
  // count itself yet sees our ticket).
  if (wake) {
    WakeSleepers();  // its own fence
    return Status::Ok();
  }
  WakerFence(asym_wake_);
  // `sleepers` first: while nobody sleeps (the usual case) the others' slot lines are not read,
  // so their owners' next writes to them find the lines in their own caches.
  if (seg_->barrier.sleepers.load(std::memory_order_seq_cst) != 0 && AllArrived(t)) WakeAll(&seg_->barrier, true);
  return Status::Ok();
}

Status ShmGroup::AwaitArrival(int r, uint64_t ticket, Deadline deadline, uint64_t seq, bool attempt) {
  read_all_ = false;
  ArrivalSlot* s = Slot(r, ticket);
  if (s->ticket.load(std::memory_order_acquire) >= ticket) return AfterWait(Status::Ok(), seq);
  if (attempt) {
    if (!SpinWithin(attempt_spin_, [s, ticket] { return s->ticket.load(std::memory_order_acquire) >= ticket; })) {
      resume_seq_ = seq;  // announced: the run from the stream takes this ticket (Post)
      resume_ticket_ = ticket;
      LeaveSharedCpu();
      return Status(Code::kAgain, "the root has not arrived");
    }
    return AfterWait(Status::Ok(), seq);
  }
  // Only the member this rank waits for: another one that waits in a transfer with this rank may
  // get it once this call returns (a Broadcast reader that runs ahead needs the root alone).
  arrival_wait_ = ticket;
  arrival_only_ = r;
  Status st = WaitUntil([s, ticket] { return s->ticket.load(std::memory_order_seq_cst) >= ticket; }, &seg_->barrier,
                        deadline, WaitOptions(nullptr), [this, ticket] { return Missing(ticket, false); });
  arrival_wait_ = 0;
  arrival_only_ = -1;
  return AfterWait(std::move(st), seq);
}

void ShmGroup::MarkDone(uint64_t ticket) {
  done_[rank_].done.store(ticket, std::memory_order_release);  // pollers see it (PollUntil)
}

Status ShmGroup::VerifyUpTo(uint64_t upto) {
  const FpEntry* own = History(rank_);
  for (uint64_t v = verify_lo_; v != 0 && v <= std::min(upto, verify_hi_); ++v) {
    const Fingerprint& mine = own[v & history_mask_].fp;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const FpEntry& e = History(r)[v & history_mask_];
      const uint64_t tk = e.ticket.load(std::memory_order_acquire);
      if (tk < v) return Status::Ok();  // not written yet: verified later
      if (tk > v)
        return MakeStatus(Code::kInternal, "fingerprint history of rank %d overran (ticket %llu, found %llu)",
                          members_[static_cast<size_t>(r)], static_cast<unsigned long long>(v),
                          static_cast<unsigned long long>(tk));
      if (e.fp != mine) {
        const int me = members_[static_cast<size_t>(rank_)], other = members_[static_cast<size_t>(r)];
        Status st(Code::kPara, r < rank_ ? FormatMismatch(e.fp, other, mine, me) : FormatMismatch(mine, me, e.fp, other));
        Abort(st.code(), st.message(), mine.seq);
        return st;
      }
    }
    verify_lo_ = v + 1;
  }
  if (verify_lo_ > verify_hi_) verify_lo_ = verify_hi_ = 0;
  return Status::Ok();
}

bool ShmGroup::Settled(uint64_t t) const {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    if (done_[r].done.load(std::memory_order_seq_cst) >= t) continue;
    if (Slot(r, t + 1)->ticket.load(std::memory_order_seq_cst) > t) continue;
    return false;
  }
  return true;
}

Status ShmGroup::Settle(Deadline deadline) {
  if (!ran_ahead_) return Status::Ok();
  const uint64_t t = last_post_;
  // A member that has not arrived at t may be waiting in a transfer with this rank, which posts or
  // takes nothing before this wait ends: a mismatch, as for an arrival (BlockedPeer).
  const std::function<Status()> blocked = [this, t] { return BlockedPeer(t); };
  Status st;
  st = PollUntil(settle_on_arrival_ ? &ShmGroup::AllArrived : &ShmGroup::Settled, t, deadline, &blocked, t,
                 last_post_seq_);
  st = AfterWait(std::move(st), last_post_seq_);
  if (st.ok() && verify_hi_ != 0) st = VerifyUpTo(t);
  if (st.ok() && verify_hi_ != 0)
    st = Status(Code::kInternal, "fingerprints of operations that ran ahead were not all published after they settled");
  if (st.ok()) ran_ahead_ = false;  // the arrivals since settled by themselves
  return st;
}

Status ShmGroup::PeerGone(int r) const {
  SlotData& s = slot_data_[r];
  int32_t code = s.gone.load(std::memory_order_acquire);
  if (code == 0) return Status::Ok();
  const Deadline written = Deadline::AfterMs(200);  // the reason follows the -1 (bounded)
  while (code < 0 && !written.Expired()) {
    sched_yield();
    code = s.gone.load(std::memory_order_acquire);
  }
  if (code <= 0) return MakeStatus(Code::kRemote, "rank %d failed", members_[static_cast<size_t>(r)]);
  return Status(static_cast<Code>(code), std::string(s.gone_reason, strnlen(s.gone_reason, sizeof(s.gone_reason))));
}

Status ShmGroup::WaitFor(bool (*ready_fn)(const void*), const void* arg, Deadline deadline, const int* peer_list,
                         size_t npeers, std::string (*missing)(const void*)) {
  auto ready = [&] { return ready_fn(arg); };
  if (ready()) return Status::Ok();
  // The arrivals' policy (group_barrier.cc WaitUntil): spin ~2 us when the group fits on the
  // cores, yield up to ~90 us (200 us without spinning), then sleep on the segment's wake word,
  // which every Notify and every abort bumps. Unlike an arrival, a wait for some peers ignores
  // the group's abort flag and looks only at those peers' `gone` words and pidfds.
  const uint64_t start = NowNs();
  const bool spin = !Oversubscribed(size_);
  if (spin && SpinPoll(ready, start, kSpinNs)) return Status::Ok();
  const uint64_t yield_until = start + (spin ? 90000 : 200000);
  do {
    if (ready()) return Status::Ok();
    sched_yield();
  } while (NowNs() < yield_until);
  BarrierWords* b = &seg_->barrier;
  const uint64_t asleep_since = NowNs();
  while (true) {
    const uint32_t word = b->wake.load(std::memory_order_acquire);
    if (ready()) return Status::Ok();
    for (size_t k = 0; k < npeers; ++k) {
      const int r = peer_list[k];
      Status g = PeerGone(r);
      if (!g.ok()) return ready() ? Status::Ok() : g;
      const int fd = pidfds_[static_cast<size_t>(r)];
      pollfd p{fd, POLLIN, 0};
      if (fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) && !ready())
        return MakeStatus(Code::kRemote, "rank %d (pid %u) exited or was killed", members_[static_cast<size_t>(r)],
                          pids_[static_cast<size_t>(r)]);
    }
    if (deadline.Expired()) return MakeStatus(Code::kTimeout, "timed out waiting for rank %s", missing(arg).c_str());
    const uint64_t now = NowNs();
    b->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const bool fenced = SleeperFence(asym_wake_);
    const Deadline check_by = deadline.Earlier(Deadline::AtNs(now + 100000000));  // the pidfds, every 100 ms
    const Deadline slice = RecheckBy(check_by, asym_wake_, fenced, asleep_since, now);
    if (!ready()) {
      FutexWait(&b->wake, word, slice, true);
      sleep_stats_.Note(slice.Expired() && b->wake.load(std::memory_order_acquire) == word && ready());
    }
    b->sleepers.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ShmGroup::PrefetchNextArrival() const {
  const uint64_t t = ticket_ + 1;
  // Not while the slot's previous ticket may still be read (a full ring: the peers' unread data).
  if (t > ring_ && all_arrived_ + ring_ <= t && released_known_ < t - ring_) return;
  // Slot(r, t) for every r from one division: member r's ring starts ring_ slots after r - 1's.
  const ArrivalSlot* first = Slot(0, t);
  const char* slot = reinterpret_cast<const char*>(first + ring_ * static_cast<size_t>(rank_));
  const size_t lines =
      std::min((offsetof(ArrivalSlot, payload) + announced_bytes_ + 63) / 64, kPrefetchLines);
  for (size_t i = 0; i < lines; ++i) PrefetchForWrite(slot + 64 * i);
  PrefetchForWrite(&History(rank_)[t & history_mask_]);
  if (read_all_ && size_ > 1) PrefetchPeerSlots(first);
}

// After an Arrive, the first line of every other member's slot of the next ticket (its ticket,
// fingerprint and inline payload), for reading: a member that runs ahead has written it already.
// Apart from PrefetchNextArrival, whose one-rank path then stays as short as it was.
void ShmGroup::PrefetchPeerSlots(const ArrivalSlot* first) const {
  for (int r = 0; r < size_; ++r)
    if (r != rank_) __builtin_prefetch(first + ring_ * static_cast<size_t>(r), 0, 3);
}

void ShmGroup::PublishCpu() {
  if (!spin_ok_) return;  // more members than cores: sharing CPUs is expected
  const int cpu = CurrentCpu();
  if (cpu == published_cpu_) return;
  published_cpu_ = cpu;
  done_[rank_].cpu.store(cpu + 1, std::memory_order_relaxed);
}

void ShmGroup::LeaveSharedCpu() {
  if (!attempt_spin_) return;  // called when an attempt gives up: not for one that looked once
  const int cpu = CurrentCpu();
  const CpuShare act = ShareAction(rank_, cpu, size_, [this](int r) {
    return done_[r].cpu.load(std::memory_order_relaxed);
  });
  if (act == CpuShare::kNone) return;
  const uint64_t now = NowNs();
  if (now - last_share_ns_ < 1000000) return;
  last_share_ns_ = now;
  if (act == CpuShare::kYield) {
    sched_yield();
  } else if (act == CpuShare::kMove && MoveOffCpu(cpu)) {
    PublishCpu();
    HLOG_INFO(kShm, "rank %d moved off CPU %d, where a lower rank of this host last arrived (now on CPU %d)",
              members_[static_cast<size_t>(rank_)], cpu, published_cpu_);
  }
}

void ShmGroup::WakeSleepers() {
  WakerFence(asym_wake_);
  if (seg_->barrier.sleepers.load(std::memory_order_seq_cst) != 0) WakeAll(&seg_->barrier, true);
}

Status ShmGroup::Barrier(Deadline deadline, uint64_t seq, const std::function<Status()>* also_check) {
  uint64_t ticket = 0;
  return Arrive(InternalFp(), nullptr, 0, deadline, seq, &ticket, also_check);
}

int ShmGroup::WorkerLimit() {
  const int64_t set = EnvInt(Knob::kShmWorkers, 0);
  return static_cast<int>(std::clamp<int64_t>(set > 0 ? set : OnlineCores(), 1, kMaxWorkers));
}

std::atomic<uint64_t>* ShmGroup::WorkWord(int i) { return &seg_->work[static_cast<size_t>(i)].word; }

Status ShmGroup::Check(uint64_t seq) {
  Status st = AfterWait(Status::Ok(), seq);
  if (!st.ok()) return st;
  st = CheckPeersAlive();
  if (!st.ok()) Abort(st.code(), st.message(), seq);
  return st;
}

bool ShmGroup::PublishedAbort(std::string* reason) const {
  if (seg_->barrier.aborted.load(std::memory_order_acquire) == 0 || seg_->abort_code.load(std::memory_order_acquire) <= 0)
    return false;
  reason->assign(seg_->abort_reason, strnlen(seg_->abort_reason, sizeof(seg_->abort_reason)));
  return !reason->empty();
}

// An arrival that completed into an aborted operation still fails, with the abort's reason.
Status ShmGroup::AfterWait(Status st, uint64_t seq) {
  if (seg_->barrier.aborted.load(std::memory_order_acquire) == 0) {
    if (!st.ok() && st.code() == Code::kRemote) Abort(st.code(), st.message(), seq);
    return st;
  }
  // The first aborter publishes -1, then the operation it applies from and its reason, then the
  // code; a later aborter raises the flag at once, so all that may still be being written: wait for
  // it (bounded: a writer killed mid-way leaves -1).
  int32_t code = seg_->abort_code.load(std::memory_order_acquire);
  const Deadline written = Deadline::AfterMs(200);
  while (code <= 0 && !written.Expired()) {
    sched_yield();
    code = seg_->abort_code.load(std::memory_order_acquire);
  }
  if (code <= 0)
    return st.ok() ? st : Status(Code::kRemote, "another rank aborted the operation (its reason was not published)");
  const bool aborted_here = seq >= seg_->abort_seq.load(std::memory_order_acquire);
  if (st.code() == Code::kRemote || (st.ok() && aborted_here)) {
    std::string reason(seg_->abort_reason, strnlen(seg_->abort_reason, sizeof(seg_->abort_reason)));
    return Status(static_cast<Code>(code), reason);
  }
  return st;
}

void ShmGroup::Abort(Code code, const std::string& reason, uint64_t from_seq) {
  SlotData& own = slot_data_[rank_];
  int32_t none = 0;
  if (own.gone.compare_exchange_strong(none, -1)) {
    const size_t len = std::min(reason.size(), sizeof(own.gone_reason) - 1);
    std::memcpy(own.gone_reason, reason.data(), len);
    own.gone_reason[len] = '\0';
    own.gone.store(static_cast<int32_t>(code), std::memory_order_release);
  }
  int32_t expected = 0;
  if (seg_->abort_code.compare_exchange_strong(expected, -1)) {
    seg_->abort_seq.store(from_seq, std::memory_order_release);
    size_t n = std::min(reason.size(), sizeof(seg_->abort_reason) - 1);
    std::memcpy(seg_->abort_reason, reason.data(), n);
    seg_->abort_reason[n] = '\0';
    seg_->abort_code.store(static_cast<int32_t>(code), std::memory_order_release);
  }
  BarrierAbort(&seg_->barrier, true);
}

Status ShmGroup::Exchange(int rank, const Fingerprint& fp, const void*, void*, const BufDesc& sd, const BufDesc& rd,
                          Deadline deadline, bool check, const void* payload, size_t payload_bytes) {
  if (payload_bytes > kInlineBytes)
    return MakeStatus(Code::kInternal, "exchange payload of %zu bytes > %zu", payload_bytes, kInlineBytes);
  Publish(rank, sd, rd);
  uint64_t t = 0;
  HOSTCCL_RETURN_IF_ERROR(Arrive(fp, payload, payload_bytes, deadline, fp.seq, &t));
  exchange_ticket_ = t;
  if (int r = check ? FirstMismatch(t) : -1; r >= 0)
    return Status(Code::kPara, FormatMismatch(ArrivedFp(0, t), members_[0], ArrivedFp(r, t), members_[static_cast<size_t>(r)]));
  return Status::Ok();
}

bool ShmGroup::FirstUse(const char* site) {
  std::lock_guard<std::mutex> lk(first_use_mu_);
  for (const char* seen : first_used_)
    if (seen == site) return false;
  first_used_.push_back(site);
  return true;
}

}  // namespace hostccl::net
