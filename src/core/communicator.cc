#include "core/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <span>

#include "algo/reduce/reduce_algorithms.h"
#include "algo/sendrecv/sendrecv_algorithms.h"
#include "common/env.h"
#include "common/log.h"
#include "common/status.h"
#include "common/tls_ref.h"
#include "common/thread_state.h"
#include "common/v_arrays.h"
#include "common/wait_note.h"
#include "core/flight_recorder.h"
#include "core/profiles.h"
#include "kernels/reduce.h"
#include "runtime/device.h"
#include "runtime/runtime.h"
#include "transport/sync/group_barrier.h"
#include "transport/tcp/socket.h"

namespace hostccl::core {
namespace {

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

// Default pipeline chunk: big enough to amortise per-message cost, small enough to pipeline;
// at most the algorithm's chunk_cap (its row in algo/registry.cc).
uint64_t DefaultChunkBytes(uint64_t bytes, const algo::Algorithm* a) {
  const uint64_t cap = a->chunk_cap ? a->chunk_cap : 1 << 20;
  uint64_t c = std::clamp<uint64_t>(bytes / 8, 64 << 10, cap);
  return c & ~uint64_t{63};
}

// The fingerprint of an operation: the fields its row says must match across ranks. With
// HOSTCCL_CHECK_ARGS=0 only kind and seq remain (TCP frames then match on those only).
// acc32 (HOSTCCL_ACCUMULATE=fp32): an fp16/bf16 sum/prod carries kFpAccumulateFp32 in flags, so
// ranks that disagree on the knob fail with a mismatch instead of folding in two ways.
// The V family (docs/semantics.md "What must match"):
//   AllGatherV      dtype; recvCounts and recvDispls (hash); count = their sum
//   ReduceScatterV  dtype, op; sendCounts and sendDispls (hash); count = their sum
//   AlltoAll        sendCount (= recvCount), sendType (= recvType)
//   AlltoAllV       the element size only (count 0): the per-pair counts are checked by the
//                   algorithm, which sees both sides
//   AlltoAllVC      the element size; the matrix (hash); count = its sum
// The arrays are this rank's own copies (Enqueue made them) with n entries (matrix n x n).
Fingerprint MakeFingerprint(const algo::OpArgs& a, uint64_t seq, int nranks, bool check, bool acc32) {
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(a.kind);
  fp.seq = seq;
  const OpInfo* o = FindOp(a.kind);
  if (!check || o == nullptr || a.kind == CollKind::kBarrier) return fp;
  fp.dtype = static_cast<uint8_t>(a.dtype);
  fp.count = a.count;
  if (o->reduces) fp.op = static_cast<uint8_t>(a.op);
  if (o->reduces && acc32 && kern::WidensToFp32(a.dtype, a.op)) fp.flags = kFpAccumulateFp32;
  if (o->root != RootRule::kNoRoot) fp.root = static_cast<uint32_t>(a.root);
  // V arrays that must be identical on every rank enter as a hash (collectives.md 1.8).
  const uint64_t n = static_cast<uint64_t>(nranks);
  uint64_t h = 0;
  if (a.kind == CollKind::kAllGatherV && a.recv_counts && a.recv_displs) {
    h = HashWords(a.recv_displs, n, HashWords(a.recv_counts, n));
    fp.count = varr::Sum(a.recv_counts, n);
  } else if (a.kind == CollKind::kReduceScatterV && a.send_counts && a.send_displs) {
    h = HashWords(a.send_displs, n, HashWords(a.send_counts, n));
    fp.count = varr::Sum(a.send_counts, n);
  } else if (a.kind == CollKind::kAlltoAllV || a.kind == CollKind::kAlltoAllVC) {
    fp.dtype = 0;
    fp.op = static_cast<uint8_t>(DataTypeSize(a.dtype));  // DescribeFingerprint: "elem=4B"
    fp.count = 0;
    if (a.kind == CollKind::kAlltoAllVC && a.matrix) {
      h = HashWords(a.matrix, n * n);
      fp.count = varr::Sum(a.matrix, n * n);
    }
  }
  if (h != 0) fp.root = static_cast<uint32_t>(h ^ (h >> 32));
  return fp;
}

// The arrays whose hash is in the fingerprint, as one run of words (AllGatherV: recvCounts then
// recvDispls; ReduceScatterV: sendCounts then sendDispls; AlltoAllVC: the matrix) and their
// names, for naming the first differing index. False for other operators.
struct HashedArrays {
  const uint64_t* a = nullptr;
  const uint64_t* b = nullptr;
  uint64_t len = 0;  // entries of each of a and b (b may be nullptr)
  const char* a_name = "";
  const char* b_name = "";
};
bool FindHashedArrays(const algo::OpArgs& x, int n, HashedArrays* h) {
  const uint64_t un = static_cast<uint64_t>(n);
  switch (x.kind) {
    case CollKind::kAllGatherV: *h = {x.recv_counts, x.recv_displs, un, "recvCounts", "recvDispls"}; break;
    case CollKind::kReduceScatterV: *h = {x.send_counts, x.send_displs, un, "sendCounts", "sendDispls"}; break;
    case CollKind::kAlltoAllVC: *h = {x.matrix, nullptr, un * un, "sendCountMatrix", ""}; break;
    default: return false;
  }
  return h->a != nullptr;
}

// The size the selector sees (bytes = count x element size). A V operator's count is the mean
// of the array every rank agrees on, rounded up (AllGatherV: recvCounts, the analog of
// AllGather's sendCount; ReduceScatterV: sendCounts; AlltoAllVC: the matrix entries, the analog
// of AlltoAll's sendCount); AlltoAllV has none (0): its ranks' sizes differ, and every rank must
// select alike.
uint64_t SelectionBytes(const algo::OpArgs& a, int n) {
  const uint64_t un = static_cast<uint64_t>(n);
  auto mean = [](uint64_t sum, uint64_t k) { return k == 0 ? 0 : sum / k + (sum % k != 0); };
  uint64_t count = a.count;
  switch (a.kind) {
    case CollKind::kBarrier: return 0;
    case CollKind::kAllGatherV: count = a.recv_counts ? mean(varr::Sum(a.recv_counts, un), un) : 0; break;
    case CollKind::kReduceScatterV: count = a.send_counts ? mean(varr::Sum(a.send_counts, un), un) : 0; break;
    case CollKind::kAlltoAllV: count = 0; break;
    case CollKind::kAlltoAllVC: count = a.matrix ? mean(varr::Sum(a.matrix, un * un), un * un) : 0; break;
    default: break;
  }
  uint64_t bytes;
  return __builtin_mul_overflow(count, DataTypeSize(a.dtype), &bytes) ? UINT64_MAX : bytes;
}

// The V arrays of the operation each rank of this process is running, per communicator: on a
// fingerprint mismatch of an operator whose arrays must match, the error path compares the
// copies of two ranks of this process and names the first differing index. Ranks in other
// processes are not here; their mismatch is named by the hash only.
}  // namespace

class VBoard {
 public:
  static std::shared_ptr<VBoard> For(const std::string& key, int n) {
    static std::mutex mu;
    static std::map<std::string, std::weak_ptr<VBoard>> boards;
    std::lock_guard<std::mutex> lk(mu);
    for (auto it = boards.begin(); it != boards.end();) it = it->second.expired() ? boards.erase(it) : std::next(it);
    auto& w = boards[key];
    auto b = w.lock();
    if (!b) {
      b = std::make_shared<VBoard>();
      b->slots_.resize(static_cast<size_t>(n));
      w = b;
    }
    return b;
  }
  // Rank `rank` runs operation `seq` with these arrays (copied; capacity reused).
  void Publish(int rank, uint64_t seq, const HashedArrays& h) {
    std::lock_guard<std::mutex> lk(mu_);
    Slot& s = slots_[static_cast<size_t>(rank)];
    s.seq = seq;
    s.words.assign(h.a, h.a + h.len);
    if (h.b) s.words.insert(s.words.end(), h.b, h.b + h.len);
  }
  // "; first difference: recvCounts[2] (rank 0: 4, rank 1: 5)" between the lowest rank that
  // published `seq` and the lowest rank whose arrays differ from it; "" when not found here.
  std::string FirstDifference(uint64_t seq, const HashedArrays& h) {
    std::lock_guard<std::mutex> lk(mu_);
    int first = -1;
    for (int r = 0; r < static_cast<int>(slots_.size()); ++r) {
      const Slot& s = slots_[static_cast<size_t>(r)];
      if (s.seq != seq) continue;
      if (first < 0) {
        first = r;
        continue;
      }
      const Slot& f = slots_[static_cast<size_t>(first)];
      if (s.words.size() != f.words.size()) continue;
      const int64_t i = varr::FirstDifference(f.words.data(), s.words.data(), f.words.size());
      if (i < 0) continue;
      const uint64_t k = static_cast<uint64_t>(i);
      const bool second = k >= h.len;
      return "; first difference: " + varr::DescribeDifference(second ? h.b_name : h.a_name, second ? k - h.len : k,
                                                               first, f.words[k], r, s.words[k]);
    }
    return "";
  }

