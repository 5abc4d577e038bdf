// Root server + Rendezvous with ranks as threads over loopback: success, hostile clients,
// disagreeing ranks, duplicates and a missing rank.
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/root_wire.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

class RendezvousTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("HCCL_IF_IP", "127.0.0.1", 1);
    unsetenv("HCCL_IF_BASE_PORT");
    setenv("HOSTCCL_CONNECT_TIMEOUT_MS", "10000", 1);
  }
  void TearDown() override {
    unsetenv("HCCL_IF_IP");
    unsetenv("HOSTCCL_CONNECT_TIMEOUT_MS");
  }
  std::unique_ptr<RootServer> Start() {
    std::unique_ptr<RootServer> s;
    Status st = StartRootServer(3, &s);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }
  // Runs `ranks[i]` claiming rank ids[i] with nranks ns[i]; returns statuses and tables.
  void RunRanks(const RootInfo& root, const std::vector<uint32_t>& ids, const std::vector<uint32_t>& ns, int64_t ms,
                std::vector<Status>* sts, std::vector<std::vector<RankInfo>>* tables) {
    size_t k = ids.size();
    sts->assign(k, Status());
    tables->assign(k, {});
    std::vector<std::thread> th;
    for (size_t i = 0; i < k; ++i) {
      th.emplace_back([&, i] {
        RankInfo me;
        me.rank = ids[i];
        me.device = static_cast<int32_t>(i);
        me.pid = 1000 + static_cast<uint32_t>(i);
        me.node_id = LocalNodeId();
        me.proc_id = LocalProcId() + "/t" + std::to_string(i);
        me.data_addr = "127.0.0.1:" + std::to_string(20000 + i);
        (*sts)[i] = Rendezvous(root, ns[i], me, Deadline::AfterMs(ms), &(*tables)[i]);
      });
    }
    for (auto& t : th) t.join();
  }
};

net::Fd Connect(const RootInfo& r) {
  net::SockAddr a;
  EXPECT_TRUE(net::MakeSockAddr(r.ip, r.port, &a).ok());
  net::Fd fd;
  EXPECT_TRUE(net::ConnectWithRetry(a, Deadline::AfterMs(5000), &fd).ok());
  return fd;
}

TEST_F(RendezvousTest, RanksAsThreadsGetTheTable) {
  auto server = Start();
  const RootInfo& root = server->info();
  EXPECT_EQ(root.ip, "127.0.0.1");
  EXPECT_EQ(root.identifier.rfind("127.0.0.1_" + std::to_string(root.port) + "_3_", 0), 0u) << root.identifier;
  // Through the 4108-byte form, as clients would pass it around.
  uint8_t bytes[kRootInfoBytes];
  EncodeRootInfo(root, bytes);
  RootInfo decoded;
  ASSERT_TRUE(DecodeRootInfo(bytes, &decoded).ok());
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(decoded, {4, 2, 0, 3, 1, 5}, std::vector<uint32_t>(6, 6), 10000, &sts, &tables);
  for (size_t i = 0; i < sts.size(); ++i) {
    ASSERT_TRUE(sts[i].ok()) << sts[i].ToString();
    ASSERT_EQ(tables[i].size(), 6u);
    EXPECT_EQ(tables[i][4].data_addr, "127.0.0.1:20000");
    EXPECT_EQ(tables[i][5].device, 5);
  }
}

