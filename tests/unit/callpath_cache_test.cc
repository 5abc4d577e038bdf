// The per-call path's caches (docs/performance.md "8-byte isolated calls: the per-call cost"):
// each thread keeps its last communicator, stream and allocation answers until their registry
// changes, and a communicator reuses its last algorithm selection for a call of the same size.
// None may serve a stale answer: a communicator destroyed after calls, a stream destroyed and
// created again (possibly at the same address), a buffer freed and allocated again smaller, a
// call of another size. Each case runs in its own process (gtest_discover_tests).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

namespace {

constexpr auto kF32 = HCCL_DATA_TYPE_FP32;
constexpr auto kSum = HCCL_REDUCE_SUM;

class CallPathCache : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)aclInit(nullptr);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&send_, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&recv_, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(HcclCommDestroy(comm_), HCCL_SUCCESS);
    }
    if (send_) {
      EXPECT_EQ(aclrtFree(send_), ACL_SUCCESS);
    }
    if (recv_) {
      EXPECT_EQ(aclrtFree(recv_), ACL_SUCCESS);
    }
    if (stream_) {
      EXPECT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    }
  }
  void MakeComm() {
    int32_t dev[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, dev, &comm_), HCCL_SUCCESS);
  }
  HcclResult AllReduce(uint64_t count, HcclComm comm, aclrtStream stream) {
    return HcclAllReduce(send_, recv_, count, kF32, kSum, comm, stream);
  }
  // A new 1-rank communicator that this thread looked up (and remembered) for three calls.
  void CommLookedUpByCalls(HcclComm* comm) {
    int32_t dev[1] = {0};
    ASSERT_EQ(HcclCommInitAll(1, dev, comm), HCCL_SUCCESS);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(AllReduce(2, *comm, stream_), HCCL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  }

  HcclComm comm_ = nullptr;
  aclrtStream stream_ = nullptr;
  void* send_ = nullptr;
  void* recv_ = nullptr;
};

