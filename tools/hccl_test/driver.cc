// The shared hccl_test driver (see driver.h).
#include "driver.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <hostccl/hostccl.h>

#include "bootstrap.h"
#include "check.h"
#include "options.h"
#include "report.h"

namespace hostccl::tools {
namespace {

double NowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

// Prints a failed ACL/HCCL call with the rank and the library's last message.
bool Ok(int rc, int rank, const char* what) {
  if (rc == 0) return true;
  const char* msg = aclGetRecentErrMsg();
  std::fprintf(stderr, "rank %d: %s failed with %d%s%s\n", rank, what, rc, msg && *msg ? ": " : "",
               msg && *msg ? msg : "");
  return false;
}

// -z 1 / -m 1: sendBuf and recvBuf (slots 0 and 1) in memory registered with the communicator,
// the way hccl_test's zero-copy and symmetric-memory paths get theirs:
//   zero copy  one reserved address range announced with HcclCommSetMemoryRange; each buffer is
//              its own aclrtMallocPhysical + aclrtMapMem + HcclCommActivateCommMemory at the
//              start of its slot, undone when the buffer is freed;
//   symmetric  one physical block mapped over the whole reservation and registered once with
//              HcclCommSymWinRegister; the buffers are its two halves.
// Prepare(bytes) makes each slot at least `bytes` long (every rank runs the same sweep, so every
// rank grows at the same sizes); growing re-creates the range or window while no buffer is out.
class RegisteredMemory {
 public:
  enum class Kind { kNone, kZeroCopy, kSymmetric };
  Kind kind = Kind::kNone;
  HcclComm comm = nullptr;
  int rank = 0;

  ~RegisteredMemory() { Close(); }
  bool Prepare(uint64_t bytes) {
    const uint64_t slot = RoundUp(std::max<uint64_t>(bytes, 64));
    if (slot <= slot_bytes_) return true;
    Close();
    slot_bytes_ = slot;
    if (!Ok(aclrtReserveMemAddress(&base_, 2 * slot, 0, nullptr, 1), rank, "aclrtReserveMemAddress")) return false;
    if (kind == Kind::kZeroCopy)
      return Ok(HcclCommSetMemoryRange(comm, base_, 2 * slot, 0, 0), rank, "HcclCommSetMemoryRange");
    aclrtPhysicalMemProp prop = Prop();
    return Ok(aclrtMallocPhysical(&window_handle_, 2 * slot, &prop, 0), rank, "aclrtMallocPhysical") &&
           Ok(aclrtMapMem(base_, 2 * slot, 0, window_handle_, 0), rank, "aclrtMapMem") &&
           Ok(HcclCommSymWinRegister(comm, base_, 2 * slot, &window_, 1), rank, "HcclCommSymWinRegister");
  }
  int Get(int slot, uint64_t bytes, void** ptr) {
    char* p = static_cast<char*>(base_) + static_cast<uint64_t>(slot) * slot_bytes_;
    if (base_ == nullptr || bytes > slot_bytes_) return ACL_ERROR_INVALID_PARAM;
    if (kind == Kind::kZeroCopy) {
      const uint64_t size = RoundUp(std::max<uint64_t>(bytes, 64));
      aclrtPhysicalMemProp prop = Prop();
      int rc = aclrtMallocPhysical(&handles_[slot], size, &prop, 0);
      if (rc == 0) rc = aclrtMapMem(p, size, 0, handles_[slot], 0);
      if (rc == 0) rc = HcclCommActivateCommMemory(comm, p, size, 0, handles_[slot], 0);
      if (rc != 0) return rc;
    }
    *ptr = p;
    return ACL_SUCCESS;
  }
  void Put(int slot) {
    if (kind != Kind::kZeroCopy || handles_[slot] == nullptr) return;
    char* p = static_cast<char*>(base_) + static_cast<uint64_t>(slot) * slot_bytes_;
    (void)Ok(HcclCommDeactivateCommMemory(comm, p), rank, "HcclCommDeactivateCommMemory");
    (void)aclrtUnmapMem(p);
    (void)aclrtFreePhysical(handles_[slot]);
    handles_[slot] = nullptr;
  }
  void Close() {
    if (base_ == nullptr) return;
    if (kind == Kind::kZeroCopy) {
      Put(0);
      Put(1);
      (void)Ok(HcclCommUnsetMemoryRange(comm, base_), rank, "HcclCommUnsetMemoryRange");
    } else {
      if (window_ != nullptr) (void)Ok(HcclCommSymWinDeregister(window_), rank, "HcclCommSymWinDeregister");
      (void)aclrtUnmapMem(base_);
      if (window_handle_ != nullptr) (void)aclrtFreePhysical(window_handle_);
      window_ = nullptr;
      window_handle_ = nullptr;
    }
    (void)aclrtReleaseMemAddress(base_);
    base_ = nullptr;
    slot_bytes_ = 0;
  }

