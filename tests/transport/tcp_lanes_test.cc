// TcpTransport with several sockets per peer (HOSTCCL_SOCKETS_PER_PEER): striped long messages and
// whole short ones keep their order for k = 1, 2, 4; stripes of differing lengths are a mismatch;
// a peer closing one socket fails the transfer; ranks with differing k fail the mesh at once;
// orderly close and abort still work with several sockets.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>

#include "mesh_fixture.h"
#include "transport/tcp/tcp_transport.h"

namespace hostccl::net {
namespace {

using testing::ConnectMesh;
using testing::Fp;
using testing::MakeListeners;
using testing::MakeMesh;
using testing::Mesh;
using testing::OnRanks;
using testing::Pattern;
using testing::ElapsedMs;

class Lanes : public ::testing::TestWithParam<int> {};

// Both ranks send a mix of short (lane 0 only) and long (striped) messages to each other, all
// posted at once; every message must arrive intact and in order.
TEST_P(Lanes, ShortAndLongMessagesKeepTheirOrder) {
  const int k = GetParam();
  Mesh m = MakeMesh(2, k);
  const size_t kStripe = TcpTransport::kStripeMinBytes;
  const std::vector<size_t> sizes = {0,           1,           7,       kStripe - 1, kStripe, 4096,
                                     kStripe + 1, (8u << 20) + 13, 3, 1u << 20,    64,      (3u << 20) + 5};
  OnRanks(2, [&](int r) {
    Transport* t = m.t[r].get();
    std::vector<std::vector<uint8_t>> out, in;
    std::vector<RequestId> ids;
    for (size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(Pattern(sizes[i], static_cast<uint32_t>(r * 100 + i)));
      in.emplace_back(sizes[i]);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      RequestId a, b;
      ASSERT_TRUE(t->Irecv(1 - r, in[i].data(), sizes[i], Fp(i + 1), &a).ok());
      ASSERT_TRUE(t->Isend(1 - r, out[i].data(), sizes[i], Fp(i + 1), &b).ok());
      ids.push_back(a);
      ids.push_back(b);
    }
    Status st = t->WaitAll(ids.data(), ids.size(), Deadline::AfterMs(30000));
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (size_t i = 0; i < sizes.size(); ++i)
      EXPECT_TRUE(in[i] == Pattern(sizes[i], static_cast<uint32_t>((1 - r) * 100 + i)))
          << "rank " << r << " message " << i << " (" << sizes[i] << " bytes, " << k << " sockets)";
  });
}

// Receiver and sender disagree on a long message's length: the stripes differ, so the receive
// fails naming the expected length instead of completing with half the data.
TEST_P(Lanes, DifferingLengthIsAMismatch) {
  const int k = GetParam();
  struct Case {
    size_t sent, expected;
  };
  for (Case c : {Case{1u << 20, (1u << 20) + 64}, Case{200u << 10, 100u << 10}, Case{100u << 10, 200u << 10}}) {
    Mesh m = MakeMesh(2, k);
    std::vector<uint8_t> out(c.sent, 1), in(c.expected);
    RequestId sid, rid;
    ASSERT_TRUE(m.t[0]->Isend(1, out.data(), c.sent, Fp(3), &sid).ok());
    ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), c.expected, Fp(3), &rid).ok());
    std::thread sender([&] { (void)m.t[0]->Wait(sid, Deadline::AfterMs(5000)); });
    Status st = m.t[1]->Wait(rid, Deadline::AfterMs(5000));
    EXPECT_EQ(st.code(), Code::kPara) << st.ToString();
    EXPECT_NE(st.message().find("message size mismatch: rank 1 expects " + std::to_string(c.expected) +
                                " bytes from rank 0"),
              std::string::npos)
        << st.message();
    m.t[1].reset();  // the sender's wait ends (peer closed) instead of running to its deadline
    sender.join();
  }
}

