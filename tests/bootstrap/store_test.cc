// Stores: MemStore, FileStore, TcpStore and PrefixStore share one behavioural suite (set/get/add/
// wait/delete, Get timing out with kTimeout, concurrent Add); the TCP server survives garbage.
#include "bootstrap/store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bootstrap/store_auth.h"

namespace hostccl::boot {
namespace {

enum class Kind { kMem, kFile, kTcp, kPrefix, kTcpSecret };
const char kSecret[] = "0123456789abcdef0123456789abcdef";
// The secret a kTcpSecret store and its peers use; "" for the plain TCP store.
const char* SecretFor(Kind k) { return k == Kind::kTcpSecret ? kSecret : ""; }

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
      case Kind::kTcp:
      case Kind::kTcpSecret: {
        const char* secret = SecretFor(GetParam());
        ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server_, secret).ok());
        ASSERT_TRUE(
            ConnectTcpStore("127.0.0.1", server_->port(), Deadline::AfterMs(5000), &store_, secret)
                .ok());
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
    if (GetParam() == Kind::kTcp || GetParam() == Kind::kTcpSecret) {
      EXPECT_TRUE(ConnectTcpStore("127.0.0.1", server_->port(), Deadline::AfterMs(5000), &peer,
                                  SecretFor(GetParam()))
                      .ok());
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
  static const char* const kNames[] = {"Mem", "File", "Tcp", "Prefix", "TcpSecret"};
  return kNames[static_cast<int>(info.param)];
}
INSTANTIATE_TEST_SUITE_P(All, StoreTest,
                         ::testing::Values(Kind::kMem, Kind::kFile, Kind::kTcp, Kind::kPrefix,
                                           Kind::kTcpSecret),
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

// --- The authenticated store (HOSTCCL_STORE_SECRET, hcclrun) ---

std::string Unhex(const char* hex) {
  std::string out;
  for (size_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  return out;
}

TEST(StoreAuth, Sha256AndHmacMatchThePublishedVectors) {
  // FIPS 180-4 examples and the RFC 4231 HMAC-SHA256 test cases 1, 2 and 6.
  EXPECT_EQ(ToHex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(ToHex(Sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(ToHex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(ToHex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(ToHex(HmacSha256(std::string(131, '\xaa'),
                             "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(Unhex("00ff10"), std::string("\x00\xff\x10", 3));
  std::string a, b;
  ASSERT_TRUE(RandomBytes(16, &a).ok());
  ASSERT_TRUE(RandomBytes(16, &b).ok());
  EXPECT_NE(a, b);
  EXPECT_TRUE(ConstantTimeEqual(a, a));
  EXPECT_FALSE(ConstantTimeEqual(a, b));
  EXPECT_FALSE(ConstantTimeEqual(a, a.substr(1)));
}

// Sends one plain request (as any local process could) and returns what came back: "" when the
// server closed the connection without answering.
std::string RawRequest(uint16_t port, uint8_t op, const std::string& key,
                       const std::string& value) {
  int fd = RawConnect(port);
  std::string req = "HCS1";
  req.push_back(static_cast<char>(op));
  for (uint32_t v : {static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size())})
    for (int i = 0; i < 4; ++i) req.push_back(static_cast<char>(v >> (8 * i)));
  req += key + value;
  EXPECT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string reply;
  char buf[8192];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
    if (reply.size() >= 5 &&
        reply.size() >= 5u + (static_cast<size_t>(static_cast<uint8_t>(reply[1])) |
                              static_cast<size_t>(static_cast<uint8_t>(reply[2])) << 8))
      break;  // a whole reply (payloads here are < 64 KiB)
  }
  close(fd);
  return reply;
}

TEST(TcpStoreAuth, ProcessWithoutTheSecretCanNeitherReadNorWrite) {
  std::unique_ptr<TcpStoreServer> server;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server, kSecret).ok());
  std::unique_ptr<Store> rank;
  Status st = ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &rank, kSecret);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::string token(4108, 't');
  ASSERT_TRUE(rank->Set("fromenv/1/root", token).ok());

  // The plain protocol: nothing comes back, neither for a read nor for a write.
  EXPECT_EQ(RawRequest(server->port(), 2, "fromenv/1/root", ""), "");
  EXPECT_EQ(RawRequest(server->port(), 1, "fromenv/1/root", "forged"), "");
  EXPECT_EQ(RawRequest(server->port(), 1, "intruder", "x"), "");
  // Our own client without the secret, or with another one.
  std::unique_ptr<Store> none;
  ASSERT_TRUE(ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &none).ok());
  std::string v;
  st = none->Get("fromenv/1/root", Deadline::AfterMs(2000), &v);
  EXPECT_EQ(st.code(), Code::kTcpTransfer) << st.ToString();
  EXPECT_NE(st.message().find("HOSTCCL_STORE_SECRET"), std::string::npos) << st.message();
  EXPECT_TRUE(v.empty());
  std::unique_ptr<Store> wrong;
  st = ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &wrong,
                       "fedcba9876543210fedcba9876543210");
  EXPECT_EQ(st.code(), Code::kTcpConnect) << st.ToString();
  EXPECT_NE(st.message().find("could not prove"), std::string::npos) << st.message();

  // Nothing was changed, and the rank still works.
  ASSERT_TRUE(rank->Get("fromenv/1/root", Deadline::AfterMs(2000), &v).ok());
  EXPECT_EQ(v, token);
  bool present = true;
  ASSERT_TRUE(rank->Check("intruder", &present).ok());
  EXPECT_FALSE(present);
  std::unique_ptr<Store> second;
  ASSERT_TRUE(
      ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(5000), &second, kSecret).ok());
  int64_t n = 0;
  ASSERT_TRUE(second->Add("fetched", 1, &n).ok());
  EXPECT_EQ(n, 1);
}

TEST(TcpStoreAuth, ClientWithASecretRefusesAStoreThatCannotProveIt) {
  std::unique_ptr<TcpStoreServer> open_server, other;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &open_server).ok());
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &other, "another job's secret, 32 chars!").ok());
  std::unique_ptr<Store> c;
  Status st =
      ConnectTcpStore("127.0.0.1", open_server->port(), Deadline::AfterMs(5000), &c, kSecret);
  EXPECT_EQ(st.code(), Code::kTcpConnect) << st.ToString();
  EXPECT_NE(st.message().find(std::to_string(open_server->port())), std::string::npos);
  st = ConnectTcpStore("127.0.0.1", other->port(), Deadline::AfterMs(5000), &c, kSecret);
  EXPECT_EQ(st.code(), Code::kTcpConnect) << st.ToString();
  EXPECT_NE(st.message().find("could not prove"), std::string::npos) << st.message();
  // A secret that is too short is a parameter error, changing nothing.
  std::unique_ptr<TcpStoreServer> bad;
  EXPECT_EQ(StartTcpStoreServer("127.0.0.1", 0, &bad, "short").code(), Code::kPara);
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(ConnectTcpStore("127.0.0.1", other->port(), Deadline::AfterMs(100), &c, "short").code(),
            Code::kPara);
}