 private:
  static uint64_t RoundUp(uint64_t v) {
    const uint64_t g = 2ull << 20;  // aclrtMemGetAllocationGranularity's answer on failure too
    return (v + g - 1) / g * g;
  }
  static aclrtPhysicalMemProp Prop() {
    aclrtPhysicalMemProp prop{};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    int32_t dev = 0;
    (void)aclrtGetDevice(&dev);
    prop.location.id = static_cast<uint32_t>(dev);
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    return prop;
  }
  void* base_ = nullptr;
  uint64_t slot_bytes_ = 0;
  aclrtDrvMemHandle handles_[2] = {nullptr, nullptr};
  aclrtDrvMemHandle window_handle_ = nullptr;
  HcclCommSymWindow window_ = nullptr;
};

// A device buffer from aclrtMalloc (or, with host = true, plain 64-byte-aligned heap memory,
// pre-faulted like device memory: --host-buffers; or a slot of the registered memory: -z/-m),
// freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  bool host = false;
  RegisteredMemory* reg = nullptr;  // set: the buffer is slot `slot` of it
  int slot = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Free(); }
  void Free() {
    if (ptr && reg) reg->Put(slot);
    else if (ptr && host) std::free(ptr);
    else if (ptr) (void)aclrtFree(ptr);
    ptr = nullptr;
  }
  int Alloc(uint64_t bytes, bool on_host = false) {
    // Zero-byte buffers still get a valid pointer (HCCL rejects null buffers before count checks).
    host = on_host;
    if (reg) return reg->Get(slot, bytes, &ptr);
    if (!host) return aclrtMalloc(&ptr, std::max<uint64_t>(bytes, 64), ACL_MEM_MALLOC_HUGE_ONLY);
    bytes = std::max<uint64_t>(bytes, 64);
    if (posix_memalign(&ptr, 64, bytes) != 0) {
      ptr = nullptr;
      return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    std::memset(ptr, 0, bytes);
    return ACL_SUCCESS;
  }
};

// Progress on stderr, only when it is a terminal (never pollutes redirected output).
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO)) {}
  void Show(const std::string& text) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r%-78.78s", text.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (!enabled_ || !shown_) return;
    std::fprintf(stderr, "\r%78s\r", "");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

struct Context {
  const CollectiveSpec* spec;
  const CollectiveModel* model;
  bool first_call = true;  // no call of the collective was made yet
  bool skipped = false;    // --skip-unimplemented fired
  Options opt;
  int rank = 0;
  int ranks = 1;
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  aclrtEvent start = nullptr;
  aclrtEvent end = nullptr;
  DeviceBuffer stats_send, stats_recv;  // int64 x 4 for the over-ranks statistics
  RegisteredMemory reg;                 // -z 1 / -m 1
};

// Reduces n (<= 4) int64 values with `op` to `root` through the library; `out` gets the result on
// the root. The tools assume only HcclReduce, so over-rank statistics travel this way.
bool ReduceStats(Context& c, const int64_t* in, uint64_t n, HcclReduceOp op, uint32_t root, int64_t* out) {
  const size_t bytes = n * sizeof(int64_t);
  if (!Ok(aclrtMemcpy(c.stats_send.ptr, bytes, in, bytes, ACL_MEMCPY_HOST_TO_DEVICE), c.rank, "aclrtMemcpy(stats)"))
    return false;
  if (!Ok(HcclReduce(c.stats_send.ptr, c.stats_recv.ptr, n, HCCL_DATA_TYPE_INT64, op, root, c.comm, c.stream),
          c.rank, "HcclReduce(stats)"))
    return false;
  if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(stats)")) return false;
  if (static_cast<uint32_t>(c.rank) == root &&
      !Ok(aclrtMemcpy(out, bytes, c.stats_recv.ptr, bytes, ACL_MEMCPY_DEVICE_TO_HOST), c.rank, "aclrtMemcpy(stats)"))
    return false;
  return true;
}

