// Correctness cases of the block-moving collectives HcclAllGather, HcclAllGatherV and HcclScatter,
// run collectively by every rank of a RunRanks body (the grids <op>_grid_test.cc):
//   AllGather: every rank's recvBuf block i (sendCount elements at i x sendCount) is bitwise rank
//              i's input; the guard past n x sendCount is untouched; sendBuf (and its guard) is
//              unchanged when not in place. In place: sendBuf == recvBuf + r x sendCount (the NCCL
//              form) or sendBuf == recvBuf (the input sits in block 0 before the call).
//   AllGatherV: block i (recvCounts[i] elements) at recvDispls[i] of every recvBuf (VArrays: packed,
//              reversed with gaps, zero counts with gaps); every other byte of recvBuf (gaps, tail)
//              keeps its contents; ranks without a block pass sendBuf = NULL.
//   Scatter:   rank r's recvBuf is bitwise block r of the root's sendBuf, its guard untouched; the
//              root's sendBuf (n blocks + guard) is unchanged; non-roots pass sendBuf = NULL. In
//              place (root): recvBuf == sendBuf + root x recvCount.
// Inputs are random bits (NaN payloads must survive a copy), regenerated locally from (seed, dtype,
// rank), so no rank needs another's data to know the expected result. Count 0 changes nothing.
#pragma once

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/case_buffer.h"
#include "harness/collective_check.h"
#include "harness/input_gen.h"
#include "harness/reference_fold.h"
#include "harness/run_ranks.h"

namespace hostccl::test::movement {

constexpr size_t kGuardBytes = 64;

enum class InPlace { kNo, kBlock, kEqual };  // kEqual: AllGather only

struct AllGatherCase {
  HcclDataType dtype;
  uint64_t count;  // sendCount
  InPlace in_place;
  uint64_t seed;
  bool host_buf = false;  // malloc'd buffers instead of aclrtMalloc
};

struct ScatterCase {
  HcclDataType dtype;
  uint64_t count;  // recvCount
  uint32_t root;
  bool in_place;  // root: recvBuf == sendBuf + root x recvCount
  uint64_t seed;
  bool host_buf = false;
};

// AllGatherV layouts of the n blocks (counts and displacements in elements, identical on every
// rank): kPacked: count c each, displs in rank order; kReversed: rank n-1's block first, with gaps
// of 3 elements between blocks and before the first; kZeros: every third rank (0, 3, ...) sends
// nothing (its sendBuf is NULL), the others c + rank elements, in rank order with 1-element gaps.
enum class VLayout { kPacked, kReversed, kZeros };

struct AllGatherVCase {
  HcclDataType dtype;
  uint64_t count;  // c
  VLayout layout;
  uint64_t seed;
  bool host_buf = false;
};

inline void VArrays(const AllGatherVCase& c, int n, std::vector<uint64_t>* counts, std::vector<uint64_t>* displs) {
  counts->assign(static_cast<size_t>(n), c.count);
  displs->assign(static_cast<size_t>(n), 0);
  uint64_t at = 0;
  for (int k = 0; k < n; ++k) {
    const int r = c.layout == VLayout::kReversed ? n - 1 - k : k;
    uint64_t& cnt = (*counts)[static_cast<size_t>(r)];
    if (c.layout == VLayout::kZeros) cnt = r % 3 == 0 ? 0 : c.count + static_cast<uint64_t>(r);
    at += c.layout == VLayout::kReversed ? 3 : c.layout == VLayout::kZeros ? 1 : 0;
    (*displs)[static_cast<size_t>(r)] = at;
    at += cnt;
  }
}

inline std::string CaseName(const AllGatherVCase& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "allgatherv %s count=%" PRIu64 " %s seed=0x%" PRIx64 "%s", MovableDesc(c.dtype).name,
                c.count, c.layout == VLayout::kPacked ? "packed" : c.layout == VLayout::kReversed ? "reversed+gaps" : "zeros+gaps",
                c.seed, c.host_buf ? " malloc" : "");
  return buf;
}

