// libFuzzer target (reliability.md row 7): hostccl::boot::ParseRankTable over arbitrary bytes.
// Contract checked: never crashes, never trips ASan/UBSan, and a table it accepts is consistent
// (at least one rank, rank i has id i and names a listed server). Built by scripts/fuzz.sh, not by CMake.
#include <cstddef>
#include <cstdint>
#include <string>

#include "bootstrap/ranktable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  hostccl::boot::RankTable table;
  hostccl::Status st = hostccl::boot::ParseRankTable(text, &table);
  if (st.ok()) {
    if (table.ranks.empty()) __builtin_trap();  // accepted a table without ranks
    for (size_t i = 0; i < table.ranks.size(); ++i) {
      const auto& r = table.ranks[i];
      if (r.rank_id != i || r.server_index >= table.servers.size()) __builtin_trap();
    }
  } else if (st.message().empty()) {
    __builtin_trap();  // every rejection says why
  }
  return 0;
}