// Makes *value the maximum over all ranks on every rank. Only HcclReduce is assumed to exist, so
// the value is reduced to each rank in turn (ranks tiny calls, once per size point).
bool AgreeOnMax(Context& c, int64_t* value) {
  const int64_t mine[1] = {*value};
  int64_t best = *value;
  for (int q = 0; q < c.ranks; ++q)
    if (!ReduceStats(c, mine, 1, HCCL_REDUCE_MAX, static_cast<uint32_t>(q), &best)) return false;
  *value = best;
  return true;
}

// One call of the collective. The very first call of the run, answered with HCCL_E_NOT_SUPPORT
// and the library's "is not implemented" message, ends the run as skipped when
// --skip-unimplemented was given (no other rank can be in the collective: every rank's first call
// fails the same way at its entry checks).
bool Call(Context& c, const CallArgs& a, const char* what) {
  const bool first = c.first_call;
  c.first_call = false;
  const HcclResult rc = c.spec->run(a);
  if (rc == HCCL_SUCCESS) return true;
  const char* msg = aclGetRecentErrMsg();
  if (first && c.opt.skip_unimplemented && rc == HCCL_E_NOT_SUPPORT && msg != nullptr &&
      std::strstr(msg, "is not implemented") != nullptr) {
    c.skipped = true;
    if (c.rank == c.opt.root) {
      std::printf("%s: SKIPPED: %s is not implemented by this library (HCCL_E_NOT_SUPPORT: %s)\n",
                  c.model->name, c.model->call, msg);
    }
    return false;
  }
  std::string label = std::string(c.model->call) + " (" + what + ")";
  return Ok(rc, c.rank, label.c_str());
}