inline std::string CaseName(const AllGatherCase& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "allgather %s count=%" PRIu64 "%s seed=0x%" PRIx64 "%s", MovableDesc(c.dtype).name,
                c.count, c.in_place == InPlace::kBlock ? " in-place" : c.in_place == InPlace::kEqual ? " send==recv" : "",
                c.seed, c.host_buf ? " malloc" : "");
  return buf;
}

inline std::string CaseName(const ScatterCase& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "scatter %s count=%" PRIu64 " root=%u%s seed=0x%" PRIx64 "%s",
                MovableDesc(c.dtype).name, c.count, c.root, c.in_place ? " in-place" : "", c.seed,
                c.host_buf ? " malloc" : "");
  return buf;
}

// `bytes` random bytes of block `block` of a case.
inline void BlockInput(uint64_t seed, HcclDataType t, int block, size_t bytes, char* out) {
  const uint64_t key = Mix64(seed ^ (static_cast<uint64_t>(t) << 40) ^ (static_cast<uint64_t>(block) << 20));
  uint64_t h = 0;
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0) h = Mix64(key + i);
    out[i] = static_cast<char>(h >> (8 * (i % 8)));
  }
}

inline bool SyncFailed(RankContext& ctx, const std::string& name) {
  aclError e = aclrtSynchronizeStream(ctx.stream);
  if (e == ACL_SUCCESS) return false;
  HcclResult async = HCCL_SUCCESS;
  (void)HcclGetCommAsyncError(ctx.comm, &async);
  ctx.Fail(name + ": aclrtSynchronizeStream returned " + std::to_string(e) + " (async error " + std::to_string(async) +
           "): " + aclGetRecentErrMsg());
  return true;
}

