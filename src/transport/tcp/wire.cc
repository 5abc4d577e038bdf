#include "transport/tcp/wire.h"

#include <algorithm>

namespace hostccl::net {
namespace {

bool KnownCode(int32_t c) {
  switch (static_cast<Code>(c)) {
    case Code::kPara: case Code::kPtr: case Code::kMemory: case Code::kInternal:
    case Code::kNotSupport: case Code::kNotFound: case Code::kUnavail: case Code::kSyscall:
    case Code::kTimeout: case Code::kOpenFile: case Code::kTcpConnect: case Code::kTcpTransfer:
    case Code::kRuntime: case Code::kAgain: case Code::kRemote: case Code::kOom:
      return true;
    case Code::kSuccess:
      return false;
  }
  return false;
}

}  // namespace

const char* FrameTypeName(FrameType t) {
  switch (t) {
    case FrameType::kData: return "DATA";
    case FrameType::kAbort: return "ABORT";
    case FrameType::kHello: return "HELLO";
    case FrameType::kRootHello: return "ROOT_HELLO";
    case FrameType::kRootTable: return "ROOT_TABLE";
    case FrameType::kRootError: return "ROOT_ERROR";
    case FrameType::kClose: return "CLOSE";
    case FrameType::kProbe: return "PROBE";
    case FrameType::kProbeReply: return "PROBE_REPLY";
    case FrameType::kNotice: return "NOTICE";
  }
  return "?";
}

void EncodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderBytes]) {
  PutU32(out + 0, kFrameMagic);
  PutU16(out + 4, kWireVersion);
  PutU16(out + 6, static_cast<uint16_t>(h.type));
  PutU64(out + 8, h.payload_len);
  out[16] = h.fp.kind;
  out[17] = h.fp.dtype;
  out[18] = h.fp.op;
  out[19] = h.fp.flags;
  PutU32(out + 20, h.fp.root);
  PutU64(out + 24, h.fp.seq);
  PutU64(out + 32, h.fp.count);
  PutU32(out + 40, static_cast<uint32_t>(h.code));
  PutU16(out + 44, h.part);
  PutU16(out + 46, h.parts);
}

Status DecodeFrameHeader(const uint8_t* b, size_t len, FrameHeader* out) {
  if (b == nullptr || len < kFrameHeaderBytes)
    return MakeStatus(Code::kPara, "frame header truncated: %zu of %zu bytes", len, kFrameHeaderBytes);
  uint32_t magic = GetU32(b);
  if (magic != kFrameMagic) return MakeStatus(Code::kPara, "bad frame magic 0x%08x", magic);
  uint16_t version = GetU16(b + 4);
  if (version != kWireVersion)
    return MakeStatus(Code::kPara, "wire version %u, expected %u", version, kWireVersion);
  uint16_t type = GetU16(b + 6);
  uint64_t plen = GetU64(b + 8);
  int32_t code = static_cast<int32_t>(GetU32(b + 40));
  const uint16_t part = GetU16(b + 44), parts = GetU16(b + 46);
  auto t = static_cast<FrameType>(type);
  if (t == FrameType::kData) {
    if (parts == 1 || parts > kMaxLanes || (parts == 0 ? part != 0 : part >= parts))
      return MakeStatus(Code::kPara, "DATA frame stripe %u of %u is invalid (0 of 0, or below 2..%u)", part, parts,
                        kMaxLanes);
  } else if (t == FrameType::kHello) {
    if (parts > kMaxLanes || part >= std::max<uint16_t>(parts, 1))
      return MakeStatus(Code::kPara, "HELLO frame socket %u of %u is invalid (at most %u sockets)", part, parts,
                        kMaxLanes);
  } else if (part != 0 || parts != 0) {
    return MakeStatus(Code::kPara, "%s frame part fields are not zero (reserved)", FrameTypeName(t));
  }
  uint64_t limit = 0;
  bool wants_code = false;
  switch (t) {
    case FrameType::kData: limit = kMaxDataPayload; break;
    case FrameType::kAbort: limit = kMaxReasonBytes; wants_code = true; break;
    case FrameType::kRootError: limit = kMaxReasonBytes; wants_code = true; break;
    case FrameType::kHello:
      if (plen != kHelloBytes)
        return MakeStatus(Code::kPara, "HELLO payload %llu bytes, expected %llu",
                          static_cast<unsigned long long>(plen), static_cast<unsigned long long>(kHelloBytes));
      limit = kHelloBytes;
      break;
    case FrameType::kRootHello:
    case FrameType::kRootTable: limit = kMaxRootPayload; break;
    case FrameType::kClose: limit = 0; break;
    case FrameType::kProbe: limit = 0; break;
    case FrameType::kProbeReply:
      if (plen != kProbeReplyBytes)
        return MakeStatus(Code::kPara, "PROBE_REPLY payload %llu bytes, expected %llu",
                          static_cast<unsigned long long>(plen), static_cast<unsigned long long>(kProbeReplyBytes));
      limit = kProbeReplyBytes;
      break;
    case FrameType::kNotice:
      if (plen != kNoticeBytes)
        return MakeStatus(Code::kPara, "NOTICE payload %llu bytes, expected %llu",
                          static_cast<unsigned long long>(plen), static_cast<unsigned long long>(kNoticeBytes));
      limit = kNoticeBytes;
      break;
    default: return MakeStatus(Code::kPara, "unknown frame type %u", type);
  }
  if (plen > limit)
    return MakeStatus(Code::kPara, "%s payload %llu bytes exceeds the limit %llu", FrameTypeName(t),
                      static_cast<unsigned long long>(plen), static_cast<unsigned long long>(limit));
  if (wants_code ? !KnownCode(code) : code != 0)
    return MakeStatus(Code::kPara, "%s frame carries invalid code %d", FrameTypeName(t), code);
  FrameHeader h;
  h.type = t;
  h.payload_len = plen;
  h.fp.kind = b[16];
  h.fp.dtype = b[17];
  h.fp.op = b[18];
  h.fp.flags = b[19];
  h.fp.root = GetU32(b + 20);
  h.fp.seq = GetU64(b + 24);
  h.fp.count = GetU64(b + 32);
  h.code = code;
  h.part = part;
  h.parts = parts;
  *out = h;
  return Status::Ok();
}

void EncodeHello(const Hello& h, uint8_t out[kHelloBytes]) {
  memcpy(out, h.token, 16);
  PutU64(out + 16, h.comm_tag);
  PutU32(out + 24, h.rank);
  PutU32(out + 28, h.nranks);
}

void DecodeHello(const uint8_t in[kHelloBytes], Hello* out) {
  memcpy(out->token, in, 16);
  out->comm_tag = GetU64(in + 16);
  out->rank = GetU32(in + 24);
  out->nranks = GetU32(in + 28);
}

void EncodeProbeReply(const ProbeReply& r, uint8_t out[kProbeReplyBytes]) {
  PutU32(out, static_cast<uint32_t>(r.waits_for));
  PutU32(out + 4, r.waits_for_silent ? 1u : 0u);
  PutU64(out + 8, r.silent_ms);
}

void DecodeProbeReply(const uint8_t in[kProbeReplyBytes], ProbeReply* out) {
  out->waits_for = static_cast<int32_t>(GetU32(in));
  out->waits_for_silent = (GetU32(in + 4) & 1u) != 0;
  out->silent_ms = GetU64(in + 8);
}

bool TokenEqual(const uint8_t a[16], const uint8_t b[16]) {
  uint8_t diff = 0;
  for (int i = 0; i < 16; ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace hostccl::net
