// Bootstrap: root info, the root's rendezvous server, and the rank-to-rank exchange that turns
// "N ranks that know the root's address and token" into "every rank knows every rank's info".
//
// Flow (HcclGetRootInfo + HcclCommInitRootInfo):
//  1. Root process: StartRootServer() binds the chosen interface (HCCL_IF_IP > HCCL_SOCKET_IFNAME >
//     first non-loopback NIC > loopback; port from HCCL_IF_BASE_PORT or ephemeral), makes a
//     128-bit random token (getrandom) and an identifier "<ip>_<port>_<dev>_<timestamp>", and
//     serves in a background thread until every rank joined or the connect timeout passed.
//     EncodeRootInfo() writes the 4108-byte HcclRootInfo (NUL-terminated IP text at offset 0).
//  2. Every rank: Rendezvous() connects to the root (retrying until the deadline), presents the
//     token and its RankInfo, and receives every rank's RankInfo (indexed by rank).
//     The server answers a HELLO with another token with ROOT_ERROR naming itself (what it serves,
//     pid, host), so the stranger fails at once (root info) or waits for its own root (rank
//     table); it drops (and logs) garbage, slow and half-open clients, evicts the oldest
//     unauthenticated connection when full, and never lets one of them stall the real ranks. Ranks disagreeing on
//     nranks, or duplicate rank ids, fail every rank with a clear message. When the deadline
//     passes, every waiting rank fails with kTimeout naming the ranks that never arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace hostccl::boot {

constexpr size_t kRootInfoBytes = 4108;

struct RootInfo {
  std::string ip;          // text address of the root server
  uint16_t port = 0;
  uint8_t token[16] = {};  // 128 random bits
  std::string identifier;  // "<ip>_<port>_<dev>_<timestamp>" (the default communicator name)
  // Not in the 4108 bytes. True for a rank-table root: its address and port are fixed, so another
  // job's root may hold them for a while; a rank told "another job's root" keeps retrying until
  // its own root binds the port (or the deadline), instead of failing as a stale root info does.
  bool shared_port = false;
};

// Writes/reads the 4108-byte HcclRootInfo. Decode validates everything (magic, version,
// NUL-terminated bounded strings, port) and returns kPara with the reason otherwise.
void EncodeRootInfo(const RootInfo& info, void* out4108);
Status DecodeRootInfo(const void* in4108, RootInfo* out);

// What each rank publishes at rendezvous.
struct RankInfo {
  uint32_t rank = 0;
  int32_t device = -1;
  uint32_t pid = 0;
  std::string node_id;     // host identity: HOSTCCL_NODE_ID, else hostname + kernel boot id
  std::string proc_id;     // process identity: node_id + pid + process start time
  std::string data_addr;   // "ip:port" of this rank's data listener (TCP transport)
  std::string job;         // launcher job identity (job_identity.h); Rendezvous fills it when empty
};

// The server side of root info. Lives until every rank joined, the deadline passed, or it is
// destroyed. Thread-safe; several may run in one process (one per root info).
class RootServer {
 public:
  virtual ~RootServer() = default;
  virtual const RootInfo& info() const = 0;
};

// Starts a root server. `device` goes into the identifier. The server's own deadline is the
// connect timeout (ConnectTimeoutMs()) counted from the first rank's arrival, and at most
// twice that from start.
Status StartRootServer(int device, std::unique_ptr<RootServer>* out);
// Same, bound to an explicit address: ip may be "" for the default rule. `served` names what the
// server serves in the answer to a rank with another token (e.g. "rank table '/x.json'").
Status StartRootServerAt(const std::string& ip, uint16_t port, const uint8_t token[16],
                         const std::string& identifier, std::unique_ptr<RootServer>* out,
                         const std::string& served = "");

// Rank-table root (rank 0): binds root.ip:root.port. When the port is taken it asks the holder who
// it is (a ROOT_HELLO with this job's token as rank 0 of nranks):
//  * another job's root (different token): waits for it to finish its init and retries the bind
//    until `deadline`, then fails with kTimeout naming the holder (pid, host, job, rank table);
//  * a root with this very token (two processes claim rank 0 of the same job): the holder fails
//    every rank with "duplicate rank id 0" naming both processes, and so does this call;
//  * anything else (not a hostccl root): fails at once naming the port.
Status StartRankTableRoot(const RootInfo& root, uint32_t nranks, const std::string& served, Deadline deadline,
                          std::unique_ptr<RootServer>* out);

// Keeps root servers alive after HcclGetRootInfo returns (the API has no handle to hold them):
// the registry owns them until they finish; finished servers are reaped on the next call.
void AdoptRootServer(std::unique_ptr<RootServer> server);

// Joins the communicator: all_out is indexed by rank.
Status Rendezvous(const RootInfo& root, uint32_t nranks, const RankInfo& mine, Deadline deadline,
                  std::vector<RankInfo>* all_out);

// Identity of this host and process (see RankInfo).
std::string LocalNodeId();
std::string LocalProcId();

// Connect timeout in ms: HOSTCCL_CONNECT_TIMEOUT_MS, else HCCL_CONNECT_TIMEOUT parsed as HCCL
// does (integer in [120, 7200], invalid -> 120 with an error log) + 20 s.
int64_t ConnectTimeoutMs();

// Chooses the local IP address to bind for listeners (HCCL_IF_IP > HCCL_SOCKET_IFNAME > first
// non-loopback NIC by name > loopback; HCCL_SOCKET_FAMILY picks IPv4/IPv6).
Status ChooseLocalAddress(std::string* ip_out);

}  // namespace hostccl::boot
