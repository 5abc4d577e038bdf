// Rank table parser: JSON text -> validated RankTable (formats and rules in ranktable.h).
#include "bootstrap/ranktable.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

using nlohmann::json;

// Version 1.x tables hold every scalar as a JSON string; version 2.0 uses numbers.
enum class Scalars { kStrings, kNumbers };

std::string Join(const std::string& base, const char* key) {
  return base.empty() ? std::string(key) : base + "." + key;
}
std::string Index(const std::string& base, size_t i) {
  return StrFormat("%s[%zu]", base.c_str(), i);
}

Status Bad(const std::string& path, const std::string& reason) {
  return MakeStatus(Code::kPara, "rank table: '%s' %s", path.c_str(), reason.c_str());
}

const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A required or optional string member; absent optional -> "".
Status GetText(const json& obj, const std::string& base, const char* key, bool required,
               size_t max_len, std::string* out) {
  std::string path = Join(base, key);
  out->clear();
  const json* v = Member(obj, key);
  if (v == nullptr) return required ? Bad(path, "is missing") : Status::Ok();
  if (!v->is_string()) return Bad(path, StrFormat("must be a string (got %s)", v->type_name()));
  *out = v->get<std::string>();
  if (out->size() > max_len)
    return Bad(path,
               StrFormat("is %zu characters long; at most %zu are allowed", out->size(), max_len));
  return Status::Ok();
}

// A required or optional integer member in [lo, hi]; *present says whether it was there.
Status GetInt(const json& obj, const std::string& base, const char* key, Scalars mode,
              bool required, int64_t lo, int64_t hi, int64_t* out, bool* present = nullptr) {
  std::string path = Join(base, key);
  if (present != nullptr) *present = false;
  const json* v = Member(obj, key);
  if (v == nullptr) return required ? Bad(path, "is missing") : Status::Ok();
  int64_t value = 0;
  if (mode == Scalars::kStrings) {
    if (!v->is_string()) {
      return Bad(path, StrFormat("must be a string holding an integer, e.g. \"%s\": \"0\" (got %s; "
                                 "version 1.x rank tables quote every value)",
                                 key, v->type_name()));
    }
    auto parsed = ParseInt(v->get<std::string>());
    if (!parsed)
      return Bad(path, StrFormat("is \"%s\", not an integer", v->get<std::string>().c_str()));
    value = *parsed;
  } else {
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      value = u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
    } else if (v->is_number_integer()) {
      value = v->get<int64_t>();
    } else {
      return Bad(path, StrFormat("must be an integer number (got %s)",
                                 v->is_number_float() ? "a fractional number" : v->type_name()));
    }
  }
  if (value < lo || value > hi) {
    return Bad(path, StrFormat("is %lld, outside [%lld, %lld]", static_cast<long long>(value),
                               static_cast<long long>(lo), static_cast<long long>(hi)));
  }
  *out = value;
  if (present != nullptr) *present = true;
  return Status::Ok();
}

const json* GetArray(const json& obj, const std::string& base, const char* key, bool required,
                     Status* st) {
  const json* v = Member(obj, key);
  if (v == nullptr) {
    if (required) *st = Bad(Join(base, key), "is missing");
    return nullptr;
  }
  if (!v->is_array()) {
    *st = Bad(Join(base, key), StrFormat("must be an array (got %s)", v->type_name()));
    return nullptr;
  }
  return v;
}

Status RequireObject(const json& v, const std::string& path) {
  if (!v.is_object()) return Bad(path, StrFormat("must be an object (got %s)", v.type_name()));
  return Status::Ok();
}

// Rejects nesting deeper than kMaxRankTableDepth before the JSON parser sees the text.
Status CheckDepth(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxRankTableDepth)
        return MakeStatus(Code::kPara, "rank table: JSON nests deeper than %d levels at byte %zu",
                          kMaxRankTableDepth, i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return Status::Ok();
}

struct PendingRank {
  int64_t rank_id = 0;
  int32_t device_id = -1;
  std::string device_ip;
  int32_t super_device_id = -1;
  std::string path;  // of the rank's object, for messages
};

