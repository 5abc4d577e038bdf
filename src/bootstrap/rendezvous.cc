// Rendezvous: one rank's side of the root-info exchange. Connects to the root (retrying until
// the deadline), sends ROOT_HELLO, and waits for ROOT_TABLE or ROOT_ERROR. The wait for the
// answer gets a short grace past the deadline so the root's own timeout message (which names the
// missing ranks) wins the race against our local timeout.
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "bootstrap/root_wire.h"
#include "common/log.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

constexpr int64_t kAnswerGraceMs = 2000;

}  // namespace

Status Rendezvous(const RootInfo& root, uint32_t nranks, const RankInfo& mine, Deadline deadline,
                  std::vector<RankInfo>* all_out) {
  if (all_out == nullptr) return MakeStatus(Code::kPtr, "Rendezvous: null output");
  if (nranks == 0 || nranks > kMaxRanks) return MakeStatus(Code::kPara, "nRanks %u outside [1, %u]", nranks, kMaxRanks);
  if (mine.rank >= nranks) return MakeStatus(Code::kPara, "rank %u is not below nRanks %u", mine.rank, nranks);
  std::string who = "root " + net::FormatHostPort(root.ip, root.port);
  net::SockAddr addr;
  HOSTCCL_RETURN_IF_ERROR(net::MakeSockAddr(root.ip, root.port, &addr));
  uint64_t start = NowNs();
  net::Fd fd;
  Status st = net::ConnectWithRetry(addr, deadline, &fd);
  if (!st.ok()) {
    return MakeStatus(st.code(), "rank %u: cannot reach the %s (%s): %s", mine.rank, who.c_str(),
                      root.identifier.c_str(), st.message().c_str());
  }
  std::string hello = MakeRootFrame(static_cast<uint16_t>(net::FrameType::kRootHello), 0,
                                    EncodeRootHello(root.token, nranks, mine));
  HOSTCCL_RETURN_IF_ERROR(net::WriteFully(fd.get(), hello.data(), hello.size(), deadline, who));
  Deadline answer = deadline.infinite() ? deadline : Deadline::AtNs(deadline.at_ns() + kAnswerGraceMs * 1000000ull);
  uint8_t hdr[net::kFrameHeaderBytes];
  st = net::ReadFully(fd.get(), hdr, sizeof(hdr), answer, who);
  if (st.code() == Code::kTimeout) {
    return MakeStatus(Code::kTimeout, "rank %u: %s did not answer within %llu ms (not all %u ranks joined?)", mine.rank,
                      who.c_str(), static_cast<unsigned long long>((NowNs() - start) / 1000000), nranks);
  }
  if (st.code() == Code::kRemote) {
    return MakeStatus(Code::kRemote, "rank %u: %s closed the connection before answering (wrong token or a "
                      "root info from another run?)", mine.rank, who.c_str());
  }
  HOSTCCL_RETURN_IF_ERROR(st);
  net::FrameHeader h;
  st = net::DecodeFrameHeader(hdr, sizeof(hdr), &h);
  if (st.ok() && h.type != net::FrameType::kRootTable && h.type != net::FrameType::kRootError)
    st = MakeStatus(Code::kPara, "unexpected %s frame", net::FrameTypeName(h.type));
  if (!st.ok()) return MakeStatus(Code::kTcpTransfer, "rank %u: bad answer from %s: %s", mine.rank, who.c_str(), st.message().c_str());
  std::vector<uint8_t> payload(h.payload_len);  // bounded by DecodeFrameHeader
  HOSTCCL_RETURN_IF_ERROR(net::ReadFully(fd.get(), payload.data(), payload.size(), answer, who));
  if (h.type == net::FrameType::kRootError) {
    std::string reason(payload.begin(), payload.end());
    for (char& c : reason)
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return Status(static_cast<Code>(h.code), StrFormat("rank %u: %s", mine.rank, reason.c_str()));
  }
  std::vector<RankInfo> all;
  st = DecodeRankTable(payload.data(), payload.size(), &all);
  if (st.ok() && all.size() != nranks)
    st = MakeStatus(Code::kPara, "table has %zu ranks, expected %u", all.size(), nranks);
  if (st.ok() && (all[mine.rank].proc_id != mine.proc_id || all[mine.rank].data_addr != mine.data_addr))
    st = MakeStatus(Code::kPara, "table entry for rank %u is not ours", mine.rank);
  if (!st.ok()) return MakeStatus(Code::kTcpTransfer, "rank %u: bad table from %s: %s", mine.rank, who.c_str(), st.message().c_str());
  HLOG_DEBUG(kBoot, "rank %u: rendezvous with %s done in %llu ms", mine.rank, who.c_str(),
             static_cast<unsigned long long>((NowNs() - start) / 1000000));
  *all_out = std::move(all);
  return Status::Ok();
}

}  // namespace hostccl::boot
