// TCP transport: a full mesh of nonblocking sockets between the ranks of one communicator,
// made at communicator creation (every pair connected before init returns).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/transport.h"

namespace hostccl::net {

// A rank's listening socket for data connections, opened before rendezvous so its address can
// be published. Bound to `ip` (from boot::ChooseLocalAddress, or loopback) and `port` (0 =
// ephemeral); a port in use is kUnavail.
class TcpListener {
 public:
  virtual ~TcpListener() = default;
  virtual std::string address() const = 0;  // "ip:port" ("[v6]:port" for IPv6)
  virtual uint16_t port() const = 0;
};
Status CreateTcpListener(const std::string& ip, std::unique_ptr<TcpListener>* out, uint16_t port = 0);

// Connects every pair (rank i connects to each j > i and accepts from each j < i), each
// connection authenticated by `token` and `comm_tag` (a per-communicator value all ranks agree
// on). Stray or wrong-token connections to the listener are dropped and logged.
// peer_addrs[r] = RankInfo::data_addr of rank r. TCP_NODELAY, large socket buffers.
// sockets_per_peer: connections per pair (1..kMaxLanes; 0 = HOSTCCL_SOCKETS_PER_PEER, default
// kDefaultSocketsPerPeer); every rank must use the same value (a differing peer fails the mesh
// with kPara naming both values). Long messages are striped across them (tcp_transport.h).
// `members` (optional, empty = all): only these ranks are connected (sub-communicators reuse the
// parent's ranks numbering in peer_addrs; the transport's ranks are indices into members).
Status CreateTcpMesh(int rank, int nranks, TcpListener* listener,
                     const std::vector<std::string>& peer_addrs, const uint8_t token[16],
                     uint64_t comm_tag, Deadline deadline, std::unique_ptr<Transport>* out,
                     int sockets_per_peer = 0);
// The same for a subset: `members` lists parent ranks (indices into peer_addrs, ascending or not,
// no duplicates) and must contain `rank`; the transport's rank r is members[r]'s connection.
// Empty `members` = all peer_addrs.size() ranks.
Status CreateTcpMesh(int rank, const std::vector<int>& members, TcpListener* listener,
                     const std::vector<std::string>& peer_addrs, const uint8_t token[16],
                     uint64_t comm_tag, Deadline deadline, std::unique_ptr<Transport>* out,
                     int sockets_per_peer = 0);

// Tells the mesh builders of ranks `tell` (indices into peer_addrs) that rank `rank` gives up (a
// HELLO with nranks 0, right token and tag), so they fail at once naming it instead of waiting
// for its connections until the deadline. Best effort: one connection at a time, each bounded by
// 500 ms and all by `deadline`. CreateTcpMesh does it itself when it runs out of descriptors.
void AbandonTcpMesh(int rank, const std::vector<int>& tell, const std::vector<std::string>& peer_addrs,
                    const uint8_t token[16], uint64_t comm_tag, Deadline deadline);

constexpr int kDefaultSocketsPerPeer = 1;
// HOSTCCL_SOCKETS_PER_PEER, checked (out of range -> the default, with a warning once).
int SocketsPerPeer();

}  // namespace hostccl::net
