// Rank table loading (re-read until "completed") and the rank-table rendezvous plan.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/job_identity.h"
#include "bootstrap/ranktable.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

constexpr uint16_t kDefaultRankTablePort = 60000;

Status ReadWholeFile(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return MakeStatus(Code::kOpenFile, "cannot open rank table '%s': %s (errno %d)", path.c_str(),
                      strerror(err), err);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeStatus(Code::kOpenFile, "rank table '%s' is not a regular file", path.c_str());
  }
  // Checked before reading, so a huge file is rejected without touching its bytes.
  if (static_cast<uint64_t>(st.st_size) > kMaxRankTableBytes) {
    close(fd);
    return MakeStatus(Code::kPara, "rank table '%s' is %lld bytes, larger than the %zu-byte limit",
                      path.c_str(), static_cast<long long>(st.st_size), kMaxRankTableBytes);
  }
  out->clear();
  out->reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return MakeStatus(Code::kOpenFile, "cannot read rank table '%s': %s (errno %d)", path.c_str(),
                        strerror(err), err);
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > kMaxRankTableBytes) {
      close(fd);
      return MakeStatus(Code::kPara,
                        "rank table '%s' grew beyond the %zu-byte limit while being read",
                        path.c_str(), kMaxRankTableBytes);
    }
  }
  close(fd);
  return Status::Ok();
}

}  // namespace

Status LoadRankTable(const std::string& path, Deadline deadline, RankTable* out,
                     std::string* raw_bytes) {
  if (out == nullptr) return MakeStatus(Code::kPtr, "rank table: output pointer is null");
  if (path.empty()) return MakeStatus(Code::kPara, "rank table path is empty");
  if (path.size() > kMaxRankTablePathLen) {
    return MakeStatus(Code::kPara, "rank table path is %zu bytes long; at most %zu are allowed",
                      path.size(), kMaxRankTablePathLen);
  }
  uint64_t start = NowNs();
  bool logged_wait = false;
  for (;;) {
    std::string text;
    HOSTCCL_RETURN_IF_ERROR(ReadWholeFile(path, &text));
    Status st = ParseRankTable(text, out);
    if (st.code() != Code::kAgain) {
      if (!st.ok())
        return MakeStatus(st.code(), "%s (file '%s')", st.message().c_str(), path.c_str());
      if (raw_bytes != nullptr) *raw_bytes = std::move(text);
      return st;
    }
    if (deadline.Expired()) {
      return MakeStatus(Code::kTimeout, "rank table '%s' still not ready after %llu ms: %s",
                        path.c_str(), static_cast<unsigned long long>((NowNs() - start) / 1000000),
                        st.message().c_str());
    }
    if (!logged_wait) {
      HLOG_INFO(kBoot, "rank table '%s' not ready (%s); re-reading once a second", path.c_str(),
                st.message().c_str());
      logged_wait = true;
    }
    // HCCL re-reads once a second; never sleep past the deadline.
    int wait_ms = deadline.RemainingMsForPoll();
    if (wait_ms < 0 || wait_ms > 1000) wait_ms = 1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

void HashBytes128(const std::string& bytes, uint8_t out[16]) {
  // Two FNV-1a lanes with different seeds, each finished with a splitmix64 avalanche.
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull ^ bytes.size();
  for (unsigned char c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x00000100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  a = mix(a);
  b = mix(b ^ a);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<uint8_t>(a >> (8 * i));
    out[8 + i] = static_cast<uint8_t>(b >> (8 * i));
  }
}

Status RankTableRoot(const RankTable& table, const std::string& raw_bytes, RootInfo* out) {
  if (out == nullptr) return MakeStatus(Code::kPtr, "rank table root: output pointer is null");
  if (table.ranks.empty() || table.servers.empty())
    return MakeStatus(Code::kPara, "rank table root: the table has no ranks");
  const RankTableServer& root_server = table.servers[table.ranks[0].server_index];
  RootInfo info;
  if (!root_server.host_ip.empty()) {
    info.ip = root_server.host_ip;
  } else if (table.servers.size() == 1) {
    info.ip = "127.0.0.1";
  } else {
    return MakeStatus(Code::kPara,
                      "rank table has %zu servers but server \"%s\" (rank 0's) has no host_ip; "
                      "hostccl needs host_ip to rendezvous across hosts",
                      table.servers.size(), root_server.server_id.c_str());
  }
  int64_t port = kDefaultRankTablePort;
  if (auto raw = EnvRaw(Knob::kHcclIfBasePort)) {
    auto v = ParseInt(*raw);
    if (!v || *v < 1024 || *v > 65520)
      return MakeStatus(Code::kPara, "HCCL_IF_BASE_PORT=%s is not an integer in [1024, 65520]",
                        raw->c_str());
    port = *v;
  }
  info.port = static_cast<uint16_t>(port);
  // Two jobs started from the same file agree on address, port and bytes: only the launcher's job
  // identity tells them apart, so it is part of the token (a rank of another job gets "another
  // job's root" from the root instead of joining it).
  JobIdentity job = LauncherJobIdentity();
  HashBytes128(job.empty() ? raw_bytes : raw_bytes + std::string(1, '\0') + "job:" + job.Describe(), info.token);
  info.shared_port = true;
  info.identifier = "hccl_world_group";
  *out = std::move(info);
  return Status::Ok();
}

}  // namespace hostccl::boot
