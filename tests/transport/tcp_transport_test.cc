// TcpTransport between threads of one process over loopback: ordering, sizes, concurrency,
// and every error path (mismatch, close, timeout, interrupt, abort).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include "mesh_fixture.h"
#include "transport/tcp/socket.h"

namespace hostccl::net {
namespace {

using testing::Fp;
using testing::MakeListeners;
using testing::MakeMesh;
using testing::Mesh;
using testing::OnRanks;
using testing::Pattern;
using testing::ElapsedMs;

uint64_t Checksum(const std::vector<uint8_t>& v) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : v) h = (h ^ b) * 1099511628211ull;
  return h;
}

TEST(TcpTransport, PairsExchangeInEveryMeshSize) {
  for (int n = 2; n <= 5; ++n) {
    Mesh m = MakeMesh(n);
    ASSERT_EQ(m.t.size(), static_cast<size_t>(n));
    OnRanks(n, [&](int r) {
      Transport* t = m.t[r].get();
      EXPECT_EQ(t->rank(), r);
      EXPECT_EQ(t->size(), n);
      std::vector<RequestId> ids;
      std::vector<std::vector<uint8_t>> in(n), out(n);
      for (int p = 0; p < n; ++p) {
        if (p == r) continue;
        out[p] = Pattern(100 + p, r * 10 + p);
        in[p].resize(100 + r);
        RequestId id;
        ASSERT_TRUE(t->Isend(p, out[p].data(), out[p].size(), Fp(1), &id).ok());
        ids.push_back(id);
        ASSERT_TRUE(t->Irecv(p, in[p].data(), in[p].size(), Fp(1), &id).ok());
        ids.push_back(id);
      }
      Status st = t->WaitAll(ids.data(), ids.size(), Deadline::AfterMs(20000));
      ASSERT_TRUE(st.ok()) << st.ToString();
      for (int p = 0; p < n; ++p) {
        if (p == r) continue;
        EXPECT_EQ(in[p], Pattern(100 + r, p * 10 + r)) << "rank " << r << " from " << p;
      }
    });
  }
}

TEST(TcpTransport, OrderedZeroSmallAndLarge) {
  Mesh m = MakeMesh(2);
  const size_t kBig = 64ull << 20;
  std::vector<size_t> sizes = {0, 1, 7, 4096, 0, kBig, 3};
  OnRanks(2, [&](int r) {
    Transport* t = m.t[r].get();
    if (r == 0) {
      std::vector<std::vector<uint8_t>> bufs;
      std::vector<RequestId> ids;
      for (size_t i = 0; i < sizes.size(); ++i) bufs.push_back(Pattern(sizes[i], static_cast<uint32_t>(i)));
      for (size_t i = 0; i < sizes.size(); ++i) {
        RequestId id;
        ASSERT_TRUE(t->Isend(1, bufs[i].data(), bufs[i].size(), Fp(i + 1), &id).ok());
        ids.push_back(id);
      }
      Status st = t->WaitAll(ids.data(), ids.size(), Deadline::AfterMs(30000));
      ASSERT_TRUE(st.ok()) << st.ToString();
    } else {
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::vector<uint8_t> buf(sizes[i]);
        RequestId id;
        ASSERT_TRUE(t->Irecv(0, buf.data(), buf.size(), Fp(i + 1), &id).ok());
        Status st = t->Wait(id, Deadline::AfterMs(30000));
        ASSERT_TRUE(st.ok()) << st.ToString();
        EXPECT_EQ(Checksum(buf), Checksum(Pattern(sizes[i], static_cast<uint32_t>(i)))) << "message " << i;
      }
    }
  });
}