// Two processes' worth of transports joined by k socket pairs; closing one socket of the
// receiver's side in the middle of a striped transfer fails the sender and the receiver.
TEST_P(Lanes, ClosingOneSocketFailsTheTransfer) {
  const int k = GetParam();
  std::vector<std::vector<Fd>> a(2), b(2);
  std::vector<int> victim_fds;
  for (int l = 0; l < k; ++l) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
    a[1].emplace_back(sv[0]);
    b[0].emplace_back(sv[1]);
    victim_fds.push_back(sv[1]);
  }
  TcpTransport t0(0, 2, std::move(a), {"r0", "r1"});
  TcpTransport t1(1, 2, std::move(b), {"r0", "r1"});
  const size_t kBig = 8u << 20;  // far more than a socket pair buffers
  std::vector<uint8_t> out(kBig, 7), in(kBig);
  RequestId sid, rid;
  ASSERT_TRUE(t0.Isend(1, out.data(), kBig, Fp(1), &sid).ok());
  ASSERT_TRUE(t1.Irecv(0, in.data(), kBig, Fp(1), &rid).ok());
  bool done = false;
  ASSERT_TRUE(t0.Test(sid, &done).ok());  // the first bytes of every stripe
  ASSERT_TRUE(t1.Test(rid, &done).ok());
  ASSERT_FALSE(done);
  const int victim = victim_fds[static_cast<size_t>(k - 1)];  // the last lane (lane 0 when k = 1)
  ASSERT_EQ(shutdown(victim, SHUT_RDWR), 0);
  auto t = std::chrono::steady_clock::now();
  Status s0 = t0.Wait(sid, Deadline::AfterMs(10000));
  EXPECT_EQ(s0.code(), Code::kRemote) << s0.ToString();
  EXPECT_NE(s0.message().find("rank 1 (r1) closed the connection"), std::string::npos) << s0.message();
  Status s1 = t1.Wait(rid, Deadline::AfterMs(10000));
  EXPECT_NE(s1.code(), Code::kSuccess);
  EXPECT_NE(s1.code(), Code::kTimeout) << s1.ToString();
  EXPECT_LT(ElapsedMs(t), 5000);
}

// An orderly close (CLOSE on every socket) fails only ranks that still need the closed peer.
TEST_P(Lanes, DestroyedPeerFailsOnlyWhoNeedsIt) {
  const int k = GetParam();
  Mesh m = MakeMesh(3, k);
  m.t[2].reset();
  std::vector<uint8_t> out = Pattern(1u << 20, 5), in(1u << 20);
  RequestId ids[2];
  ASSERT_TRUE(m.t[0]->Isend(1, out.data(), out.size(), Fp(1), &ids[0]).ok());
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &ids[1]).ok());
  std::thread sender([&] { EXPECT_TRUE(m.t[0]->Wait(ids[0], Deadline::AfterMs(5000)).ok()); });
  Status st = m.t[1]->Wait(ids[1], Deadline::AfterMs(5000));
  sender.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(in == out);
  RequestId rid;
  ASSERT_TRUE(m.t[0]->Irecv(2, in.data(), in.size(), Fp(2), &rid).ok());
  st = m.t[0]->Wait(rid, Deadline::AfterMs(5000));
  EXPECT_EQ(st.code(), Code::kRemote);
  EXPECT_NE(st.message().find("rank 2"), std::string::npos) << st.message();
}

TEST_P(Lanes, AbortReachesAPeerWaitingOnAStripedReceive) {
  const int k = GetParam();
  Mesh m = MakeMesh(2, k);
  std::vector<uint8_t> in(4u << 20);
  RequestId rid;
  ASSERT_TRUE(m.t[1]->Irecv(0, in.data(), in.size(), Fp(1), &rid).ok());
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m.t[0]->Abort("op 1 failed on rank 0", Code::kTimeout);
  });
  Status st = m.t[1]->Wait(rid, Deadline::AfterMs(10000));
  aborter.join();
  EXPECT_EQ(st.code(), Code::kTimeout);
  EXPECT_EQ(st.message(), "rank 0 aborted: op 1 failed on rank 0");
}

INSTANTIATE_TEST_SUITE_P(SocketsPerPeer, Lanes, ::testing::Values(1, 2, 4),
                         // append, not "k" + std::string: GCC 12 at -O3 warns falsely (-Wrestrict,
                         // GCC bug 105651) about the insert inside that operator+.
                         [](const ::testing::TestParamInfo<int>& i) { return std::string("k").append(std::to_string(i.param)); });

// Ranks configured with different socket counts: the acceptor fails at once with kPara naming
// both values (the connector, dropped, runs into its deadline).
TEST(LanesSetup, DifferingSocketCountsFailTheMesh) {
  Mesh m;
  MakeListeners(2, &m);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Status> sts = ConnectMesh(&m, 9, 3000, {}, 0, {1, 2});
  EXPECT_EQ(sts[1].code(), Code::kPara) << sts[1].ToString();
  EXPECT_NE(sts[1].message().find("connects with 1 socket(s) per peer but this rank uses 2"), std::string::npos)
      << sts[1].message();
  EXPECT_NE(sts[0].code(), Code::kSuccess);
  EXPECT_LT(ElapsedMs(t0), 10000);
}

TEST(LanesSetup, SocketCountOutOfRangeIsRejected) {
  Mesh m;
  MakeListeners(2, &m);
  std::vector<Status> sts = ConnectMesh(&m, 9, 1000, {}, kMaxLanes + 1);
  for (const Status& st : sts) EXPECT_EQ(st.code(), Code::kPara) << st.ToString();
}

}  // namespace
}  // namespace hostccl::net
