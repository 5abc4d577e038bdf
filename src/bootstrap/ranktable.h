// Rank tables: the JSON files behind HcclCommInitClusterInfo[Config] (hccl-api-facts.md §6).
//
// Formats: version "1.0" and "1.2" (every scalar is a JSON string: "rank_id":"0"), "2.0" (ids and
// counts are JSON numbers) and the legacy "Standard" layout (no version; group_list/instance_list/
// devices, ranks numbered in listing order). Anything else -> kNotSupport.
//
// Contract: ParseRankTable never throws and never crashes on any input; a malformed table gives
// kPara with the key path ("server_list[1].device[0].rank_id") and the reason. A table whose
// "status" is not "completed" gives kAgain ("not ready": the loader re-reads it). All functions are
// pure apart from LoadRankTable, which blocks (re-reading once a second) until the deadline.
// Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/clock.h"
#include "common/status.h"

namespace hostccl::boot {

// Largest rank table accepted (HCCL documents 1 GB for version 2.0).
constexpr size_t kMaxRankTableBytes = size_t{1} << 30;
// Longest path accepted: 4096 bytes including the NUL.
constexpr size_t kMaxRankTablePathLen = 4095;
// Deepest JSON nesting accepted (real tables need 6).
constexpr int kMaxRankTableDepth = 64;

struct RankTableRank {
  uint32_t rank_id = 0;
  std::string server_id;
  uint32_t server_index = 0;  // index into RankTable::servers
  int32_t device_id = -1;
  std::string host_ip;       // of the rank's server; may be empty
  std::string device_ip;     // may be empty
  std::string super_pod_id;  // version 1.2 only; may be empty
  int32_t super_device_id = -1;
};

struct RankTableServer {
  std::string server_id;
  std::string host_ip;          // may be empty
  std::string super_pod_id;     // may be empty
  std::vector<uint32_t> ranks;  // rank ids, ascending
};

struct RankTable {
  std::string version;                   // "1.0", "1.2", "2.0" or "Standard"
  std::vector<RankTableRank> ranks;      // indexed by rank id (0..N-1)
  std::vector<RankTableServer> servers;  // in listing order
};

// Parses and validates a rank table held in memory.
Status ParseRankTable(const std::string& text, RankTable* out);

// Reads the file at `path` (<= 4095 bytes, <= kMaxRankTableBytes) and parses it, re-reading once a
// second while its status is not "completed". Unreadable file -> kOpenFile naming the path and
// errno; still not completed at the deadline -> kTimeout. raw_bytes (may be null) gets the bytes
// of the accepted file.
Status LoadRankTable(const std::string& path, Deadline deadline, RankTable* out,
                     std::string* raw_bytes);

// The rendezvous plan for a rank-table communicator: root = rank 0, at the host_ip of rank 0's
// server (or 127.0.0.1 when the table has a single server), port HCCL_IF_BASE_PORT or 60000,
// token = 128-bit hash of the file bytes and the launcher's job identity (job_identity.h),
// identifier "hccl_world_group", shared_port = true.
Status RankTableRoot(const RankTable& table, const std::string& raw_bytes, RootInfo* out);

// The 128-bit token RankTableRoot uses (exposed for tests).
void HashBytes128(const std::string& bytes, uint8_t out[16]);

}  // namespace hostccl::boot