TEST(TcpTransport, ManyInterleavedRequests) {
  const int n = 3, kMsgs = 300;
  Mesh m = MakeMesh(n);
  OnRanks(n, [&](int r) {
    Transport* t = m.t[r].get();
    std::vector<std::vector<uint8_t>> out, in;
    std::vector<RequestId> ids;
    out.reserve(n * kMsgs);
    in.reserve(n * kMsgs);
    for (int i = 0; i < kMsgs; ++i) {
      for (int p = 0; p < n; ++p) {
        if (p == r) continue;
        size_t len = static_cast<size_t>((i * 37) % 5000);
        out.push_back(Pattern(len, r * 100000 + p * 1000 + i));
        in.emplace_back(len);
        RequestId a, b;
        ASSERT_TRUE(t->Irecv(p, in.back().data(), len, Fp(i), &a).ok());
        ASSERT_TRUE(t->Isend(p, out.back().data(), len, Fp(i), &b).ok());
        ids.push_back(a);
        ids.push_back(b);
      }
    }
    Status st = t->WaitAll(ids.data(), ids.size(), Deadline::AfterMs(30000));
    ASSERT_TRUE(st.ok()) << st.ToString();
    size_t k = 0;
    for (int i = 0; i < kMsgs; ++i)
      for (int p = 0; p < n; ++p) {
        if (p == r) continue;
        size_t len = static_cast<size_t>((i * 37) % 5000);
        EXPECT_EQ(in[k], Pattern(len, p * 100000 + r * 1000 + i));
        ++k;
      }
  });
}

TEST(TcpTransport, BidirectionalLargeNoDeadlock) {
  Mesh m = MakeMesh(2);
  const size_t kBig = 32ull << 20;
  OnRanks(2, [&](int r) {
    Transport* t = m.t[r].get();
    std::vector<uint8_t> out = Pattern(kBig, r), in(kBig);
    RequestId ids[2];
    ASSERT_TRUE(t->Isend(1 - r, out.data(), kBig, Fp(1), &ids[0]).ok());
    ASSERT_TRUE(t->Irecv(1 - r, in.data(), kBig, Fp(1), &ids[1]).ok());
    Status st = t->WaitAll(ids, 2, Deadline::AfterMs(30000));
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(Checksum(in), Checksum(Pattern(kBig, 1 - r)));
  });
}

TEST(TcpTransport, TestPollsWithoutBlocking) {
  Mesh m = MakeMesh(2);
  uint32_t v = 42, got = 0;
  RequestId rid, sid;
  ASSERT_TRUE(m.t[1]->Irecv(0, &got, 4, Fp(1), &rid).ok());
  bool done = true;
  ASSERT_TRUE(m.t[1]->Test(rid, &done).ok());
  EXPECT_FALSE(done);
  ASSERT_TRUE(m.t[0]->Isend(1, &v, 4, Fp(1), &sid).ok());
  ASSERT_TRUE(m.t[0]->Wait(sid, Deadline::AfterMs(5000)).ok());
  for (int i = 0; i < 5000 && !done; ++i) {
    ASSERT_TRUE(m.t[1]->Test(rid, &done).ok());
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(got, 42u);
  EXPECT_EQ(m.t[1]->Test(rid, &done).code(), Code::kPara);  // consumed id
}

// Small frames that arrive together are read in one go into the socket's read buffer; the ones
// behind the first must complete from there when their receives are posted later, although the
// socket then has no new bytes to report.
TEST(TcpTransport, BufferedFramesCompleteWithoutNewBytes) {
  Mesh m = MakeMesh(2);
  const std::vector<size_t> sizes = {8, 0, 100, 3000, 8, 1};
  std::vector<std::vector<uint8_t>> out;
  std::vector<RequestId> sids;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(Pattern(sizes[i], static_cast<uint32_t>(7 + i)));
    RequestId id;
    ASSERT_TRUE(m.t[0]->Isend(1, out[i].data(), sizes[i], Fp(1), &id).ok());
    sids.push_back(id);
  }
  ASSERT_TRUE(m.t[0]->WaitAll(sids.data(), sids.size(), Deadline::AfterMs(5000)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // all of it is in rank 1's socket
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> in(sizes[i], 0xEE);
    RequestId id;
    ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &id).ok());
    Status st = m.t[1]->Wait(id, Deadline::AfterMs(2000));
    ASSERT_TRUE(st.ok()) << "message " << i << ": " << st.ToString();
    EXPECT_EQ(in, out[i]) << "message " << i;
  }
}

