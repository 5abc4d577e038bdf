// Host and process identity (LocalNodeId, LocalProcId) and the connect timeout.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "bootstrap/bootstrap.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

std::string FirstLine(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Field 22 (starttime) of /proc/self/stat; the comm field may contain spaces, so count after ')'.
std::string ProcessStartTime() {
  std::string stat = FirstLine("/proc/self/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "0";
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && (in >> field); ++i) {
    if (i == 22) return field;
  }
  return "0";
}

}  // namespace

std::string LocalNodeId() {
  if (auto id = EnvRaw(Knob::kNodeId)) return *id;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::string boot = FirstLine("/proc/sys/kernel/random/boot_id");
  return std::string(host) + "/" + boot;
}

std::string LocalProcId() {
  return LocalNodeId() + "/" + std::to_string(getpid()) + "/" + ProcessStartTime();
}

int64_t ConnectTimeoutMs() {
  int64_t ms = EnvInt(Knob::kConnectTimeoutMs, -1);
  if (ms > 0) return ms;
  const int64_t s = EnvInt(Knob::kHcclConnectTimeout, 120);  // [120, 7200], warned once
  return (s + 20) * 1000;
}

}  // namespace hostccl::boot