// Times one (size, dtype, op) point; returns false on a library error (not on a wrong result).
bool MeasurePoint(Context& c, uint64_t bytes, int dtype, int op, Row* row, uint64_t* local_wrong,
                  std::string* detail) {
  const CollectiveModel& m = *c.model;
  const int elem = FindTestType(dtype)->bytes;
  CallArgs a;
  const RowSizes sizes = SizesFor(m, bytes, elem, c.ranks);
  a.count = sizes.count;
  a.dtype = dtype;
  a.op = m.reduction ? op : 0;
  a.root = static_cast<uint32_t>(c.opt.root);
  a.rank = c.rank;
  a.ranks = c.ranks;
  a.comm = c.comm;
  a.stream = c.stream;
  Point pt;
  pt.count = a.count;
  pt.dtype = dtype;
  pt.op = a.op;
  pt.root = static_cast<int>(a.root);
  pt.rank = c.rank;
  pt.ranks = c.ranks;
  // --in-place: one recvBuf with sendBuf inside it (where the model says).
  const bool in_place = c.opt.in_place && !m.one_buffer && m.in_place_send_offset != nullptr;
  pt.in_place = in_place;
  const uint64_t send_bytes = m.send_count(a.count, c.ranks) * static_cast<uint64_t>(elem);
  const uint64_t recv_bytes =
      m.one_buffer ? send_bytes : m.recv_count(a.count, c.ranks) * static_cast<uint64_t>(elem);
  const Expectation expect = m.expect(pt);

  // `send` is the buffer the host image goes to: sendBuf, or the single buffer (one-buffer
  // collective, or recvBuf of an in-place call).
  const bool single = m.one_buffer || in_place;
  const uint64_t image_bytes = in_place ? recv_bytes : send_bytes;
  DeviceBuffer send, recv;
  if (c.reg.kind != RegisteredMemory::Kind::kNone) {
    if (!c.reg.Prepare(std::max(image_bytes, recv_bytes))) return false;
    send.reg = recv.reg = &c.reg;
    recv.slot = 1;
  }
  if (!Ok(send.Alloc(image_bytes, c.opt.host_buffers), c.rank,
          single ? "aclrtMalloc(buf)" : "aclrtMalloc(sendBuf)"))
    return false;
  if (!single && !Ok(recv.Alloc(recv_bytes, c.opt.host_buffers), c.rank, "aclrtMalloc(recvBuf)"))
    return false;
  const uint64_t send_offset = in_place ? m.in_place_send_offset(pt) : 0;
  a.send = static_cast<uint8_t*>(send.ptr) + send_offset * static_cast<uint64_t>(elem);
  a.recv = single ? send.ptr : recv.ptr;
  // The image. A one-buffer collective's rank without input (a Broadcast non-root) starts from
  // the prepared output image (complement of the expected data); an in-place call from the
  // prepared output with the input written over it at the send offset.
  std::unique_ptr<uint8_t[]> host_send(new uint8_t[std::max<uint64_t>(image_bytes, 1)]);
  const bool has_input = !m.one_buffer || m.has_input == nullptr || m.has_input(pt);
  if (in_place) {
    std::unique_ptr<uint8_t[]> input(new uint8_t[std::max<uint64_t>(send_bytes, 1)]);
    FillInput(dtype, a.op, c.rank, m.send_count(a.count, c.ranks), input.get());
    PrepareInPlace(pt, expect, send_offset, input.get(), send_bytes, host_send.get(), image_bytes);
  } else if (has_input) {
    FillInput(dtype, a.op, c.rank, m.send_count(a.count, c.ranks), host_send.get());
  } else {
    PrepareOutput(pt, expect, host_send.get(), send_bytes);
  }
  if (image_bytes && !Ok(aclrtMemcpy(send.ptr, image_bytes, host_send.get(), image_bytes,
                                     ACL_MEMCPY_HOST_TO_DEVICE),
                         c.rank, "aclrtMemcpy(H2D sendBuf)"))
    return false;

  const bool calibrate = c.opt.time_budget_s > 0;
  const int64_t warmups = WarmupIters(c.opt);
  double warm_t0 = 0;
  for (int64_t i = 0; i < warmups; ++i) {
    if (calibrate && i == 1) {
      // The first call may pay one-time costs (connections, page faults): calibrate on the rest.
      if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(warm-up)"))
        return false;
      warm_t0 = NowUs();
    }
    if (!Call(c, a, "warm-up call")) return false;
  }
  if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(warm-up)"))
    return false;
  int64_t iters = c.opt.iters;
  double time_us = 0;
  bool warm_timed = false;
  if (calibrate) {
    // Every rank must make the same number of calls: agree on the slowest rank's warm-up time.
    const double mine_us = (NowUs() - warm_t0) / static_cast<double>(warmups - 1);
    int64_t per_call_ns = static_cast<int64_t>(mine_us * 1000.0);
    if (!AgreeOnMax(c, &per_call_ns)) return false;
    iters = CalibratedIters(c.opt.time_budget_s, static_cast<double>(per_call_ns) / 1000.0);
    // A call longer than the whole budget: the warm-up calls after the first already ran back to
    // back between two synchronizes, so they are the measurement (no further slow calls).
    if (!c.opt.isolated && static_cast<double>(per_call_ns) > c.opt.time_budget_s * 1e9) {
      warm_timed = true;
      time_us = mine_us;
      iters = warmups - 1;
    }
  }

  if (warm_timed) {
    // measured above
  } else if (!c.opt.isolated) {
    // hccl_test's way: n calls back to back on the stream between two events.
    if (!Ok(aclrtRecordEvent(c.start, c.stream), c.rank, "aclrtRecordEvent(start)")) return false;
    for (int64_t i = 0; i < iters; ++i) {
      if (!Call(c, a, "timed call")) return false;
    }
    if (!Ok(aclrtRecordEvent(c.end, c.stream), c.rank, "aclrtRecordEvent(end)")) return false;
    if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(timed)"))
      return false;
    float ms = 0;
    if (!Ok(aclrtEventElapsedTime(&ms, c.start, c.end), c.rank, "aclrtEventElapsedTime"))
      return false;
    time_us = AvgTimeUs(ms, iters);
  } else {
    // Each call alone: barrier, then one call timed to its completion; the median is reported.
    std::vector<double> samples;
    for (int64_t i = 0; i < iters; ++i) {
      if (!Ok(HcclBarrier(c.comm, c.stream), c.rank, "HcclBarrier")) return false;
      if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(barrier)"))
        return false;
      double t0 = NowUs();
      if (!Call(c, a, "timed call")) return false;
      if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(timed)"))
        return false;
      samples.push_back(NowUs() - t0);
    }
    if (!samples.empty()) {
      std::sort(samples.begin(), samples.end());
      size_t n = samples.size();
      time_us = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    }
  }

  // The checked call: fresh inputs, recv prepared (guard / anti-expected), one call, copy back.
  uint64_t wrong = 0;
  if (c.opt.check != 0) {
    if (image_bytes && !Ok(aclrtMemcpy(send.ptr, image_bytes, host_send.get(), image_bytes,
                                       ACL_MEMCPY_HOST_TO_DEVICE),
                           c.rank, "aclrtMemcpy(H2D sendBuf)"))
      return false;
    std::unique_ptr<uint8_t[]> host_recv(new uint8_t[std::max<uint64_t>(recv_bytes, 1)]);
    if (!single) {
      PrepareOutput(pt, expect, host_recv.get(), recv_bytes);
      if (recv_bytes && !Ok(aclrtMemcpy(recv.ptr, recv_bytes, host_recv.get(), recv_bytes,
                                        ACL_MEMCPY_HOST_TO_DEVICE),
                            c.rank, "aclrtMemcpy(H2D recvBuf)"))
        return false;
    }
    if (!Call(c, a, "checked call")) return false;
    if (!Ok(aclrtSynchronizeStream(c.stream), c.rank, "aclrtSynchronizeStream(checked)"))
      return false;
    if (recv_bytes && !Ok(aclrtMemcpy(host_recv.get(), recv_bytes, a.recv, recv_bytes,
                                      ACL_MEMCPY_DEVICE_TO_HOST),
                          c.rank, "aclrtMemcpy(D2H recvBuf)"))
      return false;
    wrong += CheckOutput(pt, expect, host_recv.get(), recv_bytes,
                         c.opt.check == 2 ? detail : nullptr, in_place ? host_send.get() : nullptr);
    // sendBuf must be unchanged (out-of-place calls; a single buffer is checked above as the
    // output).
    std::unique_ptr<uint8_t[]> send_after(new uint8_t[std::max<uint64_t>(send_bytes, 1)]);
    if (!single && send_bytes &&
        !Ok(aclrtMemcpy(send_after.get(), send_bytes, send.ptr, send_bytes,
                        ACL_MEMCPY_DEVICE_TO_HOST),
            c.rank, "aclrtMemcpy(D2H sendBuf)"))
      return false;
    if (!single && send_bytes &&
        std::memcmp(send_after.get(), host_send.get(), send_bytes) != 0) {
      uint64_t changed = 0;
      for (uint64_t i = 0; i < send_bytes; ++i) changed += send_after[i] != host_send[i];
      wrong += changed;
      if (detail) *detail += "sendBuf modified: " + std::to_string(changed) + " bytes changed\n";
    }
  }
  *local_wrong = wrong;

  // Statistics over ranks, gathered at the root with the library itself: max of (t, -t) and sum of
  // #wrong.
  int64_t t_ns = std::llround(time_us * 1000.0);
  int64_t stats[4] = {t_ns, -t_ns, 0, 0};
  int64_t sums[4] = {static_cast<int64_t>(wrong), 0, 0, 0};
  int64_t out[4] = {0, 0, 0, 0};
  if (!ReduceStats(c, stats, 2, HCCL_REDUCE_MAX, a.root, out)) return false;
  row->max_us = static_cast<double>(out[0]) / 1000.0;
  row->min_us = static_cast<double>(-out[1]) / 1000.0;
  if (!ReduceStats(c, sums, 1, HCCL_REDUCE_SUM, a.root, out)) return false;

  row->bytes = sizes.data_size;
  row->count = a.count;
  row->dtype = dtype;
  row->op = m.reduction ? op : -1;                      // printed as "none"
  row->root = m.rooted ? static_cast<int>(a.root) : -1;  // printed as -1 (nccl-tests)
  row->time_us = time_us;
  row->iters = iters;
  row->algbw = AlgBandwidthGBs(sizes.alg_bytes, time_us);
  row->busbw = row->algbw * m.bus_factor(c.ranks);
  row->wrong = static_cast<uint32_t>(c.rank) == a.root ? static_cast<uint64_t>(out[0]) : wrong;
  row->check = c.opt.check == 0 ? CheckState::kNull
                                : (row->wrong ? CheckState::kFailed : CheckState::kSuccess);
  return true;
}