// An ABORT read in the same burst as data frames before it: the data is delivered first, the
// abort fails what comes after.
TEST(TcpTransport, AbortBehindBufferedFramesComesAfterThem) {
  Mesh m = MakeMesh(2);
  uint64_t a = 11, b = 22;
  RequestId ids[2];
  ASSERT_TRUE(m.t[0]->Isend(1, &a, 8, Fp(1), &ids[0]).ok());
  ASSERT_TRUE(m.t[0]->Isend(1, &b, 8, Fp(1), &ids[1]).ok());
  ASSERT_TRUE(m.t[0]->WaitAll(ids, 2, Deadline::AfterMs(5000)).ok());
  m.t[0]->Abort("gave up", Code::kRemote);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  uint64_t got = 0;
  RequestId id;
  ASSERT_TRUE(m.t[1]->Irecv(0, &got, 8, Fp(1), &id).ok());
  ASSERT_TRUE(m.t[1]->Wait(id, Deadline::AfterMs(2000)).ok());
  EXPECT_EQ(got, 11u);
  ASSERT_TRUE(m.t[1]->Irecv(0, &got, 8, Fp(1), &id).ok());
  Status st = m.t[1]->Wait(id, Deadline::AfterMs(2000));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(got, 22u);
  Status third = m.t[1]->Irecv(0, &got, 8, Fp(1), &id);
  if (third.ok()) third = m.t[1]->Wait(id, Deadline::AfterMs(2000));
  EXPECT_EQ(third.code(), Code::kRemote);
  EXPECT_EQ(third.message(), "rank 0 aborted: gave up");
}

TEST(TcpTransport, SelfAndBadPeer) {
  Mesh m = MakeMesh(2);
  RequestId id;
  char c = 0;
  EXPECT_EQ(m.t[0]->Isend(0, &c, 1, Fp(1), &id).code(), Code::kInternal);
  EXPECT_EQ(m.t[0]->Irecv(2, &c, 1, Fp(1), &id).code(), Code::kPara);
  EXPECT_EQ(m.t[0]->Wait(12345, Deadline::AfterMs(10)).code(), Code::kPara);
}

TEST(TcpTransport, FingerprintMismatchNamesBothRanks) {
  Mesh m = MakeMesh(2);
  float buf[8] = {};
  Fingerprint mine = Fp(17, 8), theirs = Fp(17, 32);
  mine.kind = theirs.kind = static_cast<uint8_t>(CollKind::kReduce);
  RequestId sid, rid;
  ASSERT_TRUE(m.t[0]->Isend(1, buf, sizeof(buf), theirs, &sid).ok());
  ASSERT_TRUE(m.t[1]->Irecv(0, buf, sizeof(buf), mine, &rid).ok());
  ASSERT_TRUE(m.t[0]->Wait(sid, Deadline::AfterMs(5000)).ok());
  Status st = m.t[1]->Wait(rid, Deadline::AfterMs(5000));
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_EQ(st.message(), FormatMismatch(mine, 1, theirs, 0));
  // sticky
  EXPECT_EQ(m.t[1]->Irecv(0, buf, 4, mine, &rid).code(), Code::kPara);
}

