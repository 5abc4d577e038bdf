// Hardened bootstrap end to end (reliability.md row 5), through the public API only.
//  * StrayConnections: while 4 thread ranks run HcclGetRootInfo / HcclCommInitRootInfo / HcclReduce /
//    HcclCommDestroy, an attacker opens garbage, wrong-token, half-open, slow (1 byte per 150 ms)
//    and huge-length connections to the root-info listener and to the data listeners of ranks 0-2
//    (found through /proc/self/fd + /proc/net/tcp; ranks 0-2 wait at the root for rank 3 while
//    the attacks queue up). The communicator must form within the connect timeout and reduce
//    correctly, and every stray connection must appear in the log as "dropped connection from
//    <its address>".
//  * Failures (ranks as processes: this binary re-executed with --bootfault_child=...): a root
//    info whose listener is gone, a root info whose port now belongs to another live root (wrong
//    token), two processes claiming one rank id, nRanks differing between ranks. Every rank must
//    fail with the documented code and a message naming the problem, within the connect timeout.
// Wire bytes are written by hand from docs/transport.md (frame header, HELLO, ROOT_HELLO) and the
// root info layout (IP text at offset 0, port at 64). Everything listens on 127.0.0.1 (HCCL_IF_IP).
#include <acl/acl.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"

extern char** environ;

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;
using hostccl::faulttest::FreeTcpPort;

constexpr int kConnectTimeoutMs = 5000;
constexpr uint64_t kCount = 1024;
std::string g_log_path;  // this process's HOSTCCL_LOG_FILE
std::string g_self;      // /proc/self/exe at start

// ---- wire bytes (docs/transport.md) ----

