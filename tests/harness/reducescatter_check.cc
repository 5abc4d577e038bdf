#include "harness/reducescatter_check.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardBytes = 64;

struct Mem {
  void* p = nullptr;
  bool host = false;
  Mem() = default;
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  ~Mem() {
    if (p != nullptr) host ? std::free(p) : (void)aclrtFree(p);
  }
  bool Alloc(size_t bytes, bool h) {
    host = h;
    if (!h) return aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
    p = std::malloc(bytes);
    return p != nullptr;
  }
};

bool Put(void* dst, const std::vector<char>& src) {
  return aclrtMemcpy(dst, src.size(), src.data(), src.size(), ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
}
bool Get(std::vector<char>* dst, const void* src, size_t bytes) {
  dst->resize(bytes);
  return aclrtMemcpy(dst->data(), bytes, src, bytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS;
}

}  // namespace

std::string CaseName(const ReduceScatterCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  static const char* const kOps[] = {"sum", "prod", "max", "min"};
  const char* place = c.place == RsPlace::kSeparate ? "" : c.place == RsPlace::kOwnBlock ? " own-block" : " same-ptr";
  char buf[200];
  std::snprintf(buf, sizeof buf, "reducescatter %s %s recvCount=%" PRIu64 "%s seed=0x%" PRIx64 "%s%s", d.name,
                kOps[static_cast<int>(c.op) & 3], c.recv_count, place, c.seed, c.host_send ? " malloc-send" : "",
                c.host_recv ? " malloc-recv" : "");
  return buf;
}

void ExpectedReduceScatter(const ReduceScatterCase& c, int nranks, int rank, void* out) {
  const DtypeDesc& d = Desc(c.dtype);
  const uint64_t total = c.recv_count * static_cast<uint64_t>(nranks);
  std::vector<char> all(total * d.size);
  ExpectedReduce(ReduceCase{c.dtype, c.op, total, 0, false, c.seed}, nranks, all.data());
  std::copy(all.begin() + static_cast<std::ptrdiff_t>(c.recv_count * static_cast<uint64_t>(rank) * d.size),
            all.begin() + static_cast<std::ptrdiff_t>(c.recv_count * static_cast<uint64_t>(rank + 1) * d.size),
            static_cast<char*>(out));
}

bool RunReduceScatterCase(RankContext& ctx, const ReduceScatterCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  const std::string name = CaseName(c);
  const size_t block = c.recv_count * d.size;
  const size_t in_bytes = block * static_cast<size_t>(ctx.nranks);
  const size_t send_total = in_bytes + kGuardBytes, recv_total = block + kGuardBytes;
  const bool in_place = c.place != RsPlace::kSeparate;
  // Where the output lands inside the send allocation when in place.
  const size_t out_at = c.place == RsPlace::kOwnBlock ? block * static_cast<size_t>(ctx.rank) : 0;

  std::vector<char> send_before(send_total), recv_before(recv_total);
  FillGuard(send_before.data(), send_total, c.seed ^ (0x7f4aull * (ctx.rank + 1)));
  FillGuard(recv_before.data(), recv_total, c.seed ^ (0x9e37ull * (ctx.rank + 1)));
  GenerateInput(d, c.op, c.seed, ctx.rank, c.recv_count * static_cast<size_t>(ctx.nranks), send_before.data());

  Mem send_buf, recv_buf;
  if (!send_buf.Alloc(send_total, c.host_send)) return ctx.Fail(name + ": send alloc failed");
  if (!in_place && !recv_buf.Alloc(recv_total, c.host_recv)) return ctx.Fail(name + ": recv alloc failed");
  if (!Put(send_buf.p, send_before) || (!in_place && !Put(recv_buf.p, recv_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");
  void* recv = in_place ? static_cast<char*>(send_buf.p) + out_at : recv_buf.p;

  HcclResult r = HcclReduceScatter(send_buf.p, recv, c.recv_count, c.dtype, c.op, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclReduceScatter returned " + std::to_string(r));
  aclError e = aclrtSynchronizeStream(ctx.stream);
  if (e != ACL_SUCCESS)
    return ctx.Fail(name + ": aclrtSynchronizeStream returned " + std::to_string(e) + ": " + aclGetRecentErrMsg());

  std::vector<char> send_after, recv_after;
  if (!Get(&send_after, send_buf.p, send_total) || (!in_place && !Get(&recv_after, recv_buf.p, recv_total)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  std::vector<char> expected(block);
  if (c.recv_count > 0) ExpectedReduceScatter(c, ctx.nranks, ctx.rank, expected.data());
  const char* got = in_place ? send_after.data() + out_at : recv_after.data();
  if (c.recv_count > 0) {
    std::string m = CompareElems(d, expected.data(), got, c.recv_count, name + ": result");
    if (!m.empty()) ctx.Fail(m);
  }
  // Everything outside the output is unchanged.
  std::vector<char> send_expect = send_before;
  if (in_place && c.recv_count > 0) std::copy(got, got + block, send_expect.begin() + static_cast<std::ptrdiff_t>(out_at));
  std::string m = CompareBytes(send_expect.data(), send_after.data(), send_total,
                               name + (in_place ? ": sendBuf changed outside the output" : ": sendBuf changed"));
  if (!m.empty()) ctx.Fail(m);
  if (!in_place) {
    std::vector<char> recv_expect = recv_before;
    std::copy(got, got + block, recv_expect.begin());
    m = CompareBytes(recv_expect.data(), recv_after.data(), recv_total, name + ": recvBuf changed beyond recvCount");
    if (!m.empty()) ctx.Fail(m);
  }
  return true;
}

bool ReduceScatterImplemented() {
  static const bool v = [] {
    (void)aclInit(nullptr);
    if (aclrtSetDevice(0) != ACL_SUCCESS) return true;
    int32_t dev[1] = {0};
    HcclComm comm = nullptr;
    if (HcclCommInitAll(1, dev, &comm) != HCCL_SUCCESS) return true;  // let the test report it
    aclrtStream stream = nullptr;
    (void)aclrtCreateStream(&stream);
    void* buf = nullptr;
    (void)aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    HcclResult r = HcclReduceScatter(buf, buf, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
    (void)aclrtSynchronizeStream(stream);
    (void)aclrtFree(buf);
    (void)aclrtDestroyStream(stream);
    (void)HcclCommDestroy(comm);
    if (r == HCCL_E_NOT_SUPPORT) {
      std::fprintf(stderr, "HcclReduceScatter returned HCCL_E_NOT_SUPPORT for a valid one-rank call: %s\n",
                   aclGetRecentErrMsg());
      std::_Exit(1);
    }
    return true;
  }();
  return v;
}

}  // namespace hostccl::test
