#include "core/selector.h"

#include <atomic>
#include <cctype>

#include "common/env.h"
#include "common/log.h"
#include "common/ops.h"
#include "common/status.h"

namespace hostccl::core {
namespace {

bool ParseSize(const std::string& s, uint64_t* out) {
  if (s == "inf") { *out = UINT64_MAX; return true; }
  if (s.empty()) return false;
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == 0) return false;
  if (i < s.size()) {
    char c = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
    uint64_t mul = c == 'K' ? 1ull << 10 : c == 'M' ? 1ull << 20 : c == 'G' ? 1ull << 30 : 0;
    if (mul == 0 || i + 1 != s.size()) return false;
    v *= mul;
  }
  *out = v;
  return true;
}

}  // namespace

Status ParseAlgoRules(const std::string& text, std::vector<AlgoRule>* rules) {
  rules->clear();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t hash = text.find('#', pos);
    if (hash == std::string::npos) hash = text.size();
    std::string item = text.substr(pos, hash - pos);
    pos = hash + 1;
    if (item.empty()) continue;
    AlgoRule r;
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      r.collective = item.substr(0, eq);
      r.algorithm = item.substr(eq + 1);
    } else {
      size_t c1 = item.find(':'), c2 = item.rfind(':');
      if (c1 == std::string::npos || c1 == c2)
        return MakeStatus(Code::kPara, "HOSTCCL_ALGO: '%s' is neither coll=algo nor coll:min-max:algo", item.c_str());
      r.collective = item.substr(0, c1);
      std::string range = item.substr(c1 + 1, c2 - c1 - 1);
      r.algorithm = item.substr(c2 + 1);
      size_t dash = range.find('-');
      if (dash == std::string::npos || !ParseSize(range.substr(0, dash), &r.min_bytes) ||
          !ParseSize(range.substr(dash + 1), &r.max_bytes))
        return MakeStatus(Code::kPara, "HOSTCCL_ALGO: bad byte range '%s' in '%s'", range.c_str(), item.c_str());
    }
    const OpInfo* op = FindOpByAlgoName(r.collective);
    if (op == nullptr) {
      std::string known;
      for (const auto& o : kOps) known += std::string(known.empty() ? "" : " ") + o.algo;
      return MakeStatus(Code::kPara, "HOSTCCL_ALGO: unknown collective '%s' (known: %s)", r.collective.c_str(),
                        known.c_str());
    }
    r.op = op->kind;
    if (algo::FindAlgorithm(r.op, r.algorithm) == nullptr) {
      std::string known;
      for (const auto& a : algo::Algorithms())
        if (a.op == r.op) known += std::string(known.empty() ? "" : " ") + a.name;
      return MakeStatus(Code::kPara, "HOSTCCL_ALGO: unknown %s algorithm '%s' (known: %s)", r.collective.c_str(),
                        r.algorithm.c_str(), known.empty() ? "none yet" : known.c_str());
    }
    rules->push_back(r);
  }
  return Status::Ok();
}

