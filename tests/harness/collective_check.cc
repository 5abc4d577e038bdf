#include "harness/collective_check.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "harness/case_buffer.h"
#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardBytes = 64;  // past count: must stay untouched (covers 4 int128 elements)
constexpr const char* kBoardVar = "HOSTCCL_TEST_BOARD_DIR";

uint64_t Fnv(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// "<what>: N of M elements differ; first at index i: expected <bytes>, got <bytes>" for types the
// fold compare cannot render (int128) or must not relax (broadcast: NaN payloads count).
std::string CompareRaw(size_t elem, const void* expected, const void* got, size_t count, const std::string& what) {
  const auto* e = static_cast<const unsigned char*>(expected);
  const auto* g = static_cast<const unsigned char*>(got);
  size_t first = count, ndiff = 0;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(e + i * elem, g + i * elem, elem) == 0) continue;
    if (first == count) first = i;
    ++ndiff;
  }
  if (ndiff == 0) return "";
  auto hex = [elem](const unsigned char* p) {
    std::string s = "0x";
    char b[4];
    for (size_t k = elem; k-- > 0;) {  // little-endian: most significant byte last
      std::snprintf(b, sizeof(b), "%02x", p[k]);
      s += b;
    }
    return s;
  };
  return what + ": " + std::to_string(ndiff) + " of " + std::to_string(count) + " elements differ; first at index " +
         std::to_string(first) + ": expected " + hex(e + first * elem) + ", got " + hex(g + first * elem);
}

bool SyncFailed(RankContext& ctx, const std::string& name) {
  aclError e = aclrtSynchronizeStream(ctx.stream);
  if (e == ACL_SUCCESS) return false;
  HcclResult async = HCCL_SUCCESS;
  (void)HcclGetCommAsyncError(ctx.comm, &async);
  ctx.Fail(name + ": aclrtSynchronizeStream returned " + std::to_string(e) + " (async error " +
           std::to_string(async) + "): " + aclGetRecentErrMsg());
  return true;
}

// A one-rank communicator on device 0, for the "is it implemented" probes.
// Rank children probe too: tests may build their case lists from the answer, which must be the
// same in the parent and in every child.
bool ProbeOneRank(bool allreduce) {
  (void)aclInit(nullptr);
  if (aclrtSetDevice(0) != ACL_SUCCESS) return true;
  int32_t dev[1] = {0};
  HcclComm comm = nullptr;
  if (HcclCommInitAll(1, dev, &comm) != HCCL_SUCCESS) return true;  // let the test report it
  aclrtStream stream = nullptr;
  (void)aclrtCreateStream(&stream);
  void* buf = nullptr;
  (void)aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST);
  HcclResult r = allreduce ? HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream)
                           : HcclBroadcast(buf, 4, HCCL_DATA_TYPE_FP32, 0, comm, stream);
  (void)aclrtSynchronizeStream(stream);
  (void)aclrtFree(buf);
  (void)aclrtDestroyStream(stream);
  (void)HcclCommDestroy(comm);
  if (r == HCCL_E_NOT_SUPPORT) {
    std::fprintf(stderr, "%s returned HCCL_E_NOT_SUPPORT for a valid one-rank call: %s\n",
                 allreduce ? "HcclAllReduce" : "HcclBroadcast", aclGetRecentErrMsg());
    std::_Exit(1);  // a regression, never a reason to skip
  }
  return true;
}

}  // namespace

const std::vector<DtypeDesc>& MovableDtypes() {
  static const std::vector<DtypeDesc> kTypes = [] {
    std::vector<DtypeDesc> t = ReducibleDtypes();
    t.push_back({HCCL_DATA_TYPE_INT128, "int128", 16, ElemKind::kUnsigned});
    t.push_back({HCCL_DATA_TYPE_HIF8, "hif8", 1, ElemKind::kUnsigned});
    t.push_back({HCCL_DATA_TYPE_FP8E4M3, "fp8e4m3", 1, ElemKind::kUnsigned});
    t.push_back({HCCL_DATA_TYPE_FP8E5M2, "fp8e5m2", 1, ElemKind::kUnsigned});
    t.push_back({HCCL_DATA_TYPE_FP8E8M0, "fp8e8m0", 1, ElemKind::kUnsigned});
    return t;
  }();
  return kTypes;
}

