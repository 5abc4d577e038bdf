// The point-to-point grid: HcclSend/HcclRecv and HcclBatchSendRecv, dtype x count x ranks x
// pairing pattern x placement (threads InitAll/RootInfo, processes over shared memory, processes
// over TCP, processes on emulated hosts) x algorithm (auto + every P2P algorithm of the library's
// registry, forced with HOSTCCL_ALGO=send=<a>#recv=<a>#batchsendrecv=<a>). Every received buffer
// must hold exactly the sender's bytes (a pattern of sender, receiver, message and position), the
// bytes after it (guard) untouched, and every send buffer unchanged.
// Patterns per case: (1) pairs: even rank -> odd neighbour by Send/Recv, then back; (2) FIFO: rank
// 0 sends three messages in a row to rank n-1, which receives them in order; (3) batch ring: send
// to r+1, receive from r-1 in one call (n = 1: both items target the rank itself, a local copy;
// n = 2: both items target the same peer); (4) batch all pairs: every rank sends to and receives
// from every rank (itself included), items listed in a different order on odd ranks.
//   Default/SendRecvGrid.*  a subset (every placement, algorithm, pattern; a few dtypes/counts).
//   Full/SendRecvGrid.*     more counts and dtypes; skipped unless HOSTCCL_FULL_GRID=1 (ctest
//                           sendrecv_grid_full, label long).
#include <dirent.h>
#include <gtest/gtest.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "collective/grid_common.h"
#include "fault/fault_util.h"