const char* DefaultRuleText(CollKind op) {
  // The ranks of one host that share a segment take its plans (shm*): processes, and thread ranks
  // up to kThreadShmMaxRanks (core/communicator.cc). Thread ranks without one (HOSTCCL_TRANSPORT=
  // local, more ranks) take the in-process plans (direct, local), which also read peers' buffers
  // in place.
  switch (op) {
    // Threads without a segment fold in place; one host folds through the shared segment; over TCP
    // small inputs go to the root in one hop (above 256 KiB the root's link costs more than the
    // chain), several hosts chain host by host.
    case CollKind::kReduce:
      return "reduce=shm#reduce=direct#reduce:0-262145:gather#reduce=node_chain#reduce=chain";  // gather: <= 256 KiB
    // Threads without a segment fold slices in place; one host sends small inputs inline in the arrival
    // (one arrival; <= 4 KiB) and fold slices of the mapped buffers above; over TCP small inputs go
    // to everyone in one hop (flat), larger ones reduce-scatter + allgather; several hosts: node.
    case CollKind::kAllReduce:
      return "allreduce:0-4097:shm_inline#allreduce=shm#allreduce=direct#allreduce:0-16385:flat#allreduce=node#"
             "allreduce=rs_ag";
    // Threads without a segment copy slices of the root's buffer in place; one host takes small buffers
    // inline in the root's arrival (one arrival; <= 4 KiB) and copy slices of the mapped buffers
    // above; over TCP the root sends small buffers to everyone in one hop (flat), larger ones go
    // down a pipelined chain; several hosts: node.
    case CollKind::kBroadcast:
      return "broadcast:0-4097:shm_inline#broadcast=shm#broadcast=direct#broadcast:0-16385:flat#broadcast=node#"
             "broadcast=chain";
    // Threads without a segment fold their block in place; one host sends small inputs inline in the
    // arrival (one arrival; shm_inline re-plans to shm when n blocks exceed 4 KiB) and fold their
    // block of the mapped sendBufs above; over TCP small blocks go to their owners in one hop
    // (flat), larger ones through the owner's pipelined fold; across two hosts node (host
    // partials: 3/4 of owner's bytes over the link at 2x2; other host counts: owner).
    case CollKind::kReduceScatter:
      return "reducescatter:0-1025:shm_inline#reducescatter=shm#reducescatter=direct#reducescatter:0-65537:flat#"
             "reducescatter=node#reducescatter=owner";
    // The same plans on the mean block (sendCounts may differ per rank).
    case CollKind::kReduceScatterV:
      return "reducescatterv:0-1025:shm_inline#reducescatterv=shm#reducescatterv=direct#"
             "reducescatterv:0-65537:flat#reducescatterv=node#reducescatterv=owner";
    // Sizes are one rank's block. Threads without a segment copy peers' blocks in place; one host sends
    // small blocks inline in the arrival (one arrival; <= 4 KiB) and copy out of the mapped
    // sendBufs above; over TCP small blocks go to everyone in one hop (flat), larger ones round a
    // pipelined ring; several hosts: node.
    case CollKind::kAllGather:
      return "allgather:0-4097:shm_inline#allgather=shm#allgather=direct#allgather:0-16385:flat#allgather=node#"
             "allgather=ring";
    // AllGather's plans over blocks of their own sizes (sizes: the mean block); several hosts: node
    // (leaders exchange their hosts' blocks).
    case CollKind::kAllGatherV:
      return "allgatherv:0-4097:shm_inline#allgatherv=shm#allgatherv=direct#allgatherv:0-16385:flat#"
             "allgatherv=node#allgatherv=ring";
    // Sizes are one rank's block. Threads and processes of one host copy their block out of the
    // root's sendBuf (small: inline in the root's arrival; shm_inline re-plans to shm when the n
    // blocks exceed 4 KiB); over TCP the root sends each block directly; several hosts: node (the
    // root's host as shm, the others as flat).
    case CollKind::kScatter:
      return "scatter:0-1025:shm_inline#scatter=shm#scatter=direct#scatter=node#scatter=flat";
    case CollKind::kBarrier:
      return "barrier=shm#barrier=local#barrier=tcp";
    // Threads without a segment copy their blocks out of the peers' buffers in one pass; one host sends
    // small blocks inline in the arrival (one arrival; shm_inline itself re-plans to shm when a
    // rank's blocks exceed the 4 KiB slot, and AlltoAllV, whose selection size is 0, always starts
    // there) and pull larger ones out of the mapped buffers; several hosts: node (shared memory
    // inside hosts, TCP across); other TCP placements: pairwise.
    case CollKind::kAlltoAll:
      return "alltoall:0-4097:shm_inline#alltoall=shm#alltoall=direct#alltoall=node#alltoall=pairwise";
    case CollKind::kAlltoAllV:
      return "alltoallv=shm_inline#alltoallv=shm#alltoallv=direct#alltoallv=node#alltoallv=pairwise";
    case CollKind::kAlltoAllVC:
      return "alltoallvc:0-4097:shm_inline#alltoallvc=shm#alltoallvc=direct#alltoallvc=node#alltoallvc=pairwise";
    // Point-to-point: one host's ranks through the shared segment's mailboxes, whatever the size
    // (both ends of a pair must pick the same path; and collectives arrive in the same segment,
    // so a transfer against a collective is found); thread ranks without a segment through the
    // in-process mailboxes; several hosts write large payloads straight into the receiver's buffer for peers on
    // this host; TCP otherwise.
    case CollKind::kSend:
      return "send=mailbox#send=local#send=node#send=tcp";
    case CollKind::kRecv:
      return "recv=mailbox#recv=local#recv=node#recv=tcp";
    case CollKind::kBatchSendRecv:
      return "batchsendrecv=mailbox#batchsendrecv=local#batchsendrecv=node#batchsendrecv=tcp";
    default:
      return "";
  }
}

