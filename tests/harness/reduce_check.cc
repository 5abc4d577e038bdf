#include "harness/reduce_check.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/case_buffer.h"
#include "harness/input_gen.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardElems = 16;  // recvBuf tail past count that must stay untouched

}  // namespace

std::string CaseName(const ReduceCase& c) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s %s count=%" PRIu64 " root=%u%s seed=0x%" PRIx64 "%s%s", Desc(c.dtype).name,
                OpName(c.op), c.count, c.root, c.in_place ? " in-place" : "", c.seed,
                c.host_send ? " malloc-send" : "", c.host_recv ? " malloc-recv" : "");
  return buf;
}

void ExpectedReduce(const ReduceCase& c, int nranks, void* out) {
  const DtypeDesc& d = Desc(c.dtype);
  GenerateInput(d, c.op, c.seed, 0, c.count, out);
  std::vector<char> x(c.count * d.size);
  if (KnobFp32() && AccumulatesFp32(d, c.op)) {  // HOSTCCL_ACCUMULATE=fp32: one rounding at the end
    std::vector<float> acc(c.count);
    WidenTo(d, out, acc.data(), c.count);
    for (int r = 1; r < nranks; ++r) {
      GenerateInput(d, c.op, c.seed, r, c.count, x.data());
      FoldIntoFp32(d, c.op, acc.data(), x.data(), c.count);
    }
    if (nranks > 1) RoundFrom(d, acc.data(), out, c.count);  // one input: the input's own bits
    return;
  }
  for (int r = 1; r < nranks; ++r) {
    GenerateInput(d, c.op, c.seed, r, c.count, x.data());
    FoldInto(d, c.op, out, x.data(), c.count);
  }
}

bool RunReduceCase(RankContext& ctx, const ReduceCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  const std::string name = CaseName(c);
  const size_t bytes = c.count * d.size;
  const size_t recv_bytes = bytes + kGuardElems * d.size;
  const bool is_root = static_cast<uint32_t>(ctx.rank) == c.root;

  // Host images: the input, and what recvBuf holds before the call.
  std::vector<char> input(bytes);
  GenerateInput(d, c.op, c.seed, ctx.rank, c.count, input.data());
  std::vector<char> recv_before(recv_bytes);
  FillGuard(recv_before.data(), recv_bytes, c.seed ^ (0x9e37ull * (ctx.rank + 1)));
  if (c.in_place) std::copy(input.begin(), input.end(), recv_before.begin());

  CaseBuffer send_dev, recv_dev;
  if ((c.host_send || c.host_recv) && !AllowHostBuffers(ctx)) return false;
  if (!recv_dev.Alloc(recv_bytes, c.in_place ? c.host_send : c.host_recv))
    return ctx.Fail(name + ": aclrtMalloc(recv) failed");
  if (!c.in_place && !send_dev.Alloc(bytes == 0 ? 64 : bytes, c.host_send))
    return ctx.Fail(name + ": aclrtMalloc(send) failed");
  void* send = c.in_place ? recv_dev.get() : send_dev.get();
  if (aclrtMemcpy(recv_dev.get(), recv_bytes, recv_before.data(), recv_bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
      (!c.in_place && bytes > 0 &&
       aclrtMemcpy(send, bytes, input.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");

  HcclResult r = HcclReduce(send, recv_dev.get(), c.count, c.dtype, c.op, c.root, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS) return ctx.Fail(name + ": HcclReduce returned " + std::to_string(r));
  aclError e = aclrtSynchronizeStream(ctx.stream);
  if (e != ACL_SUCCESS) {
    HcclResult async = HCCL_SUCCESS;
    (void)HcclGetCommAsyncError(ctx.comm, &async);
    return ctx.Fail(name + ": aclrtSynchronizeStream returned " + std::to_string(e) + " (async error " +
                    std::to_string(async) + "): " + aclGetRecentErrMsg());
  }

  std::vector<char> recv_after(recv_bytes), send_after;
  if (aclrtMemcpy(recv_after.data(), recv_bytes, recv_dev.get(), recv_bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  if (!c.in_place && bytes > 0) {
    send_after.resize(bytes);
    if (aclrtMemcpy(send_after.data(), bytes, send, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
      return ctx.Fail(name + ": aclrtMemcpy from device failed");
    std::string m = CompareBytes(input.data(), send_after.data(), bytes, name + ": sendBuf changed");
    if (!m.empty()) ctx.Fail(m);
  }

  if (!is_root || c.count == 0) {
    std::string m = CompareBytes(recv_before.data(), recv_after.data(), recv_bytes,
                                 name + (is_root ? ": count 0 changed recvBuf" : ": non-root recvBuf changed"));
    if (!m.empty()) ctx.Fail(m);
    return true;
  }
  std::string m = CompareBytes(recv_before.data() + bytes, recv_after.data() + bytes, recv_bytes - bytes,
                               name + ": root recvBuf changed beyond count");
  if (!m.empty()) ctx.Fail(m);
  std::vector<char> expected(bytes);
  ExpectedReduce(c, ctx.nranks, expected.data());
  m = CompareElems(d, expected.data(), recv_after.data(), c.count, name + ": root result");
  if (!m.empty()) ctx.Fail(m);
  return true;
}

}  // namespace hostccl::test