int RunSweep(Context& c) {
  const bool is_root = c.rank == c.opt.root;
  std::vector<uint64_t> sizes = SizeSweep(c.opt);  // c.opt is already SweepOptions
  std::vector<int> ops = c.model->reduction ? c.opt.ops : std::vector<int>{0};
  std::vector<int> dtypes = c.opt.all_dtypes ? AllTypesFor(*c.model) : c.opt.dtypes;
  std::vector<Row> rows;
  const bool several = dtypes.size() * ops.size() > 1;
  Progress progress(is_root);
  bool any_wrong = false;
  size_t point = 0, points = sizes.size() * dtypes.size() * ops.size();
  if (is_root && c.opt.wide) std::fputs(WideHeader().c_str(), stdout);
  for (int dtype : dtypes) {
    for (int op : ops) {
      if (is_root && !c.opt.wide) {
        if (several && c.model->reduction)
          std::printf("datatype: %s, op: %s\n", FindTestType(dtype)->name, OpName(op));
        else if (several)
          std::printf("datatype: %s\n", FindTestType(dtype)->name);
        std::fputs(ClassicHeader().c_str(), stdout);
      }
      for (uint64_t bytes : sizes) {
        ++point;
        progress.Show(std::string("[") + c.model->name + "] " + FindTestType(dtype)->name + " " +
                      (c.model->reduction ? OpName(op) : "") + " " + std::to_string(bytes) +
                      " B  (" + std::to_string(point) +
                      "/" + std::to_string(points) + ")");
        Row row;
        uint64_t local_wrong = 0;
        std::string detail;
        if (!MeasurePoint(c, bytes, dtype, op, &row, &local_wrong, &detail)) {
          progress.Clear();
          std::fflush(stdout);
          return c.skipped ? kExitSkipped : 2;
        }
        progress.Clear();
        if (local_wrong) any_wrong = true;
        if (is_root) {
          if (row.wrong) any_wrong = true;
          std::fputs((c.opt.wide ? WideRow(row) : ClassicRow(row)).c_str(), stdout);
          if (!detail.empty()) std::fputs(detail.c_str(), stdout);
          rows.push_back(row);
        } else if (local_wrong) {
          std::string line = ClassicRow(row);
          std::printf("local rank_id %d, check result failed, %s", c.rank, line.c_str());
          if (!detail.empty()) std::fputs(detail.c_str(), stdout);
        }
        std::fflush(stdout);
      }
    }
  }
  if (is_root && !c.opt.json_path.empty()) {
    const bool in_place =
        c.model->one_buffer || (c.opt.in_place && c.model->in_place_send_offset != nullptr);
    RunInfo info{c.model->name, c.ranks, c.opt.iters, c.opt.warmup_iters, c.opt.isolated, in_place};
    std::FILE* f = std::fopen(c.opt.json_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "rank %d: cannot write --json file '%s'\n", c.rank,
                   c.opt.json_path.c_str());
      return 2;
    }
    std::string s = RowsToJson(info, rows);
    std::fwrite(s.data(), 1, s.size(), f);
    std::fclose(f);
  }
  return any_wrong ? 1 : 0;
}

}  // namespace

