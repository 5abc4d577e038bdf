// The algorithm registry: one row per (operator, algorithm). The selector (core/selector.cc)
// walks an operator's ordered rules (HOSTCCL_ALGO's rules first, then the default rules) and
// takes the first algorithm whose placement needs are met and whose size limit (max_bytes) holds
// the call; every algorithm that runs is a row here, so it can be forced, is logged by name and
// is listed by hccl_info.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "algo/context.h"

namespace hostccl::algo {

using AlgoFn = Status (*)(Context& ctx, const OpArgs& args);

// Placement needs (bits).
enum Needs : uint32_t {
  kNeedsLocal = 1,      // every rank is a thread of this process (ctx.local)
  kNeedsShm = 2,        // every rank on this host with a shared segment (ctx.shm)
  kNeedsNodes = 4,      // several hosts, contiguous per host, per-host segments (ctx.node_shm)
  kNeedsTransport = 8,  // point-to-point messages (ctx.transport), unless there is one rank
  kNeedsStaging = 16,   // with kNeedsShm: the segment has staging (processes; thread ranks' in-process one has none)
};

struct Algorithm {
  CollKind op;
  const char* name;
  const char* summary;  // one line: what it does and when it wins
  uint32_t needs;
  uint64_t chunk_cap;   // pipelined algorithms: largest default chunk in bytes (0 = not chunked)
  AlgoFn run;
  // Largest message (bytes per rank, OpArgs::bytes()) the algorithm can take; 0 = no limit. A
  // rule naming it for a larger call is skipped (a forced one with a warning). Last, with a
  // default, so rows without a limit need not spell it.
  uint64_t max_bytes = 0;
  // Largest message the algorithm may run as an inline attempt (rt::Stream::EnqueueAttempt, on
  // the calling thread while its stream is idle); 0 = never. Only for algorithms whose first step
  // with the other ranks is one shared-memory arrival (ShmGroup::Arrive, Post or Exchange, which
  // give up instead of waiting in an attempt) and whose work before it may simply run again.
  uint64_t attempt_bytes = 0;
};

// Can `a` run a message of `bytes` as an inline attempt?
inline bool AttemptsBytes(const Algorithm& a, uint64_t bytes) { return a.attempt_bytes != 0 && bytes <= a.attempt_bytes; }

// Can `a` take a message of `bytes` per rank (its max_bytes)?
inline bool TakesBytes(const Algorithm& a, uint64_t bytes) { return a.max_bytes == 0 || bytes <= a.max_bytes; }

const std::vector<Algorithm>& Algorithms();
const Algorithm* FindAlgorithm(CollKind op, std::string_view name);

// Element-aligned pipeline chunk (elements) from ctx.chunk_bytes, at most `count`.
uint64_t ChunkElems(const Context& ctx, const OpArgs& args);

}  // namespace hostccl::algo