 private:
  struct Slot {
    uint64_t seq = 0;
    std::vector<uint64_t> words;
  };
  std::mutex mu_;
  std::vector<Slot> slots_;
};

namespace {

// Whether a communicator whose ranks are all threads of this process still needs a TCP mesh:
// HOSTCCL_TRANSPORT=tcp or shm asks for it, and so does HOSTCCL_ALGO naming a point-to-point
// algorithm. Otherwise their shared segment (ShmGroup::CreateInProcess) and LocalGroup serve every
// operation and no socket is opened.
bool ThreadsNeedMesh() {
  const std::string transport = EnvString(Knob::kTransport, "auto");
  if (transport == "tcp" || transport == "shm") return true;
  std::vector<AlgoRule> rules;
  if (auto a = EnvRaw(Knob::kAlgo); a && ParseAlgoRules(*a, &rules).ok())
    for (const auto& r : rules)
      if (const auto* alg = algo::FindAlgorithm(r.op, r.algorithm); alg && (alg->needs & algo::kNeedsTransport))
        return true;
  return false;
}

// Decisions shared by the ranks of one communicator that are threads of this process, so that
// they all decide alike (each deciding on its own count of open descriptors could split them).
class SharedDecisions {
 public:
  static SharedDecisions& Get() {
    static SharedDecisions d;
    return d;
  }
  // The first caller for `key` computes; later callers get its answer.
  Status Decide(const std::string& key, const std::function<Status()>& compute) {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [k, st] : list_)
      if (k == key) return st;
    Status st = compute();
    if (list_.size() >= 64) list_.erase(list_.begin());
    list_.emplace_back(key, st);
    return st;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, Status>> list_;
};

// A rank that will not build its mesh tells the ranks in other processes (those of this process
// decide alike), so they fail at once instead of at the connect timeout.
void TellOtherProcesses(const std::vector<boot::RankInfo>& ranks, int me, const std::vector<std::string>& addrs,
                        const uint8_t token[16], uint64_t tag, Deadline deadline) {
  std::vector<int> others;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    if (ranks[static_cast<size_t>(r)].proc_id != ranks[static_cast<size_t>(me)].proc_id) others.push_back(r);
  if (!others.empty()) net::AbandonTcpMesh(me, others, addrs, token, tag, deadline);
}

}  // namespace

int64_t ResolveExecTimeoutMs(int64_t config_seconds) {
  if (auto v = EnvIntChecked(Knob::kExecTimeoutMs, "the next setting")) return *v;
  if (config_seconds >= 0) return config_seconds * 1000;
  const int64_t s = EnvInt(Knob::kHcclExecTimeout, 1836);  // range-checked, warned once
  return s * 1000;  // 0 = no limit
}

Communicator::~Communicator() {
  if (free_observer_ != 0) rt::RemoveFreeObserver(free_observer_);
}

void Communicator::ApplyConfig(const CommConfig& config) {
  CheckEnvironmentOnce();  // bad and host-meaningless HCCL variables: one warning each per process
  int64_t mb = config.buffer_mb;
  if (mb < 1) mb = EnvInt(Knob::kHcclBuffSize, 200);  // range-checked, warned once
  staging_bytes_ = static_cast<uint64_t>(mb) << 20;
  exec_timeout_ms_ = ResolveExecTimeoutMs(config.exec_timeout_s);
  sym_win_max_bytes_ = config.sym_win_max_gb << 30;
}

void Communicator::ClassifyRanks() {
  const std::string& me = ranks_[static_cast<size_t>(rank_)].proc_id;
  all_local_ = true;
  shares_process_ = false;
  std::vector<std::string> nodes;
  std::vector<int> devices;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const auto& r = ranks_[i];
    if (r.proc_id != me) all_local_ = false;
    if (r.proc_id == me && i != static_cast<size_t>(rank_)) shares_process_ = true;
    nodes.push_back(r.node_id);
    devices.push_back(r.device);
  }
  topology_ = MakeTopology(nodes, devices);  // also whether the ranks span hosts (multi_node())
}

Status CheckCommProfile(const Communicator* comm, CollKind k, DataType t, RedOp op) {
  static const Topology kNoComm;
  return comm ? CheckProfile(comm->profile(), k, t, op, comm->topology())
              : CheckProfile(ActiveProfile(), k, t, op, kNoComm);
}

Status Communicator::FinishSetup(const std::string& local_key) {
  ClassifyRanks();
  fr_ = FlightRecorder::Create({rank_, size_, name_, StrFormat("%016llx", static_cast<unsigned long long>(Fnv1a64(key_)))});
  const std::string transport = EnvString(Knob::kTransport, "auto");
  if (transport != "auto" && transport != "tcp" && transport != "local" && transport != "shm")
    return MakeStatus(Code::kPara, "HOSTCCL_TRANSPORT=%s: expected auto, tcp, shm or local", transport.c_str());
  if (transport == "local" && !all_local_)
    return Status(Code::kPara, "HOSTCCL_TRANSPORT=local needs every rank to be a thread of one process");
  if (all_local_ && (transport == "auto" || transport == "local")) {
    local_ = net::LocalGroup::Join(local_key, size_);
    // Thread ranks also share a segment by default, as processes do: its collectives run as inline
    // attempts on the calling thread and run ahead (6-20x faster small calls than the in-process
    // plans, which take two barriers and a stream hand-off each; docs/performance.md), and so does
    // point-to-point (its mailboxes). The rules skip the in-process plans when a segment exists.
    if (transport == "auto" && size_ >= 2 && size_ <= kThreadShmMaxRanks) {
      Status st = net::ShmGroup::CreateInProcess(rank_, size_, local_key, Deadline::AfterMs(boot::ConnectTimeoutMs()),
                                                 &shm_);
      if (!st.ok()) {
        if (st.code() != Code::kNotSupport) return st;
        HLOG_WARN(kShm, "communicator '%s': %s; its thread ranks use the in-process plans", name_.c_str(),
                  st.message().c_str());
      }
    }
  } else if (!multi_node() && (transport == "auto" || transport == "shm")) {
    std::vector<uint32_t> pids;
    std::vector<int> members;
    for (const auto& r : ranks_) {
      pids.push_back(r.pid);
      members.push_back(static_cast<int>(r.rank));
    }
    Status st = net::ShmGroup::Create(rank_, members, transport_.get(), pids, algo::ShmStagingBytes(size_),
                                      Deadline::AfterMs(boot::ConnectTimeoutMs()), &shm_);
    if (!st.ok()) {
      if (transport == "shm" || st.code() != Code::kNotSupport) return st;
      HLOG_WARN(kShm, "communicator '%s': %s; using TCP between the processes of this host", name_.c_str(),
                st.message().c_str());
    }
  } else if (transport == "shm") {
    return Status(Code::kPara, "HOSTCCL_TRANSPORT=shm needs every rank on one host");
  } else if (multi_node() && transport == "auto") {
    HOSTCCL_RETURN_IF_ERROR(SetupNodeGroups());
  }
  if (shm_ || node_shm_) {
    net::ShmGroup* g = shm_ ? shm_.get() : node_shm_.get();
    free_observer_ = rt::AddFreeObserver([g](uint64_t serial) { g->NoteFreed(serial); });
  }
  if (auto algo = EnvRaw(Knob::kAlgo)) HOSTCCL_RETURN_IF_ERROR(ParseAlgoRules(*algo, &forced_));
  chunk_bytes_override_ = std::max<int64_t>(0, EnvInt(Knob::kChunkBytes, 0));
  check_args_ = EnvBool(Knob::kCheckArgs, true);
  if (const std::string ra = EnvString(Knob::kRunAhead, "auto"); ra != "auto")  // validated: auto|on|off
    run_ahead_ = ra == "on" ? RunAhead::kAlways : RunAhead::kNever;
  // Ranks of one host's shared segment: processes, or threads (a thread that drives several of them
  // sees its attempts look once, give up and queue as host waits: Run, Submit).
  if (shm_ != nullptr && node_shm_ == nullptr) {
    const std::string ic = EnvString(Knob::kInlineCalls, "auto");  // validated: auto|on|off
    inline_calls_ = ic == "on" || (ic == "auto" && !net::Oversubscribed(size_));
  }
  accumulate_fp32_ = EnvString(Knob::kAccumulate, "native") == "fp32";  // validated: native|fp32
  if (!rt::FidelityOn()) host_buffers_ok_.store(true, std::memory_order_relaxed);
  profile_ = ActiveProfile();
  if (transport_) transport_->SetBusyPollNs(TcpBusyPollNs());
  if (accumulate_fp32_)
    HLOG_INFO(kInit, "HOSTCCL_ACCUMULATE=fp32: fp16/bf16 sums and products accumulate in fp32 and round once");
  if (!check_args_) HLOG_WARN(kInit, "HOSTCCL_CHECK_ARGS=0: mismatched collective arguments across ranks are not detected");
  HLOG_INFO(kInit, "communicator '%s': rank %d of %d, device %d, %s, %s transport, %s, staging %llu MB, exec timeout %lld ms",
            name_.c_str(), rank_, size_, device_,
            all_local_ ? "all ranks are threads of this process" : "ranks in several processes",
            shm_ ? "shared memory" : local_ ? "in-process" : "TCP",
            multi_node() ? "several hosts" : "one host",
            static_cast<unsigned long long>(staging_bytes_ >> 20), static_cast<long long>(exec_timeout_ms_));
  return Status::Ok();
}

