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

// Integer value: set, an integer and inside the knob's range (env_knobs.def, KNOB_CHECK lines) -> value;
// unset -> fallback; invalid -> one warning per process and value (EI0001, naming the variable,
// the value and the range) + fallback.
int64_t EnvInt(Knob k, int64_t fallback);
// The same, nullopt when unset or invalid; `used` is what the warning says is used instead.
std::optional<int64_t> EnvIntChecked(Knob k, const std::string& used);
// String value or fallback when unset; a knob with a list of choices rejects other words the same
// way (one warning, fallback).
std::string EnvString(Knob k, const std::string& fallback = "");

// Checks every set knob with a rule once per process: bad values get their warning now, and each
// HCCL variable that means nothing on a host gets one warning. Called when a communicator is made.
void CheckEnvironmentOnce();
// Bool: 1/true/yes/on vs 0/false/no/off (case-insensitive); invalid -> warning + fallback.
bool EnvBool(Knob k, bool fallback);

// Strict integer parse of a whole string (optional sign, decimal digits only).
std::optional<int64_t> ParseInt(const std::string& s);

}  // namespace hostccl
