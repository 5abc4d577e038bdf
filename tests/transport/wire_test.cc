// Wire-format tests: round trips and rejection of every malformed header field.
#include "transport/tcp/wire.h"

#include <gtest/gtest.h>

namespace hostccl::net {
namespace {

FrameHeader Sample() {
  FrameHeader h;
  h.type = FrameType::kData;
  h.payload_len = 4096;
  h.fp.kind = 1;
  h.fp.dtype = 4;
  h.fp.op = 2;
  h.fp.root = 3;
  h.fp.seq = 0x1122334455667788ull;
  h.fp.count = 1024;
  return h;
}

TEST(Wire, RoundTrip) {
  uint8_t b[kFrameHeaderBytes];
  FrameHeader in = Sample(), out;
  EncodeFrameHeader(in, b);
  ASSERT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  EXPECT_EQ(out.type, in.type);
  EXPECT_EQ(out.payload_len, in.payload_len);
  EXPECT_EQ(out.fp, in.fp);
  EXPECT_EQ(out.code, 0);
}

TEST(Wire, AbortCarriesCode) {
  FrameHeader in;
  in.type = FrameType::kAbort;
  in.payload_len = 10;
  in.code = static_cast<int32_t>(Code::kTimeout);
  uint8_t b[kFrameHeaderBytes];
  EncodeFrameHeader(in, b);
  FrameHeader out;
  ASSERT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  EXPECT_EQ(out.code, 9);
  in.code = 0;  // an abort must carry an error code
  EncodeFrameHeader(in, b);
  EXPECT_EQ(DecodeFrameHeader(b, sizeof(b), &out).code(), Code::kPara);
  in.code = 12345;
  EncodeFrameHeader(in, b);
  EXPECT_EQ(DecodeFrameHeader(b, sizeof(b), &out).code(), Code::kPara);
}

TEST(Wire, RejectsCorruption) {
  uint8_t good[kFrameHeaderBytes];
  EncodeFrameHeader(Sample(), good);
  FrameHeader out;
  auto expect_bad = [&](size_t off, uint8_t val, const char* what) {
    uint8_t b[kFrameHeaderBytes];
    memcpy(b, good, sizeof(b));
    b[off] = val;
    Status st = DecodeFrameHeader(b, sizeof(b), &out);
    EXPECT_EQ(st.code(), Code::kPara) << what;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  expect_bad(0, 0x00, "magic");
  expect_bad(4, 9, "version");
  expect_bad(6, 99, "unknown frame type");
  expect_bad(15, 0xff, "exceeds the limit");  // payload length 2^56+
  expect_bad(44, 1, "stripe");  // stripe 1 of an unstriped message
  expect_bad(46, 1, "stripe");  // a "striped" message of one stripe
  expect_bad(46, 9, "stripe");  // more stripes than sockets can exist
  expect_bad(40, 1, "invalid code");  // DATA with a code
  EXPECT_EQ(DecodeFrameHeader(good, kFrameHeaderBytes - 1, &out).code(), Code::kPara);
  EXPECT_EQ(DecodeFrameHeader(nullptr, 0, &out).code(), Code::kPara);
}

TEST(Wire, BoundsPerType) {
  FrameHeader h;
  uint8_t b[kFrameHeaderBytes];
  FrameHeader out;
  h.type = FrameType::kHello;
  h.payload_len = kHelloBytes + 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.payload_len = kHelloBytes;
  EncodeFrameHeader(h, b);
  EXPECT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.type = FrameType::kAbort;
  h.code = 21;
  h.payload_len = kMaxReasonBytes + 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.type = FrameType::kClose;
  h.code = 0;
  h.payload_len = 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.type = FrameType::kRootTable;
  h.payload_len = kMaxRootPayload + 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
}

TEST(Wire, StripeAndSocketFields) {
  uint8_t b[kFrameHeaderBytes];
  FrameHeader h = Sample(), out;
  h.part = 3;
  h.parts = 4;
  EncodeFrameHeader(h, b);
  ASSERT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  EXPECT_EQ(out.part, 3);
  EXPECT_EQ(out.parts, 4);
  h.part = 4;  // index beyond the count
  EncodeFrameHeader(h, b);
  EXPECT_EQ(DecodeFrameHeader(b, sizeof(b), &out).code(), Code::kPara);
  FrameHeader hello;
  hello.type = FrameType::kHello;
  hello.payload_len = kHelloBytes;
  hello.part = 7;
  hello.parts = kMaxLanes;
  EncodeFrameHeader(hello, b);
  ASSERT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  EXPECT_EQ(out.part, 7);
  hello.parts = kMaxLanes + 1;
  EncodeFrameHeader(hello, b);
  EXPECT_EQ(DecodeFrameHeader(b, sizeof(b), &out).code(), Code::kPara);
  hello.parts = 0;  // 0 = one socket: only socket 0
  hello.part = 1;
  EncodeFrameHeader(hello, b);
  EXPECT_EQ(DecodeFrameHeader(b, sizeof(b), &out).code(), Code::kPara);
  FrameHeader close;
  close.type = FrameType::kClose;
  close.parts = 2;  // other types keep the field reserved
  EncodeFrameHeader(close, b);
  Status st = DecodeFrameHeader(b, sizeof(b), &out);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("reserved"), std::string::npos) << st.message();
}

TEST(Wire, HelloRoundTripAndToken) {
  Hello h;
  for (int i = 0; i < 16; ++i) h.token[i] = static_cast<uint8_t>(i * 7);
  h.comm_tag = 0xabcdef0123ull;
  h.rank = 5;
  h.nranks = 9;
  uint8_t b[kHelloBytes];
  EncodeHello(h, b);
  Hello o;
  DecodeHello(b, &o);
  EXPECT_TRUE(TokenEqual(h.token, o.token));
  EXPECT_EQ(o.comm_tag, h.comm_tag);
  EXPECT_EQ(o.rank, 5u);
  EXPECT_EQ(o.nranks, 9u);
  o.token[15] ^= 1;
  EXPECT_FALSE(TokenEqual(h.token, o.token));
}

// Every single-byte value at every offset decodes or fails cleanly (a tiny deterministic fuzz).
TEST(Wire, ExhaustiveSingleByteMutations) {
  uint8_t good[kFrameHeaderBytes];
  EncodeFrameHeader(Sample(), good);
  for (size_t off = 0; off < kFrameHeaderBytes; ++off) {
    for (int v = 0; v < 256; ++v) {
      uint8_t b[kFrameHeaderBytes];
      memcpy(b, good, sizeof(b));
      b[off] = static_cast<uint8_t>(v);
      FrameHeader out;
      Status st = DecodeFrameHeader(b, sizeof(b), &out);
      if (st.ok()) {
        EXPECT_LE(out.payload_len, kMaxDataPayload);
      } else {
        EXPECT_EQ(st.code(), Code::kPara);
      }
    }
  }
}

// Stall probes (tcp_transport.h): PROBE has no payload, PROBE_REPLY exactly kProbeReplyBytes, and
// neither carries a code or part fields; the reply's payload round-trips.
TEST(Wire, ProbeFrames) {
  FrameHeader h;
  uint8_t b[kFrameHeaderBytes];
  FrameHeader out;
  h.type = FrameType::kProbe;
  h.fp.seq = 7;
  EncodeFrameHeader(h, b);
  ASSERT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  EXPECT_EQ(out.type, FrameType::kProbe);
  EXPECT_EQ(out.fp.seq, 7u);
  h.payload_len = 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.type = FrameType::kProbeReply;
  h.payload_len = kProbeReplyBytes;
  EncodeFrameHeader(h, b);
  EXPECT_TRUE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.payload_len = kProbeReplyBytes - 1;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  h.payload_len = kProbeReplyBytes;
  h.code = 9;
  EncodeFrameHeader(h, b);
  EXPECT_FALSE(DecodeFrameHeader(b, sizeof(b), &out).ok());
  ProbeReply r, back;
  r.waits_for = 3;
  r.waits_for_silent = true;
  r.silent_ms = 2695;
  uint8_t p[kProbeReplyBytes];
  EncodeProbeReply(r, p);
  DecodeProbeReply(p, &back);
  EXPECT_EQ(back.waits_for, 3);
  EXPECT_TRUE(back.waits_for_silent);
  EXPECT_EQ(back.silent_ms, 2695u);
  r.waits_for = -1;
  EncodeProbeReply(r, p);
  DecodeProbeReply(p, &back);
  EXPECT_EQ(back.waits_for, -1);
}

}  // namespace
}  // namespace hostccl::net