// HOSTCCL_TCP_BUSY_POLL_US, or auto: spin 50 us (about one round trip between two hosts' ranks)
// when the ranks of this host fit on its cores, else never (spinning would take the core a peer
// on this host needs).
uint64_t Communicator::TcpBusyPollNs() const {
  const std::string raw = EnvString(Knob::kTcpBusyPollUs, "auto");
  if (raw != "auto") {
    if (auto us = ParseInt(raw); us && *us >= 0 && *us <= 1000000) return static_cast<uint64_t>(*us) * 1000;
    HLOG_WARN(kEnv, "HOSTCCL_TCP_BUSY_POLL_US=%s is not auto or 0..1000000; using auto", raw.c_str());
  }
  const std::string& node = ranks_[static_cast<size_t>(rank_)].node_id;
  int here = 0;
  for (const auto& r : ranks_) here += r.node_id == node;
  return net::Oversubscribed(here) ? 0 : 50 * 1000;
}

Status Communicator::SetupNodeGroups() {
  // Hosts must hold contiguous rank ranges for the node-aware plan to keep the rank-order fold.
  nodes_ = algo::NodeLayout();
  std::vector<std::string> seen;
  for (int r = 0; r < size_; ++r) {
    const std::string& id = ranks_[static_cast<size_t>(r)].node_id;
    if (r > 0 && id == ranks_[static_cast<size_t>(r) - 1].node_id) continue;
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) {
      HLOG_INFO(kInit, "communicator '%s': ranks are not numbered contiguously per host (rank %d returns to "
                "host %s); using the flat TCP plans", name_.c_str(), r, id.c_str());
      nodes_ = algo::NodeLayout();
      return Status::Ok();
    }
    seen.push_back(id);
    nodes_.first.push_back(r);
  }
  nodes_.first.push_back(size_);
  const std::string& mine = ranks_[static_cast<size_t>(rank_)].node_id;
  nodes_.mine = static_cast<int>(std::find(seen.begin(), seen.end(), mine) - seen.begin());
  const int lo = nodes_.first[static_cast<size_t>(nodes_.mine)];
  const int hi = nodes_.first[static_cast<size_t>(nodes_.mine) + 1];
  std::vector<int> members;
  std::vector<uint32_t> pids;
  for (int r = lo; r < hi; ++r) {
    members.push_back(r);
    pids.push_back(ranks_[static_cast<size_t>(r)].pid);
  }
  const size_t staging = 2 * algo::kNodeChainSlots * (1u << 20);  // slots of the largest default chunk
  Status st = net::ShmGroup::Create(rank_ - lo, members, transport_.get(), pids, staging,
                                    Deadline::AfterMs(boot::ConnectTimeoutMs()), &node_shm_);
  if (!st.ok()) {
    if (st.code() != Code::kNotSupport) return st;
    HLOG_WARN(kShm, "communicator '%s': %s; using the flat TCP plans across hosts", name_.c_str(),
              st.message().c_str());
    node_shm_.reset();
    nodes_ = algo::NodeLayout();
  }
  return Status::Ok();
}

// Listeners are opened before rendezvous, because their addresses are published there, and the
// rank table is the only thing the ranks exchange. Which ones:
//  - none when the ranks are known to be threads of this process and need no mesh;
//  - only a loopback one when every rank is known to be on this host (the root or the chosen
//    address is loopback);
//  - otherwise a pair on one port: the interface rule's address (published) and its loopback
//    twin (127.0.0.1 or ::1, same port, so every rank can derive it from the published address).
// After rendezvous Connect keeps the one the mesh uses and closes the other (docs/transport.md).
Status Communicator::OpenListeners(const boot::RootInfo& root, const CommConfig& config,
                                   std::unique_ptr<net::TcpListener>* external,
                                   std::unique_ptr<net::TcpListener>* loopback) {
  if (config.threads_of_one_process && !ThreadsNeedMesh()) return Status::Ok();
  std::string ip = config.listen_ip;
  if (ip.empty()) HOSTCCL_RETURN_IF_ERROR(boot::ChooseLocalAddress(&ip));
  if (net::IsLoopbackIp(ip) || net::IsLoopbackIp(root.ip))
    return net::CreateTcpListener(net::IsLoopbackIp(ip) ? ip : net::LoopbackOf(ip), loopback);
  Status st;
  for (int attempt = 0; attempt < 16; ++attempt) {
    HOSTCCL_RETURN_IF_ERROR(net::CreateTcpListener(ip, external));
    st = net::CreateTcpListener(net::LoopbackOf(ip), loopback, (*external)->port());
    if (st.ok()) return st;
    external->reset();
    if (net::IsDescriptorError(st)) return st;
  }
  return MakeStatus(st.code(), "rank %d: no port free on both %s and %s after 16 tries (last: %s)", rank_, ip.c_str(),
                    net::LoopbackOf(ip).c_str(), st.message().c_str());
}

// The ranks of this process together need (peers x sockets) descriptors each for the mesh, and
// ranks in several processes one pidfd per peer on top (shared memory watches its peers' pids),
// at once: fail now, naming the limit, rather than halfway through while the peers wait.
Status Communicator::CheckDescriptorBudget(int sockets_per_peer) const {
  const std::string& me = ranks_[static_cast<size_t>(rank_)].proc_id;
  int here = 0;
  for (const auto& r : ranks_) here += r.proc_id == me;
  const int each = sockets_per_peer + (all_local_ ? 0 : 1);
  const int64_t need = static_cast<int64_t>(here) * (size_ - 1) * each;
  constexpr int64_t kSpare = 8;  // a shared segment, an eventfd, a log file: what else setup may open
  return SharedDecisions::Get().Decide(key_ + "/fds", [&]() -> Status {
    const int64_t free_fds = net::FreeDescriptors();
    if (need + kSpare <= free_fds) return Status::Ok();
    return MakeStatus(Code::kUnavail,
                      "communicator '%s': the %d rank(s) in this process need %lld file descriptors (%d peers x "
                      "%d each per rank: %d socket(s)%s) plus %lld spare, but only %lld are free: %s; raise it "
                      "(ulimit -n) or run fewer ranks per process",
                      name_.c_str(), here, static_cast<long long>(need), size_ - 1, each, sockets_per_peer,
                      all_local_ ? "" : " and a pidfd", static_cast<long long>(kSpare),
                      static_cast<long long>(free_fds), net::DescriptorUsage().c_str());
  });
}

