// Rendezvous: one rank's side of the root-info exchange. Connects to the root (retrying until
// the deadline), sends ROOT_HELLO, and waits for ROOT_TABLE or ROOT_ERROR. The wait for the
// answer gets a short grace past the deadline so the root's own timeout message (which names the
// missing ranks) wins the race against our local timeout.
//
// A root with another token answers ROOT_ERROR kRootErrorOtherJob naming itself. For a root info
// that is final (the root info is from another run: its port now belongs to another root). For a
// rank table (RootInfo::shared_port) it means another job's root holds the fixed port for now:
// this rank retries until its own root serves it or the deadline passes. A connection closed
// without any answer means the root process stopped serving: it exited or was killed.
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/job_identity.h"
#include "bootstrap/root_wire.h"
#include "common/log.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace hostccl::boot {
namespace {

constexpr int64_t kAnswerGraceMs = 2000;
constexpr int kOtherJobRetryMs = 200;

std::string Printable(const std::vector<uint8_t>& payload) {
  std::string s(payload.begin(), payload.end());
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return s;
}

enum class Outcome { kDone, kOtherJob, kClosed, kNoAnswer };

// One connection: connect, HELLO, answer. kOtherJob/kClosed leave the detail in *detail.
Status Attempt(const RootInfo& root, uint32_t nranks, const RankInfo& me, Deadline deadline, const std::string& who,
               std::vector<RankInfo>* all, Outcome* outcome, std::string* detail) {
  *outcome = Outcome::kDone;
  net::SockAddr addr;
  HOSTCCL_RETURN_IF_ERROR(net::MakeSockAddr(root.ip, root.port, &addr));
  net::Fd fd;
  Status st = net::ConnectWithRetry(addr, deadline, &fd);
  if (!st.ok()) {
    return MakeStatus(st.code(), "rank %u: cannot reach the %s (%s): %s", me.rank, who.c_str(),
                      root.identifier.c_str(), st.message().c_str());
  }
  std::string hello = MakeRootFrame(static_cast<uint16_t>(net::FrameType::kRootHello), 0,
                                    EncodeRootHello(root.token, nranks, me));
  st = net::WriteFully(fd.get(), hello.data(), hello.size(), deadline, who);
  if (!st.ok() && st.code() != Code::kTimeout) {
    *outcome = Outcome::kClosed;
    *detail = st.message();
    return st;
  }
  HOSTCCL_RETURN_IF_ERROR(st);
  Deadline answer = deadline.infinite() ? deadline : Deadline::AtNs(deadline.at_ns() + kAnswerGraceMs * 1000000ull);
  uint8_t hdr[net::kFrameHeaderBytes];
  st = net::ReadFully(fd.get(), hdr, sizeof(hdr), answer, who);
  if (st.code() == Code::kTimeout) {
    *outcome = Outcome::kNoAnswer;
    return st;
  }
  if (st.code() == Code::kRemote) {
    *outcome = Outcome::kClosed;
    *detail = st.message();
    return st;
  }
  HOSTCCL_RETURN_IF_ERROR(st);
  net::FrameHeader h;
  st = net::DecodeFrameHeader(hdr, sizeof(hdr), &h);
  if (st.ok() && h.type != net::FrameType::kRootTable && h.type != net::FrameType::kRootError)
    st = MakeStatus(Code::kPara, "unexpected %s frame", net::FrameTypeName(h.type));
  if (!st.ok()) return MakeStatus(Code::kTcpTransfer, "rank %u: bad answer from %s: %s", me.rank, who.c_str(), st.message().c_str());
  std::vector<uint8_t> payload(h.payload_len);  // bounded by DecodeFrameHeader
  HOSTCCL_RETURN_IF_ERROR(net::ReadFully(fd.get(), payload.data(), payload.size(), answer, who));
  if (h.type == net::FrameType::kRootError) {
    if (h.code == kRootErrorOtherJob) {
      *outcome = Outcome::kOtherJob;
      *detail = Printable(payload);
      return MakeStatus(Code::kRemote, "%s", detail->c_str());
    }
    Code code = h.code > 0 ? static_cast<Code>(h.code) : Code::kRemote;
    return Status(code, StrFormat("rank %u: %s", me.rank, Printable(payload).c_str()));
  }
  st = DecodeRankTable(payload.data(), payload.size(), all);
  if (st.ok() && all->size() != nranks)
    st = MakeStatus(Code::kPara, "table has %zu ranks, expected %u", all->size(), nranks);
  if (st.ok() && ((*all)[me.rank].proc_id != me.proc_id || (*all)[me.rank].data_addr != me.data_addr))
    st = MakeStatus(Code::kPara, "table entry for rank %u is not ours", me.rank);
  if (!st.ok()) return MakeStatus(Code::kTcpTransfer, "rank %u: bad table from %s: %s", me.rank, who.c_str(), st.message().c_str());
  return Status::Ok();
}

}  // namespace

