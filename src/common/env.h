// The one registry of environment knobs (declared in env_knobs.def).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostccl {

enum class Knob : int {
#define X(id, name, type, def, help) k##id,
#include "common/env_knobs.def"
#undef X
  kCount
};

struct KnobInfo {
  Knob id;
  const char* name;
  const char* type;  // "int", "string", "bool"
  const char* def;   // "" = unset/automatic
  const char* help;
};

const std::vector<KnobInfo>& AllKnobs();
const KnobInfo& GetKnobInfo(Knob k);

// The raw value if the variable is set and non-empty (read live, not cached).
std::optional<std::string> EnvRaw(Knob k);

// Integer value: set and a valid integer -> value; unset -> fallback; invalid -> warning + fallback.
int64_t EnvInt(Knob k, int64_t fallback);
// String value or fallback when unset.
std::string EnvString(Knob k, const std::string& fallback = "");
// Bool: 1/true/yes/on vs 0/false/no/off (case-insensitive); invalid -> warning + fallback.
bool EnvBool(Knob k, bool fallback);

// Strict integer parse of a whole string (optional sign, decimal digits only).
std::optional<int64_t> ParseInt(const std::string& s);

}  // namespace hostccl