const DtypeDesc& MovableDesc(HcclDataType type) {
  for (const auto& d : MovableDtypes())
    if (d.type == type) return d;
  std::fprintf(stderr, "hostccl test harness: dtype %d is not movable\n", static_cast<int>(type));
  std::abort();
}

std::string CaseName(const AllReduceCase& c) {
  char buf[192];
  std::snprintf(buf, sizeof(buf), "allreduce %s %s count=%" PRIu64 "%s seed=0x%" PRIx64 "%s%s", Desc(c.dtype).name,
                OpName(c.op), c.count, c.in_place ? " in-place" : "", c.seed, c.host_send ? " malloc-send" : "",
                c.host_recv ? " malloc-recv" : "");
  return buf;
}

std::string CaseName(const BroadcastCase& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "broadcast %s count=%" PRIu64 " root=%u seed=0x%" PRIx64 "%s",
                MovableDesc(c.dtype).name, c.count, c.root, c.seed, c.host_buf ? " malloc-buf" : "");
  return buf;
}

void ExpectedAllReduce(const AllReduceCase& c, int nranks, void* out) {
  ReduceCase r{c.dtype, c.op, c.count, 0, false, c.seed};
  ExpectedReduce(r, nranks, out);
}

void BroadcastInput(const BroadcastCase& c, void* out) {
  const DtypeDesc& d = MovableDesc(c.dtype);
  const size_t bytes = c.count * d.size;
  auto* p = static_cast<unsigned char*>(out);
  const uint64_t key = Mix64(c.seed ^ (static_cast<uint64_t>(c.dtype) << 40) ^ (uint64_t{c.root} << 20));
  uint64_t h = 0;
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0) h = Mix64(key + i);
    p[i] = static_cast<unsigned char>(h >> (8 * (i % 8)));
  }
}

void ResultBoard::Add(const std::string& case_name, const void* data, size_t bytes) {
  digests_.push_back({case_name, Fnv(data, bytes)});
}

void ResultBoard::Compare(RankContext& ctx, const std::string& dir, const std::string& tag) const {
  if (dir.empty()) return;
  auto path = [&](int r) { return dir + "/" + tag + ".rank" + std::to_string(r); };
  {
    std::ofstream out(path(ctx.rank) + ".tmp");
    for (const auto& [name, h] : digests_) out << h << " " << name << "\n";
  }
  (void)std::rename((path(ctx.rank) + ".tmp").c_str(), path(ctx.rank).c_str());
  if (ctx.rank != 0 || !ctx.error.empty()) return;
  std::map<std::string, uint64_t> mine;
  for (const auto& [name, h] : digests_) mine[name] = h;
  for (int r = 1; r < ctx.nranks; ++r) {
    std::ifstream in;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (true) {
      in.open(path(r));
      if (in.is_open() || std::chrono::steady_clock::now() > end) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!in.is_open()) continue;  // that rank failed before publishing; it reported why itself
    uint64_t h = 0;
    std::string name;
    while (in >> h && std::getline(in, name)) {
      if (!name.empty() && name[0] == ' ') name.erase(0, 1);
      auto it = mine.find(name);
      if (it != mine.end() && it->second != h) {
        ctx.Fail(name + ": rank " + std::to_string(r) + "'s result bits differ from rank 0's");
        return;
      }
    }
  }
}

std::string MakeBoardDir() {
  if (IsRankChild()) {
    const char* d = std::getenv(kBoardVar);
    return d ? d : "";
  }
  char tmpl[] = "/tmp/hostccl-board-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? std::string(d) : std::string();
}

std::pair<std::string, std::string> BoardEnv(const std::string& dir) { return {kBoardVar, dir}; }