TEST(TcpTransport, LengthMismatchNamesBothLengths) {
  Mesh m = MakeMesh(2);
  char buf[64] = {};
  RequestId sid, rid;
  ASSERT_TRUE(m.t[0]->Isend(1, buf, 48, Fp(3), &sid).ok());
  ASSERT_TRUE(m.t[1]->Irecv(0, buf, 64, Fp(3), &rid).ok());
  ASSERT_TRUE(m.t[0]->Wait(sid, Deadline::AfterMs(5000)).ok());
  Status st = m.t[1]->Wait(rid, Deadline::AfterMs(5000));
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("expects 64 bytes from rank 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("sent 48 bytes"), std::string::npos) << st.message();
}

TEST(TcpTransport, PeerClosingMidTransferFailsQuickly) {
  Mesh m = MakeMesh(2);
  const size_t kBig = 64ull << 20;
  std::vector<uint8_t> out(kBig, 1), in(kBig);
  RequestId sid, rid;
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), kBig, Fp(1), &rid).ok());
  ASSERT_TRUE(m.t[0]->Isend(1, out.data(), kBig, Fp(1), &sid).ok());
  bool done = false;
  ASSERT_TRUE(m.t[0]->Test(sid, &done).ok());  // writes the first part only
  ASSERT_FALSE(done);
  m.t[0].reset();  // close with half a frame on the wire
  auto t0 = std::chrono::steady_clock::now();
  Status st = m.t[1]->Wait(rid, Deadline::AfterMs(20000));
  EXPECT_EQ(st.code(), Code::kRemote);
  EXPECT_NE(st.message().find("rank 0 (" + m.addrs[0] + ")"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("closed the connection"), std::string::npos) << st.message();
  EXPECT_LT(ElapsedMs(t0), 5000);
}

TEST(TcpTransport, DestroyedPeerFailsOnlyWhoNeedsIt) {
  Mesh m = MakeMesh(3);
  m.t[2].reset();  // orderly close (CLOSE frames)
  int a = 5, b = 0;
  RequestId ids[2];
  ASSERT_TRUE(m.t[0]->Isend(1, &a, 4, Fp(1), &ids[0]).ok());
  ASSERT_TRUE(m.t[1]->Irecv(0, &b, 4, Fp(1), &ids[1]).ok());
  ASSERT_TRUE(m.t[0]->Wait(ids[0], Deadline::AfterMs(5000)).ok());
  Status st = m.t[1]->Wait(ids[1], Deadline::AfterMs(5000));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(b, 5);
  RequestId rid;
  ASSERT_TRUE(m.t[0]->Irecv(2, &b, 4, Fp(2), &rid).ok());
  st = m.t[0]->Wait(rid, Deadline::AfterMs(5000));
  EXPECT_EQ(st.code(), Code::kRemote);
  EXPECT_NE(st.message().find("rank 2"), std::string::npos) << st.message();
}

TEST(TcpTransport, DeadlineNamesPendingPeer) {
  Mesh m = MakeMesh(3);
  char buf[4096];
  RequestId ids[2];
  ASSERT_TRUE(m.t[1]->Irecv(2, buf, sizeof(buf), Fp(1), &ids[0]).ok());
  ASSERT_TRUE(m.t[1]->Irecv(0, buf, 16, Fp(1), &ids[1]).ok());
  auto t0 = std::chrono::steady_clock::now();
  Status st = m.t[1]->WaitAll(ids, 2, Deadline::AfterMs(200));
  EXPECT_GE(ElapsedMs(t0), 150);
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_NE(st.message().find("rank 2 at " + m.addrs[2] + " (recv 4096 bytes)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rank 0 at"), std::string::npos) << st.message();
  EXPECT_EQ(m.t[1]->Wait(ids[0], Deadline::AfterMs(10)).code(), Code::kTimeout);  // sticky
}

TEST(TcpTransport, InterruptFromAnotherThread) {
  Mesh m = MakeMesh(2);
  char buf[8];
  RequestId id;
  ASSERT_TRUE(m.t[0]->Irecv(1, buf, 8, Fp(1), &id).ok());
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    m.t[0]->Interrupt();
  });
  auto t0 = std::chrono::steady_clock::now();
  Status st = m.t[0]->Wait(id, Deadline::Infinite());
  killer.join();
  EXPECT_EQ(st.code(), Code::kRemote);
  EXPECT_NE(st.message().find("communicator destroyed"), std::string::npos);
  EXPECT_LT(ElapsedMs(t0), 5000);
}