namespace hostccl::test {
namespace {

using grid::GridConfig;
using grid::Place;

struct Type {
  HcclDataType t;
  size_t size;
};
const Type kTypes[] = {{HCCL_DATA_TYPE_INT8, 1},  {HCCL_DATA_TYPE_FP16, 2}, {HCCL_DATA_TYPE_FP32, 4},
                       {HCCL_DATA_TYPE_INT64, 8}, {HCCL_DATA_TYPE_BFP16, 2}, {HCCL_DATA_TYPE_UINT32, 4}};
constexpr size_t kGuard = 64;

uint8_t Pattern(int src, int dst, int msg, size_t i) {
  uint64_t x = (static_cast<uint64_t>(src) * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(dst) << 40) ^
               (static_cast<uint64_t>(msg) << 52) ^ (i * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 29;
  return static_cast<uint8_t>(x ^ (x >> 17));
}

// A buffer of `bytes` plus a guard, from aclrtMalloc (device memory) or the heap.
struct Buf {
  std::vector<uint8_t> heap;
  void* dev = nullptr;
  uint8_t* p = nullptr;
  size_t bytes = 0;
  Buf(size_t n, bool device) : bytes(n) {
    if (device && aclrtMalloc(&dev, n + kGuard, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) {
      p = static_cast<uint8_t*>(dev);
    } else {
      heap.resize(n + kGuard);
      p = heap.data();
    }
    std::memset(p, 0xEE, n + kGuard);
  }
  ~Buf() {
    if (dev) aclrtFree(dev);
  }
  void Fill(int src, int dst, int msg) {
    for (size_t i = 0; i < bytes; ++i) p[i] = Pattern(src, dst, msg, i);
  }
  // Empty string when the buffer holds src->dst message msg and an intact guard.
  std::string Check(int src, int dst, int msg, const char* what) const {
    for (size_t i = 0; i < bytes; ++i)
      if (p[i] != Pattern(src, dst, msg, i))
        return std::string(what) + ": byte " + std::to_string(i) + " of " + std::to_string(bytes) + " from rank " +
               std::to_string(src) + " wrong";
    for (size_t i = 0; i < kGuard; ++i)
      if (p[bytes + i] != 0xEE) return std::string(what) + ": guard byte " + std::to_string(i) + " overwritten";
    return "";
  }
};

struct Case {
  Type type;
  uint64_t count;
};

std::vector<Case> Cases(const GridConfig& g) {
  std::vector<Case> out;
  if (g.full) {
    for (const Type& t : kTypes)
      for (uint64_t c : {0ull, 1ull, 7ull, 1023ull, 16385ull, 65537ull, (1ull << 20) + 3}) out.push_back({t, c});
    return out;
  }
  out.push_back({kTypes[0], 1});
  out.push_back({kTypes[1], 1023});
  out.push_back({kTypes[2], 65537});  // 256 KiB: the direct (process_vm_writev) path on one host
  out.push_back({kTypes[3], 7});
  out.push_back({kTypes[4], 0});
  // Processes through the mailboxes: messages of at least 1 MiB are split between both ends
  // (the receiver reads chunks, a sender in HcclSend writes chunks); with heap buffers (CMA) and
  // with device buffers (mapped) on either side, and a last chunk shorter than the others.
  const bool mailbox = g.mode == Mode::kProcesses && g.place == Place::kShm && g.algo != "shm";
  if (g.index % 3 == 0 || mailbox) out.push_back({kTypes[5], (1u << 20) + 3});
  if (mailbox) out.push_back({kTypes[0], (3u << 20) + 1});
  return out;
}

#define P2P_OK(call)                                                             \
  do {                                                                           \
    HcclResult r_ = (call);                                                      \
    if (r_ != HCCL_SUCCESS) return c.Fail(std::string(#call) + " returned " + std::to_string(r_)); \
  } while (0)
#define P2P_SYNC()                                                               \
  do {                                                                           \
    aclError e_ = aclrtSynchronizeStream(c.stream);                              \
    if (e_ != ACL_SUCCESS) return c.Fail("synchronize failed " + std::to_string(e_) + ": " + aclGetRecentErrMsg()); \
  } while (0)

bool RunCase(RankContext& c, const Case& k, bool device) {
  const int r = c.rank, n = c.nranks;
  // Every case pairs device with malloc'd buffers (both transfer paths): the host side needs the
  // communicator to accept host buffers (NPU fidelity, docs/semantics.md §9).
  if (!AllowHostBuffers(c)) return false;
  const size_t bytes = k.count * k.type.size;
  // (1) pairs, both directions.
  if (r + 1 < n || r % 2 == 1) {
    const bool even = r % 2 == 0;
    const int peer = even ? r + 1 : r - 1;
    Buf out(bytes, device), in(bytes, !device);
    out.Fill(r, peer, 1);
    if (even) {
      P2P_OK(HcclSend(out.p, k.count, k.type.t, peer, c.comm, c.stream));
      P2P_OK(HcclRecv(in.p, k.count, k.type.t, peer, c.comm, c.stream));
    } else {
      P2P_OK(HcclRecv(in.p, k.count, k.type.t, peer, c.comm, c.stream));
      P2P_OK(HcclSend(out.p, k.count, k.type.t, peer, c.comm, c.stream));
    }
    P2P_SYNC();
    std::string e = in.Check(peer, r, 1, "pairs");
    if (e.empty()) e = out.Check(r, peer, 1, "pairs (send buffer)");
    if (!e.empty()) return c.Fail(e);
  }
  // (2) FIFO: three messages 0 -> n-1 in a row.
  if (n > 1 && (r == 0 || r == n - 1)) {
    std::vector<Buf*> bufs;
    for (int m = 0; m < 3; ++m) bufs.push_back(new Buf(bytes, device));
    bool ok = true;
    for (int m = 0; m < 3 && ok; ++m) {
      if (r == 0) {
        bufs[static_cast<size_t>(m)]->Fill(0, n - 1, 10 + m);
        ok = HcclSend(bufs[static_cast<size_t>(m)]->p, k.count, k.type.t, static_cast<uint32_t>(n - 1), c.comm,
                      c.stream) == HCCL_SUCCESS;
      } else {
        ok = HcclRecv(bufs[static_cast<size_t>(m)]->p, k.count, k.type.t, 0, c.comm, c.stream) == HCCL_SUCCESS;
      }
    }
    std::string e = ok ? "" : "FIFO call failed";
    if (ok && aclrtSynchronizeStream(c.stream) != ACL_SUCCESS) e = std::string("FIFO sync: ") + aclGetRecentErrMsg();
    for (int m = 0; m < 3 && e.empty(); ++m) e = bufs[static_cast<size_t>(m)]->Check(0, n - 1, 10 + m, "FIFO");
    for (Buf* b : bufs) delete b;
    if (!e.empty()) return c.Fail(e);
  }
  // (3) batch ring.
  {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    Buf out(bytes, device), in(bytes, device);
    out.Fill(r, next, 3);
    HcclSendRecvItem items[2] = {{HCCL_SEND, out.p, k.count, k.type.t, static_cast<uint32_t>(next)},
                                 {HCCL_RECV, in.p, k.count, k.type.t, static_cast<uint32_t>(prev)}};
    if (r % 2 == 1) std::swap(items[0], items[1]);
    P2P_OK(HcclBatchSendRecv(items, 2, c.comm, c.stream));
    P2P_SYNC();
    std::string e = in.Check(prev, r, 3, "batch ring");
    if (!e.empty()) return c.Fail(e);
  }
  // (4) batch all pairs (self included).
  {
    std::vector<Buf*> outs, ins;
    std::vector<HcclSendRecvItem> items;
    for (int p = 0; p < n; ++p) {
      outs.push_back(new Buf(bytes, device));
      ins.push_back(new Buf(bytes, p % 2 == 0 ? device : !device));
      outs.back()->Fill(r, p, 4);
      items.push_back({HCCL_SEND, outs.back()->p, k.count, k.type.t, static_cast<uint32_t>(p)});
      items.push_back({HCCL_RECV, ins.back()->p, k.count, k.type.t, static_cast<uint32_t>(p)});
    }
    if (r % 2 == 1) std::reverse(items.begin(), items.end());
    std::string e;
    if (HcclBatchSendRecv(items.data(), static_cast<uint32_t>(items.size()), c.comm, c.stream) != HCCL_SUCCESS)
      e = "all-pairs batch call failed";
    else if (aclrtSynchronizeStream(c.stream) != ACL_SUCCESS)
      e = std::string("all-pairs sync: ") + aclGetRecentErrMsg();
    for (int p = 0; p < n && e.empty(); ++p) e = ins[static_cast<size_t>(p)]->Check(p, r, 4, "batch all pairs");
    for (Buf* b : outs) delete b;
    for (Buf* b : ins) delete b;
    if (!e.empty()) return c.Fail(e);
  }
  return true;
}

std::vector<GridConfig> Configs(bool full) {
  std::vector<GridConfig> out;
  auto add = [&](int n, Mode m, Place p, const std::string& algo, int hosts = 1) {
    out.push_back({static_cast<int>(out.size()), n, m, p, algo, 0, full, hosts});
  };
  if (!full) {
    add(1, Mode::kThreadsInitAll, Place::kThreads, "");
    add(2, Mode::kThreadsInitAll, Place::kThreads, "");
    add(3, Mode::kThreadsRootInfo, Place::kThreads, "");
    add(5, Mode::kThreadsInitAll, Place::kThreads, "local");
    add(2, Mode::kProcesses, Place::kShm, "");
    add(3, Mode::kProcesses, Place::kShm, "shm");
    add(2, Mode::kProcesses, Place::kTcp, "");
    add(4, Mode::kProcesses, Place::kTcp, "tcp");
    add(3, Mode::kThreadsRootInfo, Place::kThreads, "tcp");
    add(4, Mode::kProcesses, Place::kHosts, "", 2);
    add(2, Mode::kProcesses, Place::kHosts, "node", 2);
    add(4, Mode::kProcesses, Place::kShm, "mailbox");
    return out;
  }
  for (int n : {1, 2, 3, 4, 5, 8}) {
    add(n, Mode::kThreadsInitAll, Place::kThreads, "");
    add(n, Mode::kThreadsRootInfo, Place::kThreads, "tcp");
    if (n > 1) {
      add(n, Mode::kProcesses, Place::kShm, "");
      add(n, Mode::kProcesses, Place::kTcp, "");
      add(n, Mode::kProcesses, Place::kHosts, "", 2);
    }
  }
  return out;
}

RunOptions OptionsFor(const GridConfig& g) {
  GridConfig plain = g;
  plain.algo.clear();
  RunOptions o = grid::Options(plain, "send");
  if (!g.algo.empty())
    o.env.push_back({"HOSTCCL_ALGO", "send=" + g.algo + "#recv=" + g.algo + "#batchsendrecv=" + g.algo});
  // The forced mailbox runs without split copies (the receiver copies alone, mapped or by CMA);
  // the 2-rank default one splits its messages of 1 MiB and more.
  if (g.algo == "mailbox") o.env.push_back({"HOSTCCL_P2P_SPLIT_BYTES", "0"});
  if (g.place == Place::kHosts && g.mode == Mode::kProcesses && !g.algo.empty() && g.algo == "node")
    o.env.push_back({"HOSTCCL_TRANSPORT", "auto"});
  return o;
}

class SendRecvGrid : public ::testing::TestWithParam<GridConfig> {};

TEST_P(SendRecvGrid, MovesEveryByte) {
  const GridConfig& g = GetParam();
  if (g.full && !grid::FullGridRequested()) GTEST_SKIP() << "set HOSTCCL_FULL_GRID=1";
  const std::vector<Case> cases = Cases(g);
  RunResult res = RunRanks(g.nranks, g.mode, [&](RankContext& c) {
    for (size_t i = 0; i < cases.size(); ++i)
      if (!RunCase(c, cases[i], i % 2 == 0)) return false;
    return true;
  }, OptionsFor(g));
  EXPECT_TRUE(res.ok) << res.message;
}

std::string Name(const ::testing::TestParamInfo<GridConfig>& info) { return grid::ConfigName(info.param); }

INSTANTIATE_TEST_SUITE_P(Default, SendRecvGrid, ::testing::ValuesIn(Configs(false)), Name);
INSTANTIATE_TEST_SUITE_P(Full, SendRecvGrid, ::testing::ValuesIn(Configs(true)), Name);

// Split copies (sendrecv_mailbox.cc): a single HcclSend of 16 MiB between two processes is
// copied by both ends, each taking 256 KiB chunks from one counter, so the sender writes some of
// the receiver's buffer (mapped device memory, or process_vm_writev into heap memory) while the
// receiver reads the rest (mapped or process_vm_readv). Every combination of buffer kinds; every
// byte, the guard and the send buffer are checked (a sender that skipped its chunks leaves the
// receiver's 0xEE there).
TEST(SendRecvSplit, BothEndsCopyEveryByte) {
  GridConfig g{0, 2, Mode::kProcesses, Place::kShm, "", 0, false, 1};
  RunOptions o = OptionsFor(g);
  o.env.push_back({"HOSTCCL_P2P_SPLIT_BYTES", "1048576"});
  RunResult res = RunRanks(2, Mode::kProcesses, [&](RankContext& c) {
    constexpr size_t kBytes = (16u << 20) + 5;  // a last chunk of 5 bytes
    if (!AllowHostBuffers(c)) return false;     // the heap cases (fidelity is on by default)
    for (int k = 0; k < 4; ++k) {
      const bool send_dev = (k & 1) != 0, recv_dev = (k & 2) != 0;
      if (c.rank == 0) {
        Buf out(kBytes, send_dev);
        out.Fill(0, 1, 20 + k);
        P2P_OK(HcclSend(out.p, kBytes, HCCL_DATA_TYPE_INT8, 1, c.comm, c.stream));
        P2P_SYNC();
        std::string e = out.Check(0, 1, 20 + k, "split (send buffer)");
        if (!e.empty()) return c.Fail(e);
      } else {
        Buf in(kBytes, recv_dev);
        P2P_OK(HcclRecv(in.p, kBytes, HCCL_DATA_TYPE_INT8, 0, c.comm, c.stream));
        P2P_SYNC();
        std::string e = in.Check(0, 1, 20 + k, send_dev ? (recv_dev ? "split dev->dev" : "split dev->heap")
                                                          : (recv_dev ? "split heap->dev" : "split heap->heap"));
        if (!e.empty()) return c.Fail(e);
      }
    }
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
}

// A repeated small transfer between processes runs its attempt on the short path
// (Communicator::RunPreparedAttempt), which writes no log line: with the info log on it takes Run,
// so every HcclSend and HcclRecv of a ping-pong still has its line, naming the transfer and the
// algorithm (twice when its attempt gave up and it ran again from the stream), and every reply
// holds the ping's bytes.
TEST(SendRecvLog, EveryRepeatedTransferWritesItsInfoLine) {
  constexpr int kRounds = 6;
  constexpr size_t kBytes = 8;
  const std::string dir = faulttest::MakeScratchDir();  // the parent's, also in the children
  GridConfig g{0, 2, Mode::kProcesses, Place::kShm, "", 0, false, 1};
  RunOptions o = OptionsFor(g);
  o.env.push_back({faulttest::kDirVar, dir});
  o.env.push_back({"HOSTCCL_LOG_FILE", dir + "/log.%p"});
  o.env.push_back({"HOSTCCL_LOG_LEVEL", "INFO"});
  o.env.push_back({"HOSTCCL_LOG_SUBSYS", "COLL"});
  RunResult res = RunRanks(2, Mode::kProcesses, [&](RankContext& c) {
    Buf out(kBytes, true), in(kBytes, true);
    const int peer = 1 - c.rank;
    for (int m = 0; m < kRounds; ++m) {
      if (c.rank == 0) {  // ping
        out.Fill(0, 1, m);
        P2P_OK(HcclSend(out.p, kBytes, HCCL_DATA_TYPE_INT8, peer, c.comm, c.stream));
        P2P_OK(HcclRecv(in.p, kBytes, HCCL_DATA_TYPE_INT8, peer, c.comm, c.stream));
      } else {  // pong: sends back what it received
        P2P_OK(HcclRecv(in.p, kBytes, HCCL_DATA_TYPE_INT8, peer, c.comm, c.stream));
        P2P_SYNC();
        std::memcpy(out.p, in.p, kBytes);
        P2P_OK(HcclSend(out.p, kBytes, HCCL_DATA_TYPE_INT8, peer, c.comm, c.stream));
      }
      P2P_SYNC();
      const std::string e = in.Check(0, 1, m, c.rank == 0 ? "reply" : "ping");
      if (!e.empty()) return c.Fail(e);
    }
    return true;
  }, o);
  EXPECT_TRUE(res.ok) << res.message;
  // Each rank's log: for k = 1..kRounds one line per direction, e.g. "HcclSend #3 to rank 1 ...
  // mailbox".
  std::vector<int> found(2 * 2 * kRounds, 0);  // [rank][send/recv][k - 1]
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind("log.", 0) != 0) continue;
    std::ifstream in(dir + "/" + e->d_name);
    for (std::string line; std::getline(in, line);) {
      if (line.find(": mailbox (") == std::string::npos) continue;
      for (int r = 0; r < 2; ++r)
        for (int send = 0; send < 2; ++send)
          for (int k = 1; k <= kRounds; ++k) {
            const std::string what = std::string(send ? "HcclSend #" : "HcclRecv #") + std::to_string(k) +
                                     (send ? " to rank " : " from rank ") + std::to_string(1 - r) + " ";
            if (line.find(what) != std::string::npos &&
                line.find("rank " + std::to_string(r) + "]") != std::string::npos)
              ++found[static_cast<size_t>((r * 2 + send) * kRounds + k - 1)];
          }
    }
  }
  closedir(d);
  faulttest::RemoveScratchDir(dir);
  for (int r = 0; r < 2; ++r)
    for (int send = 0; send < 2; ++send)
      for (int k = 1; k <= kRounds; ++k)
        EXPECT_GE(found[static_cast<size_t>((r * 2 + send) * kRounds + k - 1)], 1)
            << "rank " << r << (send ? " HcclSend #" : " HcclRecv #") << k << ": not logged";
}

#if HOSTCCL_GRID_HAS_REGISTRY
// Every P2P algorithm of the registry is forced somewhere in the default subset.
TEST(SendRecvGridCoverage, EveryAlgorithmIsForced) {
  for (const char* op : {"send", "recv", "batchsendrecv"})
    for (const auto& a : grid::LibraryAlgorithms(op)) {
      bool found = false;
      for (const auto& g : Configs(false)) found = found || g.algo == a.name;
      EXPECT_TRUE(found) << op << " algorithm " << a.name << " is not in the default subset";
    }
}
#endif

}  // namespace
}  // namespace hostccl::test