struct PendingServer {
  std::string server_id;
  std::string host_ip;
  std::string super_pod_id;
  std::string path;
  std::vector<PendingRank> ranks;
};

// Common validation of every format: unique servers, rank ids 0..N-1 unique and contiguous per
// server, device ids unique per server.
Status Finish(const std::string& version, std::vector<PendingServer> servers, RankTable* out) {
  if (servers.empty())
    return MakeStatus(Code::kPara, "rank table: zero servers (the server list is empty)");
  std::map<std::string, size_t> server_index;
  size_t nranks = 0;
  for (size_t s = 0; s < servers.size(); ++s) {
    auto [it, inserted] = server_index.emplace(servers[s].server_id, s);
    if (!inserted) {
      return Bad(Join(servers[s].path, "server_id"),
                 StrFormat("\"%s\" duplicates the server id of %s (server ids must be unique and a "
                           "server's entries listed together)",
                           servers[s].server_id.c_str(), servers[it->second].path.c_str()));
    }
    if (servers[s].ranks.empty()) return Bad(servers[s].path, "has no devices");
    nranks += servers[s].ranks.size();
  }
  std::vector<int64_t> owner(nranks, -1);  // rank id -> server index
  std::vector<const PendingRank*> by_id(nranks, nullptr);
  for (size_t s = 0; s < servers.size(); ++s) {
    for (const PendingRank& r : servers[s].ranks) {
      std::string path = Join(r.path, "rank_id");
      if (r.rank_id < 0 || static_cast<size_t>(r.rank_id) >= nranks) {
        return Bad(path, StrFormat("is %lld but the table has %zu ranks; rank ids must be 0..%zu",
                                   static_cast<long long>(r.rank_id), nranks, nranks - 1));
      }
      if (by_id[r.rank_id] != nullptr) {
        return Bad(path,
                   StrFormat("is %lld, already used by %s (duplicate rank id)",
                             static_cast<long long>(r.rank_id), by_id[r.rank_id]->path.c_str()));
      }
      by_id[r.rank_id] = &r;
      owner[r.rank_id] = static_cast<int64_t>(s);
    }
  }
  // One device hosts one rank of a communicator: device ids are unique within a server.
  for (const PendingServer& srv : servers) {
    std::map<int32_t, const PendingRank*> by_device;
    for (const PendingRank& r : srv.ranks) {
      auto [it, inserted] = by_device.emplace(r.device_id, &r);
      if (!inserted) {
        return Bad(Join(r.path, "device_id"),
                   StrFormat("is %d, already used by %s on server \"%s\" (duplicate device id)", r.device_id,
                             it->second->path.c_str(), srv.server_id.c_str()));
      }
    }
  }
  // Ids are a permutation of 0..N-1 here; a server is contiguous when its id range has no gaps.
  for (size_t s = 0; s < servers.size(); ++s) {
    int64_t lo = INT64_MAX, hi = -1;
    for (const PendingRank& r : servers[s].ranks) {
      lo = std::min(lo, r.rank_id);
      hi = std::max(hi, r.rank_id);
    }
    if (hi - lo + 1 != static_cast<int64_t>(servers[s].ranks.size())) {
      int64_t foreign = lo;
      while (owner[foreign] == static_cast<int64_t>(s)) ++foreign;
      return Bad(servers[s].path,
                 StrFormat("(server \"%s\") has rank ids %lld..%lld interleaved with rank %lld of "
                           "server \"%s\"; the ranks of one server must be contiguous",
                           servers[s].server_id.c_str(), static_cast<long long>(lo),
                           static_cast<long long>(hi), static_cast<long long>(foreign),
                           servers[owner[foreign]].server_id.c_str()));
    }
  }
  RankTable table;
  table.version = version;
  table.ranks.resize(nranks);
  for (size_t s = 0; s < servers.size(); ++s) {
    RankTableServer srv;
    srv.server_id = servers[s].server_id;
    srv.host_ip = servers[s].host_ip;
    srv.super_pod_id = servers[s].super_pod_id;
    for (const PendingRank& r : servers[s].ranks) {
      RankTableRank& out_rank = table.ranks[r.rank_id];
      out_rank.rank_id = static_cast<uint32_t>(r.rank_id);
      out_rank.server_id = srv.server_id;
      out_rank.server_index = static_cast<uint32_t>(s);
      out_rank.device_id = r.device_id;
      out_rank.host_ip = srv.host_ip;
      out_rank.device_ip = r.device_ip;
      out_rank.super_pod_id = srv.super_pod_id;
      out_rank.super_device_id = r.super_device_id;
      srv.ranks.push_back(static_cast<uint32_t>(r.rank_id));
    }
    std::sort(srv.ranks.begin(), srv.ranks.end());
    table.servers.push_back(std::move(srv));
  }
  *out = std::move(table);
  return Status::Ok();
}

