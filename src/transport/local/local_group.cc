#include "transport/local/local_group.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

namespace hostccl::net {
namespace {

std::mutex g_groups_mu;
std::map<std::string, std::weak_ptr<LocalGroup>>& Groups() {
  static std::map<std::string, std::weak_ptr<LocalGroup>> groups;
  return groups;
}

}  // namespace

LocalGroup::LocalGroup(std::string key, int size)
    : key_(std::move(key)), size_(size), slots_(static_cast<size_t>(size)),
      fp_words_(new std::atomic<uint64_t>[static_cast<size_t>(size) * kFpWords]()),
      arrivals_(new ArrivalWord[static_cast<size_t>(size)]),
      p2p_box_(static_cast<size_t>(size) * static_cast<size_t>(size)),
      p2p_send_timed_out_(static_cast<size_t>(size), -1),
      p2p_gone_(static_cast<size_t>(size), 0),
      p2p_recv_wait_(static_cast<size_t>(size)) {
  for (int i = 0; i < size; ++i) arrivals_[i].arrived.store(0);
}

LocalGroup::~LocalGroup() {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  auto it = Groups().find(key_);
  if (it != Groups().end() && it->second.expired()) Groups().erase(it);
}

std::shared_ptr<LocalGroup> LocalGroup::Join(const std::string& key, int size) {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  auto& groups = Groups();
  auto it = groups.find(key);
  if (it != groups.end()) {
    if (auto g = it->second.lock()) return g;
  }
  auto g = std::make_shared<LocalGroup>(key, size);
  groups[key] = g;
  return g;
}

// A member that has not reached this rank's barrier but waits in HcclSend for this rank to take
// its message (thread ranks' sends all wait for the receiver), or in HcclRecv for a message from
// this rank (none is posted: this rank's sends completed before it came here): it will not
// arrive while this rank waits here. Different operations on the two ranks: kPara naming both,
// not the exec timeout.
Status LocalGroup::BlockedPeer(int rank) {
  const uint64_t round = arrivals_[rank].arrived.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lk(p2p_mu_);
  const Fingerprint& mine = slots_[static_cast<size_t>(rank)].fp;
  for (int r = 0; r < size_; ++r) {
    if (r == rank || arrivals_[r].arrived.load(std::memory_order_acquire) >= round) continue;
    const auto& in = p2p_box_[static_cast<size_t>(r) * static_cast<size_t>(size_) + static_cast<size_t>(rank)];
    if (!in.empty() && in.front()->state == 0)
      return Status(Code::kPara, FormatBlockedPeer(mine, rank, in.front()->fp, r, false));
    const auto& out = p2p_box_[static_cast<size_t>(rank) * static_cast<size_t>(size_) + static_cast<size_t>(r)];
    const RecvWait& w = p2p_recv_wait_[static_cast<size_t>(r)];
    if (w.from == rank && out.empty()) return Status(Code::kPara, FormatBlockedPeer(mine, rank, w.fp, r, true));
  }
  return Status::Ok();
}

// For the timeout of this rank's barrier: what the members that have not reached it wait for in
// transfers (a thread rank's send waits until its receiver took it). Two that each have an
// untaken message to the other are named as a pair: neither will arrive before the other
// receives. Empty when no late member waits in a transfer.
std::string LocalGroup::LateTransfers(int rank) {
  const uint64_t round = arrivals_[rank].arrived.load(std::memory_order_acquire);
  const size_t n = static_cast<size_t>(size_);
  std::lock_guard<std::mutex> lk(p2p_mu_);
  std::vector<LateTransfer> members(n);
  for (int r = 0; r < size_; ++r) {
    if (r == rank || arrivals_[r].arrived.load(std::memory_order_acquire) >= round) continue;
    LateTransfer& m = members[static_cast<size_t>(r)];
    m.late = true;
    for (int x = 0; x < size_ && m.send_to < 0; ++x) {  // its first untaken message
      const auto& box = p2p_box_[static_cast<size_t>(r) * n + static_cast<size_t>(x)];
      if (x == r || box.empty() || box.front()->state != 0) continue;
      m.send_to = x;
      m.send_msg = &box.front()->fp;
    }
    const RecvWait& w = p2p_recv_wait_[static_cast<size_t>(r)];
    m.recv_from = w.from;
    m.recv_msg = w.fp;
    // A send that timed out a moment ago has withdrawn its message; its sender has not arrived.
    if (m.send_to < 0 && w.from < 0) m.send_to = p2p_send_timed_out_[static_cast<size_t>(r)];
  }
  return FormatLateTransfers(members, {});
}

Status LocalGroup::Barrier(int rank, Deadline deadline) {
  BarrierOptions opt;
  opt.shared = false;
  opt.spin = !Oversubscribed(size_);
  opt.what = "thread rank(s)";
  opt.check = [this, rank] { return BlockedPeer(rank); };
  Status st = BarrierEnter(&words_, arrivals_.get(), size_, rank, deadline, opt);
  if (st.code() == Code::kTimeout) {
    if (const std::string late = LateTransfers(rank); !late.empty())
      st = Status(st.code(), st.message() + ": " + late);
  }
  if (st.code() == Code::kRemote && words_.aborted.load() != 0) {
    std::lock_guard<std::mutex> lk(abort_mu_);
    return Status(abort_code_, abort_reason_);
  }
  return st;
}

void LocalGroup::Abort(Code code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lk(p2p_mu_);
    if (!p2p_failed_) {
      p2p_failed_ = true;
      p2p_code_ = code;
      p2p_reason_ = reason;
    }
    p2p_cv_.notify_all();
  }
  {
    std::lock_guard<std::mutex> lk(abort_mu_);
    if (words_.aborted.load() != 0) return;
    abort_code_ = code;
    abort_reason_ = reason;
  }
  BarrierAbort(&words_, false);
}

