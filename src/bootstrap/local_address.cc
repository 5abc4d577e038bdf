#include "bootstrap/local_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>

#include "bootstrap/bootstrap.h"
#include "common/env.h"
#include "common/log.h"
#include "transport/tcp/socket.h"

namespace hostccl::boot {
namespace {

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// 0 = ordinary NIC, 1 = container/virtual bridge, 2 = loopback (lower is preferred).
int InterfaceClass(const LocalInterface& i) {
  if (i.loopback || i.name == "lo") return 2;
  for (const char* p : {"docker", "br-", "veth", "virbr", "cni", "flannel"})
    if (StartsWith(i.name, p)) return 1;
  return 0;
}

}  // namespace

Status ParseIfnameSpec(const std::string& spec_in, IfnameFilter* out) {
  IfnameFilter f;
  std::string spec = spec_in;
  if (!spec.empty() && spec[0] == '^') {
    f.exclude = true;
    spec.erase(0, 1);
  }
  if (!spec.empty() && spec[0] == '=') {
    f.exact = true;
    spec.erase(0, 1);
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string name = spec.substr(start, comma - start);
    if (!name.empty()) {
      if (name.size() >= IFNAMSIZ)
        return MakeStatus(Code::kPara, "HCCL_SOCKET_IFNAME='%s': name '%s' is longer than %d characters",
                          spec_in.c_str(), name.c_str(), IFNAMSIZ - 1);
      f.names.push_back(name);
    }
    start = comma + 1;
  }
  if (f.names.empty()) return MakeStatus(Code::kPara, "HCCL_SOCKET_IFNAME='%s' names no interface", spec_in.c_str());
  *out = std::move(f);
  return Status::Ok();
}

bool IfnameMatches(const IfnameFilter& f, const std::string& ifname) {
  bool hit = false;
  for (const auto& n : f.names) hit = hit || (f.exact ? ifname == n : StartsWith(ifname, n));
  return f.exclude ? !hit : hit;
}

Status PickLocalAddress(const std::vector<LocalInterface>& ifs, const std::string& ifname_spec, int family,
                        std::string* ip_out, std::string* ifname_out) {
  std::vector<LocalInterface> cands;
  for (const auto& i : ifs)
    if (i.family == family) cands.push_back(i);
  std::stable_sort(cands.begin(), cands.end(), [](const LocalInterface& a, const LocalInterface& b) {
    int ca = InterfaceClass(a), cb = InterfaceClass(b);
    return ca != cb ? ca < cb : a.name < b.name;
  });
  const char* fam = family == AF_INET6 ? "AF_INET6" : "AF_INET";
  const LocalInterface* pick = nullptr;
  if (!ifname_spec.empty()) {
    IfnameFilter f;
    HOSTCCL_RETURN_IF_ERROR(ParseIfnameSpec(ifname_spec, &f));
    if (f.exclude) {
      for (const auto& c : cands)
        if (!pick && IfnameMatches(f, c.name)) pick = &c;
    } else {
      // Include lists are in preference order: the first name with a match wins.
      for (const auto& n : f.names) {
        IfnameFilter one{false, f.exact, {n}};
        for (const auto& c : cands)
          if (!pick && IfnameMatches(one, c.name)) pick = &c;
      }
    }
  } else if (!cands.empty()) {
    pick = &cands.front();
  }
  if (!pick) {
    std::string have;
    for (const auto& c : cands) have += (have.empty() ? "" : ", ") + c.name;
    if (ifname_spec.empty())
      return MakeStatus(Code::kNotFound, "no network interface with an %s address", fam);
    return MakeStatus(Code::kPara, "HCCL_SOCKET_IFNAME='%s' matches no interface with an %s address (have: %s)",
                      ifname_spec.c_str(), fam, have.empty() ? "none" : have.c_str());
  }
  *ip_out = pick->ip;
  if (ifname_out) *ifname_out = pick->name;
  return Status::Ok();
}

Status ListLocalInterfaces(std::vector<LocalInterface>* out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return MakeStatus(Code::kSyscall, "getifaddrs: %s", strerror(errno));
  out->clear();
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || !(a->ifa_flags & IFF_UP)) continue;
    int fam = a->ifa_addr->sa_family;
    char buf[INET6_ADDRSTRLEN] = {};
    if (fam == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof(buf));
    } else if (fam == AF_INET6) {
      auto* in6 = &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(in6)) continue;  // needs a scope id; not worth the trouble
      inet_ntop(AF_INET6, in6, buf, sizeof(buf));
    } else {
      continue;
    }
    out->push_back(LocalInterface{a->ifa_name, buf, fam, (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return Status::Ok();
}

int ParseSocketFamily(const std::string& text) {
  if (text.empty() || text == "AF_INET") return AF_INET;
  if (text == "AF_INET6") return AF_INET6;
  HLOG_WARN(kBoot, "HCCL_SOCKET_FAMILY='%s' is neither AF_INET nor AF_INET6; using AF_INET", text.c_str());
  return AF_INET;
}

Status ChooseLocalAddress(std::string* ip_out) {
  if (auto ip = EnvRaw(Knob::kHcclIfIp)) {
    if (!net::IsNumericIp(*ip)) return MakeStatus(Code::kPara, "HCCL_IF_IP='%s' is not an IPv4 or IPv6 address", ip->c_str());
    *ip_out = *ip;
    return Status::Ok();
  }
  int family = ParseSocketFamily(EnvString(Knob::kHcclSocketFamily, "AF_INET"));
  std::vector<LocalInterface> ifs;
  HOSTCCL_RETURN_IF_ERROR(ListLocalInterfaces(&ifs));
  std::string ifname;
  HOSTCCL_RETURN_IF_ERROR(PickLocalAddress(ifs, EnvString(Knob::kHcclSocketIfname, ""), family, ip_out, &ifname));
  HLOG_INFO(kBoot, "local address %s (interface %s)", ip_out->c_str(), ifname.c_str());
  return Status::Ok();
}

}  // namespace hostccl::boot
