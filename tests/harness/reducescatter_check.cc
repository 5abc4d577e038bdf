#include "harness/reducescatter_check.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#include "harness/case_buffer.h"
#include "harness/input_gen.h"
#include "harness/reduce_check.h"
#include "harness/reference_fold.h"

namespace hostccl::test {
namespace {

constexpr size_t kGuardBytes = 64;


}  // namespace

std::string CaseName(const ReduceScatterCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  static const char* const kOps[] = {"sum", "prod", "max", "min"};
  const char* place = c.place == RsPlace::kSeparate ? "" : c.place == RsPlace::kOwnBlock ? " own-block" : " same-ptr";
  std::string v;
  if (!c.counts.empty()) {
    v = " counts/displs=";
    for (size_t i = 0; i < c.counts.size() && i < 8; ++i)
      ((v += i ? "," : "") += std::to_string(c.counts[i])) += "@" + std::to_string(c.displs[i]);
    if (c.counts.size() > 8) v += ",...";
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s %s %s recvCount=%" PRIu64 "%s seed=0x%" PRIx64 "%s%s",
                c.counts.empty() ? "reducescatter" : "reducescatterv", d.name, kOps[static_cast<int>(c.op) & 3],
                c.recv_count, place, c.seed, c.host_send ? " malloc-send" : "", c.host_recv ? " malloc-recv" : "");
  return buf + v;
}

namespace {

// Block j of the case on n ranks (elements) and the input extent.
uint64_t At(const ReduceScatterCase& c, int j) {
  return c.counts.empty() ? c.recv_count * static_cast<uint64_t>(j) : c.displs[static_cast<size_t>(j)];
}
uint64_t Len(const ReduceScatterCase& c, int j) {
  return c.counts.empty() ? c.recv_count : c.counts[static_cast<size_t>(j)];
}
uint64_t Extent(const ReduceScatterCase& c, int n) {
  uint64_t e = 0;
  for (int j = 0; j < n; ++j)
    if (Len(c, j) > 0) e = std::max(e, At(c, j) + Len(c, j));
  return e;
}

}  // namespace

void ExpectedReduceScatter(const ReduceScatterCase& c, int nranks, int rank, void* out) {
  const DtypeDesc& d = Desc(c.dtype);
  const uint64_t total = Extent(c, nranks);
  std::vector<char> all(total * d.size);
  if (total > 0) ExpectedReduce(ReduceCase{c.dtype, c.op, total, 0, false, c.seed}, nranks, all.data());
  std::copy(all.begin() + static_cast<std::ptrdiff_t>(At(c, rank) * d.size),
            all.begin() + static_cast<std::ptrdiff_t>((At(c, rank) + Len(c, rank)) * d.size), static_cast<char*>(out));
}

bool RunReduceScatterCase(RankContext& ctx, const ReduceScatterCase& c) {
  const DtypeDesc& d = Desc(c.dtype);
  const std::string name = CaseName(c);
  const bool v = !c.counts.empty();
  const uint64_t recv_count = Len(c, ctx.rank);
  const size_t block = recv_count * d.size;
  const size_t in_bytes = Extent(c, ctx.nranks) * d.size;
  const size_t send_total = in_bytes + kGuardBytes, recv_total = block + kGuardBytes;
  const bool in_place = c.place != RsPlace::kSeparate;
  // Where the output lands inside the send allocation when in place.
  const size_t out_at = c.place == RsPlace::kOwnBlock ? At(c, ctx.rank) * d.size : 0;

  std::vector<char> send_before(send_total), recv_before(recv_total);
  FillGuard(send_before.data(), send_total, c.seed ^ (0x7f4aull * (ctx.rank + 1)));
  FillGuard(recv_before.data(), recv_total, c.seed ^ (0x9e37ull * (ctx.rank + 1)));
  // The input over the whole extent; V gaps keep their guard pattern (never read, never written).
  std::vector<char> input(in_bytes);
  GenerateInput(d, c.op, c.seed, ctx.rank, Extent(c, ctx.nranks), input.data());
  for (int j = 0; j < ctx.nranks; ++j)
    std::copy(input.begin() + static_cast<std::ptrdiff_t>(At(c, j) * d.size),
              input.begin() + static_cast<std::ptrdiff_t>((At(c, j) + Len(c, j)) * d.size),
              send_before.begin() + static_cast<std::ptrdiff_t>(At(c, j) * d.size));

  CaseBuffer send_buf, recv_buf;
  if ((c.host_send || c.host_recv) && !AllowHostBuffers(ctx)) return false;
  if (!send_buf.Alloc(send_total, c.host_send)) return ctx.Fail(name + ": send alloc failed");
  const bool null_recv = v && recv_count == 0;
  if (!in_place && !null_recv && !recv_buf.Alloc(recv_total, c.host_recv)) return ctx.Fail(name + ": recv alloc failed");
  if (!send_buf.Put(send_before) || (!in_place && !null_recv && !recv_buf.Put(recv_before)))
    return ctx.Fail(name + ": aclrtMemcpy to device failed");
  void* recv = in_place ? send_buf.get() + out_at : recv_buf.get();

  HcclResult r = v ? HcclReduceScatterV(send_buf.get(), c.counts.data(), c.displs.data(), recv, recv_count, c.dtype, c.op,
                                        ctx.comm, ctx.stream)
                   : HcclReduceScatter(send_buf.get(), recv, c.recv_count, c.dtype, c.op, ctx.comm, ctx.stream);
  if (r != HCCL_SUCCESS)
    return ctx.Fail(name + (v ? ": HcclReduceScatterV returned " : ": HcclReduceScatter returned ") + std::to_string(r));
  aclError e = aclrtSynchronizeStream(ctx.stream);
  if (e != ACL_SUCCESS)
    return ctx.Fail(name + ": aclrtSynchronizeStream returned " + std::to_string(e) + ": " + aclGetRecentErrMsg());

  std::vector<char> send_after, recv_after;
  if (!send_buf.Get(&send_after, send_total) ||
      (!in_place && !null_recv && !recv_buf.Get(&recv_after, recv_total)))
    return ctx.Fail(name + ": aclrtMemcpy from device failed");
  std::vector<char> expected(block);
  if (recv_count > 0) ExpectedReduceScatter(c, ctx.nranks, ctx.rank, expected.data());
  const char* got = in_place ? send_after.data() + out_at : recv_after.data();
  if (recv_count > 0) {
    std::string m = CompareElems(d, expected.data(), got, recv_count, name + ": result");
    if (!m.empty()) ctx.Fail(m);
  }
  // Everything outside the output is unchanged.
  std::vector<char> send_expect = send_before;
  if (in_place && recv_count > 0)
    std::copy(got, got + block, send_expect.begin() + static_cast<std::ptrdiff_t>(out_at));
  std::string m = CompareBytes(send_expect.data(), send_after.data(), send_total,
                               name + (in_place ? ": sendBuf changed outside the output" : ": sendBuf changed"));
  if (!m.empty()) ctx.Fail(m);
  if (!in_place && !null_recv) {
    std::vector<char> recv_expect = recv_before;
    if (recv_count > 0) std::copy(got, got + block, recv_expect.begin());
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
