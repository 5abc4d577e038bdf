// The 4108-byte HcclRootInfo layout (all integers little endian, the rest of the bytes zero):
//   off size field
//     0  64  IP text, NUL-terminated (so inet_addr(rootInfo.internal) works for IPv4)
//    64   4  port
//    68   4  magic "HCRI"
//    72   4  layout version
//    76  16  token (128 random bits)
//    92 128  identifier "<ip>_<port>_<dev>_<timestamp>", NUL-terminated
//   220   4  FNV-1a checksum of bytes [0, 220)
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

constexpr size_t kIpOff = 0, kIpBytes = 64;
constexpr size_t kPortOff = 64;
constexpr size_t kMagicOff = 68;
constexpr size_t kVersionOff = 72;
constexpr size_t kTokenOff = 76;
constexpr size_t kIdOff = 92, kIdBytes = 128;
constexpr size_t kSumOff = 220;
constexpr uint32_t kRootInfoMagic = 0x49524348u;  // "HCRI"
constexpr uint32_t kRootInfoVersion = 1;

uint32_t Fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

// A NUL-terminated printable string of at most `cap - 1` bytes at p.
bool ReadCString(const uint8_t* p, size_t cap, std::string* out) {
  const void* nul = memchr(p, 0, cap);
  if (!nul) return false;
  size_t n = static_cast<size_t>(static_cast<const uint8_t*>(nul) - p);
  for (size_t i = 0; i < n; ++i)
    if (p[i] < 0x21 || p[i] > 0x7e) return false;
  out->assign(reinterpret_cast<const char*>(p), n);
  return true;
}

}  // namespace

void EncodeRootInfo(const RootInfo& info, void* out4108) {
  auto* b = static_cast<uint8_t*>(out4108);
  memset(b, 0, kRootInfoBytes);
  memcpy(b + kIpOff, info.ip.data(), std::min(info.ip.size(), kIpBytes - 1));
  net::PutU32(b + kPortOff, info.port);
  net::PutU32(b + kMagicOff, kRootInfoMagic);
  net::PutU32(b + kVersionOff, kRootInfoVersion);
  memcpy(b + kTokenOff, info.token, 16);
  memcpy(b + kIdOff, info.identifier.data(), std::min(info.identifier.size(), kIdBytes - 1));
  net::PutU32(b + kSumOff, Fnv1a(b, kSumOff));
}

Status DecodeRootInfo(const void* in4108, RootInfo* out) {
  if (in4108 == nullptr || out == nullptr) return MakeStatus(Code::kPtr, "root info: null pointer");
  const auto* b = static_cast<const uint8_t*>(in4108);
  uint32_t magic = net::GetU32(b + kMagicOff);
  if (magic != kRootInfoMagic)
    return MakeStatus(Code::kPara, "root info: bad magic 0x%08x (not made by HcclGetRootInfo of this library?)", magic);
  uint32_t version = net::GetU32(b + kVersionOff);
  if (version != kRootInfoVersion)
    return MakeStatus(Code::kPara, "root info: layout version %u, expected %u", version, kRootInfoVersion);
  uint32_t sum = net::GetU32(b + kSumOff);
  if (sum != Fnv1a(b, kSumOff)) return MakeStatus(Code::kPara, "root info: checksum mismatch (corrupted bytes)");
  RootInfo r;
  if (!ReadCString(b + kIpOff, kIpBytes, &r.ip) || !net::IsNumericIp(r.ip))
    return MakeStatus(Code::kPara, "root info: the IP field is not a NUL-terminated numeric address");
  uint32_t port = net::GetU32(b + kPortOff);
  if (port == 0 || port > 65535) return MakeStatus(Code::kPara, "root info: port %u outside [1, 65535]", port);
  r.port = static_cast<uint16_t>(port);
  memcpy(r.token, b + kTokenOff, 16);
  if (!ReadCString(b + kIdOff, kIdBytes, &r.identifier) || r.identifier.empty())
    return MakeStatus(Code::kPara, "root info: the identifier is not a NUL-terminated printable string");
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace hostccl::boot
