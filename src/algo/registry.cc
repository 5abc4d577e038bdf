#include "algo/registry.h"

#include <algorithm>

#include "algo/allgather/allgather_algorithms.h"
#include "algo/allreduce/allreduce_algorithms.h"
#include "algo/alltoall/alltoall_algorithms.h"
#include "algo/barrier/barrier.h"
#include "algo/broadcast/broadcast_algorithms.h"
#include "algo/reduce/reduce_algorithms.h"
#include "algo/reducescatter/reducescatter_algorithms.h"
#include "algo/scatter/scatter_algorithms.h"
#include "algo/sendrecv/sendrecv_algorithms.h"

namespace hostccl::algo {

const std::vector<Algorithm>& Algorithms() {
  using K = CollKind;
  static const std::vector<Algorithm> table = {
      // HcclReduce
      {K::kReduce, "direct", "threads of one process: each rank folds its slice of every rank's input in one pass",
       kNeedsLocal, 0, &ReduceDirect},
      {K::kReduce, "shm", "one host: each rank folds its slice of every rank's device buffer, mapped in place",
       kNeedsShm, 0, &ReduceShm, 0, net::ShmGroup::kInlineBytes},
      // shm's re-plans for buffers that are not aclrtMalloc memory (reduce_shm_unshared.cc), also
      // selectable on their own; shm logs which one it took.
      {K::kReduce, "shm_cma", "one host: slices with process_vm_readv/writev for buffers that cannot be mapped",
       kNeedsShm, 0, &ReduceShmCma},
      {K::kReduce, "shm_staging", "one host: chunks staged through the shared segment",
       kNeedsShm | kNeedsStaging, 0, &ReduceShmStaging},
      {K::kReduce, "gather", "small messages: raw inputs sent to the root, folded there in rank order",
       kNeedsTransport, 0, &ReduceGather},
      {K::kReduce, "chain", "large messages: pipelined chain 0 -> 1 -> ... -> n-1 -> root, each rank folds its input",
       kNeedsTransport, 1 << 20, &ReduceChain},
      // node_chain crosses K host links in a row, so its fill costs K chunks at link rate: 512 KiB
      // (4x2 hosts at 1 Gbit/s: 1 MiB chunks 88.5% of the link, 512 KiB 92.3%; docs/multihost.md).
      {K::kReduce, "node_chain",
       "several hosts: pipelined chain over hosts; each host folds its ranks onto the incoming partial in shared memory",
       kNeedsNodes | kNeedsTransport, 512 << 10, &ReduceNodeChain},
      // HcclAllReduce
      {K::kAllReduce, "direct", "threads of one process: the ranks claim pieces, fold each from all inputs and write it into every recvBuf (streamed beyond the cache)",
       kNeedsLocal, 0, &AllReduceDirect},
      {K::kAllReduce, "shm_inline", "one host, <= 4 KiB: inputs travel in the arrival slots; one arrival, everyone folds",
       kNeedsShm, 0, &AllReduceShmInline, net::ShmGroup::kInlineBytes, net::ShmGroup::kInlineBytes},
      {K::kAllReduce, "shm", "one host: the ranks claim pieces, fold each from all mapped inputs and write it into every recvBuf (streamed beyond the cache)",
       kNeedsShm, 0, &AllReduceShm},
      {K::kAllReduce, "flat", "small messages over TCP: every rank sends its input to all, everyone folds all in rank order",
       kNeedsTransport, 0, &AllReduceFlat},
      {K::kAllReduce, "rs_ag", "TCP, pipelined: reduce-scatter by slice owner (rank-order fold), then allgather",
       kNeedsTransport, 1 << 20, &AllReduceRsAg},
      {K::kAllReduce, "node", "several hosts: node_chain reduce to rank 0, the last host keeping the result, the other leaders chained on, shared-memory copy inside hosts",
       kNeedsNodes | kNeedsTransport, 512 << 10, &AllReduceNode},
      // HcclBroadcast
      {K::kBroadcast, "direct", "threads of one process: each rank copies its slice of the root's buffer into every other buffer",
       kNeedsLocal, 0, &BroadcastDirect},
      {K::kBroadcast, "shm_inline", "one host, <= 4 KiB: the root's arrival carries the data; one arrival",
       kNeedsShm, 0, &BroadcastShmInline, net::ShmGroup::kInlineBytes, net::ShmGroup::kInlineBytes},
      {K::kBroadcast, "shm", "one host: each rank copies its slice of the root's mapped buffer into every other",
       kNeedsShm, 0, &BroadcastShm},
      {K::kBroadcast, "flat", "small messages over TCP: the root sends to every rank in one hop",
       kNeedsTransport, 0, &BroadcastFlat},
      {K::kBroadcast, "chain", "TCP, pipelined: root -> root+1 -> ..., each rank forwards chunks as they land in its buffer",
       kNeedsTransport, 512 << 10, &BroadcastChain},
      {K::kBroadcast, "node", "several hosts: pipelined chain of host leaders over TCP, shared-memory copy inside hosts",
       kNeedsNodes | kNeedsTransport, 512 << 10, &BroadcastNode},
      // HcclAlltoAll, HcclAlltoAllV, HcclAlltoAllVC: the same six algorithms (algo/alltoall/)
#define HOSTCCL_ALLTOALL_ROWS(K)                                                                                 \
  {K, "direct", "threads of one process: the ranks claim pieces of every block and copy each into its recvBuf, one pass", \
   kNeedsLocal, 0, &AlltoAllDirect},                                                                              \
  {K, "shm_inline", "one host, small: every rank's blocks travel in its arrival slot; one arrival", \
   kNeedsShm, 0, &AlltoAllShmInline, 0, net::ShmGroup::kInlineBytes},                                                                             \
  {K, "shm", "one host: the ranks claim pieces of every block and copy each from its mapped sendBuf into its mapped recvBuf", \
   kNeedsShm, 0, &AlltoAllShm},                                                                                   \
  {K, "shm_pull", "one host: each rank copies its blocks out of its peers' mapped sendBufs (shm's re-plan when a recvBuf cannot be mapped)", \
   kNeedsShm, 0, &AlltoAllShmPull},                                                                               \
  {K, "node", "several hosts: blocks inside a host copied out of mapped sendBufs, across hosts one TCP message per pair", \
   kNeedsNodes | kNeedsTransport, 0, &AlltoAllNode},                                                              \
  {K, "pairwise", "TCP: pairwise exchange, 4 steps (send + receive each) in flight; also across hosts",          \
   kNeedsTransport, 0, &AlltoAllPairwise},
      HOSTCCL_ALLTOALL_ROWS(K::kAlltoAll)
      HOSTCCL_ALLTOALL_ROWS(K::kAlltoAllV)
      HOSTCCL_ALLTOALL_ROWS(K::kAlltoAllVC)
#undef HOSTCCL_ALLTOALL_ROWS
      // HcclReduceScatter
      {K::kReduceScatter, "direct", "threads of one process: each rank folds its block of every rank's input in one pass",
       kNeedsLocal, 0, &ReduceScatterDirect},
      {K::kReduceScatter, "shm_inline",
       "one host, input <= 4 KiB: inputs travel in the arrival slots; one arrival, each folds its block",
       kNeedsShm, 0, &ReduceScatterShmInline, 0, net::ShmGroup::kInlineBytes},
      {K::kReduceScatter, "shm", "one host: each rank folds its block of every mapped sendBuf in one pass",
       kNeedsShm, 0, &ReduceScatterShm},
      {K::kReduceScatter, "flat", "small messages over TCP: block j of every input to rank j in one hop, folded in rank order",
       kNeedsTransport, 0, &ReduceScatterFlat},
      {K::kReduceScatter, "owner", "TCP, pipelined: chunks of block j to owner j, folded there in rank order as they land",
       kNeedsTransport, 1 << 20, &ReduceScatterOwner},
      {K::kReduceScatter, "node", "two hosts: host partials and raw parts over TCP balanced per direction, folded in rank order in shared memory",
       kNeedsNodes | kNeedsTransport, 512 << 10, &ReduceScatterNode},
      // HcclReduceScatterV: the same functions, block j at sendDispls[j] of sendCounts[j] elements
      {K::kReduceScatterV, "direct", "threads of one process: each rank folds its block of every rank's input in one pass",
       kNeedsLocal, 0, &ReduceScatterDirect},
      {K::kReduceScatterV, "shm_inline",
       "one host, input <= 4 KiB: inputs travel in the arrival slots; one arrival, each folds its block",
       kNeedsShm, 0, &ReduceScatterShmInline, 0, net::ShmGroup::kInlineBytes},
      {K::kReduceScatterV, "shm", "one host: each rank folds its block of every mapped sendBuf in one pass",
       kNeedsShm, 0, &ReduceScatterShm},
      {K::kReduceScatterV, "flat", "small messages over TCP: block j of every input to rank j in one hop, folded in rank order",
       kNeedsTransport, 0, &ReduceScatterFlat},
      {K::kReduceScatterV, "owner", "TCP, pipelined: chunks of block j to owner j, folded there in rank order as they land",
       kNeedsTransport, 1 << 20, &ReduceScatterOwner},
      {K::kReduceScatterV, "node", "two hosts: host partials and raw parts over TCP balanced per direction, folded in rank order in shared memory",
       kNeedsNodes | kNeedsTransport, 512 << 10, &ReduceScatterNode},
      // HcclAllGather (sizes in the rules are a rank's block, sendCount x element size)
      {K::kAllGather, "direct", "threads of one process: the ranks claim pieces of every block and write each into every recvBuf",
       kNeedsLocal, 0, &AllGatherDirect},
      {K::kAllGather, "shm_inline", "one host, blocks <= 4 KiB: blocks travel in the arrival slots; one arrival",
       kNeedsShm, 0, &AllGatherShmInline, 0, net::ShmGroup::kInlineBytes},
      {K::kAllGather, "shm", "one host: the ranks claim pieces of every block and write each into every mapped recvBuf",
       kNeedsShm, 0, &AllGatherShm},
      {K::kAllGather, "shm_pull", "one host: each rank copies every peer's block out of its mapped sendBuf (shm's re-plan when a recvBuf cannot be mapped)",
       kNeedsShm, 0, &AllGatherShmPull},
      {K::kAllGather, "flat", "small blocks over TCP: every rank sends its block to all in one hop",
       kNeedsTransport, 0, &AllGatherFlat},
      {K::kAllGather, "ring", "TCP, pipelined ring: each chunk is forwarded as soon as it lands in the recvBuf",
       kNeedsTransport, 512 << 10, &AllGatherRing},
      {K::kAllGather, "node", "several hosts: non-leaders write into the leader, ring of host leaders, copies back inside hosts",
       kNeedsNodes | kNeedsTransport, 512 << 10, &AllGatherNode},
      // HcclAllGatherV (sizes in the rules: the mean block, sum(recvCounts) / n x element size)
      {K::kAllGatherV, "direct", "threads of one process: the ranks claim pieces of every block and write each into every recvBuf",
       kNeedsLocal, 0, &AllGatherVDirect},
      {K::kAllGatherV, "shm_inline", "one host, blocks <= 4 KiB: blocks travel in the arrival slots",
       kNeedsShm, 0, &AllGatherVShmInline, 0, net::ShmGroup::kInlineBytes},
      {K::kAllGatherV, "shm", "one host: the ranks claim pieces of every block and write each into every mapped recvBuf",
       kNeedsShm, 0, &AllGatherVShm},
      {K::kAllGatherV, "shm_pull", "one host: each rank copies every peer's block out of its mapped sendBuf (shm's re-plan when a recvBuf cannot be mapped)",
       kNeedsShm, 0, &AllGatherVShmPull},
      {K::kAllGatherV, "flat", "small blocks over TCP: every rank sends its block to all in one hop",
       kNeedsTransport, 0, &AllGatherVFlat},
      {K::kAllGatherV, "ring", "TCP, pipelined ring over the blocks, straight into the recvBufs",
       kNeedsTransport, 512 << 10, &AllGatherVRing},
      {K::kAllGatherV, "node", "several hosts: host leaders exchange their hosts' blocks over TCP, shared-memory copies inside hosts",
       kNeedsNodes | kNeedsTransport, 512 << 10, &AllGatherVNode},
      // HcclScatter (sizes in the rules are one rank's block, recvCount x element size)
      {K::kScatter, "direct", "threads of one process: each rank copies its block out of the root's sendBuf",
       kNeedsLocal, 0, &ScatterDirect},
      {K::kScatter, "shm_inline", "one host, n blocks <= 4 KiB in all: the root's arrival carries them",
       kNeedsShm, 0, &ScatterShmInline, 0, net::ShmGroup::kInlineBytes},
      {K::kScatter, "shm", "one host: each rank copies its block out of the root's mapped sendBuf",
       kNeedsShm, 0, &ScatterShm},
      {K::kScatter, "flat", "TCP: the root sends each rank its block, all at once; acknowledged",
       kNeedsTransport, 0, &ScatterFlat},
      {K::kScatter, "node", "several hosts: ranks on the root's host copy out of its mapped sendBuf, the others get their block over TCP",
       kNeedsNodes | kNeedsTransport, 0, &ScatterNode},
      // HcclBarrier
      {K::kBarrier, "local", "threads of one process: the group's adaptive barrier", kNeedsLocal, 0, &BarrierLocal},
      {K::kBarrier, "shm", "one host: one arrival in the shared segment, carrying the fingerprint",
       kNeedsShm, 0, &BarrierShm, 0, net::ShmGroup::kInlineBytes},
      {K::kBarrier, "tcp", "fan-in of 1-byte tokens to rank 0, then fan-out", kNeedsTransport, 0, &BarrierTcp},
      // HcclSend, HcclRecv, HcclBatchSendRecv: one transfer list, the same algorithms
      // (algo/sendrecv/); the receiver clears the sender to send (rendezvous).
#define HOSTCCL_P2P_ROWS(kind)                                                                                      \
  {K::kind, "local", "threads of one process: the receiver copies straight out of the sender's posted buffer",     \
   kNeedsLocal, 0, &P2PLocal},                                                                                      \
  {K::kind, "mailbox", "one host's shared segment: per-pair mailboxes, payloads up to 472 bytes in the slot, "      \
                       "larger ones read from the sender's buffer (mapped, else process_vm_readv), from 1 MiB "     \
                       "copied by both ends; without CMA or above 32 ranks re-plans to shm (thread ranks: local)",  \
   kNeedsShm, 0, &P2PMailbox, 0, net::MailSlot::kInline},                                                           \
  {K::kind, "shm", "one host: clear-to-send over TCP, payloads >= 32 KiB written straight into the "   \
                   "receiver's buffer (process_vm_writev), smaller ones inline",                                   \
   kNeedsShm | kNeedsTransport, 0, &P2PShm},                                                                        \
  {K::kind, "node", "several hosts: as shm for peers on this host, as tcp for the others",                        \
   kNeedsNodes | kNeedsTransport, 0, &P2PNode},                                                                     \
  {K::kind, "tcp", "clear-to-send, then the payload in one TCP message (striped when large)", kNeedsTransport, 0,  \
   &P2PTcp}
      HOSTCCL_P2P_ROWS(kSend),
      HOSTCCL_P2P_ROWS(kRecv),
      HOSTCCL_P2P_ROWS(kBatchSendRecv),
#undef HOSTCCL_P2P_ROWS
  };
  return table;
}

const Algorithm* FindAlgorithm(CollKind op, std::string_view name) {
  for (const auto& a : Algorithms())
    if (a.op == op && name == a.name) return &a;
  return nullptr;
}

uint64_t ChunkElems(const Context& ctx, const OpArgs& args) {
  const uint64_t es = DataTypeSize(args.dtype);
  uint64_t bytes = ctx.chunk_bytes;
  bytes = std::max<uint64_t>(bytes, 64);
  uint64_t elems = std::max<uint64_t>(1, bytes / es);
  return std::min<uint64_t>(elems, std::max<uint64_t>(args.count, 1));
}

}  // namespace hostccl::algo
