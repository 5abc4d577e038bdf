// Calls from a thread_local destructor at thread exit (common/thread_state.h, ExitMarked;
// docs/runtime.md "Calls at thread exit"). A program's thread_local constructed before the
// thread's first HCCL call is destroyed after the library's thread_locals of that thread; its
// destructor may still call the library, as an RAII wrapper that destroys its communicator does.
// Such a call must not touch the destroyed objects: HcclCommDestroy, aclrtSynchronizeStream,
// aclrtDestroyStream and aclrtFree work, an operation is refused with an error naming why (and
// changes nothing), and a thread_local constructed after the library's may still run operations.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace {

constexpr uint64_t kCount = 16;
constexpr size_t kBytes = kCount * sizeof(float);

// What the destructor saw, read by the test after the thread ended.
struct Seen {
  HcclResult op = HCCL_E_RESERVED;
  std::string op_message;
  aclError sync = -1;
  HcclResult destroy = HCCL_E_RESERVED;
  aclError destroy_stream = -1;
  aclError free_send = -1;
  aclError free_recv = -1;
  std::vector<float> recv;  // recvBuf after the destructor's operation
};

// The resources of one thread's 1-rank communicator and, on destruction, the calls of an RAII
// wrapper: an AllReduce (when asked), a synchronize, then everything destroyed.
struct Wrapper {
  HcclComm comm = nullptr;
  aclrtStream stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  bool armed = false;
  bool op_in_destructor = false;
  Seen* seen = nullptr;

  bool Create() {
    if (aclrtSetDevice(0) != ACL_SUCCESS) return false;
    int32_t dev[1] = {0};
    if (HcclCommInitAll(1, dev, &comm) != HCCL_SUCCESS || aclrtCreateStream(&stream) != ACL_SUCCESS) return false;
    if (aclrtMalloc(&send, kBytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMalloc(&recv, kBytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
      return false;
    std::vector<float> ones(kCount, 1.0f);
    return aclrtMemcpy(send, kBytes, ones.data(), kBytes, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS;
  }
  // Operations of several kinds, so that the library's thread_locals of this thread exist.
  bool Use() {
    for (int i = 0; i < 3; ++i)
      if (HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream) != HCCL_SUCCESS ||
          HcclAllGather(send, recv, kCount, HCCL_DATA_TYPE_FP32, comm, stream) != HCCL_SUCCESS)
        return false;
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) return false;
    std::memset(recv, 0x5a, kBytes);  // an operation that ran would overwrite it
    return true;
  }
  ~Wrapper() {
    if (!armed) return;
    if (op_in_destructor) {
      seen->op = HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
      const char* m = aclGetRecentErrMsg();
      seen->op_message = m != nullptr ? m : "";
    }
    seen->sync = aclrtSynchronizeStream(stream);
    seen->recv.resize(kCount);
    std::memcpy(seen->recv.data(), recv, kBytes);
    seen->destroy = HcclCommDestroy(comm);
    seen->destroy_stream = aclrtDestroyStream(stream);
    seen->free_send = aclrtFree(send);
    seen->free_recv = aclrtFree(recv);
  }
};

thread_local Wrapper t_wrapper;

// A thread whose wrapper is constructed before (early) or after (late) its first HCCL call.
void RunThread(bool wrapper_first, bool op_in_destructor, Seen* seen, bool* ok) {
  std::thread th([&] {
    if (wrapper_first) t_wrapper.seen = seen;  // constructed here, before the library's
    Wrapper local;  // the resources, handed over below
    *ok = local.Create() && local.Use();
    Wrapper& w = t_wrapper;  // a late wrapper is constructed here, after the library's
    std::swap(w.comm, local.comm);
    std::swap(w.stream, local.stream);
    std::swap(w.send, local.send);
    std::swap(w.recv, local.recv);
    w.seen = seen;
    w.op_in_destructor = op_in_destructor;
    w.armed = *ok;
  });
  th.join();
}

// Everything the destructor owned was destroyed or freed without an error.
void ExpectTornDown(const Seen& seen) {
  EXPECT_EQ(seen.destroy, HCCL_SUCCESS);
  EXPECT_EQ(seen.destroy_stream, ACL_SUCCESS);
  EXPECT_EQ(seen.free_send, ACL_SUCCESS);
  EXPECT_EQ(seen.free_recv, ACL_SUCCESS);
}

TEST(ThreadExit, DestroyingFromADestructorThatRunsAfterTheLibrarysWorks) {
  Seen seen;
  bool ok = false;
  RunThread(/*wrapper_first=*/true, /*op_in_destructor=*/false, &seen, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(seen.sync, ACL_SUCCESS);
  ExpectTornDown(seen);
}

TEST(ThreadExit, AnOperationFromADestructorThatRunsAfterTheLibrarysIsRefused) {
  Seen seen;
  bool ok = false;
  RunThread(/*wrapper_first=*/true, /*op_in_destructor=*/true, &seen, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(seen.op, HCCL_E_INTERNAL);
  EXPECT_NE(seen.op_message.find("HcclAllReduce"), std::string::npos) << seen.op_message;
  EXPECT_NE(seen.op_message.find("thread exits"), std::string::npos) << seen.op_message;
  // Nothing was enqueued: the synchronize succeeds and recvBuf keeps its fill.
  EXPECT_EQ(seen.sync, ACL_SUCCESS);
  ASSERT_EQ(seen.recv.size(), kCount);
  uint32_t fill;
  std::memset(&fill, 0x5a, sizeof(fill));
  for (float v : seen.recv) EXPECT_EQ(std::memcmp(&v, &fill, sizeof(v)), 0);
  ExpectTornDown(seen);
}

TEST(ThreadExit, ADestructorThatRunsBeforeTheLibrarysStillRunsOperations) {
  Seen seen;
  bool ok = false;
  RunThread(/*wrapper_first=*/false, /*op_in_destructor=*/true, &seen, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(seen.op, HCCL_SUCCESS) << seen.op_message;
  EXPECT_EQ(seen.sync, ACL_SUCCESS);
  ASSERT_EQ(seen.recv.size(), kCount);
  for (float v : seen.recv) EXPECT_EQ(v, 1.0f);  // the 1-rank sum of ones
  ExpectTornDown(seen);
}

}  // namespace