TEST_F(RendezvousTest, HostileClientsAreDroppedWhileRanksSucceed) {
  auto server = Start();
  RootInfo root = server->info();
  std::vector<net::Fd> strays;
  strays.push_back(Connect(root));  // half-open: never sends
  net::Fd garbage = Connect(root);
  std::string junk(200, 'x');
  ASSERT_TRUE(net::WriteFully(garbage.get(), junk.data(), junk.size(), Deadline::AfterMs(1000), "t").ok());
  strays.push_back(std::move(garbage));
  net::Fd slow = Connect(root);  // a header promising a payload that never comes
  std::string partial = MakeRootFrame(static_cast<uint16_t>(net::FrameType::kRootHello), 0, std::string(100, 'a')).substr(0, 60);
  ASSERT_TRUE(net::WriteFully(slow.get(), partial.data(), partial.size(), Deadline::AfterMs(1000), "t").ok());
  strays.push_back(std::move(slow));
  net::Fd huge = Connect(root);  // a header announcing an oversize payload
  std::string big = MakeRootFrame(static_cast<uint16_t>(net::FrameType::kRootHello), 0, "").substr(0, 48);
  net::PutU64(reinterpret_cast<uint8_t*>(big.data()) + 8, 1u << 20);
  ASSERT_TRUE(net::WriteFully(huge.get(), big.data(), big.size(), Deadline::AfterMs(1000), "t").ok());
  strays.push_back(std::move(huge));
  // A rank holding a root info from another run (same address, wrong token). It is answered at
  // once, naming the root, while the server still serves (before the real ranks complete it): an
  // explicit refusal, not a close, so it never depends on when the server finishes.
  RootInfo stale = root;
  stale.token[0] ^= 0xff;
  Status stale_st;
  {
    RankInfo me;
    me.rank = 0;
    me.pid = 4242;
    me.node_id = "strangerhost/boot";
    std::vector<RankInfo> t;
    auto s0 = std::chrono::steady_clock::now();
    stale_st = Rendezvous(stale, 3, me, Deadline::AfterMs(10000), &t);
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - s0).count(), 5000);
  }
  EXPECT_EQ(stale_st.code(), Code::kRemote) << stale_st.ToString();
  EXPECT_NE(stale_st.message().find("refused this rank's token: it serves root info " + root.identifier),
            std::string::npos) << stale_st.message();
  EXPECT_NE(stale_st.message().find("pid " + std::to_string(getpid())), std::string::npos) << stale_st.message();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(root, {0, 1, 2}, {3, 3, 3}, 10000, &sts, &tables);
  for (auto& s : sts) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count(), 5000);
}