void LocalGroup::Depart(int rank, Code code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lk(p2p_mu_);
    p2p_gone_[static_cast<size_t>(rank)] = 1;
    p2p_cv_.notify_all();
  }
  {
    std::lock_guard<std::mutex> lk(abort_mu_);
    if (words_.aborted.load() != 0) return;
    abort_code_ = code;
    abort_reason_ = reason;
  }
  BarrierAbort(&words_, false);
}

Status LocalGroup::P2PBrokenStatus(int peer) const {
  if (p2p_failed_) return Status(p2p_code_, p2p_reason_);
  return MakeStatus(Code::kRemote, "rank %d destroyed its communicator", peer);
}

Status LocalGroup::Exchange(int rank, const Fingerprint& fp, const void* send, void* recv, const BufDesc&,
                            const BufDesc&, Deadline deadline, bool check, const void* payload, size_t) {
  Publish(rank, LocalSlot{send, recv, fp, payload});
  HOSTCCL_RETURN_IF_ERROR(Barrier(rank, deadline));
  if (check) {
    const Fingerprint first = SlotFp(0);
    for (int r = 1; r < size_; ++r)
      if (const Fingerprint other = SlotFp(r); other != first) return Status(Code::kPara, FormatMismatch(first, 0, other, r));
  }
  return Status::Ok();
}

void LocalGroup::Publish(int rank, const LocalSlot& slot) {
  slots_[static_cast<size_t>(rank)] = slot;
  uint64_t w[kFpWords];
  std::memcpy(w, &slot.fp, sizeof(w));
  for (size_t i = 0; i < kFpWords; ++i)
    fp_words_[static_cast<size_t>(rank) * kFpWords + i].store(w[i], std::memory_order_relaxed);
}

Fingerprint LocalGroup::SlotFp(int rank) const {
  uint64_t w[kFpWords];
  for (size_t i = 0; i < kFpWords; ++i)
    w[i] = fp_words_[static_cast<size_t>(rank) * kFpWords + i].load(std::memory_order_relaxed);
  Fingerprint fp;
  std::memcpy(&fp, w, sizeof(fp));
  return fp;
}

