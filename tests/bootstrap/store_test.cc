// Stores: MemStore, FileStore, TcpStore and PrefixStore share one behavioural suite (set/get/add/
// wait/delete, Get timing out with kTimeout, concurrent Add); the TCP server survives garbage.
#include "bootstrap/store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace hostccl::boot {
namespace {

enum class Kind { kMem, kFile, kTcp, kPrefix };

class StoreTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Kind::kMem:
        store_ = NewMemStore();
        break;
      case Kind::kPrefix:
        store_ = NewPrefixStore("run1", std::shared_ptr<Store>(NewMemStore()));
        break;
      case Kind::kFile: {
        char tmpl[] = "/tmp/hostccl_store_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        ASSERT_TRUE(NewFileStore(dir_ + "/sub/dir", &store_).ok());
        break;
      }
      case Kind::kTcp: {
        ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server_).ok());
        ASSERT_TRUE(
            ConnectTcpStore("127.0.0.1", server_->port(), Deadline::AfterMs(5000), &store_).ok());
        break;
      }
    }
  }
  void TearDown() override {
    store_.reset();
    server_.reset();
    if (!dir_.empty()) (void)!system(("rm -rf '" + dir_ + "'").c_str());
  }
  // A second handle on the same store (another "rank").
  std::unique_ptr<Store> Peer() {
    std::unique_ptr<Store> peer;
    if (GetParam() == Kind::kTcp) {
      EXPECT_TRUE(
          ConnectTcpStore("127.0.0.1", server_->port(), Deadline::AfterMs(5000), &peer).ok());
    } else if (GetParam() == Kind::kFile) {
      EXPECT_TRUE(NewFileStore(dir_ + "/sub/dir", &peer).ok());
    }
    return peer;  // null: share store_ (in-process stores)
  }
  Store& PeerOr(std::unique_ptr<Store>& p) { return p ? *p : *store_; }

  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<Store> store_;
  std::string dir_;
};

TEST_P(StoreTest, SetGetOverwriteDelete) {
  std::string v;
  ASSERT_TRUE(store_->Set("a/b c", std::string("x\0y", 3)).ok());
  ASSERT_TRUE(store_->Get("a/b c", Deadline::AfterMs(1000), &v).ok());
  EXPECT_EQ(v, std::string("x\0y", 3));
  ASSERT_TRUE(store_->Set("a/b c", "second").ok());
  ASSERT_TRUE(store_->Get("a/b c", Deadline::AfterMs(1000), &v).ok());
  EXPECT_EQ(v, "second");
  bool present = false;
  ASSERT_TRUE(store_->Check("a/b c", &present).ok());
  EXPECT_TRUE(present);
  ASSERT_TRUE(store_->Delete("a/b c").ok());
  ASSERT_TRUE(store_->Check("a/b c", &present).ok());
  EXPECT_FALSE(present);
  ASSERT_TRUE(store_->Set("empty", "").ok());
  ASSERT_TRUE(store_->Get("empty", Deadline::AfterMs(1000), &v).ok());
  EXPECT_EQ(v, "");
  std::string big(1 << 20, 'z');
  ASSERT_TRUE(store_->Set(std::string(300, 'k'), big).ok());  // long key, 1 MiB value
  ASSERT_TRUE(store_->Get(std::string(300, 'k'), Deadline::AfterMs(2000), &v).ok());
  EXPECT_EQ(v, big);
}

TEST_P(StoreTest, GetTimesOutNamingKey) {
  std::string v;
  auto start = std::chrono::steady_clock::now();
  Status st = store_->Get("never", Deadline::AfterMs(200), &v);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("never"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(store_->Wait({"never"}, Deadline::AfterMs(50)).code(), Code::kTimeout);
}

TEST_P(StoreTest, GetWaitsForAnotherRank) {
  auto peer = Peer();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(PeerOr(peer).Set("late", "value").ok());
    EXPECT_TRUE(PeerOr(peer).Set("late2", "v2").ok());
  });
  std::string v;
  Status st = store_->Get("late", Deadline::AfterMs(10000), &v);
  setter.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(v, "value");
  EXPECT_TRUE(store_->Wait({"late", "late2"}, Deadline::AfterMs(5000)).ok());
}

TEST_P(StoreTest, AddIsAtomicAcrossRanks) {
  int64_t v = 0;
  ASSERT_TRUE(store_->Add("ctr", 5, &v).ok());
  EXPECT_EQ(v, 5);
  ASSERT_TRUE(store_->Add("ctr", -2, &v).ok());
  EXPECT_EQ(v, 3);
  std::vector<std::unique_ptr<Store>> peers;
  for (int i = 0; i < 4; ++i) peers.push_back(Peer());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) EXPECT_TRUE(PeerOr(peers[i]).Add("ctr", 1, nullptr).ok());
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(store_->Add("ctr", 0, &v).ok());
  EXPECT_EQ(v, 203);
  std::string text;
  ASSERT_TRUE(store_->Get("ctr", Deadline::AfterMs(1000), &text).ok());
  EXPECT_EQ(text, "203");
  ASSERT_TRUE(store_->Set("word", "abc").ok());
  EXPECT_EQ(store_->Add("word", 1, &v).code(), Code::kPara);
}

