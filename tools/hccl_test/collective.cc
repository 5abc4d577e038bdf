// The collectives' models and the generic output preparation/check (see collective.h).
#include "collective.h"

#include <algorithm>
#include <cstring>

#include "check.h"
#include "options.h"

namespace hostccl::tools {
namespace {

uint64_t SameCount(uint64_t count, int) { return count; }
uint64_t OffsetZero(const Point&) { return 0; }
double BusFactorOne(int) { return 1.0; }

std::vector<uint8_t> PeriodOf(const Point& p, const Segment& s) {
  return s.pattern == Segment::Pattern::kFold
             ? FoldPeriod(p.dtype, p.op, p.ranks, s.count, s.phase)
             : InputPeriod(p.dtype, p.op, s.source, s.count, s.phase);
}

// The part of segment s that lies inside a buffer of `bytes` bytes, in elements.
uint64_t ClampedCount(const Segment& s, uint64_t elem, uint64_t bytes) {
  const uint64_t cap = bytes / elem;
  if (s.offset >= cap) return 0;
  return std::min(s.count, cap - s.offset);
}

}  // namespace

// Reduce: the root gets the fold; every other recvBuf is never written. busbw = algbw (nccl-tests:
// all data must reach the root).
const CollectiveModel& ReduceModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c;
    c.name = "reduce_test";
    c.call = "HcclReduce";
    c.reduction = true;
    c.send_count = SameCount;
    c.recv_count = SameCount;
    c.expect = [](const Point& p) {
      if (p.rank != p.root) return Expectation{};
      return Expectation{{Segment::Pattern::kFold, 0, 0, p.count, 0}};
    };
    c.in_place_send_offset = OffsetZero;  // sendBuf == recvBuf (a non-root's input stays)
    c.bus_factor = BusFactorOne;
    return c;
  }();
  return m;
}

// AllReduce: every rank gets the fold, bit for bit. busbw = algbw x 2(n-1)/n (nccl-tests: a
// bandwidth-optimal AllReduce moves 2(n-1)/n of the buffer through each rank's link).
const CollectiveModel& AllReduceModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c;
    c.name = "all_reduce_test";
    c.call = "HcclAllReduce";
    c.reduction = true;
    c.rooted = false;
    c.send_count = SameCount;
    c.recv_count = SameCount;
    c.expect = [](const Point& p) {
      return Expectation{{Segment::Pattern::kFold, 0, 0, p.count, 0}};
    };
    c.in_place_send_offset = OffsetZero;  // sendBuf == recvBuf
    c.bus_factor = [](int n) { return n > 0 ? 2.0 * (n - 1) / n : 0.0; };
    return c;
  }();
  return m;
}

// Broadcast: one buffer (in place by definition); the root's holds its input, and afterwards every
// rank's holds the root's input (the root's unchanged). busbw = algbw.
const CollectiveModel& BroadcastModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c;
    c.name = "broadcast_test";
    c.call = "HcclBroadcast";
    c.reduction = false;
    c.one_buffer = true;
    c.send_count = SameCount;
    c.recv_count = SameCount;
    c.has_input = [](const Point& p) { return p.rank == p.root; };
    c.expect = [](const Point& p) {
      return Expectation{{Segment::Pattern::kInput, p.root, 0, p.count, 0}};
    };
    c.bus_factor = BusFactorOne;
    return c;
  }();
  return m;
}

uint64_t AlltoAllCallCount(uint64_t elements, int ranks) {
  const uint64_t n = ranks > 0 ? static_cast<uint64_t>(ranks) : 1;
  const uint64_t unit = elements >= n * 128 ? n * 128 : n;
  return (elements + unit - 1) / unit * unit / n;
}