constexpr int64_t kMaxRankId = 1 << 24;
constexpr int64_t kMaxDeviceId = 65535;
constexpr size_t kMaxServerIdLen = 64;
constexpr size_t kMaxIpLen = 64;

// Versions "1.0" and "1.2": server_list[] -> device[] with string scalars; 1.2 adds super pods.
Status ParseConcise(const json& root, const std::string& version, RankTable* out) {
  Status st;
  const json* list = GetArray(root, "", "server_list", true, &st);
  if (list == nullptr) return st;
  int64_t server_count = 0;
  bool has_count = false;
  HOSTCCL_RETURN_IF_ERROR(GetInt(root, "", "server_count", Scalars::kStrings, false, 0, kMaxRankId,
                                 &server_count, &has_count));
  if (has_count && static_cast<size_t>(server_count) != list->size()) {
    return Bad("server_count", StrFormat("is %lld but server_list has %zu entries",
                                         static_cast<long long>(server_count), list->size()));
  }
  if (!has_count && version == "1.0")
    HLOG_INFO(kBoot, "rank table: 'server_count' is missing; using the server_list size %zu",
              list->size());
  std::vector<PendingServer> servers;
  for (size_t s = 0; s < list->size(); ++s) {
    const json& js = (*list)[s];
    PendingServer srv;
    srv.path = Index("server_list", s);
    HOSTCCL_RETURN_IF_ERROR(RequireObject(js, srv.path));
    HOSTCCL_RETURN_IF_ERROR(
        GetText(js, srv.path, "server_id", true, kMaxServerIdLen, &srv.server_id));
    HOSTCCL_RETURN_IF_ERROR(GetText(js, srv.path, "host_ip", false, kMaxIpLen, &srv.host_ip));
    const json* devs = GetArray(js, srv.path, "device", true, &st);
    if (devs == nullptr) return st;
    if (devs->empty())
      return Bad(Join(srv.path, "device"), "is empty (a server needs at least one device)");
    for (size_t d = 0; d < devs->size(); ++d) {
      const json& jd = (*devs)[d];
      PendingRank r;
      r.path = Index(Join(srv.path, "device"), d);
      HOSTCCL_RETURN_IF_ERROR(RequireObject(jd, r.path));
      int64_t v = 0;
      HOSTCCL_RETURN_IF_ERROR(
          GetInt(jd, r.path, "device_id", Scalars::kStrings, true, 0, kMaxDeviceId, &v));
      r.device_id = static_cast<int32_t>(v);
      HOSTCCL_RETURN_IF_ERROR(
          GetInt(jd, r.path, "rank_id", Scalars::kStrings, true, 0, kMaxRankId, &r.rank_id));
      HOSTCCL_RETURN_IF_ERROR(GetText(jd, r.path, "device_ip", false, kMaxIpLen, &r.device_ip));
      bool has_super = false;
      HOSTCCL_RETURN_IF_ERROR(GetInt(jd, r.path, "super_device_id", Scalars::kStrings, false, 0,
                                     kMaxRankId, &v, &has_super));
      if (has_super) r.super_device_id = static_cast<int32_t>(v);
      for (const char* port_key : {"device_port", "host_port", "backup_device_port"}) {
        HOSTCCL_RETURN_IF_ERROR(
            GetInt(jd, r.path, port_key, Scalars::kStrings, false, 1, 65535, &v));
      }
      srv.ranks.push_back(std::move(r));
    }
    servers.push_back(std::move(srv));
  }
  if (version == "1.2") {
    const json* pods = GetArray(root, "", "super_pod_list", false, &st);
    if (!st.ok()) return st;
    if (pods != nullptr) {
      std::map<std::string, size_t> pod_of_server;  // server id -> pod index
      std::map<std::string, size_t> pod_ids;
      for (size_t p = 0; p < pods->size(); ++p) {
        std::string path = Index("super_pod_list", p);
        HOSTCCL_RETURN_IF_ERROR(RequireObject((*pods)[p], path));
        std::string pod_id;
        HOSTCCL_RETURN_IF_ERROR(GetText((*pods)[p], path, "super_pod_id", true, 128, &pod_id));
        if (!pod_ids.emplace(pod_id, p).second)
          return Bad(Join(path, "super_pod_id"),
                     StrFormat("\"%s\" is listed twice", pod_id.c_str()));
        const json* members = GetArray((*pods)[p], path, "server_list", true, &st);
        if (members == nullptr) return st;
        for (size_t m = 0; m < members->size(); ++m) {
          std::string mpath = Index(Join(path, "server_list"), m);
          HOSTCCL_RETURN_IF_ERROR(RequireObject((*members)[m], mpath));
          std::string sid;
          HOSTCCL_RETURN_IF_ERROR(
              GetText((*members)[m], mpath, "server_id", true, kMaxServerIdLen, &sid));
          auto srv = std::find_if(servers.begin(), servers.end(),
                                  [&](const PendingServer& x) { return x.server_id == sid; });
          if (srv == servers.end())
            return Bad(Join(mpath, "server_id"),
                       StrFormat("\"%s\" is not in server_list", sid.c_str()));
          if (!pod_of_server.emplace(sid, p).second)
            return Bad(Join(mpath, "server_id"),
                       StrFormat("\"%s\" is in two super pods", sid.c_str()));
          srv->super_pod_id = pod_id;
        }
      }
    }
  }
  return Finish(version, std::move(servers), out);
}

