// Reduce, "shm" with buffers that are not shareable (malloc/new/stack memory: no memfd to map).
//
// What: entered from ReduceShm after its first barrier (descriptors published, fingerprints equal)
//   when a sendBuf is not shareable, or when only the root's recvBuf is not and CMA is allowed.
//   The plan depends only on the published descriptors, the size and the group's CMA verdict, so
//   every rank picks the same one:
//   "cma"     (ShmGroup::cma(), process_vm_readv allowed, input <= kCmaMaxBytes: above it staging
//             is faster on the project machine): slice-parallel as in ReduceShm. Each rank
//             folds its slice in kCmaChunkBytes chunks; a non-shareable peer input chunk is read
//             with process_vm_readv into this rank's scratch (communicator Scratch: allocated
//             once, pre-faulted), shareable ones through the mappings, in rank order. The folded
//             chunk goes straight into the root's recvBuf when it is mapped (or this rank is the
//             root), else through one process_vm_writev per chunk. One final barrier.
//   "staging" (no CMA or a large input; segment staging present): chunks of kShmStagingSlotBytes. Per chunk, every
//             rank with a non-shareable sendBuf copies its chunk into its input slot (two slots
//             per rank, alternating), one barrier, then every rank folds its sub-slice from the
//             slots (shareable inputs in place) into the root's recvBuf when mapped, else into an
//             output slot that the root copies out after the next barrier. nchunks + 1 barriers.
//   "tcp"     (neither): gather / chain over the TCP mesh.
// Bit-exactness: FoldN over the n inputs in rank order, on any sub-range: the canonical fold.
// Errors: a failed copy (peer died: ESRCH; unreadable buffer) aborts the group (peers blocked in a
//   barrier fail with the same status) and fails this operation.
// Example: 2 processes, 1 MiB fp32 malloc'd sendBufs, CMA: rank 1 folds elements [128Ki, 256Ki) in
//   64 Ki-element chunks: reads rank 0's chunk (process_vm_readv), folds it with its own into its
//   scratch and writes the chunk into rank 0's recvBuf (process_vm_writev) unless that is mapped.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algo/peer_fold.h"
#include "algo/primitives.h"
#include "algo/reduce/reduce_algorithms.h"
#include "common/log.h"
#include "common/thread_state.h"
#include "kernels/reduce.h"
#include "transport/shm/cma.h"