void PutLe(std::string* s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A 48-byte frame header: magic "HCT1", version 1, type, payload length, zero fingerprint/code.
std::string FrameHeader(uint16_t type, uint64_t payload_len) {
  std::string s;
  PutLe(&s, 0x31544348u, 4);
  PutLe(&s, 1, 2);
  PutLe(&s, type, 2);
  PutLe(&s, payload_len, 8);
  s.append(32, '\0');
  return s;
}

constexpr uint16_t kHello = 3, kRootHello = 4;

std::string WrongToken() {
  std::string t;
  for (int i = 0; i < 16; ++i) t.push_back(static_cast<char>(0x5a ^ (i * 37)));
  return t;
}

// A well-formed ROOT_HELLO (token, nranks, rank record) carrying a token nobody issued.
std::string WrongTokenRootHello() {
  std::string p = WrongToken();
  PutLe(&p, 4, 4);  // nranks
  PutLe(&p, 0, 4);  // rank
  PutLe(&p, 0, 4);  // device
  PutLe(&p, 4242, 4);
  for (std::string str : {"node", "node/4242/1", "127.0.0.1:1", "HOSTCCL_JOB_ID=stranger"}) {  // ..., job
    PutLe(&p, str.size(), 2);
    p += str;
  }
  return FrameHeader(kRootHello, p.size()) + p;
}

// A well-formed data HELLO (token, comm tag, rank 0 of 4) with a wrong token.
std::string WrongTokenHello() {
  std::string p = WrongToken();
  PutLe(&p, 0x1234567890abcdefull, 8);
  PutLe(&p, 0, 4);
  PutLe(&p, 4, 4);
  return FrameHeader(kHello, p.size()) + p;
}

std::string Garbage() {
  std::string s;
  uint32_t x = 0x9e3779b9u;
  for (int i = 0; i < 200; ++i) {
    x = x * 1664525u + 1013904223u;
    s.push_back(static_cast<char>(x >> 24));
  }
  s[0] = 'G';  // never the frame magic
  return s;
}

// ---- attackers ----

enum class Kind { kGarbage, kWrongToken, kHalfOpen, kSlow, kHugeLength };
const char* KindName(Kind k) {
  switch (k) {
    case Kind::kGarbage: return "garbage";
    case Kind::kWrongToken: return "wrong token";
    case Kind::kHalfOpen: return "half-open";
    case Kind::kSlow: return "slow";
    case Kind::kHugeLength: return "huge length";
  }
  return "?";
}
constexpr Kind kKinds[] = {Kind::kGarbage, Kind::kWrongToken, Kind::kHalfOpen, Kind::kSlow, Kind::kHugeLength};

struct Attacker {
  int fd = -1;
  std::string local;   // "127.0.0.1:<port>", as the library logs the peer
  std::string target;  // for messages
  Kind kind = Kind::kGarbage;
  std::atomic<bool> stop{false};
  std::thread slow;
  ~Attacker() {
    stop = true;
    if (slow.joinable()) slow.join();
    if (fd >= 0) close(fd);
  }
};

bool SendAll(int fd, const std::string& b) {
  size_t off = 0;
  while (off < b.size()) {
    ssize_t n = send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Connects to ip:port and starts the attack; nullptr (with *err) if the connect fails.
std::unique_ptr<Attacker> Attack(const std::string& ip, uint16_t port, Kind kind, bool root, std::string* err) {
  auto a = std::make_unique<Attacker>();
  a->kind = kind;
  a->target = ip + ":" + std::to_string(port);
  a->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sa.sin_addr);
  if (a->fd < 0 || connect(a->fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    *err = std::string("connect to ") + a->target + ": " + strerror(errno);
    return nullptr;
  }
  sockaddr_in me{};
  socklen_t len = sizeof(me);
  getsockname(a->fd, reinterpret_cast<sockaddr*>(&me), &len);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &me.sin_addr, buf, sizeof(buf));
  a->local = std::string(buf) + ":" + std::to_string(ntohs(me.sin_port));
  const std::string hello = root ? WrongTokenRootHello() : WrongTokenHello();
  switch (kind) {
    case Kind::kGarbage: SendAll(a->fd, Garbage()); break;
    case Kind::kWrongToken: SendAll(a->fd, hello); break;
    case Kind::kHalfOpen: break;
    case Kind::kHugeLength:
      SendAll(a->fd, FrameHeader(root ? kRootHello : kHello, 1ull << 40) + std::string(64, 'x'));
      break;
    case Kind::kSlow: {
      Attacker* raw = a.get();
      a->slow = std::thread([raw, hello] {
        for (size_t i = 0; i < hello.size() && !raw->stop; ++i) {
          if (send(raw->fd, hello.data() + i, 1, MSG_NOSIGNAL) != 1) return;  // dropped by the peer
          for (int t = 0; t < 15 && !raw->stop; ++t) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      });
      break;
    }
  }
  return a;
}

// ---- finding listeners ----

std::set<unsigned long> SocketInodesOfThisProcess() {
  std::set<unsigned long> out;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char target[128] = {};
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      if (readlink(link.c_str(), target, sizeof(target) - 1) > 0) {
        unsigned long ino = 0;
        if (sscanf(target, "socket:[%lu]", &ino) == 1) out.insert(ino);
      }
    }
    closedir(d);
  }
  return out;
}

// Ports of the IPv4 127.0.0.1 sockets of this process in state LISTEN.
std::set<uint16_t> LoopbackListenPorts() {
  const auto mine = SocketInodesOfThisProcess();
  std::set<uint16_t> ports;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string sl, local, remote, st, txrx, tr, retr, uid, timeout;
    unsigned long inode = 0;
    if (!(ls >> sl >> local >> remote >> st >> txrx >> tr >> retr >> uid >> timeout >> inode)) continue;
    if (st != "0A" || !mine.count(inode)) continue;
    const auto colon = local.find(':');
    if (local.substr(0, colon) != "0100007F") continue;
    ports.insert(static_cast<uint16_t>(std::stoul(local.substr(colon + 1), nullptr, 16)));
  }
  return ports;
}

// How many IPv4 sockets of this host with local address 127.0.0.1:port are in TCP state `st`
// ("0A" listening; "01" established, which on the accepting side counts the connected peers).
int LoopbackSockets(uint16_t port, const std::string& st_want) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  char want[32];
  snprintf(want, sizeof(want), "0100007F:%04X", port);
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string sl, local, remote, st;
    if ((ls >> sl >> local >> remote >> st) && local == want && st == st_want) ++n;
  }
  return n;
}

// Whether any process of this host listens on 127.0.0.1:port.
bool SomeoneListensOn(uint16_t port) { return LoopbackSockets(port, "0A") > 0; }

std::string RootIp(const HcclRootInfo& info) {
  return std::string(info.internal, strnlen(info.internal, 64));
}
uint16_t RootPort(const HcclRootInfo& info) {
  const auto* b = reinterpret_cast<const uint8_t*>(info.internal);
  return static_cast<uint16_t>(b[64] | (b[65] << 8));
}