// The thread looked the communicator up for its calls; once destroyed, its handle is rejected.
TEST_F(CallPathCache, CommunicatorDestroyedAfterCallsIsRejected) {
  HcclComm comm = nullptr;
  ASSERT_NO_FATAL_FAILURE(CommLookedUpByCalls(&comm));
  ASSERT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  EXPECT_EQ(AllReduce(2, comm, stream_), HCCL_E_PARA);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  // Also while a queued task still holds the destroyed communicator (so the object outlives its
  // handle: the registry's generation must reject the thread's remembered answer).
  int32_t dev2[1] = {0};
  HcclComm held = nullptr;
  ASSERT_EQ(HcclCommInitAll(1, dev2, &held), HCCL_SUCCESS);
  aclrtStream blocked = nullptr;
  aclrtEvent gate = nullptr;
  ASSERT_EQ(aclrtCreateStream(&blocked), ACL_SUCCESS);
  ASSERT_EQ(aclrtCreateEvent(&gate), ACL_SUCCESS);
  ASSERT_EQ(aclrtStreamWaitEvent(blocked, gate), ACL_SUCCESS);  // waits for the next record
  ASSERT_EQ(AllReduce(2, held, blocked), HCCL_SUCCESS);         // queued behind the wait
  ASSERT_EQ(AllReduce(2, held, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(HcclCommDestroy(held), HCCL_SUCCESS);
  EXPECT_EQ(AllReduce(2, held, stream_), HCCL_E_PARA);
  ASSERT_EQ(aclrtRecordEvent(gate, stream_), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  (void)aclrtSynchronizeStream(blocked);  // its call ran on a destroyed communicator: it may fail
  EXPECT_EQ(aclrtDestroyStream(blocked), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyEvent(gate), ACL_SUCCESS);
  // Another communicator works, and so does the first handle's rejection after it.
  MakeComm();
  EXPECT_EQ(AllReduce(2, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(AllReduce(2, comm, stream_), HCCL_E_PARA);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
}

// Another thread destroys the communicator this thread made its calls on. This thread's cached
// answer still holds the object alive (a strong reference), so only the registry's generation
// tells its next call that the handle is gone: refused at the call, as any destroyed handle is,
// with nothing enqueued.
TEST_F(CallPathCache, CommunicatorDestroyedByAnotherThreadIsRejectedHere) {
  HcclComm comm = nullptr;
  ASSERT_NO_FATAL_FAILURE(CommLookedUpByCalls(&comm));
  HcclResult destroyed = HCCL_E_INTERNAL;
  std::thread other([&] { destroyed = HcclCommDestroy(comm); });
  other.join();
  ASSERT_EQ(destroyed, HCCL_SUCCESS);
  EXPECT_EQ(AllReduce(2, comm, stream_), HCCL_E_PARA);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);  // nothing was enqueued that could fail
}

// A stream used by calls and synchronizes, destroyed, and a new one created (the allocator may
// give it the same address): the old handle is rejected unless it is the new stream's, and the
// new stream runs the calls enqueued on it.
TEST_F(CallPathCache, StreamDestroyedAndCreatedAgainIsNotServedFromCache) {
  MakeComm();
  for (int round = 0; round < 4; ++round) {
    aclrtStream old = nullptr;
    ASSERT_EQ(aclrtCreateStream(&old), ACL_SUCCESS);
    ASSERT_EQ(AllReduce(2, comm_, old), HCCL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(old), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(old), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(old), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(AllReduce(2, comm_, old), HCCL_E_PARA);
    aclrtStream fresh = nullptr;
    ASSERT_EQ(aclrtCreateStream(&fresh), ACL_SUCCESS);
    const float in[2] = {1.5f + static_cast<float>(round), -2.0f};
    ASSERT_EQ(aclrtMemcpy(send_, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    ASSERT_EQ(AllReduce(2, comm_, fresh), HCCL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(fresh), ACL_SUCCESS);
    float out[2] = {0, 0};
    ASSERT_EQ(aclrtMemcpy(out, sizeof out, recv_, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out[0], in[0]);
    EXPECT_EQ(out[1], in[1]);
    if (fresh != old) {
      EXPECT_EQ(AllReduce(2, comm_, old), HCCL_E_PARA);
    }
    ASSERT_EQ(aclrtDestroyStream(fresh), ACL_SUCCESS);
  }
}

int ThreadCount() {
  int n = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) n = std::atoi(line.c_str() + 8);
  return n;
}

// aclrtSynchronizeStream keeps the thread's last stream (a strong reference, so it counts no
// reference per call); destroying that stream on this thread must still release it: its worker
// thread is joined when the last reference drops, so the process's thread count comes back.
// The count is taken after a thread has come and gone: a sanitizer's runtime may start a thread
// of its own when the process creates its first one (TSan does), and that one stays.
TEST_F(CallPathCache, SynchronizedStreamIsReleasedWhenDestroyed) {
  std::thread([] {}).join();
  const int before = ThreadCount();
  for (int round = 0; round < 3; ++round) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemsetAsync(send_, 64, 0, 64, s), ACL_SUCCESS);  // a queued task: the worker starts
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);  // answered from the thread's cache
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    int now = ThreadCount();
    for (int i = 0; i < 200 && now > before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      now = ThreadCount();
    }
    EXPECT_EQ(now, before) << "round " << round << ": the destroyed stream's worker is still alive";
  }
}

// A buffer the thread's calls used, freed and allocated again smaller (mmap tends to return the
// same address): the size check sees the new allocation, not the remembered one.
TEST_F(CallPathCache, BufferFreedAndAllocatedAgainSmallerIsChecked) {
  MakeComm();
  void* buf = nullptr;
  ASSERT_EQ(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(HcclAllReduce(buf, recv_, 1024, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(buf), ACL_SUCCESS);
  void* again = nullptr;
  ASSERT_EQ(aclrtMalloc(&again, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  // 1024 fp32 from the start of a 64-byte allocation: "count is a number of elements".
  EXPECT_EQ(HcclAllReduce(again, recv_, 1024, kF32, kSum, comm_, stream_), HCCL_E_PARA) << (again == buf);
  EXPECT_EQ(HcclAllReduce(again, recv_, 16, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  // The freed buffer is no device memory any more (unless the new allocation took its address).
  if (again != buf) {
    EXPECT_EQ(HcclAllReduce(buf, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
  }
  EXPECT_EQ(aclrtFree(again), ACL_SUCCESS);
}

// The thread remembers its last call that passed the argument check (api::FastCheck); the same
// call again after its buffer was freed is checked again: the pointer is no device memory now.
TEST_F(CallPathCache, RepeatedCallIsCheckedAgainAfterItsBufferIsFreed) {
  MakeComm();
  void* buf = nullptr;
  ASSERT_EQ(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(HcclAllReduce(buf, recv_, 2, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(buf), ACL_SUCCESS);
  EXPECT_EQ(HcclAllReduce(buf, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
  // Any other argument changed is a call of its own, checked whole (here: the count).
  for (int i = 0; i < 2; ++i) ASSERT_EQ(AllReduce(2, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(AllReduce(1025, comm_, stream_), HCCL_E_PARA);  // 4100 bytes from a 4096-byte buffer
  EXPECT_EQ(AllReduce(2, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
}

// The thread remembers its last few calls: two calls issued in turn (two buffers' AllReduce, as
// a Send and a Recv are) are both remembered, and both are checked again after a free.
TEST_F(CallPathCache, CallsIssuedInTurnAreEachCheckedAgainAfterAFree) {
  MakeComm();
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(HcclAllReduce(a, recv_, 2, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
    ASSERT_EQ(HcclAllReduce(b, recv_, 2, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
    ASSERT_EQ(HcclBroadcast(b, 2, kF32, 0, comm_, stream_), HCCL_SUCCESS);
  }
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(a), ACL_SUCCESS);
  EXPECT_EQ(HcclAllReduce(a, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
  EXPECT_EQ(HcclAllReduce(b, recv_, 2, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(HcclAllReduce(a, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(b), ACL_SUCCESS);
  EXPECT_EQ(HcclBroadcast(b, 2, kF32, 0, comm_, stream_), HCCL_E_PARA);
  EXPECT_EQ(HcclAllReduce(b, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
}

// The V family is remembered with what its arrays held: the same pointers with contents changed
// in place are a call of their own, checked whole.
TEST_F(CallPathCache, VCallIsCheckedAgainWhenItsArraysChangeInPlace) {
  MakeComm();
  uint64_t counts[1] = {2}, displs[1] = {0};
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(HcclAllGatherV(send_, 2, recv_, counts, displs, kF32, comm_, stream_), HCCL_SUCCESS);
  counts[0] = 3;  // no longer this rank's sendCount
  EXPECT_EQ(HcclAllGatherV(send_, 2, recv_, counts, displs, kF32, comm_, stream_), HCCL_E_PARA);
  counts[0] = 2;
  ASSERT_EQ(HcclAllGatherV(send_, 2, recv_, counts, displs, kF32, comm_, stream_), HCCL_SUCCESS);
  displs[0] = 1023;  // elements [1023, 1025): 4100 bytes, beyond the 4096-byte recvBuf
  EXPECT_EQ(HcclAllGatherV(send_, 2, recv_, counts, displs, kF32, comm_, stream_), HCCL_E_PARA);
  displs[0] = 0;
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(HcclReduceScatterV(send_, counts, displs, recv_, 2, kF32, kSum, comm_, stream_), HCCL_SUCCESS);
  displs[0] = 1023;  // sendBuf too small
  EXPECT_EQ(HcclReduceScatterV(send_, counts, displs, recv_, 2, kF32, kSum, comm_, stream_), HCCL_E_PARA);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
}

// The same through HcclBroadcast's one buffer (looked up once, used as send and receive side).
TEST_F(CallPathCache, BroadcastBufferFreedAndAllocatedAgainSmallerIsChecked) {
  MakeComm();
  void* buf = nullptr;
  ASSERT_EQ(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(HcclBroadcast(buf, 1024, kF32, 0, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  ASSERT_EQ(aclrtFree(buf), ACL_SUCCESS);
  void* again = nullptr;
  ASSERT_EQ(aclrtMalloc(&again, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(HcclBroadcast(again, 1024, kF32, 0, comm_, stream_), HCCL_E_PARA) << (again == buf);
  EXPECT_EQ(HcclBroadcast(again, 16, kF32, 0, comm_, stream_), HCCL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(again), ACL_SUCCESS);
}

// aclrtSynchronizeStream skips the capture lookup while no stream captures anywhere; a capture
// ended, invalidated or dropped with its stream must not hide one that is active.
TEST_F(CallPathCache, SynchronizeSeesAnActiveCaptureWhateverEndedBefore) {
  aclrtStream other = nullptr;
  ASSERT_EQ(aclrtCreateStream(&other), ACL_SUCCESS);
  aclmdlRI model = nullptr;
  // An active capture, seen (and invalidated) by a synchronize of its stream.
  auto seen = [&](const char* after) {
    ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_ERROR_RT_STREAM_CAPTURED) << after;
    EXPECT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED) << after;
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << after;
  };
  seen("the process's first capture");
  seen("a capture invalidated and ended");
  ASSERT_EQ(aclmdlRICaptureBegin(stream_, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(other), ACL_SUCCESS);  // another stream does not capture
  ASSERT_EQ(aclmdlRICaptureEnd(stream_, &model), ACL_SUCCESS);
  ASSERT_EQ(aclmdlRIDestroy(model), ACL_SUCCESS);
  seen("a capture ended into a model");
  ASSERT_EQ(aclmdlRICaptureBegin(other, ACL_MODEL_RI_CAPTURE_MODE_RELAXED), ACL_SUCCESS);
  ASSERT_EQ(aclrtDestroyStream(other), ACL_SUCCESS);
  seen("a capture dropped with its stream");
}

// A call skips the group lookup while no thread has a group open: an unmatched HcclGroupEnd or
// another thread's group must not make this thread's open group look closed (its call is
// deferred to HcclGroupEnd), nor another thread's group defer this thread's plain calls.
TEST_F(CallPathCache, GroupDeferralFollowsTheCallingThreadsGroupOnly) {
  MakeComm();
  const float in[2] = {3.0f, -4.0f};
  ASSERT_EQ(aclrtMemcpy(send_, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  auto recv = [&] {
    float out[2] = {0, 0};
    EXPECT_EQ(aclrtMemcpy(out, sizeof out, recv_, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return std::vector<float>{out[0], out[1]};
  };
  const std::vector<float> zero{0, 0}, done{3.0f, -4.0f};
  EXPECT_EQ(HcclGroupEnd(), HCCL_E_PARA);  // unmatched
  ASSERT_EQ(HcclGroupStart(), HCCL_SUCCESS);
  ASSERT_EQ(HcclGroupStart(), HCCL_SUCCESS);
  ASSERT_EQ(aclrtMemset(recv_, 8, 0, 8), ACL_SUCCESS);
  ASSERT_EQ(AllReduce(2, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(HcclGroupEnd(), HCCL_SUCCESS);  // still inside the outer group
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(recv(), zero) << "the call inside the group ran before HcclGroupEnd";
  // Meanwhile another thread (no group of its own) runs its calls at once.
  std::thread([&] {
    int32_t dev[1] = {0};
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    void* buf = nullptr;
    ASSERT_EQ(HcclCommInitAll(1, dev, &comm), HCCL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&buf, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(buf, 64, 0, 64), ACL_SUCCESS);
    EXPECT_EQ(HcclAllReduce(send_, buf, 2, kF32, kSum, comm, stream), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    float out[2] = {0, 0};
    EXPECT_EQ(aclrtMemcpy(out, sizeof out, buf, sizeof out, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out[0], 3.0f) << "another thread's group deferred this thread's call";
    EXPECT_EQ(aclrtFree(buf), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    EXPECT_EQ(HcclCommDestroy(comm), HCCL_SUCCESS);
  }).join();
  EXPECT_EQ(recv(), zero);
  ASSERT_EQ(HcclGroupEnd(), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(recv(), done);
  // Group closed: a plain call runs at once again.
  ASSERT_EQ(aclrtMemset(recv_, 8, 0, 8), ACL_SUCCESS);
  ASSERT_EQ(AllReduce(2, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  EXPECT_EQ(recv(), done);
}

// The selection is reused only for a call of the same size: with a forced rule for small calls,
// calls alternating between sizes alternate between the forced and the default algorithm (each
// call's info line names the algorithm it ran).
class CallPathSelection : public CallPathCache {
 protected:
  void SetUp() override {  // the log is set up before the first library call
    unlink(log_.c_str());
    setenv("HOSTCCL_LOG_FILE", log_.c_str(), 1);
    setenv("HOSTCCL_LOG_LEVEL", "INFO", 1);
    setenv("HOSTCCL_ALGO", "allreduce:0-64:flat", 1);  // 8 B: flat; 1 KiB: the default (direct)
    CallPathCache::SetUp();
  }
  const std::string log_ = "/tmp/hostccl_callpath_cache_test_" + std::to_string(getpid()) + ".log";
};

TEST_F(CallPathSelection, FollowsEachCallsSize) {
  const std::string& log = log_;
  MakeComm();
  const uint64_t counts[] = {2, 2, 256, 256, 2, 256, 2};
  for (uint64_t c : counts) ASSERT_EQ(AllReduce(c, comm_, stream_), HCCL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
  std::vector<std::string> algos;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("HcclAllReduce #") == std::string::npos) continue;
    if (line.find(": flat (HOSTCCL_ALGO)") != std::string::npos) algos.push_back("flat");
    else if (line.find(": direct (default rule") != std::string::npos) algos.push_back("direct");
    else algos.push_back(line);
  }
  unlink(log.c_str());
  EXPECT_EQ(algos, (std::vector<std::string>{"flat", "flat", "direct", "direct", "flat", "direct", "flat"}));
}

}  // namespace
