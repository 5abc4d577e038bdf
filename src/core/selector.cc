#include "core/selector.h"

#include <atomic>
#include <cctype>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::core {
namespace {

using algo::kGatherMaxBytes;

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
    if (r.collective != "reduce")
      return MakeStatus(Code::kPara, "HOSTCCL_ALGO: unknown collective '%s' (known: reduce)", r.collective.c_str());
    if (algo::FindReduceAlgorithm(r.algorithm) == nullptr)
      return MakeStatus(Code::kPara, "HOSTCCL_ALGO: unknown reduce algorithm '%s'", r.algorithm.c_str());
    rules->push_back(r);
  }
  return Status::Ok();
}

const algo::ReduceAlgorithm* SelectReduce(const std::vector<AlgoRule>& forced, uint64_t bytes,
                                          const Placement& where, std::string* why) {
  auto feasible = [&](const algo::ReduceAlgorithm* a) {
    return a != nullptr && (!a->needs_local_group || where.all_local) &&
           (!a->needs_shm_group || where.shm) && (!a->needs_node_groups || where.node_groups) &&
           (!a->needs_transport || where.has_transport || where.nranks == 1);
  };
  for (const auto& r : forced) {
    if (r.collective != "reduce" || bytes < r.min_bytes || bytes >= r.max_bytes) continue;
    const auto* a = algo::FindReduceAlgorithm(r.algorithm);
    if (feasible(a)) {
      *why = "HOSTCCL_ALGO";
      return a;
    }
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      HLOG_WARN(kAlgo, "HOSTCCL_ALGO asks for reduce algorithm '%s', which cannot run on this "
                "communicator (%s); using the default table", r.algorithm.c_str(),
                "its placement requirement is not met");
    }
  }
  *why = "table";
  // Looked up once: this runs on every call.
  static const algo::ReduceAlgorithm* const kDirect = algo::FindReduceAlgorithm("direct");
  static const algo::ReduceAlgorithm* const kShm = algo::FindReduceAlgorithm("shm");
  static const algo::ReduceAlgorithm* const kGather = algo::FindReduceAlgorithm("gather");
  static const algo::ReduceAlgorithm* const kNodeChain = algo::FindReduceAlgorithm("node_chain");
  static const algo::ReduceAlgorithm* const kChain = algo::FindReduceAlgorithm("chain");
  if (where.all_local) return kDirect;
  if (where.shm) return kShm;
  if (bytes <= kGatherMaxBytes) return kGather;
  if (where.node_groups) return kNodeChain;
  return kChain;
}

}  // namespace hostccl::core