std::string ReadLog() {
  std::ifstream in(g_log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The log line that says `addr` was dropped, waiting up to `wait_ms` for it; "" if none.
std::string DropLine(const std::string& addr, int wait_ms) {
  const std::string needle = "dropped connection from " + addr + ":";
  for (int64_t end = NowMs() + wait_ms;;) {
    std::istringstream log(ReadLog());
    std::string line;
    while (std::getline(log, line))
      if (line.find(needle) != std::string::npos) return line;
    if (NowMs() >= end) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// ---- one rank: init, a checked reduce, destroy ----

struct Outcome {
  HcclResult init = HCCL_E_INTERNAL;
  int64_t init_ms = 0;
  std::string error;  // empty = everything passed
};

void RunRank(int rank, int nranks, const HcclRootInfo& info, Outcome* out) {
  aclrtSetDevice(rank % 8);
  HcclComm comm = nullptr;
  const int64_t t0 = NowMs();
  out->init = HcclCommInitRootInfo(static_cast<uint32_t>(nranks), &info, static_cast<uint32_t>(rank), &comm);
  out->init_ms = NowMs() - t0;
  if (out->init != HCCL_SUCCESS) {
    out->error = std::string("HcclCommInitRootInfo returned ") + std::to_string(out->init) + ": " + aclGetRecentErrMsg();
    return;
  }
  aclrtStream stream = nullptr;
  aclrtCreateStream(&stream);
  {
    DevBuf send, recv;
    if (!send.Alloc(kCount * 4, static_cast<float>(rank + 1)) || !recv.Alloc(kCount * 4, 0.0f)) {
      out->error = "aclrtMalloc failed";
    } else if (HcclReduce(send.ptr, recv.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, stream) !=
                   HCCL_SUCCESS ||
               aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
      out->error = std::string("HcclReduce failed: ") + aclGetRecentErrMsg();
    } else if (rank == 0) {
      const float want = static_cast<float>(nranks * (nranks + 1) / 2);
      for (uint64_t i : {uint64_t{0}, kCount / 2, kCount - 1})
        if (recv.At(i) != want)
          out->error = "recv[" + std::to_string(i) + "] = " + std::to_string(recv.At(i)) + ", want " + std::to_string(want);
    }
  }
  aclrtDestroyStream(stream);
  if (HcclCommDestroy(comm) != HCCL_SUCCESS && out->error.empty()) out->error = "HcclCommDestroy failed";
}

TEST(BootstrapHardening, StrayConnectionsAreDroppedAndRanksStillForm) {
  constexpr int kRanks = 4;
  // Thread ranks open data listeners and a mesh only when a TCP mesh is asked for.
  setenv("HOSTCCL_TRANSPORT", "tcp", 1);
  struct Unset {
    ~Unset() { unsetenv("HOSTCCL_TRANSPORT"); }
  } unset;
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  const std::string ip = RootIp(info);
  ASSERT_EQ(ip, "127.0.0.1");
  const auto listening_before = LoopbackListenPorts();
  ASSERT_TRUE(listening_before.count(RootPort(info))) << "the root listener is not among this process's sockets";

  std::vector<std::unique_ptr<Attacker>> attackers;
  std::string err;
  for (Kind k : kKinds) {
    attackers.push_back(Attack(ip, RootPort(info), k, /*root=*/true, &err));
    ASSERT_TRUE(attackers.back()) << err;
  }

  std::vector<Outcome> outcomes(kRanks);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks - 1; ++r) ranks.emplace_back(RunRank, r, kRanks, std::cref(info), &outcomes[r]);
  // Ranks 0-2 opened their data listeners and wait at the root for rank 3.
  std::set<uint16_t> data_ports;
  for (int64_t end = NowMs() + 3000; NowMs() < end && data_ports.size() < kRanks - 1;) {
    data_ports.clear();
    for (uint16_t p : LoopbackListenPorts())
      if (!listening_before.count(p)) data_ports.insert(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(data_ports.size(), static_cast<size_t>(kRanks - 1)) << "data listeners of ranks 0-2 not found";
  for (uint16_t p : data_ports)
    for (Kind k : kKinds) {
      attackers.push_back(Attack(ip, p, k, /*root=*/false, &err));
      EXPECT_TRUE(attackers.back()) << err;
      if (!attackers.back()) attackers.pop_back();
    }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the slow ones have started dribbling
  const int64_t t0 = NowMs();
  ranks.emplace_back(RunRank, kRanks - 1, kRanks, std::cref(info), &outcomes[kRanks - 1]);
  for (auto& t : ranks) t.join();
  const int64_t took = NowMs() - t0;

  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(outcomes[r].error, "") << "rank " << r;
    EXPECT_LT(outcomes[r].init_ms, kConnectTimeoutMs + 1000) << "rank " << r;
  }
  EXPECT_LT(took, kConnectTimeoutMs) << "the communicator formed only after " << took << " ms";
  for (const auto& a : attackers) {
    const std::string line = DropLine(a->local, 3000);
    EXPECT_NE(line, "") << KindName(a->kind) << " connection " << a->local << " -> " << a->target
                        << " was not logged as dropped; log " << g_log_path << ":\n" << ReadLog();
    if (a->kind == Kind::kWrongToken) {
      EXPECT_NE(line.find("wrong token"), std::string::npos) << line;
    }
  }
}

// ---- failures, ranks as processes ----

std::string Hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = static_cast<const uint8_t*>(p)[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

bool Unhex(const std::string& s, void* out, size_t n) {
  if (s.size() != 2 * n) return false;
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
  return true;
}

// The child's side: --bootfault_child=<rank>:<nranks>:<hex root info>. Prints one line
// "rc=<init result> ms=<init time> msg=<error text>" and exits 0 if everything after a successful
// init (reduce, destroy) worked.
int ChildMain(const std::string& arg) {
  int rank = 0, nranks = 0;
  char hex[2 * sizeof(HcclRootInfo) + 1] = {};
  if (sscanf(arg.c_str(), "%d:%d:%8216s", &rank, &nranks, hex) != 3) return 3;
  HcclRootInfo info;
  if (!Unhex(hex, &info, sizeof(info))) return 3;
  Outcome o;
  RunRank(rank, nranks, info, &o);
  std::string msg = o.error;
  for (char& c : msg)
    if (c == '\n') c = ' ';
  std::printf("rc=%d ms=%lld msg=%s\n", static_cast<int>(o.init), static_cast<long long>(o.init_ms), msg.c_str());
  std::fflush(stdout);
  return o.error.empty() ? 0 : 1;
}

struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string text;
  int status = -1;
  int rc = -1;
  long long ms = -1;
  std::string msg;
};

Child Spawn(int rank, int nranks, const HcclRootInfo& info) {
  Child c;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  std::string flag = "--bootfault_child=" + std::to_string(rank) + ":" + std::to_string(nranks) + ":" +
                     Hex(&info, sizeof(info));
  char* argv[] = {const_cast<char*>(g_self.c_str()), const_cast<char*>(flag.c_str()), nullptr};
  if (posix_spawn(&c.pid, g_self.c_str(), &fa, nullptr, argv, environ) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  c.out = p[0];
  return c;
}

// Reads every child's output until EOF or `timeout_ms`, SIGKILLs stragglers, reaps all (with
// finish = false: only reads, leaving the children running and unreaped).
void Collect(std::vector<Child>& cs, int timeout_ms, bool finish = true) {
  const int64_t end = NowMs() + timeout_ms;
  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<Child*> who;
    for (auto& c : cs)
      if (c.out >= 0) {
        pfds.push_back({c.out, POLLIN, 0});
        who.push_back(&c);
      }
    const int64_t left = end - NowMs();
    if (pfds.empty() || left <= 0) break;
    if (poll(pfds.data(), pfds.size(), static_cast<int>(left)) <= 0) continue;
    for (size_t i = 0; i < pfds.size(); ++i) {
      if (!pfds[i].revents) continue;
      char buf[4096];
      ssize_t n = read(who[i]->out, buf, sizeof(buf));
      if (n > 0) {
        who[i]->text.append(buf, static_cast<size_t>(n));
      } else {
        close(who[i]->out);
        who[i]->out = -1;
      }
    }
  }
  if (!finish) return;
  for (auto& c : cs) {
    if (c.out >= 0) {
      close(c.out);
      c.out = -1;
      if (c.pid > 0) kill(c.pid, SIGKILL);
    }
    if (c.pid > 0) waitpid(c.pid, &c.status, 0);
    char msg[4096] = {};
    if (sscanf(c.text.c_str(), "rc=%d ms=%lld msg=%4095[^\n]", &c.rc, &c.ms, msg) >= 2) c.msg = msg;
  }
}

// Every child failed init with `code` within the connect timeout and its message contains `needle`.
void ExpectAllFail(const std::vector<Child>& cs, HcclResult code, const std::string& needle, int64_t limit_ms) {
  for (size_t i = 0; i < cs.size(); ++i) {
    SCOPED_TRACE("child " + std::to_string(i) + " output: " + cs[i].text);
    EXPECT_EQ(cs[i].rc, static_cast<int>(code));
    EXPECT_NE(cs[i].msg.find(needle), std::string::npos) << "message does not say '" << needle << "'";
    EXPECT_GE(cs[i].ms, 0);
    EXPECT_LT(cs[i].ms, limit_ms);
  }
}

TEST(BootstrapHardening, DuplicateRankIdFailsEveryRank) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<Child> cs;
  for (int r : {0, 1, 1, 2}) cs.push_back(Spawn(r, 4, info));  // rank 1 twice, rank 3 never
  Collect(cs, kConnectTimeoutMs + 5000);
  ExpectAllFail(cs, HCCL_E_PARA, "duplicate rank id 1", kConnectTimeoutMs);
}

TEST(BootstrapHardening, DifferentNRanksFailsEveryRank) {
  HcclRootInfo info;
  ASSERT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<Child> cs;
  for (int r = 0; r < 4; ++r) cs.push_back(Spawn(r, r == 2 ? 5 : 4, info));
  Collect(cs, kConnectTimeoutMs + 5000);
  ExpectAllFail(cs, HCCL_E_PARA, "disagree on nRanks", kConnectTimeoutMs);
}

// Forms and destroys a 2-rank communicator (threads) with `info`, so its root server is done.
void UseUp(const HcclRootInfo& info) {
  std::vector<Outcome> o(2);
  std::thread a(RunRank, 0, 2, std::cref(info), &o[0]), b(RunRank, 1, 2, std::cref(info), &o[1]);
  a.join();
  b.join();
  ASSERT_EQ(o[0].error, "");
  ASSERT_EQ(o[1].error, "");
}

TEST(BootstrapHardening, RootInfoWhoseListenerIsGoneTimesOut) {
  constexpr int kShortMs = 1500;
  HcclRootInfo stale;
  ASSERT_EQ(HcclGetRootInfo(&stale), HCCL_SUCCESS);
  UseUp(stale);
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", std::to_string(kShortMs).c_str(), 1);  // inherited by the children
  std::vector<Child> cs;
  for (int r = 0; r < 4; ++r) cs.push_back(Spawn(r, 4, stale));
  Collect(cs, kShortMs + 5000);
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", std::to_string(kConnectTimeoutMs).c_str(), 1);
  ExpectAllFail(cs, HCCL_E_TIMEOUT, "cannot reach the root", kShortMs + 1000);
}

TEST(BootstrapHardening, RootInfoFromAnotherRunIsRefusedByTheNewRoot) {
  // Run 1's root info X on a port P in a fixed range; run 1 completes, X's listener closes.
  const int base = FreeTcpPort();
  setenv("HCCL_IF_BASE_PORT", std::to_string(base).c_str(), 1);
  HcclRootInfo stale;
  ASSERT_EQ(HcclGetRootInfo(&stale), HCCL_SUCCESS);
  UseUp(stale);
  // Run 2's root gets the same port (a fresh token): stale ranks now knock on a live stranger.
  setenv("HCCL_IF_BASE_PORT", std::to_string(RootPort(stale)).c_str(), 1);
  HcclRootInfo live;
  const HcclResult got = HcclGetRootInfo(&live);
  unsetenv("HCCL_IF_BASE_PORT");
  ASSERT_EQ(got, HCCL_SUCCESS);
  ASSERT_EQ(RootPort(live), RootPort(stale)) << "the port was taken by someone else meanwhile";
  // The stale ranks first (run 2's root serves until its own ranks have joined), then run 2.
  std::vector<Child> stale_ranks;
  for (int r = 0; r < 2; ++r) stale_ranks.push_back(Spawn(r, 2, stale));
  Collect(stale_ranks, kConnectTimeoutMs + 5000);
  // Refused explicitly, naming the live root (what it serves and its pid), not by a bare close.
  ExpectAllFail(stale_ranks, HCCL_E_REMOTE, "refused this rank's token: it serves root info", kConnectTimeoutMs);
  ExpectAllFail(stale_ranks, HCCL_E_REMOTE, "pid " + std::to_string(getpid()) + " on host", kConnectTimeoutMs);
  EXPECT_NE(ReadLog().find("wrong token (rank "), std::string::npos)
      << "the live root did not log the refused stale ranks";
  std::vector<Child> run2;
  for (int r = 0; r < 2; ++r) run2.push_back(Spawn(r, 2, live));
  Collect(run2, kConnectTimeoutMs + 5000);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(run2[i].rc, 0) << "run 2 rank " << i << ": " << run2[i].text;
    EXPECT_TRUE(WIFEXITED(run2[i].status) && WEXITSTATUS(run2[i].status) == 0) << run2[i].text;
  }
}

// ---- issue 14: two jobs from one rank table never mix; the root dying during init ----

// --bootfault_rt=<rank>:<value>:<rank table path>: HcclCommInitClusterInfo, a Reduce (sum, root 0)
// of kCount floats equal to <value>, destroy. Prints "rc=<init> ms=<init ms> msg=..." and a second
// line "sum=<rank 0's result[0], else 0>".
int RankTableChildMain(const std::string& arg) {
  int rank = 0;
  float value = 0;
  char path[4096] = {};
  if (sscanf(arg.c_str(), "%d:%f:%4095s", &rank, &value, path) != 3) return 3;
  aclrtSetDevice(rank % 8);
  HcclComm comm = nullptr;
  const int64_t t0 = NowMs();
  const HcclResult rc = HcclCommInitClusterInfo(path, static_cast<uint32_t>(rank), &comm);
  const int64_t ms = NowMs() - t0;
  std::string msg;
  float sum = -1;
  if (rc != HCCL_SUCCESS) {
    msg = aclGetRecentErrMsg();
  } else {
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    {
      DevBuf send, recv;
      if (!send.Alloc(kCount * 4, value) || !recv.Alloc(kCount * 4, 0.0f)) {
        msg = "aclrtMalloc failed";
      } else if (HcclReduce(send.ptr, recv.ptr, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, stream) !=
                     HCCL_SUCCESS ||
                 aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
        msg = std::string("HcclReduce failed: ") + aclGetRecentErrMsg();
      } else {
        sum = rank == 0 ? recv.At(0) : 0.0f;
      }
    }
    aclrtDestroyStream(stream);
    HcclCommDestroy(comm);
  }
  for (char& c : msg)
    if (c == '\n') c = ' ';
  std::printf("rc=%d ms=%lld msg=%s\nsum=%g\n", static_cast<int>(rc), static_cast<long long>(ms), msg.c_str(), sum);
  std::fflush(stdout);
  return 0;
}

// Spawns a child with extra environment variables (NAME=value; an empty value unsets NAME).
Child SpawnWith(const std::vector<std::string>& args, const std::vector<std::string>& env_over) {
  Child c;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return c;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool overridden = false;
    for (const auto& o : env_over) overridden |= kv.compare(0, o.find('=') + 1, o, 0, o.find('=') + 1) == 0;
    if (!overridden) env.push_back(kv);
  }
  for (const auto& o : env_over)
    if (o.back() != '=') env.push_back(o);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> a = args;
  a.insert(a.begin(), g_self);
  for (auto& x : a) argv.push_back(x.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  if (posix_spawn(&c.pid, g_self.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  c.out = p[0];
  return c;
}

struct RtRank {
  char job;   // 'A' or 'B'
  int rank;
  float value;
};

// One server, four devices, host_ip 127.0.0.1: a file both jobs start from.
std::string WriteRankTable() {
  const std::string path = "/tmp/hostccl-bootfault-rt-" + std::to_string(getpid()) + ".json";
  std::ofstream f(path);
  f << R"({"status": "completed", "version": "1.0", "server_count": "1", "server_list": [{"server_id": "s0", )"
       R"("host_ip": "127.0.0.1", "device": [{"device_id": "0", "rank_id": "0"}, {"device_id": "1", "rank_id": "1"}, )"
       R"({"device_id": "2", "rank_id": "2"}, {"device_id": "3", "rank_id": "3"}]}]})";
  return path;
}

// A port of its own for each test (other test processes run side by side).
std::string TestPort() { return std::to_string(FreeTcpPort()); }

Child SpawnRt(const RtRank& r, const std::string& path, const std::string& port, const std::string& job_env) {
  char v[32];
  snprintf(v, sizeof(v), "%g", r.value);
  return SpawnWith({"--bootfault_rt=" + std::to_string(r.rank) + ":" + v + ":" + path},
                   {"HCCL_IF_BASE_PORT=" + port, "HOSTCCL_CONNECT_TIMEOUT_MS=15000", job_env});
}

float ParseSum(const Child& c) {
  size_t at = c.text.find("\nsum=");
  return at == std::string::npos ? -2.0f : std::strtof(c.text.c_str() + at + 5, nullptr);
}

// Every rank of each job either returned that job's own sum (A: 1+2+3+4, B: 101+...+104) or failed
// naming the conflict; no rank returned success with another sum (a mix of both jobs' data).
// With a job id each (as hcclrun, mpirun, srun, torchrun give), both must form on their own.
void ExpectNoMix(const std::vector<RtRank>& ranks, std::vector<Child>& cs, bool must_succeed) {
  for (size_t i = 0; i < cs.size(); ++i) {
    SCOPED_TRACE(std::string("job ") + ranks[i].job + " rank " + std::to_string(ranks[i].rank) + ": " + cs[i].text);
    const float want = ranks[i].rank != 0 ? 0.0f : ranks[i].job == 'A' ? 10.0f : 410.0f;
    if (cs[i].rc == 0) {
      EXPECT_EQ(ParseSum(cs[i]), want) << "a rank returned success with a mixed result";
      EXPECT_EQ(cs[i].msg, "");
    } else {
      EXPECT_FALSE(must_succeed);
      EXPECT_TRUE(cs[i].msg.find("another") != std::string::npos || cs[i].msg.find("duplicate") != std::string::npos)
          << "the failure does not name the conflict";
    }
  }
}

// Issue 14 item 1, the interleaving that merged two jobs on the old code: job A's ranks 0,1 and
// job B's ranks 2,3 first (on the old code they completed A's root table together), then B's 0,1
// and A's 2,3 (which formed a second mixed communicator at B's rank 0). With job ids, B's ranks are
// told "another job's root" and wait; B's rank 0 waits for the port; each job gets its own sum.
TEST(BootstrapHardening, TwoJobsFromOneRankTableNeverMixStaged) {
  const std::string path = WriteRankTable();
  const std::string port = TestPort();
  std::vector<RtRank> first = {{'A', 0, 1}, {'A', 1, 2}, {'B', 2, 103}, {'B', 3, 104}};
  std::vector<RtRank> second = {{'B', 0, 101}, {'B', 1, 102}, {'A', 2, 3}, {'A', 3, 4}};
  std::vector<Child> cs;
  for (const auto& r : first)
    cs.push_back(SpawnRt(r, path, port, std::string("HOSTCCL_JOB_ID=job-") + r.job + "-" + std::to_string(getpid())));
  // The old code finishes the first wave (mixed) quickly; the new one holds it until its ranks come.
  Collect(cs, 2500, /*finish=*/false);
  for (const auto& r : second)
    cs.push_back(SpawnRt(r, path, port, std::string("HOSTCCL_JOB_ID=job-") + r.job + "-" + std::to_string(getpid())));
  Collect(cs, 40000);
  std::vector<RtRank> all = first;
  all.insert(all.end(), second.begin(), second.end());
  ExpectNoMix(all, cs, /*must_succeed=*/true);
  unlink(path.c_str());
}

// The same two jobs started at the same moment (each with its job id): each forms its own.
TEST(BootstrapHardening, TwoJobsFromOneRankTableNeverMixTogether) {
  const std::string path = WriteRankTable();
  const std::string port = TestPort();
  std::vector<RtRank> all = {{'A', 0, 1},   {'B', 0, 101}, {'A', 1, 2}, {'B', 1, 102},
                             {'B', 2, 103}, {'A', 2, 3},   {'B', 3, 104}, {'A', 3, 4}};
  std::vector<Child> cs;
  for (const auto& r : all)
    cs.push_back(SpawnRt(r, path, port, std::string("HOSTCCL_JOB_ID=job-") + r.job + "-" + std::to_string(getpid())));
  Collect(cs, 40000);
  ExpectNoMix(all, cs, /*must_succeed=*/true);
  unlink(path.c_str());
}

// Without any launcher job id the two jobs are indistinguishable by their bytes; a second rank 0
// that finds the port held by a root of the same token claims rank 0 there, so both rank 0s fail
// naming the duplicate (and so would every rank of the first job that joined).
TEST(BootstrapHardening, TwoRankZerosWithoutJobIdBothFail) {
  const std::string path = WriteRankTable();
  const std::string port = TestPort();
  const std::vector<std::string> no_id = {"HOSTCCL_JOB_ID=", "PMIX_NAMESPACE=", "OMPI_MCA_ess_base_jobid=",
                                          "TORCHELASTIC_RUN_ID=", "SLURM_JOB_ID="};
  auto spawn = [&](int rank, float v) {
    std::vector<std::string> env = no_id;
    env.push_back("HCCL_IF_BASE_PORT=" + port);
    char buf[32];
    snprintf(buf, sizeof(buf), "%g", v);
    return SpawnWith({"--bootfault_rt=" + std::to_string(rank) + ":" + buf + ":" + path}, env);
  };
  std::vector<Child> cs;
  cs.push_back(spawn(0, 1));
  // Wait until the first rank 0's root listens on the port.
  bool listening = false;
  for (int64_t end = NowMs() + 5000; !listening && NowMs() < end;) {
    listening = SomeoneListensOn(static_cast<uint16_t>(std::stoi(port)));
    if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(listening);
  cs.push_back(spawn(0, 101));
  Collect(cs, kConnectTimeoutMs + 5000);
  for (auto& c : cs) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(c.rc, static_cast<int>(HCCL_E_PARA));
    EXPECT_NE(c.msg.find("duplicate rank id 0"), std::string::npos);
    EXPECT_LT(c.ms, kConnectTimeoutMs);
  }
  EXPECT_NE(cs[1].msg.find("held by another root of this same rank table"), std::string::npos) << cs[1].msg;
  unlink(path.c_str());
}

// --bootfault_root: HcclGetRootInfo, prints its hex, then serves until killed.
int RootChildMain() {
  HcclRootInfo info;
  if (HcclGetRootInfo(&info) != HCCL_SUCCESS) return 3;
  std::printf("%s\n", Hex(&info, sizeof(info)).c_str());
  std::fflush(stdout);
  for (;;) pause();
}

// Issue 14 item 7: the root process dies while ranks wait at it. They must say the root stopped
// (exited or was killed), not "wrong token or a root info from another run".
TEST(BootstrapHardening, RootKilledDuringInitIsReportedAsSuch) {
  Child root = SpawnWith({"--bootfault_root"}, {});
  ASSERT_GT(root.pid, 0);
  std::string line;
  for (int64_t end = NowMs() + 10000; line.find('\n') == std::string::npos && NowMs() < end;) {
    pollfd p{root.out, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[16384];
      ssize_t n = read(root.out, buf, sizeof(buf));
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
  }
  HcclRootInfo info;
  ASSERT_TRUE(Unhex(line.substr(0, line.find('\n')), &info, sizeof(info))) << line;
  std::vector<Child> cs;
  for (int r = 0; r < 2; ++r) cs.push_back(Spawn(r, 3, info));  // rank 2 never comes: they wait
  // The root dies once both ranks are connected to it. (A fixed 700 ms lost that race under
  // ASan on a loaded host: the ranks had not connected yet and said they could not reach it.)
  for (int64_t end = NowMs() + 10000; LoopbackSockets(RootPort(info), "01") < 2 && NowMs() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // their hellos read: they wait
  kill(root.pid, SIGKILL);
  waitpid(root.pid, nullptr, 0);
  close(root.out);
  Collect(cs, kConnectTimeoutMs + 5000);
  ExpectAllFail(cs, HCCL_E_REMOTE, "the root process exited, was killed or stopped serving during init",
                kConnectTimeoutMs);
  for (auto& c : cs) EXPECT_EQ(c.msg.find("wrong token"), std::string::npos) << c.msg;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--bootfault_child=", 18) == 0) {
      unsetenv("HOSTCCL_LOG_FILE");  // children log to stderr
      return ChildMain(argv[i] + 18);
    }
    if (strncmp(argv[i], "--bootfault_rt=", 15) == 0) {
      unsetenv("HOSTCCL_LOG_FILE");
      return RankTableChildMain(argv[i] + 15);
    }
    if (strcmp(argv[i], "--bootfault_root") == 0) {
      unsetenv("HOSTCCL_LOG_FILE");
      return RootChildMain();
    }
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) return 2;
  g_self = self;
  g_log_path = "/tmp/hostccl-bootfault-" + std::to_string(getpid()) + ".log";
  unlink(g_log_path.c_str());
  setenv("HOSTCCL_LOG_FILE", g_log_path.c_str(), 1);  // before the first library call: logs go there
  setenv("HCCL_IF_IP", "127.0.0.1", 1);
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", std::to_string(kConnectTimeoutMs).c_str(), 1);
  setenv("HOSTCCL_EXEC_TIMEOUT_MS", "20000", 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (rc == 0 && !getenv("BOOTFAULT_KEEP_LOG")) unlink(g_log_path.c_str());  // kept for a failing run
  return rc;
}