Status Communicator::Connect(const boot::RootInfo& root, uint32_t nranks, uint32_t rank, int device,
                             const CommConfig& config) {
  ApplyConfig(config);
  rank_ = static_cast<int>(rank);
  size_ = static_cast<int>(nranks);
  device_ = device;
  root_ = root;
  SetLogRank(rank_);
  std::unique_ptr<net::TcpListener> external, loopback;
  HOSTCCL_RETURN_IF_ERROR(OpenListeners(root, config, &external, &loopback));
  boot::RankInfo mine;
  mine.rank = rank;
  mine.device = device;
  mine.pid = static_cast<uint32_t>(getpid());
  mine.node_id = boot::LocalNodeId();
  mine.proc_id = boot::LocalProcId();
  mine.data_addr = external ? external->address() : loopback ? loopback->address() : "";
  Deadline deadline = Deadline::AfterMs(boot::ConnectTimeoutMs());
  HOSTCCL_RETURN_IF_ERROR(boot::Rendezvous(root, nranks, mine, deadline, &ranks_));
  key_ = root.identifier + "/" + Hex(root.token, sizeof(root.token));
  name_ = config.name.empty() ? root.identifier : config.name;
  ClassifyRanks();
  if (all_local_ && !ThreadsNeedMesh()) {
    // Threads of this process: their segment and LocalGroup serve every operation; no socket stays open.
    for (auto& r : ranks_) r.data_addr.clear();
    return FinishSetup(key_);
  }
  for (const auto& r : ranks_)
    if (r.data_addr.empty())
      return MakeStatus(Code::kPara, "rank %d: rank %u opened no data listener (it expects no TCP mesh: its "
                        "ranks are threads of one process); HOSTCCL_TRANSPORT and HOSTCCL_ALGO must be the same "
                        "on every rank", rank_, r.rank);
  // One host: the mesh runs over the loopback twins and the external listener closes. Several
  // hosts: the other way round. ranks_[].data_addr becomes the address the mesh used (for subs).
  if (!multi_node()) {
    for (auto& r : ranks_) {
      net::SockAddr a;
      HOSTCCL_RETURN_IF_ERROR(net::ParseHostPort(r.data_addr, &a));
      if (!net::IsLoopback(a))
        r.data_addr = net::FormatHostPort(a.family() == AF_INET6 ? "::1" : "127.0.0.1", net::SockAddrPort(a));
    }
    listener_ = loopback ? std::move(loopback) : std::move(external);
  } else {
    listener_ = external ? std::move(external) : std::move(loopback);
  }
  external.reset();
  loopback.reset();
  std::vector<std::string> addrs;
  for (const auto& r : ranks_) addrs.push_back(r.data_addr);
  const int sockets = net::SocketsPerPeer();
  if (Status st = CheckDescriptorBudget(sockets); !st.ok()) {
    TellOtherProcesses(ranks_, rank_, addrs, root.token, Fnv1a64(key_), deadline);
    return st;
  }
  HOSTCCL_RETURN_IF_ERROR(net::CreateTcpMesh(rank_, size_, listener_.get(), addrs, root.token, Fnv1a64(key_),
                                             deadline, &transport_, sockets));
  return FinishSetup(key_);
}

Status Communicator::ConnectSub(const Communicator& parent, const std::vector<uint32_t>& members,
                                uint32_t sub_rank, uint64_t sub_id, const CommConfig& config) {
  ApplyConfig(config);
  rank_ = static_cast<int>(sub_rank);
  size_ = static_cast<int>(members.size());
  device_ = parent.device_;
  host_buffers_ok_.store(parent.host_buffers_allowed(), std::memory_order_relaxed);
  root_ = parent.root_;
  for (uint32_t m : members) ranks_.push_back(parent.ranks_[m]);
  for (size_t i = 0; i < ranks_.size(); ++i) ranks_[i].rank = static_cast<uint32_t>(i);
  key_ = parent.key_ + "_sub_" + std::to_string(sub_id);
  name_ = config.name.empty() ? parent.name_ + "_sub_" + std::to_string(sub_id) : config.name;
  if (!parent.listener_) {
    // The parent's ranks are threads of this process with no mesh: so are the sub's.
    const std::string transport = EnvString(Knob::kTransport, "auto");
    if (transport == "tcp" || transport == "shm")
      return MakeStatus(Code::kNotSupport, "HOSTCCL_TRANSPORT=%s: the parent communicator '%s' was created without "
                        "a TCP mesh (its ranks are threads of this process); set the variable before creating it",
                        transport.c_str(), parent.name_.c_str());
    return FinishSetup(key_);
  }
  ClassifyRanks();
  if (all_local_ && !ThreadsNeedMesh()) return FinishSetup(key_);  // its members are threads of this process
  std::vector<std::string> addrs;
  for (const auto& r : ranks_) addrs.push_back(r.data_addr);
  Deadline deadline = Deadline::AfterMs(boot::ConnectTimeoutMs());
  const int sockets = net::SocketsPerPeer();
  if (Status st = CheckDescriptorBudget(sockets); !st.ok()) {
    TellOtherProcesses(ranks_, rank_, addrs, root_.token, Fnv1a64(key_), deadline);
    return st;
  }
  HOSTCCL_RETURN_IF_ERROR(net::CreateTcpMesh(rank_, size_, parent.listener_.get(), addrs, root_.token,
                                             Fnv1a64(key_), deadline, &transport_, sockets));
  return FinishSetup(key_);
}

Status Communicator::CreateFromRootInfo(const boot::RootInfo& root, uint32_t nranks, uint32_t rank,
                                        int device, const CommConfig& config,
                                        std::shared_ptr<Communicator>* out) {
  std::shared_ptr<Communicator> c(new Communicator());
  HOSTCCL_RETURN_IF_ERROR(c->Connect(root, nranks, rank, device, config));
  *out = std::move(c);
  return Status::Ok();
}

Status Communicator::CreateSub(const std::shared_ptr<Communicator>& parent,
                               const std::vector<uint32_t>& members, uint32_t sub_rank, uint64_t sub_id,
                               const CommConfig& config, std::shared_ptr<Communicator>* out) {
  std::shared_ptr<Communicator> c(new Communicator());
  HOSTCCL_RETURN_IF_ERROR(c->ConnectSub(*parent, members, sub_rank, sub_id, config));
  *out = std::move(c);
  return Status::Ok();
}

Status Communicator::error() const {
  std::lock_guard<std::mutex> lk(err_mu_);
  return error_;
}

void Communicator::Fail(const Status& st) {
  {
    std::lock_guard<std::mutex> lk(err_mu_);
    if (failed_.load()) return;
    error_ = st;
    error_.MarkLogged();  // by the line below: later returns of it are not printed again
    failed_.store(true, std::memory_order_release);
  }
  // The one error line of this failure on this rank (the stream and the api do not repeat it).
  HLOG_ERROR(kColl, "%s (communicator '%s', rank %d)", ReportString(st).c_str(), name_.c_str(), rank_);
  const uint64_t seq = running_seq_.load();
  // The flight recorder's dump on an error (every timeout and mismatch comes here, after Finish
  // marked the operation's entry failed).
  if (fr_) {
    const std::string path = fr_->Dump(CodeName(st.code()));
    if (!path.empty()) HLOG_WARN(kColl, "flight recorder of '%s' rank %d dumped to %s", name_.c_str(), rank_, path.c_str());
  }
  if (transport_) transport_->Abort(st.message(), st.code(), seq);
  if (local_) local_->Abort(st.code(), st.message());
  if (shm_) shm_->Abort(st.code(), st.message(), seq);
  if (node_shm_) node_shm_->Abort(st.code(), st.message(), seq);
}

size_t Communicator::ChunkBytes(uint64_t bytes, const algo::Algorithm* a) const {
  return chunk_bytes_override_ > 0 ? static_cast<size_t>(chunk_bytes_override_)
                                   : static_cast<size_t>(DefaultChunkBytes(bytes, a));
}

Deadline Communicator::OpDeadline() const {
  if (exec_timeout_ms_ == 0) return Deadline::Infinite();
  // Every operation takes its deadline: a bound of a second or more is read on the coarse clock
  // (at most one tick early; no TSC read), unless the flight recorder keeps timestamps, whose
  // start time is this reading and must order with its precise enqueue and end times.
  if (exec_timeout_ms_ >= 1000 && !(fr_ && fr_->times())) return Deadline::AfterMsCoarse(exec_timeout_ms_);
  return Deadline::AfterMs(exec_timeout_ms_);
}

algo::Context Communicator::MakeContext(const Fingerprint& fp, Deadline deadline, const ThreadState& ts) {
  algo::Context ctx;
  ctx.rank = rank_;
  ctx.size = size_;
  ctx.transport = transport_.get();
  ctx.local = local_.get();
  ctx.shm = shm_.get();
  ctx.node_shm = node_shm_.get();
  ctx.nodes = &nodes_;
  ctx.fp = fp;
  ctx.check_fp = check_args_;
  ctx.accumulate_fp32 = accumulate_fp32_;
  ctx.deadline = deadline;
  ctx.scratch = &scratch_;
  ctx.alltoall_stores = &alltoall_stores_;
  ctx.staging_bytes = staging_bytes_;
  // Issued back to back (rt::TaskHasSuccessor), inline attempts included: a reader that runs ahead
  // inside an attempt waits for the root only as an attempt does (ShmGroup::AwaitArrival).
  ctx.may_run_ahead = run_ahead_ == RunAhead::kAlways || (run_ahead_ == RunAhead::kQueued && ts.has_successor);
  return ctx;
}