// Version "2.0": rank_list[] with number scalars; the server is the layer-0 net instance.
Status ParseV2(const json& root, RankTable* out) {
  Status st;
  int64_t rank_count = 0;
  HOSTCCL_RETURN_IF_ERROR(
      GetInt(root, "", "rank_count", Scalars::kNumbers, true, 1, 65536, &rank_count));
  const json* list = GetArray(root, "", "rank_list", true, &st);
  if (list == nullptr) return st;
  if (static_cast<size_t>(rank_count) != list->size()) {
    return Bad("rank_count", StrFormat("is %lld but rank_list has %zu entries",
                                       static_cast<long long>(rank_count), list->size()));
  }
  std::vector<PendingServer> servers;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& jr = (*list)[i];
    PendingRank r;
    r.path = Index("rank_list", i);
    HOSTCCL_RETURN_IF_ERROR(RequireObject(jr, r.path));
    int64_t v = 0;
    HOSTCCL_RETURN_IF_ERROR(
        GetInt(jr, r.path, "rank_id", Scalars::kNumbers, true, 0, kMaxRankId, &r.rank_id));
    HOSTCCL_RETURN_IF_ERROR(
        GetInt(jr, r.path, "device_id", Scalars::kNumbers, true, 0, kMaxDeviceId, &v));
    r.device_id = static_cast<int32_t>(v);
    HOSTCCL_RETURN_IF_ERROR(GetInt(jr, r.path, "local_id", Scalars::kNumbers, false, 0, 64, &v));
    std::string host_ip;  // hostccl extension: where this rank's host listens
    HOSTCCL_RETURN_IF_ERROR(GetText(jr, r.path, "host_ip", false, kMaxIpLen, &host_ip));
    std::string server_id;
    const json* levels = GetArray(jr, r.path, "level_list", false, &st);
    if (!st.ok()) return st;
    if (levels != nullptr) {
      if (levels->size() > 8)
        return Bad(Join(r.path, "level_list"),
                   StrFormat("has %zu entries; at most 8", levels->size()));
      for (size_t l = 0; l < levels->size(); ++l) {
        std::string lpath = Index(Join(r.path, "level_list"), l);
        HOSTCCL_RETURN_IF_ERROR(RequireObject((*levels)[l], lpath));
        int64_t layer = 0;
        HOSTCCL_RETURN_IF_ERROR(
            GetInt((*levels)[l], lpath, "net_layer", Scalars::kNumbers, true, 0, 7, &layer));
        if (layer != static_cast<int64_t>(l))
          return Bad(Join(lpath, "net_layer"), StrFormat("is %lld; layers must ascend from 0",
                                                         static_cast<long long>(layer)));
        std::string instance;
        HOSTCCL_RETURN_IF_ERROR(
            GetText((*levels)[l], lpath, "net_instance_id", true, 1024, &instance));
        if (layer == 0) server_id = instance;
      }
    }
    if (server_id.empty()) server_id = host_ip.empty() ? std::string("0") : host_ip;
    if (servers.empty() || servers.back().server_id != server_id) {
      for (const PendingServer& prev : servers) {
        if (prev.server_id == server_id) {
          return Bad(r.path,
                     StrFormat("is on server \"%s\" whose ranks were listed before %s; the ranks "
                               "of one server must be contiguous",
                               server_id.c_str(), servers.back().path.c_str()));
        }
      }
      PendingServer srv;
      srv.server_id = server_id;
      srv.path = StrFormat("server \"%s\" (from %s)", server_id.c_str(), r.path.c_str());
      servers.push_back(std::move(srv));
    }
    if (!host_ip.empty()) {
      if (!servers.back().host_ip.empty() && servers.back().host_ip != host_ip)
        return Bad(Join(r.path, "host_ip"),
                   StrFormat("is %s but another rank of its server has %s", host_ip.c_str(),
                             servers.back().host_ip.c_str()));
      servers.back().host_ip = host_ip;
    }
    servers.back().ranks.push_back(std::move(r));
  }
  return Finish("2.0", std::move(servers), out);
}

