// Root info encoding (4108 bytes), its validation, identities and the connect-timeout rule.
#include <arpa/inet.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstring>

#include "bootstrap/bootstrap.h"
#include "bootstrap/root_wire.h"

namespace hostccl::boot {
namespace {

RootInfo Sample() {
  RootInfo r;
  r.ip = "192.168.10.7";
  r.port = 60001;
  for (int i = 0; i < 16; ++i) r.token[i] = static_cast<uint8_t>(0xa0 + i);
  r.identifier = "192.168.10.7_60001_3_1700000000123456";
  return r;
}

TEST(RootInfo, RoundTripAndIpAtOffsetZero) {
  uint8_t buf[kRootInfoBytes];
  memset(buf, 0xee, sizeof(buf));
  EncodeRootInfo(Sample(), buf);
  EXPECT_EQ(inet_addr(reinterpret_cast<const char*>(buf)), inet_addr("192.168.10.7"));
  RootInfo out;
  Status st = DecodeRootInfo(buf, &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out.ip, "192.168.10.7");
  EXPECT_EQ(out.port, 60001);
  EXPECT_EQ(memcmp(out.token, Sample().token, 16), 0);
  EXPECT_EQ(out.identifier, Sample().identifier);
  for (size_t i = 224; i < kRootInfoBytes; ++i) ASSERT_EQ(buf[i], 0) << i;
}

TEST(RootInfo, Ipv6RoundTrip) {
  RootInfo r = Sample();
  r.ip = "fd00:1234::42";
  uint8_t buf[kRootInfoBytes];
  EncodeRootInfo(r, buf);
  RootInfo out;
  ASSERT_TRUE(DecodeRootInfo(buf, &out).ok());
  EXPECT_EQ(out.ip, r.ip);
}

TEST(RootInfo, RejectsEveryCorruptedByte) {
  uint8_t good[kRootInfoBytes];
  EncodeRootInfo(Sample(), good);
  for (size_t off = 0; off < 224; ++off) {
    uint8_t buf[kRootInfoBytes];
    memcpy(buf, good, sizeof(buf));
    buf[off] ^= 0x5a;
    RootInfo out;
    Status st = DecodeRootInfo(buf, &out);
    EXPECT_EQ(st.code(), Code::kPara) << "byte " << off;
  }
}

TEST(RootInfo, RejectsGarbageAndZeros) {
  uint8_t buf[kRootInfoBytes] = {};
  RootInfo out;
  EXPECT_EQ(DecodeRootInfo(buf, &out).code(), Code::kPara);
  strcpy(reinterpret_cast<char*>(buf), "invalid");  // what hccl_test broadcasts on failure
  EXPECT_EQ(DecodeRootInfo(buf, &out).code(), Code::kPara);
  EXPECT_EQ(DecodeRootInfo(nullptr, &out).code(), Code::kPtr);
}

// A checksum only proves the bytes are as encoded: fields that are well formed but invalid must
// still be refused, each with a message naming the field.
TEST(RootInfo, RejectsInvalidFieldsUnderAValidChecksum) {
  struct Case {
    const char* what;
    void (*edit)(RootInfo*);
    const char* names;
  };
  const Case cases[] = {
      {"port 0", [](RootInfo* r) { r->port = 0; }, "port 0"},
      {"empty identifier", [](RootInfo* r) { r->identifier.clear(); }, "identifier"},
      {"host name instead of an IP", [](RootInfo* r) { r->ip = "rootnode"; }, "IP"},
      {"empty IP", [](RootInfo* r) { r->ip.clear(); }, "IP"},
      {"identifier with a space", [](RootInfo* r) { r->identifier = "a b"; }, "identifier"},
  };
  for (const Case& c : cases) {
    RootInfo in = Sample();
    c.edit(&in);
    uint8_t buf[kRootInfoBytes];
    EncodeRootInfo(in, buf);
    RootInfo out;
    out.port = 4242;
    Status st = DecodeRootInfo(buf, &out);
    EXPECT_EQ(st.code(), Code::kPara) << c.what << ": " << st.ToString();
    EXPECT_NE(st.message().find(c.names), std::string::npos) << c.what << ": " << st.ToString();
    EXPECT_EQ(out.port, 4242) << c.what << ": a refused root info must leave the output alone";
  }
}

TEST(RootWire, RankTableRoundTripAndBounds) {
  std::vector<RankInfo> all(3);
  for (uint32_t i = 0; i < 3; ++i) {
    all[i].rank = i;
    all[i].device = static_cast<int32_t>(i) - 1;
    all[i].pid = 100 + i;
    all[i].node_id = "host/boot";
    all[i].proc_id = "host/boot/" + std::to_string(i);
    all[i].data_addr = "127.0.0.1:" + std::to_string(4000 + i);
  }
  std::string b = EncodeRankTable(all);
  std::vector<RankInfo> out;
  ASSERT_TRUE(DecodeRankTable(reinterpret_cast<const uint8_t*>(b.data()), b.size(), &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].device, -1);
  EXPECT_EQ(out[2].data_addr, "127.0.0.1:4002");
  for (size_t cut = 0; cut < b.size(); ++cut)
    EXPECT_FALSE(DecodeRankTable(reinterpret_cast<const uint8_t*>(b.data()), cut, &out).ok()) << cut;
  std::string extra = b + "x";
  EXPECT_FALSE(DecodeRankTable(reinterpret_cast<const uint8_t*>(extra.data()), extra.size(), &out).ok());
}

TEST(Identity, NodeAndProcIds) {
  unsetenv("HOSTCCL_NODE_ID");
  std::string node = LocalNodeId();
  EXPECT_NE(node.find('/'), std::string::npos);
  EXPECT_GT(node.size(), 10u);
  std::string proc = LocalProcId();
  EXPECT_EQ(proc.rfind(node + "/" + std::to_string(getpid()) + "/", 0), 0u) << proc;
  EXPECT_EQ(proc, LocalProcId());
  setenv("HOSTCCL_NODE_ID", "nodeA", 1);
  EXPECT_EQ(LocalNodeId(), "nodeA");
  unsetenv("HOSTCCL_NODE_ID");
}

TEST(Identity, ConnectTimeoutRule) {
  unsetenv("HOSTCCL_CONNECT_TIMEOUT_MS");
  unsetenv("HCCL_CONNECT_TIMEOUT");
  EXPECT_EQ(ConnectTimeoutMs(), 140000);
  setenv("HCCL_CONNECT_TIMEOUT", "300", 1);
  EXPECT_EQ(ConnectTimeoutMs(), 320000);
  setenv("HCCL_CONNECT_TIMEOUT", "100", 1);  // below HCCL's range
  EXPECT_EQ(ConnectTimeoutMs(), 140000);
  setenv("HCCL_CONNECT_TIMEOUT", "abc", 1);
  EXPECT_EQ(ConnectTimeoutMs(), 140000);
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", "1500", 1);
  EXPECT_EQ(ConnectTimeoutMs(), 1500);
  unsetenv("HOSTCCL_CONNECT_TIMEOUT_MS");
  unsetenv("HCCL_CONNECT_TIMEOUT");
}

}  // namespace
}  // namespace hostccl::boot