// A rank that aborts in the middle of a large DATA frame finishes the frame (with its true
// payload) before its ABORT, so the peer reading that very frame learns why, even when the
// aborter's communicator is destroyed right after (the close alone would say only "closed the
// connection in the middle of a message").
TEST(TcpTransport, AbortInTheMiddleOfAFrameStillReachesItsReader) {
  Mesh m = MakeMesh(2);
  const size_t kBig = 32ull << 20;  // far above what the socket buffers hold
  std::vector<uint8_t> out = Pattern(kBig, 5), in(kBig);
  RequestId send_id, recv_id;
  ASSERT_TRUE(m.t[0]->Isend(1, out.data(), out.size(), Fp(1), &send_id).ok());
  // Nobody reads yet: the send writes what the buffers take and stays half written.
  EXPECT_EQ(m.t[0]->Wait(send_id, Deadline::AfterMs(100)).code(), Code::kTimeout);
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &recv_id).ok());
  Status got;
  std::thread reader([&] { got = m.t[1]->Wait(recv_id, Deadline::AfterMs(10000)); });
  m.t[0]->Abort("op 1 failed on rank 0", Code::kPara);
  m.t[0].reset();  // destroyed at once, as a failed rank's communicator may be
  reader.join();
  // The frame's bytes are the posted payload: the receive completes with them, and the next
  // wait on rank 0 reports the abort.
  ASSERT_TRUE(got.ok()) << got.ToString();
  EXPECT_EQ(Checksum(in), Checksum(out));
  uint64_t more = 0;
  got = m.t[1]->Irecv(0, &more, 8, Fp(1), &recv_id);  // fails at once if the ABORT was read already
  if (got.ok()) got = m.t[1]->Wait(recv_id, Deadline::AfterMs(10000));
  EXPECT_EQ(got.code(), Code::kPara) << got.ToString();
  EXPECT_EQ(got.message(), "rank 0 aborted: op 1 failed on rank 0");
}