// Issue 14 item 4: 1,100 idle connections (more than the 1,024 pending slots) must not lock the
// real ranks out: the oldest unauthenticated connections are evicted to make room.
TEST_F(RendezvousTest, IdleConnectionsCannotLockRanksOut) {
  constexpr int kIdle = 1100;
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlim_t need = 2 * kIdle + 256;  // both ends of every idle connection live in this process
  if (lim.rlim_cur < need) {
    rlimit raised = lim;
    raised.rlim_cur = std::min<rlim_t>(need, lim.rlim_max);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &raised), 0);
    if (raised.rlim_cur < need) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << lim.rlim_max << " is below " << need;
  }
  {
    auto server = Start();
    RootInfo root = server->info();
    std::vector<net::Fd> idle;
    for (int i = 0; i < kIdle; ++i) {
      idle.push_back(Connect(root));
      ASSERT_TRUE(idle.back().valid()) << "idle connection " << i;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server has accepted them all
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Status> sts;
    std::vector<std::vector<RankInfo>> tables;
    RunRanks(root, {0, 1, 2}, {3, 3, 3}, 10000, &sts, &tables);
    for (auto& s : sts) EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count(), 5000);
    // The oldest idle connection was evicted (closed by the server), not the ranks.
    char b;
    pollfd p{idle.front().get(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
    EXPECT_LE(::recv(idle.front().get(), &b, 1, MSG_DONTWAIT), 0);
  }
  setrlimit(RLIMIT_NOFILE, &lim);
}

// The same at a common descriptor limit (ulimit -n 256 in the root's process), with the 1,100 idle
// connections held by another process: the root keeps strangers to a quarter of its descriptors
// (evicting the oldest), so neither accept() nor the ranks' own sockets run out.
TEST_F(RendezvousTest, IdleConnectionsAtALowFdLimitCannotLockRanksOut) {
  constexpr int kIdle = 1100;
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  pid_t child = fork();  // before any thread of this test process exists
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit big{4096, 4096};
    setrlimit(RLIMIT_NOFILE, &big);
    uint16_t port = 0;
    if (read(to_child[0], &port, sizeof(port)) != sizeof(port)) _exit(2);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int opened = 0;
    for (int i = 0; i < kIdle; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (fd < 0) break;
      connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));  // in progress; never sends
      ++opened;
    }
    usleep(500 * 1000);  // the handshakes complete
    char done = opened == kIdle ? 'y' : 'n';
    if (write(from_child[1], &done, 1) != 1) _exit(2);
    for (;;) pause();
  }
  close(to_child[0]);
  close(from_child[1]);
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  rlimit low = lim;
  low.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<Status> sts;
  {
    auto server = Start();
    RootInfo root = server->info();
    ASSERT_EQ(write(to_child[1], &root.port, sizeof(root.port)), static_cast<ssize_t>(sizeof(root.port)));
    char done = 0;
    EXPECT_EQ(read(from_child[0], &done, 1), 1);
    EXPECT_EQ(done, 'y') << "the helper could not open " << kIdle << " connections";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::vector<RankInfo>> tables;
    RunRanks(root, {0, 1, 2}, {3, 3, 3}, 10000, &sts, &tables);
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count(), 5000);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(to_child[1]);
  close(from_child[0]);
  setrlimit(RLIMIT_NOFILE, &lim);
  for (auto& s : sts) EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RendezvousTest, NranksDisagreementFailsEveryone) {
  auto server = Start();
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(server->info(), {0, 1, 2}, {3, 4, 3}, 10000, &sts, &tables);
  for (auto& s : sts) {
    EXPECT_EQ(s.code(), Code::kPara) << s.ToString();
    EXPECT_NE(s.message().find("disagree on nRanks"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("passed 4"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("passed 3"), std::string::npos) << s.message();
  }
}

TEST_F(RendezvousTest, DuplicateRankFailsEveryone) {
  auto server = Start();
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(server->info(), {1, 1, 0}, {3, 3, 3}, 10000, &sts, &tables);
  int dup_msgs = 0;
  for (auto& s : sts) {
    EXPECT_EQ(s.code(), Code::kPara) << s.ToString();
    dup_msgs += s.message().find("duplicate rank id 1") != std::string::npos;
  }
  EXPECT_EQ(dup_msgs, 3);
}

TEST_F(RendezvousTest, MissingRankTimesOutNamingIt) {
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", "700", 1);
  auto server = Start();
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  auto t0 = std::chrono::steady_clock::now();
  RunRanks(server->info(), {0, 2}, {4, 4}, 700, &sts, &tables);
  for (auto& s : sts) {
    EXPECT_EQ(s.code(), Code::kTimeout) << s.ToString();
    EXPECT_NE(s.message().find("missing ranks 1, 3"), std::string::npos) << s.message();
  }
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count(), 4000);
}

TEST_F(RendezvousTest, NoRootServerTimesOut) {
  RootInfo root;
  root.ip = "127.0.0.1";
  {
    auto s = Start();
    root = s->info();
  }  // destroyed: nothing listens there any more
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(root, {0}, {2}, 300, &sts, &tables);
  EXPECT_EQ(sts[0].code(), Code::kTimeout) << sts[0].ToString();
  EXPECT_NE(sts[0].message().find("cannot reach the root 127.0.0.1:"), std::string::npos) << sts[0].message();
}

TEST_F(RendezvousTest, BasePortRangeAndAdoption) {
  // A base whose first two ports nobody else holds (other test runs may share this host): a takes
  // the base, b finds it taken and uses the next one.
  std::unique_ptr<RootServer> a, b;
  int base = 0;
  for (int attempt = 0; attempt < 20 && base == 0; ++attempt) {
    const int candidate = 40000 + static_cast<int>((static_cast<unsigned>(getpid()) * 7u + attempt * 997u) % 20000u);
    setenv("HCCL_IF_BASE_PORT", std::to_string(candidate).c_str(), 1);
    a.reset();
    b.reset();
    ASSERT_TRUE(StartRootServer(0, &a).ok());
    if (a->info().port != candidate) continue;  // taken by someone else: another base
    ASSERT_TRUE(StartRootServer(0, &b).ok());
    if (b->info().port == candidate + 1) base = candidate;
  }
  ASSERT_NE(base, 0) << "no base port with two free ports in 20 tries";
  EXPECT_EQ(a->info().port, base);
  EXPECT_EQ(b->info().port, base + 1);
  setenv("HCCL_IF_BASE_PORT", "99", 1);
  std::unique_ptr<RootServer> c;
  EXPECT_EQ(StartRootServer(0, &c).code(), Code::kPara);
  unsetenv("HCCL_IF_BASE_PORT");
  RootInfo root = a->info();
  AdoptRootServer(std::move(a));  // keeps serving without a handle
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(root, {0, 1}, {2, 2}, 10000, &sts, &tables);
  for (auto& s : sts) EXPECT_TRUE(s.ok()) << s.ToString();
  AdoptRootServer(nullptr);  // reaps the finished one
}

TEST_F(RendezvousTest, StartAtExplicitAddress) {
  uint8_t token[16] = {7};
  std::unique_ptr<RootServer> s;
  ASSERT_TRUE(StartRootServerAt("127.0.0.1", 0, token, "hccl_world_group", &s).ok());
  EXPECT_EQ(s->info().identifier, "hccl_world_group");
  EXPECT_EQ(s->info().token[0], 7);
  std::vector<Status> sts;
  std::vector<std::vector<RankInfo>> tables;
  RunRanks(s->info(), {0}, {1}, 5000, &sts, &tables);
  EXPECT_TRUE(sts[0].ok()) << sts[0].ToString();
}

}  // namespace
}  // namespace hostccl::boot
