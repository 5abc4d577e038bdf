// Key/value rendezvous stores (gloo-style) used to launch ranks: the launcher's ranks publish and
// fetch small blobs (the 4108-byte root info) through them.
//
//  MemStore    in-process map; ranks that are threads of one process share one instance.
//  FileStore   one file per key in a directory every rank can see; writes are atomic (rename).
//  TcpStore    a server thread (TcpStoreServer) plus clients speaking a length-prefixed protocol.
//  PrefixStore prepends "<prefix>/" to every key of another store (separate runs or communicators).
//
// Contract: keys are 1..kMaxStoreKeyBytes bytes, values at most kMaxStoreValueBytes. Set
// overwrites. Get and Wait block until the key(s) exist or the deadline passes (kTimeout naming
// the key). Add treats the value as a decimal integer (absent = 0), adds delta atomically and
// returns the new value. Every call is bounded (calls without a deadline use kStoreOpTimeoutMs).
// All stores are thread-safe; a store outlives no one: callers own them through unique_ptr /
// shared_ptr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace hostccl::boot {

constexpr size_t kMaxStoreKeyBytes = 4096;
constexpr size_t kMaxStoreValueBytes = 16u << 20;
constexpr int64_t kStoreOpTimeoutMs = 30000;

class Store {
 public:
  virtual ~Store() = default;
  virtual Status Set(const std::string& key, const std::string& value) = 0;
  // Waits until the key exists, then returns its value.
  virtual Status Get(const std::string& key, Deadline deadline, std::string* value) = 0;
  virtual Status Add(const std::string& key, int64_t delta, int64_t* new_value) = 0;
  // Removes the key (absent key: ok).
  virtual Status Delete(const std::string& key) = 0;
  // Non-blocking existence test.
  virtual Status Check(const std::string& key, bool* present) = 0;
  // Waits until every key exists.
  virtual Status Wait(const std::vector<std::string>& keys, Deadline deadline);
};

// Validates key and value lengths (shared by every store and the TCP server).
Status CheckStoreKey(const std::string& key);
// Sleeps before the next poll of a key that is not there yet: *sleep_us, never past the deadline;
// doubles *sleep_us up to 20 ms.
void StoreBackoff(Deadline deadline, int* sleep_us);
Status CheckStoreValue(const std::string& key, size_t value_bytes);

std::unique_ptr<Store> NewMemStore();

// dir is created (with parents, mode 0700) when missing. Files left behind are the caller's to
// remove (Delete, or RemoveFileStoreDir once every rank is done).
Status NewFileStore(const std::string& dir, std::unique_ptr<Store>* out);
// Removes the directory if it is empty (other ranks' keys keep it alive). Never fails loudly.
void RemoveFileStoreDir(const std::string& dir);

std::unique_ptr<Store> NewPrefixStore(const std::string& prefix, std::shared_ptr<Store> base);

// A connection to a TCP store with a secret that has not proved it within this time is dropped.
constexpr int64_t kStoreAuthDeadlineMs = 3000;

// The TCP store server: binds host:port (port 0 = ephemeral) and serves from one background
// thread until destroyed. It drops (and logs) connections that send garbage or oversize lengths;
// one client never stalls the others. With a secret (16..1024 bytes, see store_auth.h) it answers
// only connections that proved it in the handshake described in store_tcp.cc; others are dropped
// after kStoreAuthDeadlineMs at most, and never keep the job's ranks out. Without one it answers
// any process that can reach the port.
class TcpStoreServer {
 public:
  virtual ~TcpStoreServer() = default;
  virtual uint16_t port() const = 0;
};
Status StartTcpStoreServer(const std::string& host, uint16_t port,
                           std::unique_ptr<TcpStoreServer>* out, const std::string& secret = "");

// A client: connects to host:port, retrying refused connections until the deadline. With a
// secret it runs the handshake (the server must prove the secret first; a store without it, or
// with another, fails with kTcpConnect naming the endpoint); the server must have the same one.
Status ConnectTcpStore(const std::string& host, uint16_t port, Deadline deadline,
                       std::unique_ptr<Store>* out, const std::string& secret = "");

}  // namespace hostccl::boot