// A relay between two ranks that passes one direction on at `bytes_per_tick` per 25 ms: a slow
// link, or a reader that keeps reading, only slowly (an oversubscribed host, a sanitizer).
class SlowLink {
 public:
  // Listens on loopback; connect to address() instead of `to`.
  SlowLink(const std::string& to, size_t bytes_per_tick) : to_(to), per_tick_(bytes_per_tick) {
    int held = static_cast<int>(bytes_per_tick / 2);  // the kernel doubles it: one tick's worth
    EXPECT_TRUE(ListenOn("127.0.0.1", 0, &listen_, &port_).ok());
    setsockopt(listen_.get(), SOL_SOCKET, SO_RCVBUF, &held, sizeof(held));
    relay_ = std::thread([this] { Relay(); });
  }
  ~SlowLink() {
    stop_ = true;
    relay_.join();
  }
  std::string address() const { return FormatHostPort("127.0.0.1", port_); }
  // Resets both connections at once, as the death of the rank behind the link would.
  void Cut() {
    cut_ = true;
    while (!gone_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

 private:
  void Relay() {
    pollfd pl{listen_.get(), POLLIN, 0};
    while (!stop_ && ::poll(&pl, 1, 10) <= 0) {}
    if (stop_) {
      gone_ = true;
      return;
    }
    Fd up(::accept(listen_.get(), nullptr, nullptr));  // the connecting rank's side
    SockAddr addr;
    bool pending = false;
    Fd down;
    ASSERT_TRUE(ParseHostPort(to_, &addr).ok());
    ASSERT_TRUE(StartConnect(addr, &down, &pending).ok());
    pollfd pc{down.get(), POLLOUT, 0};
    ASSERT_EQ(::poll(&pc, 1, 5000), 1);
    const int flags = ::fcntl(down.get(), F_GETFL);
    ::fcntl(down.get(), F_SETFL, flags & ~O_NONBLOCK);
    std::vector<uint8_t> buf(per_tick_);
    bool up_open = true, down_open = true;
    const linger reset{1, 0};
    while (!stop_ && (up_open || down_open)) {
      if (cut_) {
        setsockopt(up.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        setsockopt(down.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        up.Reset(-1);
        down.Reset(-1);
        break;
      }
      pollfd p[2] = {{up_open ? up.get() : -1, POLLIN, 0}, {down_open ? down.get() : -1, POLLIN, 0}};
      if (::poll(p, 2, 10) <= 0) continue;
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {  // the slow direction
        const ssize_t n = ::recv(up.get(), buf.data(), buf.size(), 0);
        if (n <= 0) {
          up_open = false;
          ::shutdown(down.get(), SHUT_WR);
        } else {
          Forward(down.get(), buf.data(), static_cast<size_t>(n));
          std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
      }
      if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        uint8_t back[4096];
        const ssize_t n = ::recv(down.get(), back, sizeof(back), 0);
        if (n <= 0) {
          down_open = false;
          ::shutdown(up.get(), SHUT_WR);
        } else {
          Forward(up.get(), back, static_cast<size_t>(n));
        }
      }
    }
    gone_ = true;
  }
  static void Forward(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && errno == EAGAIN) {
        pollfd pf{fd, POLLOUT, 0};
        ::poll(&pf, 1, 10);
        continue;
      }
      if (w <= 0) return;
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  std::string to_;
  size_t per_tick_;
  Fd listen_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false}, cut_{false}, gone_{false};
  std::thread relay_;
};

// Connects the n ranks of m (listeners made) with rank `from` reaching rank `to` through `link`
// (from < to: lower ranks connect), one socket per pair.
void ConnectThrough(Mesh* m, int from, int to, const SlowLink& link) {
  const int n = static_cast<int>(m->addrs.size());
  std::vector<std::string> via = m->addrs;
  via[static_cast<size_t>(to)] = link.address();
  m->t.resize(static_cast<size_t>(n));
  OnRanks(n, [&](int r) {
    const Status st = CreateTcpMesh(r, n, m->listeners[r].get(), r == from ? via : m->addrs, testing::kTestToken, 7,
                                    Deadline::AfterMs(20000), &m->t[r], 1);
    EXPECT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
  });
}

// The same over a slow link (about 40 MB/s): the frame's tail takes far longer than the 250 ms an
// abort grants a reader that takes nothing. The abort waits as long as the bytes keep going (up
// to 2 s), so the reader still learns the reason instead of seeing only "closed the connection in
// the middle of a message", which names the aborting rank rather than the failure it passes on.
TEST(TcpTransport, AbortInTheMiddleOfAFrameReachesASlowReader) {
  Mesh m;
  MakeListeners(2, &m);
  SlowLink link(m.addrs[1], 1 << 20);
  ConnectThrough(&m, 0, 1, link);
  ASSERT_TRUE(m.t[0] && m.t[1]);
  const size_t kBig = 32ull << 20;
  std::vector<uint8_t> out = Pattern(kBig, 9), in(kBig);
  RequestId send_id, recv_id;
  ASSERT_TRUE(m.t[0]->Isend(1, out.data(), out.size(), Fp(1), &send_id).ok());
  EXPECT_EQ(m.t[0]->Wait(send_id, Deadline::AfterMs(100)).code(), Code::kTimeout);
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &recv_id).ok());
  Status got;
  std::thread reader([&] { got = m.t[1]->Wait(recv_id, Deadline::AfterMs(20000)); });
  const auto t0 = std::chrono::steady_clock::now();
  m.t[0]->Abort("op 1 failed on rank 2", Code::kRemote);
  m.t[0].reset();
  const int64_t abort_ms = ElapsedMs(t0);
  reader.join();
  ASSERT_TRUE(got.ok()) << got.ToString() << " (the abort took " << abort_ms << " ms)";
  EXPECT_EQ(Checksum(in), Checksum(out));
  EXPECT_GT(abort_ms, 300) << "the link was not slow: this run shows nothing";
  EXPECT_LT(abort_ms, 5000);  // bounded: 2 s for the frame, 2 s for the acknowledgements
  uint64_t more = 0;
  got = m.t[1]->Irecv(0, &more, 8, Fp(1), &recv_id);
  if (got.ok()) got = m.t[1]->Wait(recv_id, Deadline::AfterMs(10000));
  EXPECT_EQ(got.code(), Code::kRemote) << got.ToString();
  EXPECT_EQ(got.message(), "rank 0 aborted: op 1 failed on rank 2");
}

// A rank that aborts in the middle of a frame to a reader busy elsewhere gets no progress and can
// only close; the reader then sees that close, while the failure the abort passes on is another
// rank's death (here the reset of the link to rank 2). The reader's error names both.
TEST(TcpTransport, ACloseNamesTheOtherPeersThatHungUp) {
  Mesh m;
  MakeListeners(3, &m);
  SlowLink link(m.addrs[2], 8 << 20);
  ConnectThrough(&m, 1, 2, link);
  ASSERT_TRUE(m.t[0] && m.t[1] && m.t[2]);
  link.Cut();  // rank 2, as rank 1 sees it, is dead
  const size_t kBig = 32ull << 20;
  std::vector<uint8_t> out = Pattern(kBig, 3), in(kBig);
  RequestId send_id, recv_id;
  ASSERT_TRUE(m.t[0]->Isend(1, out.data(), out.size(), Fp(1), &send_id).ok());
  EXPECT_EQ(m.t[0]->Wait(send_id, Deadline::AfterMs(100)).code(), Code::kTimeout);
  m.t[0]->Abort("op 1 failed on rank 0: rank 2 died", Code::kRemote);  // rank 1 does not read: 250 ms
  m.t[0].reset();
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &recv_id).ok());
  const Status got = m.t[1]->Wait(recv_id, Deadline::AfterMs(10000));
  EXPECT_EQ(got.code(), Code::kRemote) << got.ToString();
  const std::string a0 = "rank 0 (" + m.addrs[0] + ")", a2 = "rank 2 (" + link.address() + ")";
  EXPECT_NE(got.message().find(a0), std::string::npos) << got.message();
  EXPECT_NE(got.message().find(a2), std::string::npos) << got.message();
  EXPECT_NE(got.message().find("closed its connection too"), std::string::npos) << got.message();
}

TEST(TcpTransport, AbortReachesWaitingPeers) {
  Mesh m = MakeMesh(3);
  char buf[8];
  RequestId id1, id2;
  ASSERT_TRUE(m.t[1]->Irecv(2, buf, 8, Fp(1), &id1).ok());  // waits on another rank than the aborter
  ASSERT_TRUE(m.t[2]->Irecv(0, buf, 8, Fp(1), &id2).ok());
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m.t[0]->Abort("op 7 failed on rank 0", Code::kTimeout);
  });
  Status s1 = m.t[1]->Wait(id1, Deadline::AfterMs(10000));
  Status s2 = m.t[2]->Wait(id2, Deadline::AfterMs(10000));
  aborter.join();
  for (const Status* st : {&s1, &s2}) {
    EXPECT_EQ(st->code(), Code::kTimeout);
    EXPECT_EQ(st->message(), "rank 0 aborted: op 7 failed on rank 0");
  }
  RequestId x;
  EXPECT_EQ(m.t[0]->Isend(1, buf, 1, Fp(2), &x).code(), Code::kTimeout);  // aborter is failed too
}

}  // namespace
}  // namespace hostccl::net
