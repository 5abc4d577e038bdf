// send_recv_test: HcclSend/HcclRecv ping-pong latency and bandwidth in the hccl_test dialect
// (options as the other tools: -b/-e/-f or --sizes, -n iterations, -w warm-ups, -c check,
// --host-buffers, -p npus; docs/tools.md). OSU-style: for each size, rank 0 and rank 1 (the other
// ranks only join the communicator)
//   latency    ping-pong: rank 0 Send + Recv, rank 1 Recv + Send, n times; one-way latency =
//              round trip / 2;
//   bandwidth  a window of n back-to-back Sends from rank 0 received by rank 1, ended by a 1-byte
//              reply; bytes x n / time (decimal GB/s).
// With -c 1 rank 1 checks the last message of each size byte for byte and rank 0 the reply of
// the ping-pong ("success"/"failed"). Exit status 0 when every call succeeded and every check
// passed.
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.h"
#include "options.h"

namespace {

using hostccl::tools::Options;

double NowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint8_t Byte(uint64_t size, uint64_t i, int from) { return static_cast<uint8_t>((i * 131 + size * 7 + from * 29) & 0xff); }

struct Buffer {
  void* p = nullptr;
  bool host = false;
  bool Alloc(uint64_t bytes, bool host_mem) {
    host = host_mem;
    if (host) {
      p = std::malloc(bytes ? bytes : 1);
      return p != nullptr;
    }
    return aclrtMalloc(&p, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
  }
  ~Buffer() {
    if (p == nullptr) return;
    if (host)
      std::free(p);
    else
      (void)aclrtFree(p);
  }
};

std::vector<uint64_t> Sizes(const Options& o) {
  if (!o.size_list.empty()) return o.size_list;
  std::vector<uint64_t> out;
  for (uint64_t s = o.min_bytes; s <= o.max_bytes && out.size() < 4096;) {
    out.push_back(s);
    uint64_t next = o.step_factor > 1.0 ? static_cast<uint64_t>(static_cast<double>(s) * o.step_factor)
                                        : s + (o.step_bytes ? o.step_bytes : o.max_bytes);
    if (next <= s) next = s + 1;
    s = next;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string err;
  std::unique_ptr<hostccl::tools::Bootstrap> boot = hostccl::tools::MakeBootstrap(&argc, &argv, &err);
  if (!boot) {
    std::fprintf(stderr, "send_recv_test: %s\n", err.c_str());
    return 2;
  }
  const int rank = boot->rank(), ranks = boot->size();
  hostccl::tools::ParseResult parsed = hostccl::tools::ParseOptions(argc, argv);
  if (parsed.help || !parsed.error.empty()) {
    if (rank == 0) {
      if (parsed.help)
        std::fputs(hostccl::tools::UsageText("send_recv_test").c_str(), stdout);
      else
        std::printf("%s\n", parsed.error.c_str());
    }
    boot->Finalize();
    return parsed.help ? 0 : 1;
  }
  Options o = parsed.options;
  // Point-to-point moves bytes: -o does not apply (the same warning as the collectives' tools).
  if (rank == 0 && o.op_set) {
    std::printf("%s\n", hostccl::tools::kOpIgnoredWarning);
    std::fflush(stdout);
  }
  if (argc <= 1) {  // OSU's default sweep
    o.min_bytes = 8;
    o.max_bytes = 64ull << 20;
    o.step_factor = 2.0;
  }
  if (ranks < 2) {
    if (rank == 0) std::printf("send_recv_test needs at least 2 ranks (got %d)\n", ranks);
    boot->Finalize();
    return 1;
  }
  uint32_t devices = 1;
  (void)aclrtGetDeviceCount(&devices);
  const int64_t npus = o.npus > 0 ? o.npus : (devices ? devices : 1);
  const int device = static_cast<int>(rank % npus);
  aclrtStream stream = nullptr;
  HcclComm comm = nullptr;
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(device) != ACL_SUCCESS ||
      aclrtCreateStream(&stream) != ACL_SUCCESS) {
    std::fprintf(stderr, "rank %d: runtime setup failed: %s\n", rank, aclGetRecentErrMsg());
    return 2;
  }
  if (boot->CreateComm(0, &comm, &err) != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %d: creating the communicator failed: %s\n", rank, err.c_str());
    return 2;
  }
  // --host-buffers: malloc'd buffers, which NPU fidelity rejects unless the communicator allows them.
  if (o.host_buffers && HostcclCommAllowHostBuffers(comm) != HCCL_SUCCESS) {
    std::fprintf(stderr, "rank %d: HostcclCommAllowHostBuffers failed: %s\n", rank, aclGetRecentErrMsg());
    (void)HcclCommDestroy(comm);
    return 2;
  }
  const std::vector<uint64_t> sizes = Sizes(o);
  uint64_t max_size = 1;
  for (uint64_t s : sizes) max_size = std::max(max_size, s);
  int status = 0;
  Buffer out, in, tiny;
  if (!out.Alloc(max_size, o.host_buffers) || !in.Alloc(max_size, o.host_buffers) || !tiny.Alloc(64, o.host_buffers)) {
    std::fprintf(stderr, "rank %d: allocating %llu bytes failed\n", rank, static_cast<unsigned long long>(max_size));
    return 2;
  }
  if (rank == 0) {
    std::printf("# send_recv_test: HcclSend/HcclRecv between rank 0 and rank 1 of %d; latency = ping-pong "
                "round trip / 2, bandwidth = a window of %lld back-to-back messages\n",
                ranks, static_cast<long long>(o.iters));
    std::printf("%12s %14s %16s %14s\n", "data_size(B)", "latency(us)", "bandwidth(GB/s)", "check_result");
    std::fflush(stdout);
  }
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, aclGetRecentErrMsg());
    status = 2;
  };
  for (uint64_t size : sizes) {
    if (status != 0) break;
    const uint64_t count = size;  // int8 elements
    if (rank >= 2) continue;
    std::vector<uint8_t> pattern(size);
    for (uint64_t i = 0; i < size; ++i) pattern[i] = Byte(size, i, rank);
    (void)aclrtMemcpy(out.p, max_size, pattern.data(), size, out.host ? ACL_MEMCPY_HOST_TO_HOST : ACL_MEMCPY_HOST_TO_DEVICE);
    const int peer = 1 - rank;
    auto pingpong = [&](int64_t n) -> bool {
      for (int64_t i = 0; i < n; ++i) {
        HcclResult a, b;
        if (rank == 0) {
          a = HcclSend(out.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream);
          b = HcclRecv(in.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream);
        } else {
          a = HcclRecv(in.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream);
          b = HcclSend(out.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream);
        }
        if (a != HCCL_SUCCESS || b != HCCL_SUCCESS) return false;
      }
      return aclrtSynchronizeStream(stream) == ACL_SUCCESS;
    };
    auto window = [&](int64_t n) -> bool {
      for (int64_t i = 0; i < n; ++i) {
        HcclResult a = rank == 0 ? HcclSend(out.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream)
                                 : HcclRecv(in.p, count, HCCL_DATA_TYPE_INT8, peer, comm, stream);
        if (a != HCCL_SUCCESS) return false;
      }
      HcclResult a = rank == 0 ? HcclRecv(tiny.p, 1, HCCL_DATA_TYPE_INT8, peer, comm, stream)
                               : HcclSend(tiny.p, 1, HCCL_DATA_TYPE_INT8, peer, comm, stream);
      return a == HCCL_SUCCESS && aclrtSynchronizeStream(stream) == ACL_SUCCESS;
    };
    if (!pingpong(o.warmup_iters)) { fail("warm-up"); break; }
    double t0 = NowUs();
    if (!pingpong(o.iters)) { fail("ping-pong"); break; }
    const double lat = (NowUs() - t0) / static_cast<double>(o.iters) / 2.0;
    bool ok = true;
    if (o.check) {
      std::vector<uint8_t> got(size);
      (void)aclrtMemcpy(got.data(), size, in.p, size, in.host ? ACL_MEMCPY_HOST_TO_HOST : ACL_MEMCPY_DEVICE_TO_HOST);
      for (uint64_t i = 0; i < size && ok; ++i) ok = got[i] == Byte(size, i, peer);
    }
    if (!window(1)) { fail("window warm-up"); break; }
    t0 = NowUs();
    if (!window(o.iters)) { fail("window"); break; }
    const double bw = static_cast<double>(size) * static_cast<double>(o.iters) / ((NowUs() - t0) * 1e3);
    // Rank 1's verdict travels to rank 0 in one byte.
    uint8_t verdict = ok ? 1 : 0;
    (void)aclrtMemcpy(tiny.p, 64, &verdict, 1, tiny.host ? ACL_MEMCPY_HOST_TO_HOST : ACL_MEMCPY_HOST_TO_DEVICE);
    if ((rank == 0 ? HcclRecv(tiny.p, 1, HCCL_DATA_TYPE_INT8, 1, comm, stream)
                   : HcclSend(tiny.p, 1, HCCL_DATA_TYPE_INT8, 0, comm, stream)) != HCCL_SUCCESS ||
        aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
      fail("verdict");
      break;
    }
    if (rank == 0) {
      uint8_t theirs = 0;
      (void)aclrtMemcpy(&theirs, 1, tiny.p, 1, tiny.host ? ACL_MEMCPY_HOST_TO_HOST : ACL_MEMCPY_DEVICE_TO_HOST);
      const bool both = ok && theirs == 1;
      std::printf("%12llu %14.2f %16.3f %14s\n", static_cast<unsigned long long>(size), lat, bw,
                  o.check ? (both ? "success" : "failed") : "NULL");
      std::fflush(stdout);
      if (!both && o.check) status = 1;
    } else if (!ok) {
      std::printf("local rank_id 1, check result failed, data_size %llu\n", static_cast<unsigned long long>(size));
      status = 1;
    }
  }
  (void)HcclCommDestroy(comm);
  (void)aclrtDestroyStream(stream);
  (void)aclrtResetDevice(device);
  (void)aclFinalize();
  boot->Finalize();
  return status;
}