TEST_P(StoreTest, RejectsBadKeysAndValues) {
  EXPECT_EQ(store_->Set("", "x").code(), Code::kPara);
  EXPECT_EQ(store_->Set(std::string(kMaxStoreKeyBytes + 1, 'k'), "x").code(), Code::kPara);
  EXPECT_EQ(store_->Set("k", std::string(kMaxStoreValueBytes + 1, 'v')).code(), Code::kPara);
}

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  static const char* const kNames[] = {"Mem", "File", "Tcp", "Prefix"};
  return kNames[static_cast<int>(info.param)];
}
INSTANTIATE_TEST_SUITE_P(All, StoreTest,
                         ::testing::Values(Kind::kMem, Kind::kFile, Kind::kTcp, Kind::kPrefix),
                         KindName);

TEST(PrefixStore, SeparatesNamespaces) {
  std::shared_ptr<Store> base(NewMemStore());
  auto a = NewPrefixStore("a", base), b = NewPrefixStore("b", base);
  ASSERT_TRUE(a->Set("k", "1").ok());
  bool present = true;
  ASSERT_TRUE(b->Check("k", &present).ok());
  EXPECT_FALSE(present);
  std::string v;
  ASSERT_TRUE(base->Get("a/k", Deadline::AfterMs(100), &v).ok());
  EXPECT_EQ(v, "1");
}

int RawConnect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  return fd;
}

TEST(TcpStore, GarbageAndHalfOpenClientsDoNotHurtTheServer) {
  std::unique_ptr<TcpStoreServer> server;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server).ok());
  std::unique_ptr<Store> good;
  ASSERT_TRUE(ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &good).ok());
  ASSERT_TRUE(good->Set("k", "v").ok());
  // Garbage bytes, an oversize length with a valid magic, and a silent half-open client.
  int garbage = RawConnect(server->port());
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(send(garbage, junk, sizeof(junk), MSG_NOSIGNAL), 0);
  int oversize = RawConnect(server->port());
  const unsigned char big[13] = {'H', 'C', 'S', '1', 1, 5, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(send(oversize, big, sizeof(big), MSG_NOSIGNAL), 13);
  int silent = RawConnect(server->port());
  const unsigned char partial[5] = {'H', 'C', 'S', '1', 2};
  ASSERT_EQ(send(silent, partial, sizeof(partial), MSG_NOSIGNAL), 5);
  // The server closes the two bad connections (recv sees EOF) and keeps serving.
  for (int fd : {garbage, oversize}) {
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buf[16];
    EXPECT_EQ(recv(fd, buf, sizeof(buf), 0), 0);
    close(fd);
  }
  std::string v;
  ASSERT_TRUE(good->Get("k", Deadline::AfterMs(2000), &v).ok());
  EXPECT_EQ(v, "v");
  std::unique_ptr<Store> second;
  ASSERT_TRUE(ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &second).ok());
  int64_t n = 0;
  ASSERT_TRUE(second->Add("n", 2, &n).ok());
  EXPECT_EQ(n, 2);
  close(silent);
}

TEST(TcpStore, ClientRetriesUntilServerAppears) {
  // Find a free port, then start the server on it a little after the client began connecting.
  uint16_t port = 0;
  {
    std::unique_ptr<TcpStoreServer> probe;
    ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &probe).ok());
    port = probe->port();
  }
  std::unique_ptr<TcpStoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(StartTcpStoreServer("127.0.0.1", port, &server).ok());
  });
  std::unique_ptr<Store> client;
  Status st = ConnectTcpStore("127.0.0.1", port, Deadline::AfterMs(10000), &client);
  starter.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(client->Set("x", "y").ok());
}

TEST(TcpStore, ConnectTimesOutWithClearError) {
  uint16_t port = 0;
  {
    std::unique_ptr<TcpStoreServer> probe;
    ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &probe).ok());
    port = probe->port();
  }
  std::unique_ptr<Store> client;
  Status st = ConnectTcpStore("127.0.0.1", port, Deadline::AfterMs(300), &client);
  EXPECT_EQ(st.code(), Code::kTcpConnect);
  EXPECT_NE(st.message().find(std::to_string(port)), std::string::npos) << st.message();
}

TEST(TcpStore, ServerGoneFailsClientWithoutHang) {
  std::unique_ptr<TcpStoreServer> server;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server).ok());
  std::unique_ptr<Store> client;
  ASSERT_TRUE(ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &client).ok());
  server.reset();
  std::string v;
  Status st = client->Get("k", Deadline::AfterMs(2000), &v);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(st.code() == Code::kTcpTransfer || st.code() == Code::kTimeout) << st.ToString();
}

}  // namespace
}  // namespace hostccl::boot