Status Rendezvous(const RootInfo& root, uint32_t nranks, const RankInfo& mine, Deadline deadline,
                  std::vector<RankInfo>* all_out) {
  if (all_out == nullptr) return MakeStatus(Code::kPtr, "Rendezvous: null output");
  if (nranks == 0 || nranks > kMaxRanks) return MakeStatus(Code::kPara, "nRanks %u outside [1, %u]", nranks, kMaxRanks);
  if (mine.rank >= nranks) return MakeStatus(Code::kPara, "rank %u is not below nRanks %u", mine.rank, nranks);
  RankInfo me = mine;
  if (me.job.empty()) {
    JobIdentity job = LauncherJobIdentity();
    if (!job.empty()) me.job = job.Describe();
  }
  const std::string job_text = me.job.empty() ? "no launcher job id" : me.job;
  std::string who = "root " + net::FormatHostPort(root.ip, root.port);
  uint64_t start = NowNs();
  std::string other;  // the other job's root that held a rank table's port, if any
  for (;;) {
    std::vector<RankInfo> all;
    Outcome outcome = Outcome::kDone;
    std::string detail;
    Status st = Attempt(root, nranks, me, deadline, who, &all, &outcome, &detail);
    const auto waited_ms = static_cast<unsigned long long>((NowNs() - start) / 1000000);
    if (st.ok()) {
      HLOG_DEBUG(kBoot, "rank %u: rendezvous with %s done in %llu ms", me.rank, who.c_str(), waited_ms);
      if (!other.empty())
        HLOG_INFO(kBoot, "rank %u: %s now serves this job (%s) after another job's root (%s) held it", me.rank,
                  who.c_str(), job_text.c_str(), other.c_str());
      *all_out = std::move(all);
      return Status::Ok();
    }
    if (outcome == Outcome::kOtherJob && !root.shared_port) {
      return MakeStatus(Code::kRemote, "rank %u: %s refused this rank's token: it serves %s. This root info is from "
                        "another run (its root finished or exited and another root now has the port)",
                        me.rank, who.c_str(), detail.c_str());
    }
    if (outcome == Outcome::kOtherJob || (outcome == Outcome::kClosed && root.shared_port)) {
      // A rank table's fixed port, held by another job's root (or released by a root just now: a
      // connection that reached its listener as it closed is reset). Its own root may come yet.
      if (outcome == Outcome::kOtherJob && other != detail) {
        HLOG_WARN(kBoot, "rank %u: the rank table's root port %s is held by another job's root (%s); this job (%s) "
                  "waits for its own root until the connect timeout", me.rank, who.c_str(), detail.c_str(),
                  job_text.c_str());
        other = detail;
      }
      if (deadline.Expired() && other.empty()) {
        return MakeStatus(Code::kRemote, "rank %u: %s closed the connection before answering until the connect "
                          "timeout: the root process exited, was killed or stopped serving during init (%s)",
                          me.rank, who.c_str(), detail.c_str());
      }
      if (deadline.Expired()) {
        return MakeStatus(Code::kTimeout, "rank %u: for %llu ms the rank table's root port %s was held by another "
                          "job's root (%s), never by this job's (%s): two jobs started from the same rank table on "
                          "the same port; give each its own HCCL_IF_BASE_PORT or let them run one after the other",
                          me.rank, waited_ms, who.c_str(), other.c_str(), job_text.c_str());
      }
      int wait_ms = std::min(outcome == Outcome::kClosed ? 20 : kOtherJobRetryMs, std::max(0, deadline.RemainingMsForPoll()));
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      continue;
    }
    if (outcome == Outcome::kClosed) {
      return MakeStatus(Code::kRemote, "rank %u: %s closed the connection before answering: the root process exited, "
                        "was killed or stopped serving during init (%s)", me.rank, who.c_str(), detail.c_str());
    }
    if (outcome == Outcome::kNoAnswer) {
      if (!other.empty())
        return MakeStatus(Code::kTimeout, "rank %u: %s did not answer within %llu ms; before that another job's root "
                          "(%s) held the port", me.rank, who.c_str(), waited_ms, other.c_str());
      return MakeStatus(Code::kTimeout, "rank %u: %s did not answer within %llu ms (not all %u ranks joined?)", me.rank,
                        who.c_str(), waited_ms, nranks);
    }
    return st;
  }
}

}  // namespace hostccl::boot
