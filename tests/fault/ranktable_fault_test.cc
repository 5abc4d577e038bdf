// Malformed rank tables end to end (reliability.md row 6): each file goes through
// HcclCommInitClusterInfo and HcclCommInitClusterInfoConfig (public API only). Every case must
// return its documented code (docs/ranktable.md, docs/errors.md) with a message naming the key and
// the reason, leave *comm untouched, never crash, and answer fast. Cases: wrong JSON types, missing
// keys, duplicate rank_id / device_id / server_id, rank ids not 0..N-1, interleaved servers
// (an error: hccl-api-facts.md §6.1), empty file, non-JSON, deep nesting, 64 MiB of whitespace
// before a bad table, a 64 MiB top-level array, a file above the 1 GiB limit (sparse), a
// nonexistent path, a directory, and a table in a directory its reader cannot search (a child
// process that drops root to nobody). A valid table (control) forms a 2-rank communicator.
#include <acl/acl.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <hccl/hccl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_util.h"

extern char** environ;

namespace {

using hostccl::faulttest::DevBuf;
using hostccl::faulttest::NowMs;

std::string g_self;
std::string g_dir;  // scratch directory of this process

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = g_dir + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// 1.0 table pieces.
std::string Dev(const std::string& dev, const std::string& rank) {
  return R"({"device_id": ")" + dev + R"(", "rank_id": ")" + rank + R"("})";
}
std::string Srv(const std::string& id, const std::string& devs) {
  return R"({"server_id": ")" + id + R"(", "host_ip": "127.0.0.1", "device": [)" + devs + "]}";
}
std::string V10(const std::string& servers, int count) {
  return R"({"status": "completed", "version": "1.0", "server_count": ")" + std::to_string(count) +
         R"(", "server_list": [)" + servers + "]}";
}

constexpr const char* kWrite = "\x01write";  // Case::path: write `text` to a fresh file

struct Case {
  const char* name;
  std::string text;           // file contents when path is kWrite
  std::string path = kWrite;  // else this path as given
  HcclResult code = HCCL_E_PARA;
  std::vector<std::string> fragments;  // all must appear in the message (file names are "t<N>.json")
  int variants = 2;                    // 1: HcclCommInitClusterInfo only (the 64 MiB files)
  int64_t limit_ms = 5000;
};

// Calls the API variants for rank 0 and checks code, message, *comm and time.
void ExpectRejected(const Case& c) {
  static int n = 0;
  const std::string path = c.path == kWrite ? Write("t" + std::to_string(n++) + ".json", c.text) : c.path;
  for (int variant = 0; variant < c.variants; ++variant) {
    SCOPED_TRACE(std::string(c.name) + (variant ? " (Config)" : ""));
    HcclComm comm = reinterpret_cast<HcclComm>(0x1);  // must stay untouched
    const int64_t t0 = NowMs();
    HcclResult rc;
    if (variant == 0) {
      rc = HcclCommInitClusterInfo(path.c_str(), 0, &comm);
    } else {
      HcclCommConfig cfg;
      HcclCommConfigInit(&cfg);
      rc = HcclCommInitClusterInfoConfig(path.c_str(), 0, &cfg, &comm);
    }
    const int64_t took = NowMs() - t0;
    const std::string msg = aclGetRecentErrMsg();
    EXPECT_EQ(rc, c.code) << msg;
    for (const auto& f : c.fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
    EXPECT_EQ(comm, reinterpret_cast<HcclComm>(0x1));
    EXPECT_LT(took, c.limit_ms * hostccl::faulttest::kSlowdown) << msg;  // x3 under sanitizers
  }
}

Case Bad(const char* name, std::string text, std::vector<std::string> fragments) {
  Case c;
  c.name = name;
  c.text = std::move(text);
  c.fragments = std::move(fragments);
  return c;
}

Case BadPath(const char* name, std::string path, HcclResult code, std::vector<std::string> fragments) {
  Case c;
  c.name = name;
  c.path = std::move(path);
  c.code = code;
  c.fragments = std::move(fragments);
  return c;
}

TEST(RankTableFault, WrongTypes) {
  ExpectRejected(Bad("number_rank_id", V10(Srv("a", R"({"device_id": "0", "rank_id": 0})"), 1),
                     {"'server_list[0].device[0].rank_id' must be a string", "got number"}));
  ExpectRejected(Bad("object_device_list", V10(R"({"server_id": "a", "device": {"device_id": "0"}})", 1),
                     {"'server_list[0].device' must be an array", "got object"}));
  ExpectRejected(Bad("string_in_v2", R"({"version": "2.0", "status": "completed", "rank_count": 1, "rank_list": [
                         {"rank_id": "0", "device_id": 0}]})",
                     {"'rank_list[0].rank_id' must be an integer number", "got string"}));
  ExpectRejected(Bad("top_level_array", "[1, 2, 3]", {"top level must be a JSON object", "got array"}));
}