namespace {

// hccl_test's sizes of the tools that split a buffer into n blocks (all_gather, scatter,
// reduce_scatter): the size options aligned to the rank count (once, SweepOptions),
// count = ceil(C / n), alg_bandwidth over n x count elements.
void BlockSizes(CollectiveModel* c) {
  c->align_size = RankSizeAlignedSize;
  c->call_count = [](uint64_t elements, int n) {
    return (elements + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n);
  };
  c->alg_bytes = [](uint64_t count, uint64_t tb, int n) { return count * tb * static_cast<uint64_t>(n); };
  c->bus_factor = [](int n) { return n > 0 ? static_cast<double>(n - 1) / n : 0.0; };
}

// AlltoAll family: sendBuf and recvBuf hold n blocks of `count` elements; block i of rank r's
// recvBuf is block r of rank i's input. busbw = algbw x (n-1)/n (nccl-tests: the own block does
// not cross a link).
CollectiveModel AlltoAllFamily(const char* name, const char* call) {
  CollectiveModel c;
  c.name = name;
  c.call = call;
  c.reduction = false;
  c.rooted = false;
  c.send_count = [](uint64_t count, int n) { return count * static_cast<uint64_t>(n); };
  c.recv_count = [](uint64_t count, int n) { return count * static_cast<uint64_t>(n); };
  c.expect = [](const Point& p) {
    Expectation e;
    for (int i = 0; i < p.ranks; ++i)
      e.push_back({Segment::Pattern::kInput, i, static_cast<uint64_t>(i) * p.count, p.count,
                   static_cast<uint64_t>(p.rank) * p.count});
    return e;
  };
  c.align_size = RankSizeAlignedSize;
  c.call_count = AlltoAllCallCount;
  c.alg_bytes = [](uint64_t count, uint64_t tb, int n) { return count * tb * static_cast<uint64_t>(n); };
  c.bus_factor = [](int n) { return n > 0 ? static_cast<double>(n - 1) / n : 0.0; };
  return c;
}

// ReduceScatter(V): sendBuf holds n blocks of count; rank r gets the fold of block r, i.e. the
// fold pattern from element r x count. hccl_test's sizes: size options aligned to the rank count,
// recvCount = ceil(C / n), alg_bandwidth over n x recvCount elements. busbw = algbw x (n-1)/n
// (nccl-tests). The V tool passes sendCounts[i] = recvCount, sendDispls[i] = i x recvCount, so
// both share one model. No --in-place (the frame's form is sendBuf inside recvBuf; ReduceScatter's
// is the reverse).
CollectiveModel ReduceScatterLike(const char* name, const char* call) {
  CollectiveModel c;
  c.name = name;
  c.call = call;
  c.reduction = true;
  c.rooted = false;
  c.send_count = [](uint64_t count, int n) { return count * static_cast<uint64_t>(n > 0 ? n : 1); };
  c.recv_count = SameCount;
  c.expect = [](const Point& p) {
    return Expectation{{Segment::Pattern::kFold, 0, 0, p.count, p.count * static_cast<uint64_t>(p.rank)}};
  };
  BlockSizes(&c);
  return c;
}


}  // namespace

const CollectiveModel& ReduceScatterModel() {
  static const CollectiveModel m = ReduceScatterLike("reduce_scatter_test", "HcclReduceScatter");
  return m;
}

const CollectiveModel& ReduceScatterVModel() {
  static const CollectiveModel m = ReduceScatterLike("reduce_scatterv_test", "HcclReduceScatterV");
  return m;
}

const CollectiveModel& AlltoAllModel() {
  static const CollectiveModel m = AlltoAllFamily("alltoall_test", "HcclAlltoAll");
  return m;
}
const CollectiveModel& AlltoAllVModel() {
  static const CollectiveModel m = AlltoAllFamily("alltoallv_test", "HcclAlltoAllV");
  return m;
}
const CollectiveModel& AlltoAllVCModel() {
  static const CollectiveModel m = AlltoAllFamily("alltoallvc_test", "HcclAlltoAllVC");
  return m;
}

