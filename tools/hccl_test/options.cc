// hccl_test option parsing (see options.h).
#include "options.h"

#include <getopt.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hostccl::tools {
namespace {

constexpr size_t kMaxSweepEntries = 4096;

// Strict non-negative integer like hccl_test's strtol_alldigit: digits only.
std::optional<int64_t> ParseAllDigit(const char* s) {
  if (s == nullptr || *s == '\0') return std::nullopt;
  for (const char* p = s; *p; ++p) {
    if (!std::isdigit(static_cast<unsigned char>(*p))) return std::nullopt;
  }
  errno = 0;
  long long v = std::strtoll(s, nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string AllDigitError(char opt, const char* value) {
  return std::string("Error: -") + opt + " value '" + (value ? value : "") +
         "' is not a non-negative integer (the values of -i -n -r -w -c -p must be all digits)";
}

}  // namespace

const std::vector<TestType>& AllTestTypes() {
  // hccl_test's -d names and HCCL's enum values (hccl-api-facts.md §2.4).
  static const std::vector<TestType> kTypes = {
      {0, "int8", 1, true},      {1, "int16", 2, true},     {2, "int32", 4, true},
      {3, "fp16", 2, true},      {4, "fp32", 4, true},      {5, "int64", 8, true},
      {6, "uint64", 8, true},    {7, "uint8", 1, true},     {8, "uint16", 2, true},
      {9, "uint32", 4, true},    {10, "fp64", 8, true},     {11, "bfp16", 2, true},
      {12, "int128", 16, false}, {14, "hif8", 1, false},    {15, "fp8e4m3", 1, false},
      {16, "fp8e5m2", 1, false}, {17, "fp8e8m0", 1, false},
  };
  return kTypes;
}

const TestType* FindTestType(int value) {
  for (const auto& t : AllTestTypes()) {
    if (t.value == value) return &t;
  }
  return nullptr;
}

const TestType* FindTestTypeByName(const std::string& name) {
  for (const auto& t : AllTestTypes()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

const char* OpName(int op) {
  static const char* kNames[] = {"sum", "prod", "max", "min"};
  return op >= 0 && op < 4 ? kNames[op] : "?";
}

std::optional<int> ParseOpName(const std::string& name) {
  for (int op = 0; op < 4; ++op) {
    if (name == OpName(op)) return op;
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 0);  // base 0 like hccl_test: 0x.. and 0.. work
  if (end == text.c_str() || errno == ERANGE || v <= 0) return std::nullopt;
  uint64_t unit = 1;
  size_t rest = std::strlen(end);
  if (rest == 1) {
    switch (*end) {
      case 'k':
      case 'K':
        unit = 1ull << 10;
        break;
      case 'm':
      case 'M':
        unit = 1ull << 20;
        break;
      case 'g':
      case 'G':
        unit = 1ull << 30;
        break;
      default:
        return std::nullopt;
    }
  } else if (rest != 0) {
    return std::nullopt;
  }
  uint64_t u = static_cast<uint64_t>(v);
  if (u > UINT64_MAX / unit) return std::nullopt;
  return u * unit;
}

std::string UsageText(const char* prog) {
  std::string s = std::string("USAGE: ") + (prog ? prog : "reduce_test") + "\n";
  // The options are the same for every tool; -o applies to the reductions, -r to rooted ones.
  s += "\t[-b,--minbytes <min size in bytes>] (default 64M; K/M/G suffixes, x1024)\n"
       "\t[-e,--maxbytes <max size in bytes>] (default 64M)\n"
       "\t[-i,--stepbytes <increment size>] (default (max-min)/10; 0 = only the -b size)\n"
       "\t[-f,--stepfactor <increment factor>] (> 1.0; wins over -i)\n"
       "\t[-n,--iters <iteration count>] (default 20)\n"
       "\t[-w,--warmup_iters <warmup iteration count>] (default 10)\n"
       "\t[-o,--op <sum/prod/max/min/all>] (default sum; the tools that do not reduce warn and\n"
       "\t                  ignore it)\n"
       "\t[-d,--datatype "
       "<int8/int16/int32/fp16/fp32/int64/uint64/uint8/uint16/uint32/fp64/bfp16/all>] "
       "(default fp32;\n"
       "\t                  data-movement tools also int128/hif8/fp8e4m3/fp8e5m2/fp8e8m0)\n"
       "\t[-r,--root <root>] (default 0; this rank prints the results)\n"
       "\t[-c,--check <result verification> 0:disabled 1:quiet 2:verbose (default 1)]\n"
       "\t[-p,--npus <npus used for one node>] (default: all devices)\n"
       "\t[-W,--wide [0|1]] nccl-tests style columns: count, type, redop, root, min/max time over\n"
       "\t                  ranks, algbw, busbw, #wrong\n"
       "\t[-I,--isolated] time each call alone after a barrier and report the median\n"
       "\t[--json <file>] write every row as JSON (root rank)\n"
       "\t[--sizes <a,b,...>] exactly these sizes (replaces -b/-e/-i/-f)\n"
       "\t[--host-buffers] sendBuf/recvBuf from malloc instead of aclrtMalloc (not shareable)\n"
       "\t[--in-place] sendBuf inside recvBuf (Reduce/AllReduce: sendBuf == recvBuf)\n"
       "\t[-T,--time-budget <seconds>] calibrate the iterations of each size to about this long\n"
       "\t                  (from the warm-up's slowest rank; 1..5000 iterations; replaces -n)\n"
       "\t[--skip-unimplemented] exit 77 (skipped) when the library answers the first call with\n"
       "\t                  HCCL_E_NOT_SUPPORT because the operator is not implemented\n"
       "\t[-z,--zero_copy <0|1>] 1: buffers in memory activated with HcclCommActivateCommMemory\n"
       "\t                  inside a range set with HcclCommSetMemoryRange (default 0)\n"
       "\t[-m,--symmetric_memory <0|1>] 1: buffers in a window registered with\n"
       "\t                  HcclCommSymWinRegister (default 0)\n"
       "\t[-t,-s,-a <value>] accepted for compatibility, no effect on a host\n"
       "\t[-h,--help]\n"
       "Exit status: non-zero when any check fails (hccl_test itself exits 0).\n";
  return s;
}

ParseResult ParseOptions(int argc, char* const argv[]) {
  ParseResult r;
  Options& o = r.options;
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  static const option kLong[] = {
      {"op", required_argument, nullptr, 'o'},
      {"datatype", required_argument, nullptr, 'd'},
      {"minbytes", required_argument, nullptr, 'b'},
      {"maxbytes", required_argument, nullptr, 'e'},
      {"stepbytes", required_argument, nullptr, 'i'},
      {"stepfactor", required_argument, nullptr, 'f'},
      {"root", required_argument, nullptr, 'r'},
      {"iters", required_argument, nullptr, 'n'},
      {"warmup_iters", required_argument, nullptr, 'w'},
      {"check", required_argument, nullptr, 'c'},
      {"npus", required_argument, nullptr, 'p'},
      {"help", no_argument, nullptr, 'h'},
      {"onlydevicetime", required_argument, nullptr, 't'},
      {"symmetric_memory", required_argument, nullptr, 'm'},
      {"zero_copy", required_argument, nullptr, 'z'},
      {"nslb", required_argument, nullptr, 's'},
      {"accelerator", required_argument, nullptr, 'a'},
      {"wide", optional_argument, nullptr, 'W'},
      {"isolated", no_argument, nullptr, 'I'},
      {"json", required_argument, nullptr, 'J'},
      {"time-budget", required_argument, nullptr, 'T'},
      {"sizes", required_argument, nullptr, 'L'},
      {"host-buffers", no_argument, nullptr, 'H'},
      {"skip-unimplemented", no_argument, nullptr, 'U'},
      {"in-place", no_argument, nullptr, 'P'},
      {nullptr, 0, nullptr, 0},
  };
  std::optional<uint64_t> begin = o.min_bytes, end = o.max_bytes;
  bool begin_bad = false, end_bad = false;
  optind = 0;  // full getopt re-initialisation (the parser may run more than once per process)
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, args.data(), ":o:d:b:e:i:f:r:n:w:c:p:t:m:z:s:a:W:IhJ:T:L:", kLong,
                            nullptr)) != -1) {
    const char* arg = optarg;
    switch (opt) {
      case 'b':
        begin = ParseSize(arg);
        begin_bad = !begin;
        break;
      case 'e':
        end = ParseSize(arg);
        end_bad = !end;
        break;
      case 'i': {
        auto v = ParseAllDigit(arg);
        if (!v) {
          r.error = AllDigitError('i', arg);
          return r;
        }
        o.step_bytes = static_cast<uint64_t>(*v);
        o.step_bytes_set = true;
        break;
      }
      case 'f': {
        char* e = nullptr;
        double f = std::strtod(arg, &e);
        if (e == arg || *e != '\0' || !(f > 1.0)) {
          r.error =
              std::string("Error: [-f,--stepfactor] must be greater than 1.0, got '") + arg + "'";
          return r;
        }
        o.step_factor = f;
        break;
      }
      case 'n':
      case 'w':
      case 'r':
      case 'c':
      case 'p': {
        auto v = ParseAllDigit(arg);
        if (!v) {
          r.error = AllDigitError(static_cast<char>(opt), arg);
          return r;
        }
        if (opt == 'n') o.iters = *v;
        if (opt == 'w') o.warmup_iters = *v;
        if (opt == 'r') o.root = *v;
        if (opt == 'c') o.check = *v;
        if (opt == 'p') o.npus = *v;
        break;
      }
      case 'o': {
        o.op_set = true;
        o.ops.clear();
        if (std::string(arg) == "all") {
          o.ops = {0, 1, 2, 3};
        } else if (auto op = ParseOpName(arg)) {
          o.ops.push_back(*op);
        } else {
          r.error = std::string("Error: [-o,--op] '") + arg +
                    "' is invalid; use sum, prod, max, min or all ([-h,--help] lists the options)";
          return r;
        }
        break;
      }
      case 'd': {
        o.dtypes.clear();
        o.all_dtypes = std::string(arg) == "all";
        if (o.all_dtypes) {
          for (const auto& t : AllTestTypes()) {
            if (t.reducible) o.dtypes.push_back(t.value);
          }
        } else if (const TestType* t = FindTestTypeByName(arg)) {
          o.dtypes.push_back(t->value);
        } else {
          r.error = std::string("Error: [-d,--datatype] '") + arg +
                    "' is invalid ([-h,--help] lists the type names)";
          return r;
        }
        break;
      }
      case 'W':
        if (arg == nullptr && optind < argc && argv[optind] &&
            (std::strcmp(argv[optind], "0") == 0 || std::strcmp(argv[optind], "1") == 0)) {
          arg = argv[optind++];  // "--wide 1" with a separate value
        }
        if (arg == nullptr || std::strcmp(arg, "1") == 0) {
          o.wide = true;
        } else if (std::strcmp(arg, "0") == 0) {
          o.wide = false;
        } else {
          r.error = std::string("Error: [-W,--wide] must be 0 or 1, got '") + arg + "'";
          return r;
        }
        break;
      case 'I':
        o.isolated = true;
        break;
      case 'H':
        o.host_buffers = true;
        break;
      case 'U':
        o.skip_unimplemented = true;
        break;
      case 'P':
        o.in_place = true;
        break;
      case 'J':
        o.json_path = arg;
        break;
      case 'L': {
        o.size_list.clear();
        std::string list = arg;
        size_t pos = 0;
        while (pos <= list.size()) {
          size_t comma = list.find(',', pos);
          std::string item =
              list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
          auto v = ParseSize(item);
          if (!v) {
            r.error = "Error: [--sizes] item '" + item + "' is not a size (K/M/G suffixes allowed)";
            return r;
          }
          o.size_list.push_back(*v);
          if (comma == std::string::npos) break;
          pos = comma + 1;
        }
        break;
      }
      case 'T': {
        char* e = nullptr;
        double t = std::strtod(arg, &e);
        if (e == arg || *e != '\0' || !(t > 0) || t > 3600) {
          r.error =
              std::string(
                  "Error: [-T,--time-budget] must be a number of seconds in (0, 3600], got '") +
              arg + "'";
          return r;
        }
        o.time_budget_s = t;
        break;
      }
      case 'm':
      case 'z': {
        // hccl_test's symmetric-memory (-m) and zero-copy (-z) paths: 0 or 1.
        const std::string v = arg;
        if (v != "0" && v != "1") {
          r.error = std::string(opt == 'm' ? "Error: [-m,--symmetric_memory]" : "Error: [-z,--zero_copy]") +
                    " must be 0 or 1, got '" + v + "'";
          return r;
        }
        (opt == 'm' ? o.symmetric : o.zero_copy) = v == "1";
        break;
      }
      case 't':
      case 's':
      case 'a':
        o.notes.push_back(std::string("note: -") + static_cast<char>(opt) + " " + arg +
                          " is accepted for hccl_test compatibility and has no effect on a host");
        break;
      case 'h':
        r.help = true;
        return r;
      case ':':
        r.error = std::string("Error: option ") + (argv[optind - 1] ? argv[optind - 1] : "?") +
                  " needs a value. Try [-h --help] for more information.";
        return r;
      default:
        r.error = std::string("invalid option ") + (argv[optind - 1] ? argv[optind - 1] : "?") +
                  "\nTry [-h --help] for more information.";
        return r;
    }
  }
  if (optind < argc) {
    r.error = "non-option ARGV-elements:";
    for (int i = optind; i < argc; ++i) r.error += std::string(" ") + argv[i];
    return r;
  }
  if (begin_bad || end_bad || !begin || !end) {
    r.error = "invalid size specified for [-b,--minbytes] or [-e,--maxbytes]";
    return r;
  }
  o.min_bytes = *begin;
  o.max_bytes = *end;
  if (o.max_bytes < o.min_bytes) {
    r.error =
        "invalid option: maxbytes < minbytes, Check the [-b,--minbytes] and [-e,--maxbytes] "
        "options.";
    return r;
  }
  if (!o.step_bytes_set) {
    o.step_bytes = o.max_bytes == o.min_bytes ? 1 : (o.max_bytes - o.min_bytes) / 10;
  }
  if (o.check > 2) {
    r.error = "Error: [-c,--check] is invalid, check should be 0 or 1 or 2";
    return r;
  }
  if (o.step_factor > 1.0 && o.step_bytes_set) {
    o.notes.push_back(
        "Warning: [-f,--stepfactor] and [-i,--stepbytes] are set, [-f,--stepfactor] is used.");
  }
  if (o.zero_copy && o.symmetric) {
    r.error = "Error: [-z,--zero_copy] 1 and [-m,--symmetric_memory] 1 cannot be combined";
    return r;
  }
  if ((o.zero_copy || o.symmetric) && o.host_buffers) {
    r.error = "Error: --host-buffers cannot be combined with -z 1 or -m 1 (registered device memory)";
    return r;
  }
  return r;
}

std::string ValidateForWorld(const Options& o, int64_t rank_size, int64_t device_count) {
  if (o.root < 0 || o.root >= rank_size) {
    return "Error: [-r,--root <root>] is invalid, root rank must be greater than or equal to 0 and "
           "less than "
           "or equal to " +
           std::to_string(rank_size - 1) + " (got " + std::to_string(o.root) + ")";
  }
  if (device_count <= 0) return "Error: The number of device is 0.";
  if (o.npus != -1 && (o.npus < 1 || o.npus > device_count)) {
    return "Error: [-p,--npus <npus used for one node>] is invalid, npus must be greater than or "
           "equal to 1 "
           "and less than or equal to " +
           std::to_string(device_count) + " (got " + std::to_string(o.npus) + ")";
  }
  return "";
}

int64_t CalibratedIters(double budget_s, double per_call_us) {
  if (!(per_call_us > 0)) return 5000;
  double n = budget_s * 1e6 / per_call_us;
  if (n < 1) return 1;  // a call longer than the budget is timed once (the warm-up already ran it twice)
  if (n > 5000) return 5000;
  return static_cast<int64_t>(n);
}

std::vector<uint64_t> SizeSweep(const Options& o) {
  std::vector<uint64_t> sizes;
  if (!o.size_list.empty()) return o.size_list;
  if (o.step_factor <= 1.0 && o.step_bytes_set && o.step_bytes == 0) {
    sizes.push_back(o.min_bytes);  // hccl_test: -i 0 runs the -b size only
    return sizes;
  }
  uint64_t s = o.min_bytes;
  while (s <= o.max_bytes && sizes.size() < kMaxSweepEntries) {
    sizes.push_back(s);
    uint64_t next;
    if (o.step_factor > 1.0) {
      double d = static_cast<double>(s) * o.step_factor;
      next = d >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(d);
    } else {
      next = s + o.step_bytes;
    }
    if (next <= s) {
      if (s == UINT64_MAX) break;
      next = s + 1;  // a factor too small to move a small size must still make progress
    }
    s = next;
  }
  return sizes;
}

}  // namespace hostccl::tools