namespace {
net::BufDesc Describe(const void* p, const std::optional<rt::Allocation>& a) {
  net::BufDesc d;
  d.addr = reinterpret_cast<uint64_t>(p);
  if (a && a->memfd >= 0) {
    d.serial = a->serial;
    d.base = reinterpret_cast<uint64_t>(a->base);
    d.length = a->mapped;
    d.file_offset = a->memfd_offset;
    d.memfd = a->memfd;
  }
  return d;
}
}  // namespace

namespace {
// The task's own copies of the V arrays (the caller's are valid only during the call). The
// words live in a vector taken from the communicator's pool; `at` holds each array's offset in
// it (-1: unused), so the pointers can be re-bound wherever the task object was moved to.
struct TaskArrays {
  std::vector<uint64_t> words;
  int64_t at[varr::kFields] = {-1, -1, -1, -1, -1};  // in varr's field order (common/v_arrays.h)
  static constexpr const uint64_t* algo::OpArgs::*kFields[varr::kFields] = {
      &algo::OpArgs::send_counts, &algo::OpArgs::send_displs, &algo::OpArgs::recv_counts, &algo::OpArgs::recv_displs,
      &algo::OpArgs::matrix};
  void Bind(algo::OpArgs* a) const {
    for (int i = 0; i < varr::kFields; ++i)
      a->*kFields[i] = at[i] < 0 ? nullptr : words.data() + at[i];
  }
};
// Whether the call has V arrays (they are copied at the call: the caller may reuse them). Only
// the rows with a V buffer rule carry them: every other call is answered by its row.
bool HasArrays(const algo::OpArgs& a) {
  const OpInfo* o = FindOp(a.kind);
  if (o == nullptr || (o->send != BufRule::kV && o->recv != BufRule::kV)) return false;
  for (const uint64_t* algo::OpArgs::*f : TaskArrays::kFields)
    if (a.*f != nullptr) return true;
  return false;
}

// Copies the arrays `a` points at (n entries each; the matrix n x n, plus for AlltoAllVC the
// packed per-rank arrays derived from it) into t->words and re-points `a` at the copies.
void CopyArrays(algo::OpArgs* a, int n, int rank, TaskArrays* t) {
  const uint64_t un = static_cast<uint64_t>(n);
  if (a->kind == CollKind::kAlltoAllVC && a->matrix) {
    t->words.resize(un * un + 4 * un);
    std::copy(a->matrix, a->matrix + un * un, t->words.begin());
    uint64_t* w = t->words.data();
    varr::PackedLayout(w, n, rank, w + un * un, w + un * un + un, w + un * un + 2 * un, w + un * un + 3 * un);
    t->at[4] = 0;
    for (int i = 0; i < 4; ++i) t->at[i] = static_cast<int64_t>(un * un + static_cast<uint64_t>(i) * un);
  } else {
    uint64_t total = 0;
    for (int i = 0; i < varr::kFields; ++i) {
      t->at[i] = a->*TaskArrays::kFields[i] == nullptr ? -1 : static_cast<int64_t>(total);
      if (t->at[i] >= 0) total += varr::FieldWords(i, un);
    }
    if (t->words.size() < total) t->words.resize(total);  // grows only (a reused vector keeps its size)
    uint64_t* w = t->words.data();
    for (int i = 0; i < varr::kFields; ++i) {
      if (t->at[i] < 0) continue;
      const uint64_t* p = a->*TaskArrays::kFields[i];
      std::copy(p, p + varr::FieldWords(i, un), w + t->at[i]);
    }
  }
  t->Bind(a);
}
}  // namespace

void Communicator::DeferSettle(rt::Stream* stream, ThreadState& ts) {
  ts.ran_ahead = false;
  // Already pending on this stream: that settle, run later, covers this call too (it looks at what
  // ran ahead when it runs, after this call's Run).
  if (settle_on_.load(std::memory_order_acquire) == stream) return;
  settle_on_.store(stream, std::memory_order_release);
  stream->DeferSettle(this, rt::Stream::Settle{weak_from_this(), &Communicator::RunDeferredSettle});
}

Status Communicator::RunDeferredSettle(void* self, Deadline deadline) {
  Communicator* c = static_cast<Communicator*>(self);
  c->settle_on_.store(nullptr, std::memory_order_seq_cst);  // calls that run ahead from now on defer again
  return c->Settle(deadline);
}

Status Communicator::Settle(Deadline deadline) {
  std::lock_guard<QuickLock> lk(exec_mu_);
  net::ShmGroup* g = ran_ahead_;
  if (g == nullptr || !g->ran_ahead()) return Status::Ok();
  // A failure of this communicator was returned by the task that met it; after Destroy the
  // peers are told from the next operation on (Destroy settled what it could).
  if (failed() || destroyed_.load()) return Status::Ok();
  SetLogRank(rank_);
  const Deadline op = OpDeadline();
  Status st = algo::SettleRanAhead(g, deadline.Earlier(op));
  if (st.ok()) {
    if (fr_) fr_->Confirmed(ran_ahead_seq_);
    return st;
  }
  // The synchronize's own bound passed first: not a failure of the operations; they stay pending.
  if (st.code() == Code::kTimeout && !deadline.infinite() && deadline.Expired() && deadline.at_ns() <= op.at_ns())
    return st;
  // Point-to-point calls carry the collective count, not a number of their own.
  if (IsP2PKind(static_cast<uint8_t>(ran_ahead_kind_)))
    return Finish(0, "the calls that completed ahead of their peers", std::move(st));
  // The flight recorder marks the last of them failed; the ones before it stay "ahead" (unconfirmed).
  return Finish(fr_ ? ran_ahead_seq_ : 0,
                StrFormat("%s #%llu and the calls before it that completed ahead of their peers",
                          CollKindName(ran_ahead_kind_), static_cast<unsigned long long>(ran_ahead_seq_)),
                std::move(st));
}

// A call goes to its stream as a task that runs it and hands a settle to the stream when it
// completed ahead of its peers. An attempt (a small call of ranks on one host's shared segment)
// runs at once when the stream is idle and nothing is queued, on this thread, its record (and its
// V arrays) on this stack; only when it must wait is the task built (queued at its place, to
// resume). Ranks that are threads of this process may all be driven by this thread, which then
// issues the peers' calls only after this one: their tasks are host waits, which a full queue
// never makes this thread run (it would wait for calls it has not issued yet).
template <typename MakeTask>
Status Communicator::Submit(rt::Stream* stream, const Fingerprint& fp, const algo::OpArgs& args, bool attempt,
                            ThreadState& ts, MakeTask&& make_task, const PreparedCall* prepared) {
  if (attempt) {
    if (const uint64_t tseq = stream->BeginAttempt(ts)) {
      Status st = prepared == nullptr        ? Run(fp, args, ts)
                  : IsP2PKind(fp.kind) ? RunPreparedAttempt<true>(fp, args, *prepared, ts)
                                       : RunPreparedAttempt<false>(fp, args, *prepared, ts);
      if (st.code() != Code::kAgain) {
        if (ts.ran_ahead) DeferSettle(stream, ts);  // e.g. an eager send (sendrecv_mailbox.cc)
        stream->EndAttempt(tseq, std::move(st), ts);
        return Status::Ok();
      }
      stream->RequeueAttempt(tseq, make_task(), ts, shares_process_);
      return Status::Ok();
    }
    return stream->EnqueueAttempt(make_task(), shares_process_);
  }
  return shares_process_ ? stream->EnqueueHostWait(make_task()) : stream->Enqueue(make_task());
}

Status Communicator::Enqueue(rt::Stream* stream, algo::OpArgs args,
                             const std::optional<rt::Allocation>& send_alloc,
                             const std::optional<rt::Allocation>& recv_alloc) {
  if (failed()) return error();
  if (stream->capturing()) {
    // Stream capture (runtime/capture.h): the call is recorded and issued again at each execution
    // of the model, as a new call with its own sequence number; its V arrays are copied now.
    auto owned = std::make_shared<TaskArrays>();
    algo::OpArgs captured = args;
    if (HasArrays(captured)) CopyArrays(&captured, size_, rank_, owned.get());
    auto self = shared_from_this();
    if (stream->Capture([self, captured, owned, send_alloc, recv_alloc](rt::Stream* s) {
          return self->Enqueue(s, captured, send_alloc, recv_alloc);
        }))
      return Status::Ok();
  }
  Complete(&args, send_alloc, recv_alloc);
  if (IsP2PKind(static_cast<uint8_t>(args.kind))) {
    // A single HcclSend/HcclRecv numbers its one transfer in place; a batch's list is copied
    // (the checked list may be shared with a captured call).
    if (!args.items) {
      FillTransfer(&args);
      return EnqueueTransfers(stream, args, std::span<algo::P2PItem>(&args.one, 1), ThisThread());
    }
    auto list = std::make_shared<std::vector<algo::P2PItem>>(*args.items);
    const std::span<algo::P2PItem> items(*list);
    args.items = std::move(list);
    return EnqueueTransfers(stream, args, items, ThisThread());
  }
  return EnqueueCollective(stream, args, MakeFingerprint(args, 0, size_, check_args_, accumulate_fp32_), ThisThread());
}