// One case on ctx's rank. Data mismatches are recorded with ctx.Fail and the sequence goes on;
// false only when a call failed and the ranks may be out of step (stop the body).
inline bool RunAllGatherCase(RankContext& ctx, const AllGatherCase& c) {
  const size_t es = MovableDesc(c.dtype).size;
  const std::string name = CaseName(c);
  const size_t bytes = c.count * es, n = static_cast<size_t>(ctx.nranks), r = static_cast<size_t>(ctx.rank);
  const size_t rtotal = n * bytes + kGuardBytes, stotal = bytes + kGuardBytes;
  std::vector<char> expected(n * bytes), recv_before(rtotal), send_before(stotal);
  for (size_t i = 0; i < n; ++i) BlockInput(c.seed, c.dtype, static_cast<int>(i), bytes, expected.data() + i * bytes);
  FillGuard(recv_before.data(), rtotal, c.seed ^ (0x9e37ull * (r + 1)));
  FillGuard(send_before.data(), stotal, c.seed ^ (0x7f4aull * (r + 1)));
  if (bytes > 0) {  // count 0 leaves `expected` empty, and memcpy takes no null pointer even for 0 bytes
    std::memcpy(send_before.data(), expected.data() + r * bytes, bytes);
    if (c.in_place == InPlace::kBlock) std::memcpy(recv_before.data() + r * bytes, expected.data() + r * bytes, bytes);
    if (c.in_place == InPlace::kEqual) std::memcpy(recv_before.data(), expected.data() + r * bytes, bytes);
  }
  CaseBuffer send_buf, recv_buf;
  if (c.host_buf && !AllowHostBuffers(ctx)) return false;  // NPU fidelity would reject them
  if (!recv_buf.Alloc(rtotal, c.host_buf)) return ctx.Fail(name + ": recv alloc failed");
  if (c.in_place == InPlace::kNo && !send_buf.Alloc(stotal, c.host_buf)) return ctx.Fail(name + ": send alloc failed");
  if (!recv_buf.Put(recv_before) || (c.in_place == InPlace::kNo && !send_buf.Put(send_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");
  char* send = c.in_place == InPlace::kNo ? send_buf.get()
               : c.in_place == InPlace::kBlock ? recv_buf.get() + r * bytes
                                               : recv_buf.get();
  HcclResult rc = HcclAllGather(send, recv_buf.get(), c.count, c.dtype, ctx.comm, ctx.stream);
  if (rc != HCCL_SUCCESS) return ctx.Fail(name + ": HcclAllGather returned " + std::to_string(rc));
  if (SyncFailed(ctx, name)) return false;
  std::vector<char> recv_after, send_after;
  if (!recv_buf.Get(&recv_after, rtotal) || (c.in_place == InPlace::kNo && !send_buf.Get(&send_after, stotal)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  std::string m;
  if (c.in_place == InPlace::kNo) {
    m = CompareBytes(send_before.data(), send_after.data(), stotal, name + ": sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }
  if (c.count == 0) {
    m = CompareBytes(recv_before.data(), recv_after.data(), rtotal, name + ": count 0 changed recvBuf");
    if (!m.empty()) ctx.Fail(m);
    return true;
  }
  m = CompareBytes(recv_before.data() + n * bytes, recv_after.data() + n * bytes, kGuardBytes,
                   name + ": recvBuf changed beyond n x count");
  if (!m.empty()) ctx.Fail(m);
  for (size_t i = 0; i < n && m.empty(); ++i) {
    m = CompareBytes(expected.data() + i * bytes, recv_after.data() + i * bytes, bytes,
                     name + ": block " + std::to_string(i));
    if (!m.empty()) ctx.Fail(m);
  }
  return true;
}

inline bool RunAllGatherVCase(RankContext& ctx, const AllGatherVCase& c) {
  const size_t es = MovableDesc(c.dtype).size;
  const std::string name = CaseName(c);
  const int n = ctx.nranks;
  const size_t r = static_cast<size_t>(ctx.rank);
  std::vector<uint64_t> counts, displs;
  VArrays(c, n, &counts, &displs);
  uint64_t extent = 0, sum = 0;
  for (int i = 0; i < n; ++i) {
    extent = std::max(extent, displs[static_cast<size_t>(i)] + counts[static_cast<size_t>(i)]);
    sum += counts[static_cast<size_t>(i)];
  }
  const size_t rtotal = extent * es + kGuardBytes, bytes = counts[r] * es, stotal = bytes + kGuardBytes;
  std::vector<char> recv_before(rtotal), send_before(stotal), expected;
  FillGuard(recv_before.data(), rtotal, c.seed ^ (0x9e37ull * (r + 1)));
  FillGuard(send_before.data(), stotal, c.seed ^ (0x7f4aull * (r + 1)));
  BlockInput(c.seed, c.dtype, static_cast<int>(r), bytes, send_before.data());
  expected = recv_before;  // gaps and the tail keep this rank's own guard
  for (int i = 0; i < n; ++i)
    BlockInput(c.seed, c.dtype, i, counts[static_cast<size_t>(i)] * es, expected.data() + displs[static_cast<size_t>(i)] * es);
  CaseBuffer send_buf, recv_buf;
  if (c.host_buf && !AllowHostBuffers(ctx)) return false;  // NPU fidelity would reject them
  if (!recv_buf.Alloc(rtotal, c.host_buf)) return ctx.Fail(name + ": recv alloc failed");
  const bool null_send = counts[r] == 0;  // a rank without a block passes NULL (allowed)
  if (!null_send && !send_buf.Alloc(stotal, c.host_buf)) return ctx.Fail(name + ": send alloc failed");
  if (!recv_buf.Put(recv_before) || (!null_send && !send_buf.Put(send_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");
  HcclResult rc = HcclAllGatherV(null_send ? nullptr : send_buf.get(), counts[r], recv_buf.get(), counts.data(),
                                 displs.data(), c.dtype, ctx.comm, ctx.stream);
  if (rc != HCCL_SUCCESS) return ctx.Fail(name + ": HcclAllGatherV returned " + std::to_string(rc));
  if (sum > 0 && SyncFailed(ctx, name)) return false;
  std::vector<char> recv_after, send_after;
  if (!recv_buf.Get(&recv_after, rtotal) || (!null_send && !send_buf.Get(&send_after, stotal)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  std::string m;
  if (!null_send) {
    m = CompareBytes(send_before.data(), send_after.data(), stotal, name + ": sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }
  m = CompareBytes(expected.data(), recv_after.data(), rtotal, name + ": recvBuf (blocks at their displacements, gaps untouched)");
  if (!m.empty()) ctx.Fail(m);
  return true;
}

inline bool RunScatterCase(RankContext& ctx, const ScatterCase& c) {
  const size_t es = MovableDesc(c.dtype).size;
  const std::string name = CaseName(c);
  const size_t bytes = c.count * es, n = static_cast<size_t>(ctx.nranks), r = static_cast<size_t>(ctx.rank);
  const bool is_root = r == c.root;
  const size_t stotal = n * bytes + kGuardBytes, rtotal = bytes + kGuardBytes;
  std::vector<char> send_before(stotal), recv_before(rtotal), expected(bytes);
  FillGuard(send_before.data(), stotal, c.seed ^ (0x5ca7ull * (r + 1)));
  FillGuard(recv_before.data(), rtotal, c.seed ^ (0x9e37ull * (r + 1)));
  for (size_t i = 0; i < n; ++i) BlockInput(c.seed, c.dtype, static_cast<int>(i), bytes, send_before.data() + i * bytes);
  BlockInput(c.seed, c.dtype, static_cast<int>(r), bytes, expected.data());
  const bool in_place = is_root && c.in_place;
  CaseBuffer send_buf, recv_buf;
  if (is_root && !send_buf.Alloc(stotal, c.host_buf)) return ctx.Fail(name + ": send alloc failed");
  if (c.host_buf && !AllowHostBuffers(ctx)) return false;  // NPU fidelity would reject them
  if (!in_place && !recv_buf.Alloc(rtotal, c.host_buf)) return ctx.Fail(name + ": recv alloc failed");
  if ((is_root && !send_buf.Put(send_before)) || (!in_place && !recv_buf.Put(recv_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");
  char* recv = in_place ? send_buf.get() + r * bytes : recv_buf.get();
  HcclResult rc = HcclScatter(is_root ? send_buf.get() : nullptr, recv, c.count, c.dtype, c.root, ctx.comm, ctx.stream);
  if (rc != HCCL_SUCCESS) return ctx.Fail(name + ": HcclScatter returned " + std::to_string(rc));
  if (SyncFailed(ctx, name)) return false;
  std::vector<char> send_after, recv_after;
  if ((is_root && !send_buf.Get(&send_after, stotal)) || (!in_place && !recv_buf.Get(&recv_after, rtotal)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  std::string m;
  if (is_root) {
    m = CompareBytes(send_before.data(), send_after.data(), stotal, name + ": the root's sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }
  if (in_place) return true;  // the block is the root's own, checked unchanged above
  if (c.count == 0) {
    m = CompareBytes(recv_before.data(), recv_after.data(), rtotal, name + ": count 0 changed recvBuf");
    if (!m.empty()) ctx.Fail(m);
    return true;
  }
  m = CompareBytes(recv_before.data() + bytes, recv_after.data() + bytes, kGuardBytes, name + ": recvBuf changed beyond count");
  if (!m.empty()) ctx.Fail(m);
  m = CompareBytes(expected.data(), recv_after.data(), bytes, name + ": result");
  if (!m.empty()) ctx.Fail(m);
  return true;
}

}  // namespace hostccl::test::movement
