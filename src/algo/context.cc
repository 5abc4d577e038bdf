#include "algo/context.h"

#include "algo/sendrecv/sendrecv_algorithms.h"

#include <sys/mman.h>

#include <cstring>

namespace hostccl::algo {

Scratch::~Scratch() {
  if (mem_ != nullptr) munmap(mem_, capacity_);
}

void* Scratch::Get(size_t bytes) {
  if (bytes <= capacity_) return mem_;
  size_t want = std::max(bytes, capacity_ * 2);
  want = (want + (2u << 20) - 1) & ~static_cast<size_t>((2u << 20) - 1);
  void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  madvise(p, want, MADV_HUGEPAGE);
  std::memset(p, 0, want);  // pre-fault once so later calls never page-fault
  if (mem_ != nullptr) munmap(mem_, capacity_);
  mem_ = p;
  capacity_ = want;
  return mem_;
}

Status SettleRanAhead(net::ShmGroup* g, Deadline deadline) {
  if (g == nullptr) return Status::Ok();
  Status st = g->Settle(deadline);
  if (st.ok() && g->mail_ahead()) st = P2PMailboxSettle(g, deadline);
  return st;
}

}  // namespace hostccl::algo