Status LocalGroup::Check(uint64_t) {
  if (words_.aborted.load(std::memory_order_acquire) == 0) return Status::Ok();
  std::lock_guard<std::mutex> lk(abort_mu_);
  return Status(abort_code_, abort_reason_);
}

}  // namespace hostccl::net

namespace hostccl::net {


void LocalGroup::P2PPost(int from, int to, P2PSendPost* post) {
  std::lock_guard<std::mutex> lk(p2p_mu_);
  post->state = 0;
  p2p_box_[static_cast<size_t>(from * size_ + to)].push_back(post);
  p2p_cv_.notify_all();
}

namespace {
// Waits on `cv` until `ready()` or the deadline; false on expiry. Wakes every 100 ms regardless,
// so an abort that raced with the wait is seen.
template <typename F>
bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lk, Deadline deadline, F ready) {
  while (!ready()) {
    if (deadline.Expired()) return false;
    int ms = deadline.RemainingMsForPoll();
    if (ms < 0 || ms > 100) ms = 100;
    cv.wait_for(lk, std::chrono::milliseconds(ms > 0 ? ms : 1));
  }
  return true;
}
}  // namespace

Status LocalGroup::P2PRecv(int from, int to, const Fingerprint& fp, void* dst, size_t bytes, Deadline deadline) {
  auto& box = p2p_box_[static_cast<size_t>(from * size_ + to)];
  P2PSendPost* post = nullptr;
  {
    std::unique_lock<std::mutex> lk(p2p_mu_);
    RecvWait& waiting = p2p_recv_wait_[static_cast<size_t>(to)];  // for BlockedPeer
    waiting = RecvWait{from, fp};
    const bool got = WaitUntil(p2p_cv_, lk, deadline, [&] {
      return (!box.empty() && box.front()->state == 0) || P2PBroken(from);
    });
    waiting.from = -1;
    // A post that is there is taken even if the sender has left since (it waits for it).
    if (!(!box.empty() && box.front()->state == 0) && P2PBroken(from)) return P2PBrokenStatus(from);
    if (!got) return Status(Code::kTimeout, "");  // the caller words it (it knows the operation)
    post = box.front();
    box.pop_front();
    if (post->fp != fp || post->bytes != bytes) {
      post->result = Status(Code::kPara, FormatMismatch(fp, to, post->fp, from));
      post->state = 2;
      p2p_cv_.notify_all();
      return post->result;
    }
    post->state = 1;
  }
  if (bytes > 0 && dst != post->buf) std::memcpy(dst, post->buf, bytes);
  std::lock_guard<std::mutex> lk(p2p_mu_);
  post->state = 2;
  p2p_cv_.notify_all();
  return Status::Ok();
}

Status LocalGroup::P2PWaitSent(int from, int to, P2PSendPost* post, Deadline deadline, bool* peer_sends) {
  std::unique_lock<std::mutex> lk(p2p_mu_);
  const bool done = WaitUntil(p2p_cv_, lk, deadline, [&] {
    return post->state == 2 || (post->state == 0 && P2PBroken(to));
  });
  if (post->state == 2) return post->result;
  // Not received: withdraw the post (a receiver copying it is waited for above, bounded by the copy).
  if (post->state == 1) {
    p2p_cv_.wait(lk, [&] { return post->state == 2; });
    return post->result;
  }
  auto& box = p2p_box_[static_cast<size_t>(from * size_ + to)];
  for (auto it = box.begin(); it != box.end(); ++it)
    if (*it == post) {
      box.erase(it);
      break;
    }
  if (!done && !P2PBroken(to)) {
    bool sends = p2p_send_timed_out_[static_cast<size_t>(to)] == from;
    for (const P2PSendPost* p : p2p_box_[static_cast<size_t>(to * size_ + from)]) sends = sends || p->state == 0;
    if (peer_sends) *peer_sends = sends;
    p2p_send_timed_out_[static_cast<size_t>(from)] = to;
    return Status(Code::kTimeout, "");
  }
  return P2PBrokenStatus(to);
}

}  // namespace hostccl::net