TEST(TcpStoreAuth, SilentAndHostileConnectionsNeverLockRanksOut) {
  std::unique_ptr<TcpStoreServer> server;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server, kSecret).ok());
  // 200 connections that never say anything, more than the server keeps waiting at once.
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(RawConnect(server->port()));
  std::unique_ptr<Store> rank;
  auto start = std::chrono::steady_clock::now();
  Status st =
      ConnectTcpStore("127.0.0.1", server->port(), Deadline::AfterMs(10000), &rank, kSecret);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(rank->Set("k", "v").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The silent ones are closed by the server within the handshake deadline (plus a poll period).
  int closed = 0;
  for (int fd : idle) {
    timeval tv{static_cast<time_t>(kStoreAuthDeadlineMs / 1000 + 10), 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char c;
    if (recv(fd, &c, 1, 0) == 0) ++closed;
    close(fd);
  }
  EXPECT_EQ(closed, 200);
  // An authenticated rank that stays quiet longer than the deadline is not dropped.
  std::string v;
  ASSERT_TRUE(rank->Get("k", Deadline::AfterMs(2000), &v).ok());
  EXPECT_EQ(v, "v");
}

TEST(TcpStoreAuth, RanksGetThroughAFloodOfConnections) {
  std::unique_ptr<TcpStoreServer> server;
  ASSERT_TRUE(StartTcpStoreServer("127.0.0.1", 0, &server, kSecret).ok());
  uint16_t port = server->port();
  // A local flooder opens connections as fast as it can (holding the last 400) for as long as
  // the ranks below take, at most 20,000 connections.
  std::atomic<bool> done{false};
  std::atomic<int> opened{0};
  std::thread flooder([&] {
    std::vector<int> held;
    for (int i = 0; i < 20000 && !done.load(); ++i) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(port);
      sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      (void)!connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));  // may fail: a flood
      held.push_back(fd);
      opened.fetch_add(1);
      if (held.size() > 400) {
        close(held.front());
        held.erase(held.begin());
      }
    }
    for (int fd : held) close(fd);
  });
  // The ranks come when the flood is on (600 connections opened, well over the server's limit of
  // connections waiting for their proof).
  while (opened.load() < 600) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> ranks;
  std::atomic<int> ok{0};
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<Store> s;
      Status st = ConnectTcpStore("127.0.0.1", port, Deadline::AfterMs(20000), &s, kSecret);
      EXPECT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
      if (!st.ok()) return;
      int64_t n = 0;
      if (s->Add("joined", 1, &n).ok()) ok.fetch_add(1);
    });
  }
  for (auto& t : ranks) t.join();
  bool flood_outlived_ranks = !done.exchange(true);
  flooder.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_TRUE(flood_outlived_ranks) << "the flood ended before the ranks finished";
  printf("flooder opened %d connections\n", opened.load());
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
