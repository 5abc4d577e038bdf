// Choosing the local address for listeners, split into pure, testable pieces:
// HCCL_SOCKET_IFNAME parsing/matching and the pick over a list of interfaces.
// Priority (HCCL's): HCCL_IF_IP > HCCL_SOCKET_IFNAME > first non-loopback, non-docker NIC by
// ascending name > docker-like NICs > loopback. HCCL_SOCKET_FAMILY picks AF_INET / AF_INET6.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace hostccl::boot {

// HCCL_SOCKET_IFNAME: "eth,enp" (prefixes, in preference order), "^eth" (exclude prefixes),
// "=eth0,enp0" (exact names), "^=eth0" (exclude exact names).
struct IfnameFilter {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};
Status ParseIfnameSpec(const std::string& spec, IfnameFilter* out);
bool IfnameMatches(const IfnameFilter& f, const std::string& ifname);

struct LocalInterface {
  std::string name;
  std::string ip;  // numeric text
  int family = 0;  // AF_INET / AF_INET6
  bool loopback = false;
};

// The pick over `ifs` (no environment access). `ifname_spec` may be empty.
Status PickLocalAddress(const std::vector<LocalInterface>& ifs, const std::string& ifname_spec, int family,
                        std::string* ip_out, std::string* ifname_out = nullptr);
// getifaddrs(): interfaces that are up, with an IPv4 or (non-link-local) IPv6 address.
Status ListLocalInterfaces(std::vector<LocalInterface>* out);
// "AF_INET" -> AF_INET, "AF_INET6" -> AF_INET6; anything else -> AF_INET with a warning.
int ParseSocketFamily(const std::string& text);

}  // namespace hostccl::boot
