#include "common/env.h"

#include <strings.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <set>

#include "common/log.h"
#include "common/status.h"

namespace hostccl {
namespace {

enum class CheckKind { kNone, kIntRange, kChoice, kChoiceNoCase, kNoEffect };

struct KnobCheck {
  CheckKind kind = CheckKind::kNone;
  int64_t min = 0, max = 0;
  const char* choices = "";
};

const KnobCheck& CheckOf(Knob k) {
  static const std::vector<KnobCheck> checks = [] {
    std::vector<KnobCheck> v(static_cast<size_t>(Knob::kCount));
#define KNOB_CHECK(id, kind, lo, hi, choices) v[static_cast<size_t>(Knob::k##id)] = {CheckKind::k##kind, lo, hi, choices};
#define X(...)
#include "common/env_knobs.def"
#undef X
#undef KNOB_CHECK
    return v;
  }();
  return checks[static_cast<size_t>(k)];
}

// One warning per process for each variable and value.
void WarnOnce(Knob k, const std::string& value, const std::string& text) {
  static std::mutex mu;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (!seen.insert(std::string(GetKnobInfo(k).name) + "=" + value).second) return;
  }
  HLOG_WARN(kEnv, "%s", text.c_str());
}

void WarnInvalid(Knob k, const std::string& value, const std::string& allowed, const std::string& used) {
  WarnOnce(k, value, StrFormat("EI0001: environment variable %s=%s is invalid: expected %s; using %s",
                               GetKnobInfo(k).name, value.c_str(), allowed.c_str(), used.c_str()));
}

std::string Allowed(const KnobCheck& c) {
  if (c.kind == CheckKind::kIntRange)
    return StrFormat("an integer in [%lld, %lld]", static_cast<long long>(c.min), static_cast<long long>(c.max));
  if (c.kind == CheckKind::kChoice || c.kind == CheckKind::kChoiceNoCase) {
    std::string s = "one of ";
    for (const char* p = c.choices; *p; ++p) s += *p == '|' ? std::string(", ") : std::string(1, *p);
    return c.kind == CheckKind::kChoiceNoCase ? s + " (any case)" : s;
  }
  return "an integer";
}

bool ChoiceMatches(const char* choices, const std::string& v, bool any_case) {
  std::string list(choices);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t bar = list.find('|', pos);
    if (bar == std::string::npos) bar = list.size();
    const std::string word = list.substr(pos, bar - pos);
    if (any_case ? strcasecmp(word.c_str(), v.c_str()) == 0 : word == v) return true;
    pos = bar + 1;
  }
  return false;
}

std::string DefaultText(const std::string& fallback) {
  return fallback.empty() ? std::string("the default") : fallback;
}

}  // namespace

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

std::optional<int64_t> EnvIntChecked(Knob k, const std::string& used) {
  auto raw = EnvRaw(k);
  if (!raw) return std::nullopt;
  const KnobCheck& c = CheckOf(k);
  auto v = ParseInt(*raw);
  if (!v || (c.kind == CheckKind::kIntRange && (*v < c.min || *v > c.max))) {
    WarnInvalid(k, *raw, Allowed(c), used);
    return std::nullopt;
  }
  return v;
}

int64_t EnvInt(Knob k, int64_t fallback) {
  auto v = EnvIntChecked(k, std::to_string(fallback));
  return v ? *v : fallback;
}

std::string EnvString(Knob k, const std::string& fallback) {
  auto raw = EnvRaw(k);
  if (!raw) return fallback;
  const KnobCheck& c = CheckOf(k);
  if ((c.kind == CheckKind::kChoice || c.kind == CheckKind::kChoiceNoCase) &&
      !ChoiceMatches(c.choices, *raw, c.kind == CheckKind::kChoiceNoCase)) {
    WarnInvalid(k, *raw, Allowed(c), DefaultText(fallback));
    return fallback;
  }
  return *raw;
}

void CheckEnvironmentOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& info : AllKnobs()) {
      const KnobCheck& c = CheckOf(info.id);
      auto raw = EnvRaw(info.id);
      if (!raw) continue;
      switch (c.kind) {
        case CheckKind::kNone: break;
        case CheckKind::kIntRange: (void)EnvIntChecked(info.id, *info.def ? info.def : "the default"); break;
        case CheckKind::kChoice:
        case CheckKind::kChoiceNoCase: (void)EnvString(info.id, info.def); break;
        case CheckKind::kNoEffect:
          WarnOnce(info.id, *raw,
                   StrFormat("%s=%s has no effect on a host (it configures NPU hardware); ignored", info.name,
                             raw->c_str()));
          break;
      }
    }
  });
}

bool EnvBool(Knob k, bool fallback) {
  auto raw = EnvRaw(k);
  if (!raw) return fallback;
  const char* v = raw->c_str();
  if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
    return true;
  if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
    return false;
  WarnInvalid(k, *raw, "1, true, yes, on, 0, false, no or off", fallback ? "1" : "0");
  return fallback;
}

}  // namespace hostccl