// The versionless "Standard" layout: group_list[0].instance_list[] -> devices[], ranks in listing
// order.
Status ParseStandard(const json& root, RankTable* out) {
  Status st;
  const json* groups = GetArray(root, "", "group_list", true, &st);
  if (groups == nullptr) return st;
  int64_t v = 0;
  bool present = false;
  HOSTCCL_RETURN_IF_ERROR(
      GetInt(root, "", "group_count", Scalars::kStrings, false, 0, 1 << 20, &v, &present));
  if (present && static_cast<size_t>(v) != groups->size())
    return Bad("group_count", StrFormat("is %lld but group_list has %zu entries",
                                        static_cast<long long>(v), groups->size()));
  if (groups->empty())
    return MakeStatus(Code::kPara, "rank table: zero servers ('group_list' is empty)");
  if (groups->size() > 1) {
    return MakeStatus(Code::kNotSupport,
                      "rank table: 'group_list' has %zu groups; hostccl reads one "
                      "(the hccl_world_group)",
                      groups->size());
  }
  const json& g = (*groups)[0];
  HOSTCCL_RETURN_IF_ERROR(RequireObject(g, "group_list[0]"));
  const json* instances = GetArray(g, "group_list[0]", "instance_list", true, &st);
  if (instances == nullptr) return st;
  std::vector<PendingServer> servers;
  int64_t next_rank = 0;
  for (size_t i = 0; i < instances->size(); ++i) {
    std::string path = Index("group_list[0].instance_list", i);
    const json& ji = (*instances)[i];
    HOSTCCL_RETURN_IF_ERROR(RequireObject(ji, path));
    std::string server_id, host_ip, pod_name;
    HOSTCCL_RETURN_IF_ERROR(GetText(ji, path, "server_id", true, kMaxServerIdLen, &server_id));
    HOSTCCL_RETURN_IF_ERROR(GetText(ji, path, "host_ip", false, kMaxIpLen, &host_ip));
    HOSTCCL_RETURN_IF_ERROR(GetText(ji, path, "pod_name", false, 1024, &pod_name));
    const json* devs = GetArray(ji, path, "devices", true, &st);
    if (devs == nullptr) return st;
    if (devs->empty())
      return Bad(Join(path, "devices"), "is empty (an instance needs at least one device)");
    // Consecutive instances (pods) of one server form that server.
    if (servers.empty() || servers.back().server_id != server_id) {
      PendingServer srv;
      srv.server_id = server_id;
      srv.path = path;
      servers.push_back(std::move(srv));
    }
    if (!host_ip.empty()) servers.back().host_ip = host_ip;
    for (size_t d = 0; d < devs->size(); ++d) {
      PendingRank r;
      r.path = Index(Join(path, "devices"), d);
      HOSTCCL_RETURN_IF_ERROR(RequireObject((*devs)[d], r.path));
      HOSTCCL_RETURN_IF_ERROR(
          GetInt((*devs)[d], r.path, "device_id", Scalars::kStrings, true, 0, kMaxDeviceId, &v));
      r.device_id = static_cast<int32_t>(v);
      HOSTCCL_RETURN_IF_ERROR(
          GetText((*devs)[d], r.path, "device_ip", false, kMaxIpLen, &r.device_ip));
      r.rank_id = next_rank++;
      servers.back().ranks.push_back(std::move(r));
    }
  }
  HOSTCCL_RETURN_IF_ERROR(GetInt(g, "group_list[0]", "device_count", Scalars::kStrings, false, 0,
                                 kMaxRankId, &v, &present));
  if (present && v != next_rank)
    return Bad("group_list[0].device_count",
               StrFormat("is %lld but the instances list %lld devices", static_cast<long long>(v),
                         static_cast<long long>(next_rank)));
  HOSTCCL_RETURN_IF_ERROR(GetInt(g, "group_list[0]", "instance_count", Scalars::kStrings, false, 0,
                                 kMaxRankId, &v, &present));
  if (present && static_cast<size_t>(v) != instances->size())
    return Bad("group_list[0].instance_count",
               StrFormat("is %lld but instance_list has %zu entries", static_cast<long long>(v),
                         instances->size()));
  return Finish("Standard", std::move(servers), out);
}

