// Table and JSON formatting for the hccl_test tools (see report.h).
#include "report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "options.h"

namespace hostccl::tools {
namespace {

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// The redop column: "none" for data-movement collectives (Row::op < 0), as nccl-tests prints.
const char* RedopName(int op) { return op < 0 ? "none" : OpName(op); }

const char* TypeName(int dtype) {
  const TestType* t = FindTestType(dtype);
  return t ? t->name : "?";
}

}  // namespace

const char* CheckStateName(CheckState s) {
  switch (s) {
    case CheckState::kSuccess:
      return "success";
    case CheckState::kFailed:
      return "failed";
    default:
      return "NULL";
  }
}

std::string ClassicHeader() {
  return "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n";
}

std::string ClassicRow(const Row& r) {
  // Column widths are the header labels' (17, 14, 20), left-aligned like hccl_test.
  return Fmt("%-17llu | %-14.2f | %-20.5f | %s\n", static_cast<unsigned long long>(r.bytes),
             r.time_us, r.algbw, CheckStateName(r.check));
}

std::string ParamsLine(const Options& o) {
  const std::vector<uint64_t>& list = o.size_list;
  const uint64_t lo = list.empty() ? o.min_bytes : *std::min_element(list.begin(), list.end());
  const uint64_t hi = list.empty() ? o.max_bytes : *std::max_element(list.begin(), list.end());
  const std::string iters = o.time_budget_s > 0 ? Fmt("calibrated to about %g s per size", o.time_budget_s)
                                                : std::to_string(o.iters);
  return Fmt("the minbytes is %llu, maxbytes is %llu, iters is %s, warmup_iters is %lld\n",
             static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), iters.c_str(),
             static_cast<long long>(WarmupIters(o)));
}

std::string WideHeader() {
  return Fmt("#%11s %12s %7s %6s %5s %12s %12s %12s %9s %9s %7s %s\n", "size(B)", "count", "type",
             "redop", "root", "time(us)", "min(us)", "max(us)", "algbw", "busbw", "#wrong",
             "check");
}

std::string WideRow(const Row& r) {
  return Fmt("%12llu %12llu %7s %6s %5d %12.2f %12.2f %12.2f %9.5f %9.5f %7llu %s\n",
             static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.count),
             TypeName(r.dtype), RedopName(r.op), r.root, r.time_us, r.min_us, r.max_us, r.algbw,
             r.busbw, static_cast<unsigned long long>(r.wrong), CheckStateName(r.check));
}

std::string RowsToJson(const RunInfo& info, const std::vector<Row>& rows) {
  std::string s = Fmt(
      "{\n  \"test\": \"%s\",\n  \"ranks\": %d,\n  \"iters\": %lld,\n  \"warmup_iters\": %lld,\n"
      "  \"timing\": \"%s\",\n  \"placement\": \"%s\",\n  \"rows\": [",
      info.test.c_str(), info.ranks, static_cast<long long>(info.iters),
      static_cast<long long>(info.warmup_iters),
      info.isolated ? "isolated-median" : "back-to-back",
      info.in_place ? "in-place" : "out-of-place");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    s +=
        Fmt("%s\n    {\"size\": %llu, \"count\": %llu, \"type\": \"%s\", \"redop\": \"%s\", "
            "\"root\": %d, "
            "\"iters\": %lld, \"time_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, \"algbw\": "
            "%.6f, \"busbw\": %.6f, "
            "\"wrong\": %llu, \"check\": \"%s\"}",
            i ? "," : "", static_cast<unsigned long long>(r.bytes),
            static_cast<unsigned long long>(r.count), TypeName(r.dtype), RedopName(r.op), r.root,
            static_cast<long long>(r.iters), r.time_us, r.min_us, r.max_us, r.algbw, r.busbw,
            static_cast<unsigned long long>(r.wrong), CheckStateName(r.check));
  }
  s += "\n  ]\n}\n";
  return s;
}

}  // namespace hostccl::tools
