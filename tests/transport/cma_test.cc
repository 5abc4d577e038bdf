// CmaRead / CmaWrite (src/transport/shm/cma.h) against this process and a child: whole copies,
// a copy that runs into an unmapped page (stops, bounded, names the byte count), and a peer that
// has exited (ESRCH -> HCCL_E_REMOTE naming the rank and pid).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "transport/shm/cma.h"

namespace hostccl::net {
namespace {

uint32_t Self() { return static_cast<uint32_t>(getpid()); }

TEST(Cma, ReadAndWriteWholeBuffers) {
  std::vector<uint8_t> src(300000), dst(300000, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  ASSERT_TRUE(CmaRead(Self(), 0, reinterpret_cast<uint64_t>(src.data()), dst.data(), src.size()).ok());
  EXPECT_EQ(src, dst);
  std::vector<uint8_t> back(300000, 0);
  ASSERT_TRUE(CmaWrite(Self(), 0, reinterpret_cast<uint64_t>(back.data()), src.data(), src.size()).ok());
  EXPECT_EQ(src, back);
  EXPECT_TRUE(CmaRead(Self(), 0, reinterpret_cast<uint64_t>(src.data()), dst.data(), 0).ok());
}

TEST(Cma, ReadIntoUnmappedPageFailsWithByteCount) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* p = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, 2 * page);
  ASSERT_EQ(munmap(p + page, page), 0);
  std::vector<char> dst(2 * page);
  Status st = CmaRead(Self(), 3, reinterpret_cast<uint64_t>(p), dst.data(), 2 * page);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 3"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("stopped after " + std::to_string(page) + " bytes"), std::string::npos) << st.message();
  EXPECT_EQ(dst[0], 1);
  EXPECT_EQ(dst[page - 1], 1);
  munmap(p, page);
}

TEST(Cma, ExitedPeerIsRemoteError) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  uint64_t word = 0, local = 0;
  Status st = CmaRead(static_cast<uint32_t>(child), 2, reinterpret_cast<uint64_t>(&word), &local, sizeof(local));
  EXPECT_EQ(st.code(), Code::kRemote) << st.ToString();
  EXPECT_NE(st.message().find("rank 2 (pid " + std::to_string(child) + ") exited or was killed"), std::string::npos)
      << st.message();
  st = CmaWrite(static_cast<uint32_t>(child), 2, reinterpret_cast<uint64_t>(&word), &local, sizeof(local));
  EXPECT_EQ(st.code(), Code::kRemote) << st.ToString();
}

}  // namespace
}  // namespace hostccl::net