int RunHcclTest(int argc, char** argv, const CollectiveSpec& spec) {
  std::string err;
  std::unique_ptr<Bootstrap> boot = MakeBootstrap(&argc, &argv, &err);
  if (!boot) {
    std::fprintf(stderr, "%s: %s\n", spec.model->name, err.c_str());
    return 2;
  }
  Context c;
  c.spec = &spec;
  c.model = spec.model;
  c.rank = boot->rank();
  c.ranks = boot->size();
  ParseResult parsed = ParseOptions(argc, argv);
  // Messages about the command line come from one rank only (the root if it parsed, else rank 0).
  const int64_t speaker =
      parsed.error.empty() && parsed.options.root < c.ranks ? parsed.options.root : 0;
  if (parsed.help || !parsed.error.empty()) {
    if (c.rank == speaker) {
      if (parsed.help)
        std::fputs(UsageText(spec.model->name).c_str(), stdout);
      else
        std::printf("%s\n", parsed.error.c_str());
      // Now: the other ranks exit 1 at once, and a launcher then stops this one (hcclrun sends
      // SIGTERM), which would drop a message still buffered.
      std::fflush(stdout);
    }
    boot->Finalize();
    return parsed.help ? 0 : 1;
  }
  // hccl_test's check_data_count: the tools that split buffers into n blocks align the size
  // options once, here; the header and the sweep use the aligned values, rows are not re-aligned.
  c.opt = SweepOptions(*spec.model, parsed.options, c.ranks);
  uint32_t devices = 0;
  if (!Ok(aclrtGetDeviceCount(&devices), c.rank, "aclrtGetDeviceCount")) return 2;
  std::string bad = ValidateForWorld(c.opt, c.ranks, devices);
  if (!bad.empty()) {
    if (c.rank == speaker) {
      std::printf("%s\n", bad.c_str());
      std::fflush(stdout);  // as above
    }
    boot->Finalize();
    return 1;
  }
  const bool is_root = c.rank == c.opt.root;
  // A --json file the root cannot write fails now, not after the whole sweep (the launcher then
  // ends the other ranks). The probe leaves no empty file behind: the sweep's end writes it.
  if (is_root && !c.opt.json_path.empty()) {
    const bool existed = access(c.opt.json_path.c_str(), F_OK) == 0;
    std::FILE* f = std::fopen(c.opt.json_path.c_str(), "a");
    if (f == nullptr) {
      std::fprintf(stderr, "rank %d: cannot write --json file '%s': %s\n", c.rank, c.opt.json_path.c_str(),
                   std::strerror(errno));
      boot->Finalize();
      return 2;
    }
    std::fclose(f);
    if (!existed) (void)unlink(c.opt.json_path.c_str());
  }
  if (is_root) {
    for (const auto& n : c.opt.notes) std::printf("%s\n", n.c_str());
    if (OpOptionIgnored(*spec.model, c.opt)) std::printf("%s\n", kOpIgnoredWarning);
    if (c.opt.in_place && spec.model->one_buffer)
      std::printf("note: --in-place: %s is in place by definition\n", spec.model->call);
    else if (c.opt.in_place && spec.model->in_place_send_offset == nullptr)
      std::printf("note: --in-place is ignored: %s has no in-place form\n", spec.model->call);
  }
  const int64_t npus = c.opt.npus > 0 ? c.opt.npus : devices;
  const int device = static_cast<int>(c.rank % npus);
  if (!Ok(aclInit(nullptr), c.rank, "aclInit")) return 2;
  if (!Ok(aclrtSetDevice(device), c.rank, "aclrtSetDevice")) return 2;
  if (!Ok(aclrtCreateEvent(&c.start), c.rank, "aclrtCreateEvent") ||
      !Ok(aclrtCreateEvent(&c.end), c.rank, "aclrtCreateEvent") ||
      !Ok(aclrtCreateStream(&c.stream), c.rank, "aclrtCreateStream"))
    return 2;
  if (is_root) {
    // hccl_test prints the -b/-e options (after its alignment, see SweepOptions above), not the
    // last size the -f sweep reaches; with -T, that the iterations are calibrated (ParamsLine).
    std::fputs(ParamsLine(c.opt).c_str(), stdout);
    std::fflush(stdout);
  }
  int status = 2;
  HcclResult hr = boot->CreateComm(static_cast<int>(c.opt.root), &c.comm, &err);
  if (hr != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %d: creating the communicator failed with %d: %s\n", c.rank,
                 static_cast<int>(hr), err.c_str());
  } else if (c.opt.host_buffers && !Ok(HostcclCommAllowHostBuffers(c.comm), c.rank, "HostcclCommAllowHostBuffers")) {
    // --host-buffers is a hostccl mode: the communicator must accept malloc'd buffers (NPU fidelity).
  } else if (Ok(c.stats_send.Alloc(64), c.rank, "aclrtMalloc(stats)") &&
             Ok(c.stats_recv.Alloc(64), c.rank, "aclrtMalloc(stats)")) {
    c.reg.comm = c.comm;
    c.reg.rank = c.rank;
    c.reg.kind = c.opt.zero_copy   ? RegisteredMemory::Kind::kZeroCopy
                 : c.opt.symmetric ? RegisteredMemory::Kind::kSymmetric
                                   : RegisteredMemory::Kind::kNone;
    status = RunSweep(c);
  }
  c.reg.Close();
  c.stats_send.Free();
  c.stats_recv.Free();
  if (c.comm) (void)HcclCommDestroy(c.comm);
  (void)aclrtDestroyStream(c.stream);
  (void)aclrtDestroyEvent(c.start);
  (void)aclrtDestroyEvent(c.end);
  (void)aclrtResetDevice(device);
  (void)aclFinalize();
  boot->Finalize();
  return status;
}

}  // namespace hostccl::tools
