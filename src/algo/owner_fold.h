// Pipelined reduce-scatter by slice owner over the transport: the reduce-scatter step that
// AllReduce "rs_ag" (then allgathers) and ReduceScatter "owner" (the whole operator) share.
//
// What: owner j's slice is elements [lo[j], hi[j]) of every rank's sendBuf, cut into chunks of
//   `chunk` elements (identical on every rank). Every rank sends chunk c of slice j to owner j
//   straight from its sendBuf (all sends posted at once, per peer in chunk order); the owner
//   receives chunk c from its n-1 peers into K = 3 staging slots of (n-1) chunks and folds all n
//   inputs of it in rank order (its own from its sendBuf) into out: the canonical fold, never a
//   ring-order one. Chunk c + K's receives are posted into chunk c's slot once c is folded.
// Bytes per rank: sends (n-1) x its peers' slices, receives (n-1) x its own; folds n x its own.
// Hooks let the caller continue per chunk (AllReduce sends each folded chunk to every rank) and
//   post its own receives from the same peers after every reduce-scatter receive (per pair,
//   messages match in posting order).
// In place: out may equal the own slice's place in sendBuf (chunk c of it is read by the fold that
//   writes it); out must not overlap other slices of sendBuf (they are still being sent).
// Preconditions: a transport; n >= 2.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "algo/context.h"

namespace hostccl::algo {

struct OwnerSlices {
  std::vector<uint64_t> lo, hi;  // slice of each owner, in elements of sendBuf
  uint64_t chunk = 1;            // elements per chunk, > 0
  uint64_t chunks(int r) const {
    const size_t i = static_cast<size_t>(r);
    return (hi[i] - lo[i] + chunk - 1) / chunk;
  }
  uint64_t off(int r, uint64_t c) const { return lo[static_cast<size_t>(r)] + c * chunk; }
  uint64_t len(int r, uint64_t c) const { return std::min(chunk, hi[static_cast<size_t>(r)] - off(r, c)); }
};

struct OwnerFoldHooks {
  // Once every reduce-scatter receive of this rank is posted.
  std::function<Status()> all_posted;
  // Chunk c of the own slice was folded into `folded` (len(me, c) elements).
  std::function<Status(uint64_t c, char* folded)> folded;
};

// Folds the own slice into out (element lo[me] of the slice at out[0]); returns once every
// reduce-scatter send and receive of this rank completed.
Status OwnerFold(Context& ctx, const OpArgs& a, const OwnerSlices& s, char* out, const OwnerFoldHooks& hooks);

}  // namespace hostccl::algo
