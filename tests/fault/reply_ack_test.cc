// Answers that ride back on the peer's own messages over the shared-memory mailboxes (the `mailbox`
// algorithm, src/algo/sendrecv/sendrecv_mailbox.cc; docs/algorithms.md): every message carries the
// last message of the reverse pair its sender took (`ack`), and a rank that takes it counts its own
// messages up to that one as taken without reading the pair's answer line. A message from the peer
// must therefore never vouch for one the peer did not take.
// 2 processes over shared memory, exec timeout 1.5 s:
//  - AReplyDoesNotVouchForAnUntakenMessage: rank 0 sends 2 floats to rank 1 and receives 2 floats
//    from it; rank 1 only sends (it never posts the HcclRecv for rank 0's message). Rank 0 takes
//    rank 1's message (bit-exact), and its synchronize still fails at the exec timeout with
//    HCCL_E_TIMEOUT naming rank 1 and the HcclRecv it did not post; rank 1's synchronize succeeds.
//    (An `ack` that counted rank 0's message as taken would let rank 0's synchronize succeed.)
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fault/fault_util.h"
#include "fault/runahead_util.h"

namespace {

namespace ft = hostccl::faulttest;
namespace ht = hostccl::test;

TEST(ReplyAck, AReplyDoesNotVouchForAnUntakenMessage) {
  const std::string dir = ft::MakeScratchDir();
  ht::RunOptions o = ft::RunAheadShmOptions(dir);
  for (auto& e : o.env)
    if (e.first == "HOSTCCL_EXEC_TIMEOUT_MS") e.second = "1500";
  auto res = ht::RunRanks(
      2, ht::Mode::kProcesses,
      [&](ht::RankContext& ctx) {
        ft::DevBuf send, recv;
        if (!send.Alloc(64 * 4, ctx.rank == 0 ? 7.5f : -2.25f) || !recv.Alloc(64 * 4, 0.0f))
          return ctx.Fail("aclrtMalloc failed");
        if (ctx.rank == 1) {
          if (HcclSend(send.ptr, 2, HCCL_DATA_TYPE_FP32, 0, ctx.comm, ctx.stream) != HCCL_SUCCESS)
            return ctx.Fail("HcclSend rejected");
          const ft::Verdict got = ft::SynchronizeVerdict(ctx, ft::NowMs());
          // Stay until rank 0 has its verdict: leaving earlier would fail it for another reason.
          const bool waited = ft::ReadMark("rank0.judged", 20000) == 1;
          if (got.sync != ACL_SUCCESS) return ctx.Fail("rank 1's synchronize failed: " + got.msg);
          if (!waited) return ctx.Fail("rank 0 gave no verdict");
          return true;
        }
        const int64_t start = ft::NowMs();
        if (HcclSend(send.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream) != HCCL_SUCCESS ||
            HcclRecv(recv.ptr, 2, HCCL_DATA_TYPE_FP32, 1, ctx.comm, ctx.stream) != HCCL_SUCCESS) {
          ft::WriteMark("rank0.judged", 1);
          return ctx.Fail("HcclSend or HcclRecv rejected");
        }
        const ft::Verdict got = ft::SynchronizeVerdict(ctx, start);
        ft::WriteMark("rank0.judged", 1);
        float host[3];
        std::memcpy(host, recv.ptr, sizeof(host));
        if (host[0] != -2.25f || host[1] != -2.25f || host[2] != 0.0f)
          return ctx.Fail("rank 0 did not receive rank 1's two floats");
        if (got.sync == ACL_SUCCESS)
          return ctx.Fail("rank 0's synchronize succeeded, though rank 1 never received its message");
        if (got.async != HCCL_E_TIMEOUT || !ft::NamesRank(got.msg, 1) ||
            !ft::Contains(got.msg, "did not post the HcclRecv"))
          return ctx.Fail("not the missing receive of rank 1: error " + std::to_string(got.async) + ": " + got.msg);
        return true;
      },
      o);
  ft::RemoveScratchDir(dir);
  EXPECT_TRUE(res.ok) << res.message;
}

}  // namespace