void RemoveBoardDir(const std::string& dir) {
  if (IsRankChild() || dir.rfind("/tmp/hostccl-board-", 0) != 0) return;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") unlink((dir + "/" + n).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

bool RunAllReduceCase(RankContext& ctx, const AllReduceCase& c, ResultBoard* board) {
  const DtypeDesc& d = Desc(c.dtype);
  const std::string name = CaseName(c);
  const size_t bytes = c.count * d.size;
  const size_t total = bytes + kGuardBytes;

  std::vector<char> input(bytes);
  GenerateInput(d, c.op, c.seed, ctx.rank, c.count, input.data());
  // recvBuf before the call: guard bytes (the input first, when in place); sendBuf: input + guard.
  std::vector<char> recv_before(total), send_before(total);
  FillGuard(recv_before.data(), total, c.seed ^ (0x9e37ull * (ctx.rank + 1)));
  FillGuard(send_before.data(), total, c.seed ^ (0x7f4aull * (ctx.rank + 1)));
  std::copy(input.begin(), input.end(), send_before.begin());
  if (c.in_place) recv_before = send_before;

  CaseBuffer send_buf, recv_buf;
  if ((c.host_send || c.host_recv) && !AllowHostBuffers(ctx)) return false;
  if (!recv_buf.Alloc(total, c.in_place ? c.host_send : c.host_recv)) return ctx.Fail(name + ": recv alloc failed");
  if (!c.in_place && !send_buf.Alloc(total, c.host_send)) return ctx.Fail(name + ": send alloc failed");
  void* send = c.in_place ? recv_buf.get() : send_buf.get();
  if (!recv_buf.Put(recv_before) || (!c.in_place && !send_buf.Put(send_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");

  HcclResult r = HcclAllReduce(send, recv_buf.get(), c.count, c.dtype, c.op, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclAllReduce returned " + std::to_string(r));
  if (SyncFailed(ctx, name)) return false;

  std::vector<char> recv_after, send_after;
  if (!recv_buf.Get(&recv_after, total) || (!c.in_place && !send_buf.Get(&send_after, total)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  if (!c.in_place) {
    std::string m = CompareBytes(send_before.data(), send_after.data(), total, name + ": sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }
  if (c.count == 0) {
    std::string m = CompareBytes(recv_before.data(), recv_after.data(), total, name + ": count 0 changed recvBuf");
    if (!m.empty()) ctx.Fail(m);
    return true;
  }
  std::string m = CompareBytes(recv_before.data() + bytes, recv_after.data() + bytes, kGuardBytes,
                               name + ": recvBuf changed beyond count");
  if (!m.empty()) ctx.Fail(m);
  std::vector<char> expected(bytes);
  ExpectedAllReduce(c, ctx.nranks, expected.data());
  m = CompareElems(d, expected.data(), recv_after.data(), c.count, name + ": result");
  if (!m.empty()) ctx.Fail(m);
  if (board) board->Add(name, recv_after.data(), bytes);
  return true;
}

bool RunBroadcastCase(RankContext& ctx, const BroadcastCase& c) {
  const DtypeDesc& d = MovableDesc(c.dtype);
  const std::string name = CaseName(c);
  const size_t bytes = c.count * d.size;
  const size_t total = bytes + kGuardBytes;
  const bool is_root = static_cast<uint32_t>(ctx.rank) == c.root;

  std::vector<char> expected(bytes), before(total);
  BroadcastInput(c, expected.data());
  FillGuard(before.data(), total, c.seed ^ (0x51edull * (ctx.rank + 1)));
  if (is_root) std::copy(expected.begin(), expected.end(), before.begin());

  CaseBuffer buf;
  if (c.host_buf && !AllowHostBuffers(ctx)) return false;
  if (!buf.Alloc(total, c.host_buf)) return ctx.Fail(name + ": alloc failed");
  if (!buf.Put(before)) return ctx.Fail(name + ": aclrtMemcpy to device failed");
  HcclResult r = HcclBroadcast(buf.get(), c.count, c.dtype, c.root, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclBroadcast returned " + std::to_string(r));
  if (SyncFailed(ctx, name)) return false;
  std::vector<char> after;
  if (!buf.Get(&after, total)) return ctx.Fail(name + ": aclrtMemcpy from device failed");
  if (is_root || c.count == 0) {
    std::string m = CompareBytes(before.data(), after.data(), total,
                                 name + (is_root ? ": the root's buffer changed" : ": count 0 changed buf"));
    if (!m.empty()) ctx.Fail(m);
    return true;
  }
  std::string m = CompareBytes(before.data() + bytes, after.data() + bytes, kGuardBytes, name + ": buf changed beyond count");
  if (!m.empty()) ctx.Fail(m);
  m = CompareRaw(d.size, expected.data(), after.data(), c.count, name + ": result");
  if (!m.empty()) ctx.Fail(m);
  return true;
}

bool AllReduceImplemented() {
  static const bool v = ProbeOneRank(true);
  return v;
}

bool BroadcastImplemented() {
  static const bool v = ProbeOneRank(false);
  return v;
}

}  // namespace hostccl::test
