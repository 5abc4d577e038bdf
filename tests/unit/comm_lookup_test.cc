// The handle registry's per-thread answer (core::LookupCommForCall, docs/performance.md "8-byte
// isolated calls: the per-call cost"): a call finds its communicator without a reference count
// because its thread keeps the answer as a strong reference. That reference must not keep a
// destroyed communicator alive beyond what the contract allows: the destroying thread drops it at
// once, any other thread at its next lookup, and no thread is answered for a destroyed handle.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "core/communicator.h"

namespace hostccl::core {
namespace {

std::shared_ptr<Communicator> MakeOneRank() {
  std::unique_ptr<boot::RootServer> server;
  EXPECT_TRUE(boot::StartRootServer(0, &server).ok());
  if (!server) return nullptr;
  const boot::RootInfo root = server->info();
  boot::AdoptRootServer(std::move(server));
  CommConfig cfg;
  cfg.threads_of_one_process = true;
  std::shared_ptr<Communicator> c;
  Status st = Communicator::CreateFromRootInfo(root, 1, 0, 0, cfg, &c);
  EXPECT_TRUE(st.ok()) << st.message();
  return c;
}

TEST(CommLookup, TheDestroyingThreadDropsItsAnswerAtOnce) {
  std::shared_ptr<Communicator> c = MakeOneRank();
  ASSERT_NE(c, nullptr);
  std::weak_ptr<Communicator> weak = c;
  void* h = RegisterComm(std::move(c));
  ASSERT_NE(LookupCommForCall(h), nullptr);
  ASSERT_EQ(LookupCommForCall(h), LookupCommForCall(h));  // answered from the cache
  std::shared_ptr<Communicator> gone = UnregisterComm(h);
  ASSERT_NE(gone, nullptr);
  gone.reset();
  EXPECT_TRUE(weak.expired()) << "this thread's lookup cache kept a destroyed communicator alive";
  EXPECT_EQ(LookupCommForCall(h), nullptr);
  EXPECT_EQ(LookupComm(h), nullptr);
}

TEST(CommLookup, AnotherThreadsAnswerLastsUntilItsNextLookup) {
  std::shared_ptr<Communicator> a = MakeOneRank(), b = MakeOneRank();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::weak_ptr<Communicator> weak_a = a;
  Communicator* raw_a = a.get();
  void* ha = RegisterComm(std::move(a));
  void* hb = RegisterComm(std::move(b));
  // The other thread makes a "call" on A, then this thread destroys A while that call may still
  // use the pointer it found: the communicator stays valid for it.
  std::shared_ptr<Communicator> gone;
  std::thread other([&] {
    Communicator* found = LookupCommForCall(ha);
    EXPECT_EQ(found, raw_a);
    std::thread destroyer([&] { gone = UnregisterComm(ha); });
    destroyer.join();
    gone.reset();
    EXPECT_FALSE(weak_a.expired()) << "a call's communicator was freed under it";
    EXPECT_EQ(found->rank(), 0);
    // Its next call: the destroyed handle is not answered, and the answer it kept is released.
    EXPECT_EQ(LookupCommForCall(ha), nullptr);
    EXPECT_TRUE(weak_a.expired());
    EXPECT_NE(LookupCommForCall(hb), nullptr);
  });
  other.join();
  EXPECT_TRUE(weak_a.expired());
  EXPECT_NE(LookupCommForCall(hb), nullptr);
  EXPECT_NE(UnregisterComm(hb), nullptr);
}

}  // namespace
}  // namespace hostccl::core