TEST(RankTableFault, MissingKeys) {
  ExpectRejected(Bad("no_server_list", R"({"status": "completed", "version": "1.0", "server_count": "1"})",
                     {"'server_list' is missing"}));
  ExpectRejected(Bad("no_device_id", V10(Srv("a", R"({"rank_id": "0"})"), 1),
                     {"'server_list[0].device[0].device_id' is missing"}));
  ExpectRejected(Bad("no_rank_id", V10(Srv("a", R"({"device_id": "0"})"), 1),
                     {"'server_list[0].device[0].rank_id' is missing"}));
  ExpectRejected(Bad("no_status", R"({"version": "1.0", "server_count": "1", "server_list": []})",
                     {"'status' is missing"}));
}

TEST(RankTableFault, DuplicateIds) {
  ExpectRejected(Bad("dup_rank_id", V10(Srv("a", Dev("0", "0") + "," + Dev("1", "0")), 1),
                     {"'server_list[0].device[1].rank_id' is 0", "duplicate rank id"}));
  ExpectRejected(Bad("dup_device_id", V10(Srv("a", Dev("3", "0") + "," + Dev("3", "1")), 1),
                     {"'server_list[0].device[1].device_id' is 3", "duplicate device id"}));
  ExpectRejected(Bad("dup_server_id", V10(Srv("a", Dev("0", "0")) + "," + Srv("a", Dev("1", "1")), 2),
                     {"'server_list[1].server_id' \"a\" duplicates the server id"}));
  ExpectRejected(Bad("rank_ids_not_dense", V10(Srv("a", Dev("0", "0") + "," + Dev("1", "5")), 1),
                     {"'server_list[0].device[1].rank_id' is 5", "rank ids must be 0..1"}));
}

TEST(RankTableFault, InterleavedServersAreAnError) {
  ExpectRejected(Bad("interleaved",
                     V10(Srv("a", Dev("0", "0") + "," + Dev("1", "2")) + "," + Srv("b", Dev("0", "1") + "," + Dev("1", "3")), 2),
                     {"'server_list[0]' (server \"a\")", "interleaved with rank 1", "must be contiguous"}));
}

TEST(RankTableFault, EmptyNonJsonAndDeepNesting) {
  ExpectRejected(Bad("empty", "", {"not valid JSON at byte 0", "unexpected end of input"}));
  ExpectRejected(Bad("not_json", "status: completed\nversion = 1.0\n", {"not valid JSON at byte 0", "line 1"}));
  ExpectRejected(Bad("truncated", V10(Srv("a", Dev("0", "0")), 1).substr(0, 60), {"not valid JSON at byte 60"}));
  ExpectRejected(Bad("deep", std::string(100000, '['), {"nests deeper than 64 levels at byte 64"}));
}

TEST(RankTableFault, HugeFiles) {
  // 64 MiB of whitespace before a table with a wrong type: read, parsed, the key still named.
  Case ws = Bad("ws64m", std::string(64u << 20, ' ') + V10(Srv("a", R"({"device_id": 0, "rank_id": "0"})"), 1),
                {"'server_list[0].device[0].device_id' must be a string"});
  ws.variants = 1;
  ws.limit_ms = 20000;  // ~0.5 s idle; generous for a loaded 2-core machine
  ExpectRejected(ws);
  ws = Case();
  // A 64 MiB top-level array of 1 KiB strings.
  std::string arr = "[";
  const std::string item = "\"" + std::string(1022, 'x') + "\"";
  while (arr.size() < (64u << 20)) arr += item + ",";
  arr += "0]";
  Case big_array = Bad("array64m", std::move(arr), {"top level must be a JSON object", "got array"});
  big_array.variants = 1;
  big_array.limit_ms = 20000;
  ExpectRejected(big_array);
  big_array = Case();
  // Above the 1 GiB limit (sparse, so nothing is written): refused by its size before reading.
  const std::string big = g_dir + "/big.json";
  int fd = open(big.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, (1ll << 30) + 1), 0);
  close(fd);
  ExpectRejected(BadPath("over_1gib", big, HCCL_E_PARA, {"'" + big + "' is 1073741825 bytes", "1073741824-byte limit"}));
  unlink(big.c_str());
}