// AllGather: every rank's recvBuf block i (count elements at i x count) is rank i's input. In
// place: sendBuf = recvBuf + rank x count. busbw = algbw x (n-1)/n (nccl-tests).
const CollectiveModel& AllGatherModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c;
    c.name = "all_gather_test";
    c.call = "HcclAllGather";
    c.reduction = false;
    c.rooted = false;
    c.send_count = SameCount;
    c.recv_count = [](uint64_t count, int n) { return count * static_cast<uint64_t>(n); };
    c.expect = [](const Point& p) {
      Expectation e;
      for (int i = 0; i < p.ranks; ++i)
        e.push_back({Segment::Pattern::kInput, i, static_cast<uint64_t>(i) * p.count, p.count, 0});
      return e;
    };
    c.in_place_send_offset = [](const Point& p) { return static_cast<uint64_t>(p.rank) * p.count; };
    BlockSizes(&c);
    return c;
  }();
  return m;
}

// AllGatherV as hccl_test's all_gatherv_test calls it: recvCounts[i] = count, recvDispls[i] =
// i x count, so the result is AllGather's; no --in-place form (AllGatherV is never in place).
const CollectiveModel& AllGatherVModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c = AllGatherModel();
    c.name = "all_gatherv_test";
    c.call = "HcclAllGatherV";
    c.in_place_send_offset = nullptr;
    return c;
  }();
  return m;
}

// Scatter: every rank allocates and fills n x count elements of send buffer (hccl_test does; only
// the root's is read); rank r's recvBuf is block r of the root's input. No --in-place form here
// (the root's recvBuf would lie inside its sendBuf, the other way round). busbw = algbw x (n-1)/n.
const CollectiveModel& ScatterModel() {
  static const CollectiveModel m = [] {
    CollectiveModel c;
    c.name = "scatter_test";
    c.call = "HcclScatter";
    c.reduction = false;
    c.rooted = true;
    c.send_count = [](uint64_t count, int n) { return count * static_cast<uint64_t>(n); };
    c.recv_count = SameCount;
    c.expect = [](const Point& p) {
      return Expectation{{Segment::Pattern::kInput, p.root, 0, p.count, static_cast<uint64_t>(p.rank) * p.count}};
    };
    BlockSizes(&c);
    return c;
  }();
  return m;
}

uint64_t RankSizeAlignedSize(uint64_t size, int ranks) {
  const uint64_t n = ranks > 0 ? static_cast<uint64_t>(ranks) : 1;
  if (size < n) return n;
  const uint64_t unit = size <= (16ull << 20) ? n : n * 512;
  return size / unit * unit;
}

Options SweepOptions(const CollectiveModel& m, const Options& o, int ranks) {
  Options a = o;
  if (m.align_size == nullptr) return a;
  const uint64_t n = ranks > 0 ? static_cast<uint64_t>(ranks) : 1;
  a.min_bytes = m.align_size(o.min_bytes, ranks);
  a.max_bytes = m.align_size(o.max_bytes, ranks);
  for (uint64_t& s : a.size_list) s = m.align_size(s, ranks);
  // -i 0 keeps meaning "the -b size only"; any other step (given or the default) becomes a
  // multiple of n, so every row of an additive sweep stays a multiple of n.
  if (!(o.step_bytes_set && o.step_bytes == 0)) {
    const uint64_t step = o.step_bytes > UINT64_MAX - n ? UINT64_MAX / n * n : (o.step_bytes + n - 1) / n * n;
    a.step_bytes = std::max(step, n);
  }
  return a;
}

RowSizes SizesFor(const CollectiveModel& m, uint64_t size, int type_bytes, int ranks) {
  RowSizes r;
  const uint64_t tb = type_bytes > 0 ? static_cast<uint64_t>(type_bytes) : 1;
  r.data_size = size;  // the row's D, printed as is (alignment happened on the options)
  const uint64_t elements = CountForBytes(size, static_cast<int>(tb));
  r.count = m.call_count ? m.call_count(elements, ranks) : elements;
  r.alg_bytes = m.alg_bytes ? m.alg_bytes(r.count, tb, ranks) : r.count * tb;
  return r;
}