void Communicator::FillTransfer(algo::OpArgs* args) {
  algo::P2PItem& it = args->one;
  it.send = args->kind == CollKind::kSend;
  it.peer = args->root;
  it.buf = it.send ? const_cast<void*>(args->send) : args->recv;
  it.count = args->count;
  it.dtype = args->dtype;
}

Status Communicator::EnqueueTransfers(rt::Stream* stream, algo::OpArgs& args, std::span<algo::P2PItem> items,
                                      ThreadState& ts, const PreparedCall* prepared) {
  {
    std::lock_guard<QuickLock> lk(p2p_mu_);
    for (auto& it : items)
      if (it.peer != rank_) it.pair_seq = ++PairCount(it.send, it.peer);
  }
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(args.kind);
  fp.seq = next_seq_.load();
  fp.dtype = static_cast<uint8_t>(args.dtype);
  fp.count = args.count;
  fp.root = static_cast<uint32_t>(args.root);
  // A single small HcclSend/HcclRecv between processes of one host may run at once (the mailbox
  // algorithm decides; docs/runtime.md "Inline attempts").
  return Submit(stream, fp, args, MayAttempt(args), ts, [&] { return RunTask(stream, fp, algo::OpArgs(args)); },
                prepared);
}

uint64_t& Communicator::PairCount(bool send, int peer) {
  if (p2p_sent_.empty()) {
    p2p_sent_.assign(static_cast<size_t>(size_), 0);
    p2p_received_.assign(static_cast<size_t>(size_), 0);
  }
  return (send ? p2p_sent_ : p2p_received_)[static_cast<size_t>(peer)];
}

// RecordStarted and AfterRun are inlined into both run paths: each call takes them.
[[gnu::always_inline]] inline void Communicator::RecordStarted(uint64_t fr_seq, const algo::Algorithm& a,
                                                               Deadline deadline, ThreadState& ts) {
  if (fr_seq == 0) return;
  // The recorder's start time is the clock reading the deadline took (no read of its own).
  const uint64_t start_ns =
      deadline.infinite() ? 0 : deadline.at_ns() - static_cast<uint64_t>(exec_timeout_ms_) * 1000000ull;
  fr_->Started(fr_seq, a.name, start_ns);
  ts.wait_word = fr_->WaitWord(fr_seq);  // the transports' blocking waits note whom they wait for
}

[[gnu::always_inline]] inline Status Communicator::AfterRun(const algo::Context& ctx, const algo::OpArgs& args,
                                                            uint64_t seq, uint64_t fr_seq, bool attempt, bool collective,
                                                            Status&& st, ThreadState& ts) {
  ts.wait_word = nullptr;
  if (!st.ok()) return AfterFailedRun(args, seq, fr_seq, attempt, std::move(st));
  // Small collectives back to back: the next operation's arrival lines, asked for while this call
  // returns (shm_group.h). Not after an isolated call, whose peers poll those lines at the next
  // call, nor after a larger one, whose arrivals carry no data (64 KiB Reduce: 4 % slower).
  if (collective && shm_ != nullptr && ctx.may_run_ahead && args.selection_bytes <= net::ShmGroup::kInlineBytes)
    shm_->PrefetchNextArrival();
  if (attempt) shm_->EndAttempt();
  KeepRanAhead(ctx, args.kind, seq, ts);
  inflight_.store(0, std::memory_order_release);
  if (fr_seq != 0) fr_->Ended(fr_seq, st, ctx.ran_ahead != nullptr);  // ahead: confirmed by the settle
  return std::move(st);
}

Status Communicator::AfterFailedRun(const algo::OpArgs& args, uint64_t seq, uint64_t fr_seq, bool attempt, Status st) {
  if (attempt) shm_->EndAttempt();
  inflight_.store(0, std::memory_order_release);
  if (attempt && st.code() == Code::kAgain) {  // gave up at its first arrival: runs again from the stream
    if (shm_->attempt_spun())
      HLOG_DEBUG(kColl, "%s: the inline attempt spun for its peers and gave up", CallName(args, seq).c_str());
    return st;
  }
  return Finish(fr_seq, CallName(args, seq), std::move(st));
}

// Run's steps for a prepared call's attempt, in Run's order; a pending attempt of an earlier
// collective leaves the stream to run this call later (kAgain, as Run's attempt does for it). A
// transfer has no flight-recorder entry, no prefetch and no chunks (it fits a mail slot).
template <bool kTransfer>
Status Communicator::RunPreparedAttempt(const Fingerprint& fp, const algo::OpArgs& args, const PreparedCall& call,
                                        ThreadState& ts) {
  std::lock_guard<QuickLock> lk(exec_mu_);
  if (shm_->resume_pending()) return Status(Code::kAgain, "not attempted");
  const uint64_t seq = fp.seq;
  running_seq_.store(seq, std::memory_order_release);
  ts.log_rank = rank_;
  if (destroyed_.load()) return Status(Code::kRemote, "communicator was destroyed");
  if (failed()) return error();
  inflight_.store(1, std::memory_order_release);
  const uint64_t fr_seq = !kTransfer && fr_ ? seq : 0;
  const Deadline deadline = OpDeadline();
  if constexpr (!kTransfer) RecordStarted(fr_seq, *call.attempt_algo, deadline, ts);
  algo::Context ctx = MakeContext(fp, deadline, ts);
  if constexpr (!kTransfer) ctx.chunk_bytes = call.attempt_chunk_bytes;
  BeginShmAttempt(ts, seq);
  Status st = kTransfer ? algo::P2PMailboxOne(ctx, args) : call.attempt_algo->run(ctx, args);
  return AfterRun(ctx, args, seq, fr_seq, true, !kTransfer, std::move(st), ts);
}

void Communicator::Complete(algo::OpArgs* args, const std::optional<rt::Allocation>& send_alloc,
                            const std::optional<rt::Allocation>& recv_alloc) const {
  if (shm_ || node_shm_) {
    args->send_desc = Describe(args->send, send_alloc);
    args->recv_desc = Describe(args->recv, recv_alloc);
  }
  args->selection_bytes = SelectionBytes(*args, size_);
}

void Communicator::Prepare(algo::OpArgs args, const std::optional<rt::Allocation>& send_alloc,
                           const std::optional<rt::Allocation>& recv_alloc, PreparedCall* out) const {
  out->ok = false;
  const bool p2p = IsP2PKind(static_cast<uint8_t>(args.kind));
  if (p2p && args.items) return;  // a batch's list is copied per call
  Complete(&args, send_alloc, recv_alloc);
  if (p2p) FillTransfer(&args);  // numbered per call (EnqueueTransfers)
  else out->fp = MakeFingerprint(args, 0, size_, check_args_, accumulate_fp32_);
  out->attempt_algo = nullptr;
  // A call that may attempt, on the shared segment, and a selection that gives it an attempt; a
  // transfer only between processes with mailboxes, a collective without V arrays.
  const bool attempt = MayAttempt(args) && shm_ != nullptr &&
                       (p2p ? !shares_process_ && shm_->has_mail() && shm_->cma() && args.one.peer != rank_
                            : !HasArrays(args));
  if (attempt) {
    const char* why = "";
    const algo::Algorithm* a = Select(args.kind, forced_, args.selection_bytes, Where(), &why);
    if (a != nullptr && algo::AttemptsBytes(*a, args.selection_bytes) && (!p2p || a->run == &algo::P2PMailbox)) {
      out->attempt_algo = a;
      out->attempt_chunk_bytes = ChunkBytes(args.selection_bytes, a);
    }
  }
  out->args = std::move(args);
  out->ok = true;
}

Status Communicator::EnqueuePrepared(rt::Stream* stream, PreparedCall& call,
                                     const std::optional<rt::Allocation>& send_alloc,
                                     const std::optional<rt::Allocation>& recv_alloc, ThreadState& ts) {
  if (!call.ok || stream->capturing()) return Enqueue(stream, call.args, send_alloc, recv_alloc);
  if (failed()) return error();
  // Run logs each call's selection: with the info log on, every call takes it.
  const PreparedCall* prepared =
      call.attempt_algo != nullptr && !LogEnabled(LogLevel::kInfo, Subsys::kColl) ? &call : nullptr;
  if (IsP2PKind(static_cast<uint8_t>(call.args.kind)))
    return EnqueueTransfers(stream, call.args, std::span<algo::P2PItem>(&call.args.one, 1), ts, prepared);
  return EnqueueCollective(stream, call.args, call.fp, ts, prepared);
}