Status ParseDocument(const json& root, RankTable* out) {
  if (!root.is_object())
    return MakeStatus(Code::kPara, "rank table: the top level must be a JSON object (got %s)",
                      root.type_name());
  std::string version = "Standard";
  if (const json* v = Member(root, "version")) {
    if (!v->is_string())
      return Bad("version", StrFormat("must be a string such as \"1.0\" (got %s)", v->type_name()));
    version = v->get<std::string>();
    if (version != "1.0" && version != "1.2" && version != "2.0") {
      return MakeStatus(Code::kNotSupport,
                        "rank table: version \"%s\" is not supported (hostccl reads "
                        "\"1.0\", \"1.2\", \"2.0\" and the versionless Standard layout)",
                        version.c_str());
    }
  }
  std::string status;
  HOSTCCL_RETURN_IF_ERROR(GetText(root, "", "status", version != "2.0", 64, &status));
  if (!status.empty() && status != "completed") {
    return MakeStatus(Code::kAgain,
                      "rank table: status is \"%s\", not \"completed\" (not ready yet)",
                      status.c_str());
  }
  if (version == "2.0") return ParseV2(root, out);
  if (version == "Standard") return ParseStandard(root, out);
  return ParseConcise(root, version, out);
}

}  // namespace

Status ParseRankTable(const std::string& text, RankTable* out) {
  if (out == nullptr) return MakeStatus(Code::kPtr, "rank table: output pointer is null");
  if (text.size() > kMaxRankTableBytes) {
    return MakeStatus(Code::kPara, "rank table: %zu bytes is larger than the %zu-byte limit",
                      text.size(), kMaxRankTableBytes);
  }
  HOSTCCL_RETURN_IF_ERROR(CheckDepth(text));
  // nlohmann::json reports errors by exception; none leave this function.
  try {
    json root = json::parse(text);
    return ParseDocument(root, out);
  } catch (const json::parse_error& e) {
    return MakeStatus(Code::kPara, "rank table is not valid JSON at byte %zu: %s",
                      e.byte > 0 ? e.byte - 1 : 0, e.what());
  } catch (const std::bad_alloc&) {
    return MakeStatus(Code::kMemory, "rank table: out of memory parsing %zu bytes", text.size());
  } catch (const std::exception& e) {
    return MakeStatus(Code::kPara, "rank table: %s", e.what());
  }
}

}  // namespace hostccl::boot