namespace hostccl::algo {
namespace {

// Where rank r's input can be read directly in this process, or nullptr (read it by CMA / staging).
const char* DirectSend(Context& ctx, const ReduceArgs& a, int r, std::string* why) {
  net::ShmGroup* g = ctx.shm;
  if (r == ctx.rank) return static_cast<const char*>(a.send);
  const net::BufDesc& d = g->SendDesc(r);
  if (g->SameProcess(r)) return reinterpret_cast<const char*>(d.addr);
  if (d.serial == 0) return nullptr;
  return static_cast<const char*>(g->PeerSend(r, why));
}

// The root's recvBuf in this process, or nullptr when it is not shareable.
char* DirectRecv(Context& ctx, const ReduceArgs& a, std::string* why) {
  net::ShmGroup* g = ctx.shm;
  if (a.root == ctx.rank) return static_cast<char*>(a.recv);
  const net::BufDesc& d = g->RecvDesc(a.root);
  if (g->SameProcess(a.root)) return reinterpret_cast<char*>(d.addr);
  if (d.serial == 0) return nullptr;
  return static_cast<char*>(g->PeerRecv(a.root, why));
}

Status Failed(Context& ctx, const Status& st) {
  ctx.shm->Abort(st.code(), st.message(), ctx.fp.seq);
  return st;
}

Status ReduceCma(Context& ctx, const ReduceArgs& a) {
  net::ShmGroup* g = ctx.shm;
  const int n = ctx.size;
  const uint64_t es = DataTypeSize(a.dtype);
  std::string why;
  thread_local ExitMarked<std::vector<const char*>> direct;
  thread_local ExitMarked<std::vector<const void*>> srcs;
  direct.assign(static_cast<size_t>(n), nullptr);
  srcs.resize(static_cast<size_t>(n));
  int remote = 0;
  for (int r = 0; r < n; ++r) {
    direct[static_cast<size_t>(r)] = DirectSend(ctx, a, r, &why);
    if (direct[static_cast<size_t>(r)] == nullptr) {
      if (g->SendDesc(r).serial != 0) return Failed(ctx, Status(Code::kRemote, why));  // shareable but unmappable
      ++remote;
    }
  }
  char* dst = DirectRecv(ctx, a, &why);
  if (dst == nullptr && g->RecvDesc(a.root).serial != 0) return Failed(ctx, Status(Code::kRemote, why));
  const uint64_t recv_addr = g->RecvDesc(a.root).addr;

  uint64_t begin = 0, end = 0;
  PartRange(a.count, n, ctx.rank, std::max<uint64_t>(1, 64 / es), &begin, &end);
  const uint64_t chunk = std::max<uint64_t>(1, kCmaChunkBytes / es);
  const uint64_t slot = (chunk * es + 63) & ~uint64_t{63};
  char* scratch = nullptr;
  if (begin < end) {
    scratch = static_cast<char*>(ctx.scratch->Get(slot * static_cast<uint64_t>(remote + 1)));
    if (scratch == nullptr)
      return Failed(ctx, MakeStatus(Code::kMemory, "rank %d: cannot allocate %llu bytes of CMA scratch", ctx.rank,
                                    static_cast<unsigned long long>(slot * static_cast<uint64_t>(remote + 1))));
  }
  for (uint64_t cb = begin; cb < end; cb += chunk) {
    const uint64_t len = std::min(chunk, end - cb);
    int k = 0;
    for (int r = 0; r < n; ++r) {
      const char* p = direct[static_cast<size_t>(r)];
      if (p != nullptr) {
        srcs[static_cast<size_t>(r)] = p + cb * es;
        continue;
      }
      char* buf = scratch + slot * static_cast<uint64_t>(k++);
      Status st = net::CmaRead(g->Pid(r), r, g->SendDesc(r).addr + cb * es, buf, len * es);
      if (!st.ok()) return Failed(ctx, st);
      srcs[static_cast<size_t>(r)] = buf;
    }
    char* out = dst != nullptr ? dst + cb * es : scratch + slot * static_cast<uint64_t>(remote);
    FoldInputs(ctx, a.dtype, a.op, out, srcs.data(), n, len);
    if (dst == nullptr) {
      Status st = net::CmaWrite(g->Pid(a.root), a.root, recv_addr + cb * es, out, len * es);
      if (!st.ok()) return Failed(ctx, st);
    }
  }
  return g->Barrier(ctx.deadline, ctx.fp.seq);
}

Status ReduceStaging(Context& ctx, const ReduceArgs& a) {
  net::ShmGroup* g = ctx.shm;
  const int n = ctx.size;
  const uint64_t es = DataTypeSize(a.dtype);
  const uint64_t slot_bytes = (g->staging_bytes() / (2 * static_cast<uint64_t>(n) + 2)) & ~uint64_t{63};
  const uint64_t chunk = std::max<uint64_t>(1, slot_bytes / es);
  const uint64_t nchunks = (a.count + chunk - 1) / chunk;
  auto off = [&](uint64_t c) { return c * chunk; };
  auto len = [&](uint64_t c) { return std::min(chunk, a.count - c * chunk); };
  auto in_slot = [&](int r, uint64_t c) { return g->Staging() + (2 * static_cast<uint64_t>(r) + c % 2) * slot_bytes; };
  auto out_slot = [&](uint64_t c) { return g->Staging() + (2 * static_cast<uint64_t>(n) + c % 2) * slot_bytes; };
  std::string why;
  thread_local ExitMarked<std::vector<const char*>> direct;
  thread_local ExitMarked<std::vector<const void*>> srcs;
  direct.assign(static_cast<size_t>(n), nullptr);
  srcs.resize(static_cast<size_t>(n));
  // Staged: every rank whose sendBuf is not shareable (the same set on every rank).
  for (int r = 0; r < n; ++r) {
    if (g->SendDesc(r).serial == 0) continue;
    direct[static_cast<size_t>(r)] = DirectSend(ctx, a, r, &why);
    if (direct[static_cast<size_t>(r)] == nullptr) return Failed(ctx, Status(Code::kRemote, why));
  }
  const bool recv_direct = g->RecvDesc(a.root).serial != 0;
  char* dst = nullptr;
  if (recv_direct && (dst = DirectRecv(ctx, a, &why)) == nullptr) return Failed(ctx, Status(Code::kRemote, why));
  const bool staged_me = g->SendDesc(ctx.rank).serial == 0;
  const bool copy_out = ctx.rank == a.root && !recv_direct;
  char* recv = static_cast<char*>(a.recv);

  for (uint64_t c = 0; c < nchunks; ++c) {
    // Slot c % 2 was last read while folding chunk c - 2, which every rank finished before the
    // barrier that opened chunk c - 1.
    if (staged_me) std::memcpy(in_slot(ctx.rank, c), static_cast<const char*>(a.send) + off(c) * es, len(c) * es);
    HOSTCCL_RETURN_IF_ERROR(g->Barrier(ctx.deadline, ctx.fp.seq));
    // Every rank finished folding chunk c - 1 into its output slot.
    if (copy_out && c > 0) std::memcpy(recv + off(c - 1) * es, out_slot(c - 1), len(c - 1) * es);
    uint64_t b = 0, e = 0;
    PartRange(len(c), n, ctx.rank, std::max<uint64_t>(1, 64 / es), &b, &e);
    if (b >= e) continue;
    for (int r = 0; r < n; ++r) {
      const char* p = direct[static_cast<size_t>(r)];
      srcs[static_cast<size_t>(r)] = p != nullptr ? p + (off(c) + b) * es : in_slot(r, c) + b * es;
    }
    char* out = recv_direct ? dst + (off(c) + b) * es : out_slot(c) + b * es;
    FoldInputs(ctx, a.dtype, a.op, out, srcs.data(), n, e - b);
  }
  HOSTCCL_RETURN_IF_ERROR(g->Barrier(ctx.deadline, ctx.fp.seq));
  if (copy_out && nchunks > 0)
    std::memcpy(recv + off(nchunks - 1) * es, out_slot(nchunks - 1), len(nchunks - 1) * es);
  return Status::Ok();
}

}  // namespace

Status ReduceShmUnshared(Context& ctx, const ReduceArgs& a) {
  net::ShmGroup* g = ctx.shm;
  const uint64_t bytes = a.count * DataTypeSize(a.dtype);
  const int unshared = g->FirstUnmappable(/*recv_too=*/false);
  const unsigned long long seq = static_cast<unsigned long long>(ctx.fp.seq);
  const std::string what = unshared >= 0 ? StrFormat("rank %d's sendBuf", unshared)
                                         : StrFormat("root %d's recvBuf", a.root);
  const bool staging = g->Staging() != nullptr && g->staging_bytes() >= (2 * static_cast<size_t>(ctx.size) + 2) * 4096;
  if (g->cma() && (bytes <= kCmaMaxBytes || !staging)) {
    if (g->FirstUse(unshared >= 0 ? "reduce shm -> shm_cma (readv)" : "reduce shm -> shm_cma (writev)"))
      HLOG_INFO(kShm, "HcclReduce #%llu: %s is not aclrtMalloc memory; re-plan shm -> shm_cma (process_vm_%s)", seq,
                 what.c_str(), unshared >= 0 ? "readv" : "writev");
    return ReduceCma(ctx, a);
  }
  if (staging) {
    if (g->FirstUse("reduce shm -> shm_staging"))
      HLOG_INFO(kShm, "HcclReduce #%llu: %s is not aclrtMalloc memory; re-plan shm -> shm_staging (%s)",
                 seq, what.c_str(), g->cma() ? "above 1 MiB staging is faster than process_vm_readv"
                                             : "process_vm_readv is not allowed");
    return ReduceStaging(ctx, a);
  }
  if (g->FirstUse("reduce shm -> tcp"))
    HLOG_INFO(kShm, "HcclReduce #%llu: %s is not aclrtMalloc memory; re-plan shm -> %s", seq, what.c_str(),
              bytes <= kGatherMaxBytes ? "gather" : "chain");
  // Everyone passed the barrier with the same view, so everyone takes the same fallback.
  return bytes <= kGatherMaxBytes ? ReduceGather(ctx, a) : ReduceChain(ctx, a);
}

namespace {

// The arrival every "shm" plan starts with: descriptors published, fingerprints compared.
Status ShmArrival(Context& ctx, const ReduceArgs& a) {
  return ExchangeArgs(ctx, ctx.shm, a, "shm reduce needs a shared segment");
}

}  // namespace

Status ReduceShmCma(Context& ctx, const ReduceArgs& a) {
  HOSTCCL_RETURN_IF_ERROR(ShmArrival(ctx, a));
  // The group's CMA verdict is the same on every member, so every rank fails alike.
  if (!ctx.shm->cma())
    return Status(Code::kNotSupport, "shm_cma: process_vm_readv is not allowed here (HOSTCCL_CMA=off or ptrace rules)");
  return ReduceCma(ctx, a);
}

Status ReduceShmStaging(Context& ctx, const ReduceArgs& a) {
  HOSTCCL_RETURN_IF_ERROR(ShmArrival(ctx, a));
  net::ShmGroup* g = ctx.shm;
  if (g->Staging() == nullptr || g->staging_bytes() < (2 * static_cast<size_t>(ctx.size) + 2) * 4096)
    return Status(Code::kNotSupport, "shm_staging: the shared segment has no staging");
  return ReduceStaging(ctx, a);
}

}  // namespace hostccl::algo
