#include "common/env.h"

#include <strings.h>

#include <cerrno>
#include <cstdlib>

#include "common/log.h"

namespace hostccl {

const std::vector<KnobInfo>& AllKnobs() {
  static const std::vector<KnobInfo> knobs = {
#define X(id, name, type, def, help) {Knob::k##id, name, #type, def, help},
#include "common/env_knobs.def"
#undef X
  };
  return knobs;
}

const KnobInfo& GetKnobInfo(Knob k) { return AllKnobs()[static_cast<size_t>(k)]; }

std::optional<std::string> EnvRaw(Knob k) {
  const char* v = std::getenv(GetKnobInfo(k).name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::optional<int64_t> ParseInt(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  size_t i = 0;
  if (s[0] == '-' || s[0] == '+') i = 1;
  if (i == s.size()) return std::nullopt;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(v);
}

int64_t EnvInt(Knob k, int64_t fallback) {
  auto raw = EnvRaw(k);
  if (!raw) return fallback;
  auto v = ParseInt(*raw);
  if (!v) {
    HLOG_WARN(kEnv, "%s=%s is not an integer; using %lld", GetKnobInfo(k).name, raw->c_str(),
              static_cast<long long>(fallback));
    return fallback;
  }
  return *v;
}

std::string EnvString(Knob k, const std::string& fallback) {
  auto raw = EnvRaw(k);
  return raw ? *raw : fallback;
}

bool EnvBool(Knob k, bool fallback) {
  auto raw = EnvRaw(k);
  if (!raw) return fallback;
  const char* v = raw->c_str();
  if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
    return true;
  if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
    return false;
  HLOG_WARN(kEnv, "%s=%s is not a boolean; using %d", GetKnobInfo(k).name, v, fallback ? 1 : 0);
  return fallback;
}

}  // namespace hostccl
