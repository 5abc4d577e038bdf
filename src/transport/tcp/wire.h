// The TCP wire format: every message is a fixed 48-byte frame header followed by its payload.
//
//   off size field
//    0   4   magic "HCT1" (0x31544348, little endian)
//    4   2   version (kWireVersion)
//    6   2   type (FrameType)
//    8   8   payload length (bounded per type, checked before anything is allocated or read)
//   16  24   fingerprint (kind, dtype, op, reserved, root u32, seq u64, count u64)
//   40   4   code (ABORT / ROOT_ERROR: a nonzero Code; 0 otherwise)
//   44   2   part: DATA = index of this stripe of a message; HELLO = index of this socket
//   46   2   parts: DATA = stripes of the message (0 = not striped, else 2..kMaxLanes);
//            HELLO = sockets per peer pair (0 = 1, else 1..kMaxLanes); 0 for other types
//
// All integers little endian. Payloads: DATA = the message bytes; ABORT / ROOT_ERROR = reason
// text (<= kMaxReasonBytes); HELLO = kHelloBytes (token, comm tag, rank, nranks); ROOT_HELLO /
// ROOT_TABLE = the bootstrap's records (<= kMaxRootPayload); CLOSE = none; PROBE = none (its
// fingerprint is the prober's operation); PROBE_REPLY = kProbeReplyBytes (waits-for rank i32, -1 =
// none; flags u32, bit 0 = that rank has not answered the replier's probes; silent ms u64), its
// fingerprint the replier's operation. NOTICE = kNoticeBytes, its fingerprint the message's.
// DecodeFrameHeader is a pure function over untrusted bytes (fuzzed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/fingerprint.h"
#include "common/status.h"

namespace hostccl::net {

constexpr uint32_t kFrameMagic = 0x31544348u;  // "HCT1"
constexpr uint16_t kWireVersion = 1;
constexpr size_t kFrameHeaderBytes = 48;
constexpr uint64_t kMaxDataPayload = 1ull << 48;  // far above any real message, far below overflow
constexpr uint64_t kMaxReasonBytes = 1024;
constexpr uint64_t kHelloBytes = 32;
constexpr uint64_t kMaxRootPayload = 64ull << 20;
constexpr uint16_t kMaxLanes = 8;
constexpr uint64_t kProbeReplyBytes = 16;
constexpr uint64_t kNoticeBytes = 16;  // NOTICE payload: receive address u64, flags u64  // sockets per peer pair (HOSTCCL_SOCKETS_PER_PEER)

enum class FrameType : uint16_t {
  kData = 1,
  kAbort = 2,
  kHello = 3,
  kRootHello = 4,
  kRootTable = 5,
  kRootError = 6,
  kClose = 7,  // orderly close: the sender's communicator was destroyed (no payload)
  // A wait that heard nothing from a peer for a while asks it where it is (docs/reliability.md,
  // "Stall probes"); the peer answers with its operation and the rank it waits for.
  kProbe = 8,
  kProbeReply = 9,
  // Point-to-point clear-to-send (docs/transport.md "Point-to-point notices"): a receiver tells
  // the sender that its HcclRecv is posted; matched per peer in arrival order, outside the DATA
  // order, so it never waits behind DATA.
  kNotice = 10,
};
const char* FrameTypeName(FrameType t);

struct FrameHeader {
  FrameType type = FrameType::kData;
  uint64_t payload_len = 0;
  Fingerprint fp;
  int32_t code = 0;
  uint16_t part = 0;   // DATA: stripe index; HELLO: socket index
  uint16_t parts = 0;  // DATA: stripe count (0 = whole message); HELLO: sockets per peer (0 = 1)
};

void EncodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderBytes]);
// Validates magic, version, type, the type's payload bound, code and part fields; kPara with
// the reason otherwise. `len` < kFrameHeaderBytes is an error too.
Status DecodeFrameHeader(const uint8_t* bytes, size_t len, FrameHeader* out);

// The HELLO payload that authenticates a data connection.
struct Hello {
  uint8_t token[16] = {};
  uint64_t comm_tag = 0;
  uint32_t rank = 0;
  uint32_t nranks = 0;
  // From the HELLO frame's header, not its payload: which of the pair's sockets this is.
  uint16_t socket = 0;
  uint16_t sockets = 1;
};
void EncodeHello(const Hello& h, uint8_t out[kHelloBytes]);
void DecodeHello(const uint8_t in[kHelloBytes], Hello* out);

// The PROBE_REPLY payload.
struct ProbeReply {
  int32_t waits_for = -1;      // the rank the replier's wait is stuck on; -1 = not waiting
  bool waits_for_silent = false;  // ... which has not answered the replier's own probes
  uint64_t silent_ms = 0;      // for this long
};
void EncodeProbeReply(const ProbeReply& r, uint8_t out[kProbeReplyBytes]);
void DecodeProbeReply(const uint8_t in[kProbeReplyBytes], ProbeReply* out);

// Constant-time comparison of two 16-byte tokens.
bool TokenEqual(const uint8_t a[16], const uint8_t b[16]);

// Little-endian field access for the formats above.
inline void PutU16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline uint16_t GetU16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace hostccl::net