Status Communicator::EnqueueCollective(rt::Stream* stream, const algo::OpArgs& call_args, Fingerprint fp,
                                       ThreadState& ts, const PreparedCall* prepared) {
  fp.seq = next_seq_.fetch_add(1) + 1;
  if (fr_) RecordEnqueued(fp, call_args);
  // Small calls of process ranks on one host run at once when the stream is idle (Run decides
  // with the selection whether the algorithm can; docs/runtime.md "Inline attempts").
  const bool attempt = MayAttempt(call_args);
  // The task is the whole call record; it fits the stream's inline storage (no allocation per call).
  // A prepared attempt has no V arrays (Prepare).
  if (prepared != nullptr || !HasArrays(call_args))
    return Submit(stream, fp, call_args, attempt, ts, [&] { return RunTask(stream, fp, algo::OpArgs(call_args)); },
                  prepared);
  algo::OpArgs args = call_args;  // re-pointed at copies of the arrays below
  // V arrays. The caller's are valid during this call: an AllGatherV, ReduceScatterV or AlltoAllV
  // attempt reads them entry by entry in place (AlltoAllV's shm_inline copies them into one block
  // itself when it needs them so: algo/alltoall/alltoall_inline.cc). AlltoAllVC reads the arrays
  // derived from its matrix, laid out as TaskArrays holds them: its attempt reads this thread's
  // copy, made now. A queued task (also one whose attempt gave up) takes its own copy, from the
  // communicator's pool, before the call returns.
  if (args.kind == CollKind::kAlltoAllVC) {
    thread_local ExitMarked<TaskArrays> t_call_arrays;
    CopyArrays(&args, size_, rank_, &t_call_arrays);
  }
  return Submit(stream, fp, args, attempt, ts, [&] {
    TaskArrays arrays;
    {
      std::lock_guard<QuickLock> lk(arrays_mu_);
      if (!arrays_pool_.empty()) {
        arrays.words = std::move(arrays_pool_.back());
        arrays_pool_.pop_back();
      }
    }
    CopyArrays(&args, size_, rank_, &arrays);
    auto task = [self = shared_from_this(), fp, args = std::move(args), arrays = std::move(arrays), stream]() mutable {
      arrays.Bind(&args);
      ThreadState& ts = ThisThread();
      Status st = self->Run(fp, args, ts);
      if (ts.ran_ahead) self->DeferSettle(stream, ts);
      // An attempt that gave up (kAgain) is run again later, on the same copies.
      if (st.code() != Code::kAgain) self->KeepArrays(std::move(arrays.words));
      return st;
    };
    static_assert(rt::Task::Fits<decltype(task)>(), "a V operator's task must fit the stream's inline storage");
    return rt::Task(std::move(task));
  });
}

void Communicator::KeepArrays(std::vector<uint64_t>&& words) {
  std::lock_guard<QuickLock> lk(arrays_mu_);
  if (arrays_pool_.size() < 8) arrays_pool_.push_back(std::move(words));
}

rt::Task Communicator::RunTask(rt::Stream* stream, const Fingerprint& fp, algo::OpArgs&& args) {
  auto task = [self = shared_from_this(), fp, args = std::move(args), stream]() {
    ThreadState& ts = ThisThread();
    Status st = self->Run(fp, args, ts);
    if (ts.ran_ahead) self->DeferSettle(stream, ts);
    return st;
  };
  static_assert(rt::Task::Fits<decltype(task)>(), "a call's task must fit the stream's inline storage");
  return rt::Task(std::move(task));
}

// The flight recorder's one entry point on the enqueue side (its other hooks are in Run and
// Finish): the fingerprint with every field, also when HOSTCCL_CHECK_ARGS=0 strips the compared one.
void Communicator::RecordEnqueued(const Fingerprint& fp, const algo::OpArgs& args) {
  fr_->Enqueued(check_args_ ? fp : MakeFingerprint(args, fp.seq, size_, true, accumulate_fp32_));
}

Status Communicator::EnqueueBarrier(rt::Stream* stream) {
  algo::OpArgs args;
  args.kind = CollKind::kBarrier;
  args.count = 0;
  return Enqueue(stream, args);
}

Status Communicator::Run(const Fingerprint& fp, const algo::OpArgs& args, ThreadState& ts) {
  std::lock_guard<QuickLock> lk(exec_mu_);
  const uint64_t seq = fp.seq;
  // An inline attempt (rt::Stream::EnqueueAttempt): the first arrival gives up instead of waiting
  // (kAgain), and the task runs again from the stream. Not while another attempt's arrival waits
  // to be resumed (calls on one communicator from several streams).
  const bool attempt = ts.attempting;
  const bool resuming = shm_ != nullptr && shm_->Resuming(seq);
  if (attempt && (shm_ == nullptr || (shm_->resume_pending() && !resuming))) return Status(Code::kAgain, "not attempted");
  running_seq_.store(seq, std::memory_order_release);
  ts.log_rank = rank_;  // SetLogRank
  if (destroyed_.load()) return Status(Code::kRemote, "communicator was destroyed");
  if (failed()) return error();
  inflight_.store(1, std::memory_order_release);  // only Run changes it, under exec_mu_
  const uint64_t bytes = args.selection_bytes;
  // The flight recorder keeps collectives (point-to-point transfers carry the collective count
  // so far as their seq, which is not an entry of their own).
  const uint64_t fr_seq = fr_ && !IsP2PKind(fp.kind) ? seq : 0;
  // The rules depend only on the size here (the forced rules and the placement are fixed at
  // creation): the last answer per operator is reused for the same size.
  const char* why = "";
  const algo::Algorithm* a = nullptr;
  Selected& last = selected_[static_cast<size_t>(args.kind) % selected_.size()];
  if (last.algo != nullptr && last.kind == args.kind && last.bytes == bytes) {
    a = last.algo;
    why = last.why;
  } else {
    a = Select(args.kind, forced_, bytes, Where(), &why);
    if (a != nullptr) last = Selected{args.kind, bytes, a, why};
  }
  if (attempt && (a == nullptr || !algo::AttemptsBytes(*a, bytes))) {
    inflight_.store(0, std::memory_order_release);
    return Status(Code::kAgain, "not attempted");
  }
  if (a == nullptr) {
    inflight_.store(0, std::memory_order_release);
    return Finish(fr_seq, CallName(args, seq), MakeStatus(Code::kNotSupport, "no %s algorithm can run on this communicator (%s)", CollKindName(args.kind), why));
  }
  const Deadline deadline = OpDeadline();
  RecordStarted(fr_seq, *a, deadline, ts);
  algo::Context ctx = MakeContext(fp, deadline, ts);
  ctx.chunk_bytes = ChunkBytes(bytes, a);
  if (!resuming)  // an attempt that gave up logged it
    HLOG_INFO(kColl, "%s %s on '%s': %s (%s), transport %s", CallName(args, seq).c_str(), DescribeFingerprint(fp).c_str(), name_.c_str(), a->name, why,
            (a->needs & algo::kNeedsLocal)  ? "in-process"
            : (a->needs & algo::kNeedsShm) ? "shared memory"
                                           : "TCP");
  HashedArrays hashed;
  const bool hashed_arrays = check_args_ && FindHashedArrays(args, size_, &hashed);
  if (hashed_arrays && all_local_) {
    if (!vboard_) vboard_ = VBoard::For(key_, size_);
    vboard_->Publish(rank_, seq, hashed);
  }
  if (attempt) BeginShmAttempt(ts, seq);
  Status st = a->run(ctx, args);
  // A mismatch of arrays that must match: name the first differing index when both ranks' copies
  // are in this process (the message the aborting rank passes on already has it).
  if (!st.ok() && st.code() == Code::kPara && hashed_arrays && vboard_ &&
      st.message().find("mismatch") != std::string::npos &&
      st.message().find("first difference") == std::string::npos)
    st = Status(st.code(), st.message() + vboard_->FirstDifference(seq, hashed));
  return AfterRun(ctx, args, seq, fr_seq, attempt, !IsP2PKind(fp.kind), std::move(st), ts);
}

std::string Communicator::CallName(const algo::OpArgs& args, uint64_t seq) const {
  const char* api = CollKindName(args.kind);
  if (IsP2PKind(static_cast<uint8_t>(args.kind)) && args.kind != CollKind::kBatchSendRecv) {
    const algo::P2PItem& it = args.one;
    return StrFormat("%s #%llu %s rank %d", api, static_cast<unsigned long long>(it.pair_seq), it.send ? "to" : "from",
                     it.peer);
  }
  if (args.items) return StrFormat("%s of %zu items", api, args.items->size());
  return StrFormat("%s #%llu", api, static_cast<unsigned long long>(seq));
}