std::vector<int> AllTypesFor(const CollectiveModel& m) {
  std::vector<int> out;
  for (const auto& t : AllTestTypes()) {
    if (m.reduction ? t.reducible : IsCheckableType(t.value)) out.push_back(t.value);
  }
  return out;
}

void PrepareOutput(const Point& p, const Expectation& e, void* buf, uint64_t bytes) {
  std::memset(buf, kGuardByte, bytes);
  const uint64_t elem = static_cast<uint64_t>(TypeBytes(p.dtype));
  if (elem == 0) return;
  for (const Segment& s : e) {
    const uint64_t n = ClampedCount(s, elem, bytes);
    if (n == 0) continue;
    FillAntiExpected(PeriodOf(p, s), p.dtype, n, static_cast<uint8_t*>(buf) + s.offset * elem);
  }
}

void PrepareInPlace(const Point& p, const Expectation& e, uint64_t send_offset, const void* input,
                    uint64_t input_bytes, void* buf, uint64_t bytes) {
  PrepareOutput(p, e, buf, bytes);
  const uint64_t at = send_offset * static_cast<uint64_t>(TypeBytes(p.dtype));
  if (at >= bytes) return;
  std::memcpy(static_cast<uint8_t*>(buf) + at, input, std::min(input_bytes, bytes - at));
}

namespace {

// Bytes of b[from, to) that differ from `before` (or from the guard byte when before is null).
uint64_t ChangedBytes(const uint8_t* b, const uint8_t* before, uint64_t from, uint64_t to) {
  if (before == nullptr) return CountGuardViolations(b + from, to - from);
  uint64_t n = 0;
  for (uint64_t i = from; i < to; ++i) n += b[i] != before[i];
  return n;
}

}  // namespace

uint64_t CheckOutput(const Point& p, const Expectation& e, const void* buf, uint64_t bytes,
                     std::string* report, const void* before_image) {
  const uint8_t* b = static_cast<const uint8_t*>(buf);
  const uint8_t* before = static_cast<const uint8_t*>(before_image);
  const uint64_t elem = static_cast<uint64_t>(TypeBytes(p.dtype));
  if (elem == 0) {
    if (report) *report += "unknown data type " + std::to_string(p.dtype) + ": cannot check\n";
    return std::max<uint64_t>(p.count, 1);
  }
  uint64_t wrong = 0;
  std::vector<std::pair<uint64_t, uint64_t>> covered;  // byte ranges [begin, end) of segments
  for (const Segment& s : e) {
    const uint64_t n = ClampedCount(s, elem, bytes);
    wrong += s.count - n;  // a segment outside the buffer is a model error: count it as wrong
    if (n == 0) continue;
    wrong += CompareWithExpected(p.dtype, b + s.offset * elem, n, PeriodOf(p, s), 8, report,
                                 s.offset);
    covered.emplace_back(s.offset * elem, (s.offset + n) * elem);
  }
  std::sort(covered.begin(), covered.end());
  uint64_t guard_lost = 0, pos = 0;
  for (const auto& [begin, end] : covered) {
    if (begin > pos) guard_lost += ChangedBytes(b, before, pos, begin);
    pos = std::max(pos, end);
  }
  if (bytes > pos) guard_lost += ChangedBytes(b, before, pos, bytes);
  if (guard_lost && report) {
    *report += "bytes outside the result written: " + std::to_string(guard_lost) +
               (before ? " bytes changed (in place: they must keep their input)\n"
                       : " bytes lost the guard 0xA5\n");
  }
  return wrong + guard_lost;
}

}  // namespace hostccl::tools