TEST(RankTableFault, PathsThatCannotBeRead) {
  const std::string missing = g_dir + "/no/such/table.json";
  ExpectRejected(BadPath("nonexistent", missing, HCCL_E_OPEN_FILE_FAILURE,
                         {"cannot open rank table '" + missing + "'", "No such file or directory (errno 2)"}));
  ExpectRejected(BadPath("directory", g_dir, HCCL_E_OPEN_FILE_FAILURE, {"'" + g_dir + "' is not a regular file"}));
  ExpectRejected(BadPath("empty_path", "", HCCL_E_PARA, {"rank table path is empty"}));
  ExpectRejected(BadPath("long_path", "/" + std::string(5000, 'a'), HCCL_E_PARA, {"5001 bytes long"}));
}

// --- unreadable directory: root reads everything, so a child drops to nobody first ---

int ChildMain(const std::string& path) {
  if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return 3;
  HcclComm comm = nullptr;
  const HcclResult rc = HcclCommInitClusterInfo(path.c_str(), 0, &comm);
  std::printf("rc=%d msg=%s\n", static_cast<int>(rc), aclGetRecentErrMsg());
  return 0;
}

TEST(RankTableFault, TableInADirectoryTheReaderCannotSearch) {
  const std::string locked = g_dir + "/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0700), 0);
  const std::string path = locked + "/table.json";
  std::ofstream(path) << V10(Srv("a", Dev("0", "0")), 1);
  chmod(g_dir.c_str(), 0755);  // the scratch dir itself is searchable; only locked/ is not
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  std::string flag = "--ranktable_child=" + path;
  char* argv[] = {const_cast<char*>(g_self.c_str()), const_cast<char*>(flag.c_str()), nullptr};
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, g_self.c_str(), &fa, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  std::string out;
  pollfd pfd{p[0], POLLIN, 0};
  for (int64_t end = NowMs() + 10000; NowMs() < end;) {
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = read(p[0], buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(p[0]);
  kill(pid, SIGKILL);  // no-op if it exited
  int status = 0;
  waitpid(pid, &status, 0);
  unlink(path.c_str());
  rmdir(locked.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status << ": " << out;
  EXPECT_EQ(out.rfind("rc=" + std::to_string(HCCL_E_OPEN_FILE_FAILURE) + " ", 0), 0u) << out;
  EXPECT_NE(out.find(path), std::string::npos) << out;
  EXPECT_NE(out.find("Permission denied"), std::string::npos) << out;
}

// --- control: a valid table forms a communicator (2 thread ranks, both API variants) ---

TEST(RankTableFault, ValidTableFormsACommunicator) {
  setenv("HCCL_IF_BASE_PORT", std::to_string(hostccl::faulttest::FreeTcpPort()).c_str(), 1);
  const std::string path = Write("valid.json", V10(Srv("a", Dev("0", "0") + "," + Dev("1", "1")), 1));
  std::string errors[2];
  std::vector<std::thread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      aclrtSetDevice(r);
      HcclComm comm = nullptr;
      HcclResult rc;
      if (r == 0) {
        rc = HcclCommInitClusterInfo(path.c_str(), 0, &comm);
      } else {
        HcclCommConfig cfg;
        HcclCommConfigInit(&cfg);
        rc = HcclCommInitClusterInfoConfig(path.c_str(), 1, &cfg, &comm);
      }
      if (rc != HCCL_SUCCESS) {
        errors[r] = "init returned " + std::to_string(rc) + ": " + aclGetRecentErrMsg();
        return;
      }
      aclrtStream s = nullptr;
      aclrtCreateStream(&s);
      {
        DevBuf send, recv;
        if (!send.Alloc(256 * 4, static_cast<float>(r + 1)) || !recv.Alloc(256 * 4, 0.0f))
          errors[r] = "aclrtMalloc failed";
        else if (HcclReduce(send.ptr, recv.ptr, 256, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 0, comm, s) != HCCL_SUCCESS ||
                 aclrtSynchronizeStream(s) != ACL_SUCCESS)
          errors[r] = std::string("reduce failed: ") + aclGetRecentErrMsg();
        else if (r == 0 && recv.At(255) != 3.0f)
          errors[r] = "recv[255] = " + std::to_string(recv.At(255));
      }
      aclrtDestroyStream(s);
      if (HcclCommDestroy(comm) != HCCL_SUCCESS && errors[r].empty()) errors[r] = "HcclCommDestroy failed";
    });
  for (auto& t : ts) t.join();
  unsetenv("HCCL_IF_BASE_PORT");
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--ranktable_child=", 18) == 0) return ChildMain(argv[i] + 18);
  }
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) return 2;
  g_self = self;
  char tmpl[] = "/tmp/hostccl-faulttest-XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  g_dir = tmpl;
  setenv("HOSTCCL_CONNECT_TIMEOUT_MS", "5000", 1);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  hostccl::faulttest::RemoveScratchDir(g_dir);
  return rc;
}