Placement Communicator::Where() const {
  Placement where;
  where.nranks = size_;
  where.all_local = local_ != nullptr;
  where.shm = shm_ != nullptr;
  where.staging = shm_ != nullptr && shm_->Staging() != nullptr;
  where.has_transport = transport_ != nullptr;
  where.node_groups = node_shm_ != nullptr;
  return where;
}

void Communicator::KeepRanAhead(const algo::Context& ctx, CollKind kind, uint64_t seq, ThreadState& ts) {
  if (ctx.ran_ahead == nullptr) return;
  ran_ahead_ = ctx.ran_ahead;
  ran_ahead_seq_ = seq;
  ran_ahead_kind_ = kind;
  ts.ran_ahead = true;
}

void Communicator::BeginShmAttempt(ThreadState& ts, uint64_t seq) {
  // A thread that issues the calls of several thread ranks in turn: the ones it has yet to call
  // cannot arrive while its attempt for this one spins (2 us per rank and call, for nothing).
  const void* seg = shm_->segment();
  if (ts.attempt_segment != seg) {
    ts.attempt_segment = seg;
    ts.attempts_since_switch = ThreadState::kDriverMemory;
  } else if (ts.attempt_rank != rank_) {
    ts.attempts_since_switch = 0;
  } else if (ts.attempts_since_switch < ThreadState::kDriverMemory) {
    ++ts.attempts_since_switch;
  }
  ts.attempt_rank = rank_;
  shm_->BeginAttempt(seq, shares_process_ && ts.attempts_since_switch < ThreadState::kDriverMemory);
}

// A failed operation fails the communicator; the message names the operation and this rank
// unless it already starts with an operation name (mismatch messages name both ranks).
Status Communicator::Finish(uint64_t fr_seq, const std::string& what, Status st) {
  if (st.ok()) return st;
  if (st.message().rfind("Hccl", 0) != 0)
    st = Status(st.code(), StrFormat("%s (rank %d): %s", what.c_str(), rank_, st.message().c_str()));
  if (fr_seq != 0) fr_->Ended(fr_seq, st);
  Fail(st);
  st.MarkLogged();
  return st;
}

void Communicator::Destroy() {
  // Operations that completed ahead of their peers: wait (bounded by the exec timeout and peer
  // death) until the peers are done with them, so telling the peers below that this rank left
  // fails none of them. Skipped when an operation is running (it holds exec_mu_).
  if (!failed() && !destroyed_.load()) {
    std::unique_lock<QuickLock> lk(exec_mu_, std::try_to_lock);
    if (lk.owns_lock() && ran_ahead_ != nullptr && ran_ahead_->ran_ahead()) {
      SetLogRank(rank_);
      Status st = algo::SettleRanAhead(ran_ahead_, OpDeadline());
      if (st.ok() && fr_) fr_->Confirmed(ran_ahead_seq_);
      if (!st.ok()) HLOG_WARN(kColl, "rank %d destroys communicator '%s' with calls that ran ahead unsettled: %s", rank_,
                              name_.c_str(), st.message().c_str());
    }
  }
  destroyed_.store(true);
  // Peers that wait for this rank behind shared memory must learn it is gone now, not when its
  // process exits (a rank that skipped a call and destroyed). Safe for peers that already passed
  // their last barrier: waits test completion before the abort flag.
  if (!failed()) {
    const std::string why = StrFormat("rank %d destroyed its communicator", rank_);
    // From the next operation on: peers still finishing the last one are not affected.
    const uint64_t next = running_seq_.load() + 1;
    if (shm_) shm_->Abort(Code::kRemote, why, next);
    if (node_shm_) node_shm_->Abort(Code::kRemote, why, next);
    if (local_) local_->Depart(rank_, Code::kRemote, why);
  }
  if (inflight_.load() > 0) {
    if (transport_) transport_->Interrupt();
    if (local_) local_->Depart(rank_, Code::kRemote, "a rank's communicator was destroyed during the operation");
    if (shm_) shm_->Abort(Code::kRemote, "a rank's communicator was destroyed during the operation", running_seq_.load());
    if (node_shm_) node_shm_->Abort(Code::kRemote, "a rank's communicator was destroyed during the operation", running_seq_.load());
  }
}

// ---- handle registry ----

// Bumped (under g_reg_mu) whenever a handle is registered or unregistered: a thread's cached
// LookupCommForCall answer is valid while it is unchanged.
std::atomic<uint64_t> g_reg_generation{1};

namespace {
std::mutex g_reg_mu;
std::map<uintptr_t, std::shared_ptr<Communicator>>& Registry() {
  static std::map<uintptr_t, std::shared_ptr<Communicator>> m;
  return m;
}
uintptr_t g_next_id = 1;
constexpr uintptr_t kHandleTag = uintptr_t{0x4843434c} << 20;  // ids never look like heap pointers
}  // namespace

void* RegisterComm(std::shared_ptr<Communicator> comm) {
  std::lock_guard<std::mutex> lk(g_reg_mu);
  uintptr_t h = kHandleTag | (g_next_id++ << 4);
  Registry()[h] = std::move(comm);
  g_reg_generation.fetch_add(1, std::memory_order_release);
  return reinterpret_cast<void*>(h);
}

namespace {
// This thread's last lookup (LookupCommForCall): a strong reference, so a call that found its
// communicator can use it to the end while another thread unregisters it; replaced at the
// thread's next lookup after a registry change and dropped by the thread's own UnregisterComm.
// Touched only when the answer changes: every call compares the handle and the registry's
// generation in the thread's block (ThreadState::comm_*, plain data, no init guard).
thread_local ExitMarked<std::shared_ptr<Communicator>> t_cached_ref;

// The registered communicator of handle `h` (null if none), and the registry's generation it was
// read at, under the registry's lock.
std::shared_ptr<Communicator> FindRegistered(uintptr_t h, uint64_t* generation) {
  std::lock_guard<std::mutex> lk(g_reg_mu);
  *generation = g_reg_generation.load(std::memory_order_relaxed);
  auto it = Registry().find(h);
  return it != Registry().end() ? it->second : nullptr;
}
}  // namespace

Communicator* LookupCommForCallSlow(void* handle, ThreadState& ts) {
  const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  uint64_t generation = 0;
  std::shared_ptr<Communicator> found = FindRegistered(h, &generation);
  ts.comm_handle = found ? h : 0;
  ts.comm_generation = generation;
  ts.comm = found.get();
  // The previous answer is released outside the registry's lock (it may be the last reference).
  t_cached_ref = std::move(found);
  return static_cast<Communicator*>(ts.comm);
}

std::shared_ptr<Communicator> LookupComm(void* handle) {
  uint64_t generation = 0;
  // Nothing cached while the thread exits: t_cached_ref is gone (common/thread_state.h ExitMarked).
  if (ThisThread().exiting) return FindRegistered(reinterpret_cast<uintptr_t>(handle), &generation);
  Communicator* c = LookupCommForCall(handle);
  return c != nullptr ? c->shared_from_this() : nullptr;
}

// Handles of destroyed communicators and their ranks (a few bytes each; handles are never reused).
std::map<uintptr_t, int>& DestroyedRanks() {
  static auto* m = new std::map<uintptr_t, int>();
  return *m;
}

int DestroyedCommRank(void* handle) {
  std::lock_guard<std::mutex> lk(g_reg_mu);
  auto it = DestroyedRanks().find(reinterpret_cast<uintptr_t>(handle));
  return it == DestroyedRanks().end() ? -1 : it->second;
}

std::shared_ptr<Communicator> UnregisterComm(void* handle) {
  const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  std::lock_guard<std::mutex> lk(g_reg_mu);
  auto it = Registry().find(h);
  if (it == Registry().end()) return nullptr;
  DestroyedRanks()[it->first] = it->second->rank();
  auto c = std::move(it->second);
  Registry().erase(it);
  g_reg_generation.fetch_add(1, std::memory_order_release);
  // This thread's lookup cache must not keep a destroyed communicator alive.
  ThreadState& ts = ThisThread();
  if (ts.comm_handle == h) {
    ts.comm_handle = 0;
    ts.comm = nullptr;
    t_cached_ref.reset();  // (c still holds it)
  }
  return c;
}

void* FindCommHandleByName(const std::string& name) {
  std::lock_guard<std::mutex> lk(g_reg_mu);
  for (auto& [h, c] : Registry())
    if (c->name() == name) return reinterpret_cast<void*>(h);
  return nullptr;
}

}  // namespace hostccl::core
