// TcpListenerImpl: a rank's data listener plus a small stash of connections that authenticated
// (right token) for a different communicator tag than the mesh being built when they arrived,
// so a later CreateTcpMesh on the same listener (a sub-communicator) can use them.
// Thread-safety: the stash is mutex-protected; accept() on the fd is safe from several threads.
#pragma once

#include <deque>
#include <mutex>
#include <string>

#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"
#include "transport/tcp/tcp_mesh.h"

namespace hostccl::net {

class TcpListenerImpl final : public TcpListener {
 public:
  static constexpr size_t kMaxStash = 64;

  struct Stashed {
    Fd fd;
    Hello hello;
    std::string from;  // remote address, for logs
  };

  TcpListenerImpl(Fd fd, std::string ip, uint16_t port) : fd_(std::move(fd)), ip_(std::move(ip)), port_(port) {}
  std::string address() const override { return FormatHostPort(ip_, port_); }
  uint16_t port() const override { return port_; }
  int fd() const { return fd_.get(); }

  // Keeps an authenticated connection for another comm tag (drops the oldest beyond kMaxStash).
  void Stash(Stashed s);
  // Moves out every stashed connection for `comm_tag`.
  std::deque<Stashed> TakeStashed(uint64_t comm_tag);

 private:
  Fd fd_;
  std::string ip_;
  uint16_t port_;
  std::mutex mu_;
  std::deque<Stashed> stash_;
};

}  // namespace hostccl::net
