#include "bootstrap/root_wire.h"

#include <cstring>

#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

void AppendU32(std::string* out, uint32_t v) {
  uint8_t b[4];
  net::PutU32(b, v);
  out->append(reinterpret_cast<char*>(b), 4);
}

void AppendString(std::string* out, const std::string& s) {
  size_t n = std::min(s.size(), kMaxRankInfoString);
  uint8_t b[2];
  net::PutU16(b, static_cast<uint16_t>(n));
  out->append(reinterpret_cast<char*>(b), 2);
  out->append(s.data(), n);
}

Status ReadU32(const uint8_t* p, size_t len, size_t* off, uint32_t* v) {
  if (*off > len || len - *off < 4) return MakeStatus(Code::kPara, "rank record truncated at byte %zu", *off);
  *v = net::GetU32(p + *off);
  *off += 4;
  return Status::Ok();
}

Status ReadString(const uint8_t* p, size_t len, size_t* off, std::string* s) {
  if (*off > len || len - *off < 2) return MakeStatus(Code::kPara, "rank record truncated at byte %zu", *off);
  size_t n = net::GetU16(p + *off);
  *off += 2;
  if (n > kMaxRankInfoString) return MakeStatus(Code::kPara, "rank record string of %zu bytes (limit %zu)", n, kMaxRankInfoString);
  if (len - *off < n) return MakeStatus(Code::kPara, "rank record string truncated at byte %zu", *off);
  s->assign(reinterpret_cast<const char*>(p + *off), n);
  *off += n;
  return Status::Ok();
}

}  // namespace

void AppendRankInfo(const RankInfo& info, std::string* out) {
  AppendU32(out, info.rank);
  AppendU32(out, static_cast<uint32_t>(info.device));
  AppendU32(out, info.pid);
  AppendString(out, info.node_id);
  AppendString(out, info.proc_id);
  AppendString(out, info.data_addr);
  AppendString(out, info.job);
}

Status ReadRankInfo(const uint8_t* p, size_t len, size_t* off, RankInfo* out) {
  uint32_t dev = 0;
  HOSTCCL_RETURN_IF_ERROR(ReadU32(p, len, off, &out->rank));
  HOSTCCL_RETURN_IF_ERROR(ReadU32(p, len, off, &dev));
  out->device = static_cast<int32_t>(dev);
  HOSTCCL_RETURN_IF_ERROR(ReadU32(p, len, off, &out->pid));
  HOSTCCL_RETURN_IF_ERROR(ReadString(p, len, off, &out->node_id));
  HOSTCCL_RETURN_IF_ERROR(ReadString(p, len, off, &out->proc_id));
  HOSTCCL_RETURN_IF_ERROR(ReadString(p, len, off, &out->data_addr));
  return ReadString(p, len, off, &out->job);
}

std::string EncodeRootHello(const uint8_t token[16], uint32_t nranks, const RankInfo& mine) {
  std::string s(reinterpret_cast<const char*>(token), 16);
  AppendU32(&s, nranks);
  AppendRankInfo(mine, &s);
  return s;
}

Status DecodeRootHello(const uint8_t* p, size_t len, uint8_t token[16], uint32_t* nranks, RankInfo* info) {
  if (len < 20 || len > kMaxRootHelloBytes) return MakeStatus(Code::kPara, "root HELLO of %zu bytes", len);
  memcpy(token, p, 16);
  size_t off = 16;
  HOSTCCL_RETURN_IF_ERROR(ReadU32(p, len, &off, nranks));
  HOSTCCL_RETURN_IF_ERROR(ReadRankInfo(p, len, &off, info));
  if (off != len) return MakeStatus(Code::kPara, "root HELLO has %zu trailing bytes", len - off);
  return Status::Ok();
}

std::string EncodeRankTable(const std::vector<RankInfo>& all) {
  std::string s;
  AppendU32(&s, static_cast<uint32_t>(all.size()));
  for (const auto& r : all) AppendRankInfo(r, &s);
  return s;
}

Status DecodeRankTable(const uint8_t* p, size_t len, std::vector<RankInfo>* all) {
  size_t off = 0;
  uint32_t n = 0;
  HOSTCCL_RETURN_IF_ERROR(ReadU32(p, len, &off, &n));
  if (n == 0 || n > kMaxRanks) return MakeStatus(Code::kPara, "rank table of %u ranks", n);
  std::vector<RankInfo> v(n);
  for (uint32_t i = 0; i < n; ++i) {
    HOSTCCL_RETURN_IF_ERROR(ReadRankInfo(p, len, &off, &v[i]));
    if (v[i].rank != i) return MakeStatus(Code::kPara, "rank table entry %u holds rank %u", i, v[i].rank);
  }
  if (off != len) return MakeStatus(Code::kPara, "rank table has %zu trailing bytes", len - off);
  *all = std::move(v);
  return Status::Ok();
}

std::string MakeRootFrame(uint16_t type, int32_t code, const std::string& payload) {
  net::FrameHeader h;
  h.type = static_cast<net::FrameType>(type);
  h.payload_len = payload.size();
  h.code = code;
  std::string s(net::kFrameHeaderBytes, '\0');
  net::EncodeFrameHeader(h, reinterpret_cast<uint8_t*>(s.data()));
  return s + payload;
}

}  // namespace hostccl::boot