namespace {

struct DefaultTable {
  std::vector<AlgoRule> rules[256];
  std::vector<std::string> text[256];  // "default rule '<rule>'", for the log
  std::vector<const algo::Algorithm*> algos[256];  // resolved once: Select runs on every call
  DefaultTable() {
    for (const auto& o : kOps) {
      const size_t k = static_cast<size_t>(o.kind);
      Status st = ParseAlgoRules(DefaultRuleText(o.kind), &rules[k]);
      if (!st.ok()) HLOG_ERROR(kAlgo, "default rules of %s: %s", o.api, st.message().c_str());
      for (const auto& r : rules[k]) algos[k].push_back(algo::FindAlgorithm(r.op, r.algorithm));
      for (const auto& r : rules[k])
        text[k].push_back("default rule '" + (r.max_bytes == UINT64_MAX && r.min_bytes == 0
                              ? r.collective + "=" + r.algorithm
                              : StrFormat("%s:%llu-%llu:%s", r.collective.c_str(),
                                          static_cast<unsigned long long>(r.min_bytes),
                                          static_cast<unsigned long long>(r.max_bytes), r.algorithm.c_str())) + "'");
    }
  }
};

bool Placed(const algo::Algorithm* a, const Placement& where) {
  return a != nullptr && (!(a->needs & algo::kNeedsLocal) || where.all_local) &&
         (!(a->needs & algo::kNeedsShm) || where.shm) && (!(a->needs & algo::kNeedsStaging) || where.staging) &&
         (!(a->needs & algo::kNeedsNodes) || where.node_groups) &&
         (!(a->needs & algo::kNeedsTransport) || where.has_transport || where.nranks == 1);
}

// One warning per operator and reason for the life of the process (Select runs on every call).
bool FirstTime(std::atomic<uint64_t>* warned, CollKind op) {
  const uint64_t bit = uint64_t{1} << (static_cast<unsigned>(op) & 63);
  return (warned->fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

}  // namespace

const algo::Algorithm* Select(CollKind op, const std::vector<AlgoRule>& forced, uint64_t bytes,
                              const Placement& where, const char** why) {
  for (const auto& r : forced) {
    if (r.op != op || bytes < r.min_bytes || bytes >= r.max_bytes) continue;
    const auto* a = algo::FindAlgorithm(op, r.algorithm);
    if (!Placed(a, where)) {
      static std::atomic<uint64_t> warned{0};
      if (FirstTime(&warned, op))
        HLOG_WARN(kAlgo, "HOSTCCL_ALGO asks for %s algorithm '%s', which cannot run on this communicator (its "
                  "placement requirement is not met); using the default rules", r.collective.c_str(),
                  r.algorithm.c_str());
      continue;
    }
    if (!algo::TakesBytes(*a, bytes)) {
      static std::atomic<uint64_t> warned{0};
      if (FirstTime(&warned, op))
        HLOG_WARN(kAlgo, "HOSTCCL_ALGO asks for %s algorithm '%s', which takes at most %llu bytes per rank, not "
                  "%llu; using the default rules for such calls", r.collective.c_str(), r.algorithm.c_str(),
                  static_cast<unsigned long long>(a->max_bytes), static_cast<unsigned long long>(bytes));
      continue;
    }
    *why = "HOSTCCL_ALGO";
    return a;
  }
  static const DefaultTable* const table = new DefaultTable();  // parsed once: this runs on every call
  const size_t k = static_cast<size_t>(op);
  const auto& rules = table->rules[k];
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& r = rules[i];
    if (bytes < r.min_bytes || bytes >= r.max_bytes) continue;
    const auto* a = table->algos[k][i];
    if (!Placed(a, where) || !algo::TakesBytes(*a, bytes)) continue;
    *why = table->text[k][i].c_str();
    return a;
  }
  *why = "no rule";
  return nullptr;
}

}  // namespace hostccl::core
