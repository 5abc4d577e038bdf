// Rank table parser and loader: every format, every malformed case (key path named), the
// "initializing" -> "completed" re-read, huge files, and the rank-table rendezvous plan.
#include "bootstrap/ranktable.h"

#include "bootstrap/job_identity.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

// The cases are JSON built with `"literal" + std::string` and one-character assignments, which
// GCC 12 at -O3 (Release) flags with a false -Wrestrict inside libstdc++'s string insert/replace
// (GCC bugs 105329 and 105651): nothing here overlaps. Silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hostccl::boot {
namespace {

const char* kV10 = R"({
  "status": "completed", "version": "1.0", "server_count": "2",
  "server_list": [
    {"server_id": "node_a", "host_ip": "10.0.0.1", "device": [
      {"device_id": "0", "device_ip": "192.168.1.8", "rank_id": "0"},
      {"device_id": "1", "device_ip": "192.168.1.9", "rank_id": "1"}]},
    {"server_id": "node_b", "host_ip": "10.0.0.2", "device": [
      {"device_id": "1", "device_ip": "192.168.2.9", "rank_id": "3"},
      {"device_id": "0", "device_ip": "192.168.2.8", "rank_id": "2"}]}]
})";

const char* kV12 = R"({
  "status": "completed", "version": "1.2", "server_count": "1",
  "server_list": [
    {"server_id": "node_0", "host_ip": "172.16.0.100", "device": [
      {"device_id": "0", "super_device_id": "0", "device_ip": "192.168.1.6", "rank_id": "0"},
      {"device_id": "1", "super_device_id": "1", "device_ip": "192.168.1.7", "rank_id": "1"}]}],
  "super_pod_list": [{"super_pod_id": "pod7", "server_list": [{"server_id": "node_0"}]}]
})";

const char* kV20 = R"({
  "version": "2.0", "status": "completed", "rank_count": 3,
  "rank_list": [
    {"rank_id": 0, "local_id": 0, "device_id": 0, "host_ip": "10.1.0.1",
     "level_list": [{"net_layer": 0, "net_instance_id": "host0", "net_type": "TOPO_FILE_DESC"}]},
    {"rank_id": 1, "local_id": 1, "device_id": 1,
     "level_list": [{"net_layer": 0, "net_instance_id": "host0", "net_type": "TOPO_FILE_DESC"}]},
    {"rank_id": 2, "local_id": 0, "device_id": 0,
     "level_list": [{"net_layer": 0, "net_instance_id": "host1", "net_type": "TOPO_FILE_DESC"}]}]
})";

const char* kStandard = R"({
  "status": "completed", "group_count": "1",
  "group_list": [{"group_name": "whatever", "instance_count": "3", "device_count": "4",
    "instance_list": [
      {"pod_name": "p0", "server_id": "s0", "devices": [{"device_id": "0", "device_ip": "1.1.1.1"}]},
      {"pod_name": "p1", "server_id": "s0", "devices": [{"device_id": "1", "device_ip": "1.1.1.2"}]},
      {"pod_name": "p2", "server_id": "s1", "devices": [{"device_id": "0"}, {"device_id": "1"}]}]}]
})";

// A two-server 1.0 table built from parts, for the malformed cases.
std::string V10(const std::string& server_list,
                const std::string& extra = R"("server_count": "2",)") {
  return R"({"status": "completed", "version": "1.0", )" + extra + R"( "server_list": )" +
         server_list + "}";
}
std::string Dev(const std::string& dev, const std::string& rank) {
  return R"({"device_id": ")" + dev + R"(", "rank_id": ")" + rank + R"("})";
}
std::string Srv(const std::string& id, const std::string& devs) {
  return R"({"server_id": ")" + id + R"(", "device": [)" + devs + "]}";
}

// Expects a failure with `code` whose message holds every fragment.
void ExpectError(const std::string& text, Code code, std::initializer_list<const char*> fragments) {
  RankTable t;
  Status st = ParseRankTable(text, &t);
  ASSERT_EQ(st.code(), code) << st.ToString() << "\n" << text;
  for (const char* f : fragments)
    EXPECT_NE(st.message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << st.message();
}

TEST(RankTableParse, Version10) {
  RankTable t;
  Status st = ParseRankTable(kV10, &t);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(t.version, "1.0");
  ASSERT_EQ(t.ranks.size(), 4u);
  ASSERT_EQ(t.servers.size(), 2u);
  EXPECT_EQ(t.servers[1].server_id, "node_b");
  EXPECT_EQ(t.servers[1].ranks, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(t.ranks[2].device_id, 0);
  EXPECT_EQ(t.ranks[2].device_ip, "192.168.2.8");
  EXPECT_EQ(t.ranks[3].server_id, "node_b");
  EXPECT_EQ(t.ranks[3].server_index, 1u);
  EXPECT_EQ(t.ranks[3].host_ip, "10.0.0.2");
  EXPECT_EQ(t.ranks[0].host_ip, "10.0.0.1");
}

TEST(RankTableParse, Version12SuperPods) {
  RankTable t;
  Status st = ParseRankTable(kV12, &t);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(t.version, "1.2");
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.ranks[1].super_pod_id, "pod7");
  EXPECT_EQ(t.ranks[1].super_device_id, 1);
  EXPECT_EQ(t.servers[0].host_ip, "172.16.0.100");
}

TEST(RankTableParse, Version20Numbers) {
  RankTable t;
  Status st = ParseRankTable(kV20, &t);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(t.version, "2.0");
  ASSERT_EQ(t.servers.size(), 2u);
  EXPECT_EQ(t.servers[0].server_id, "host0");
  EXPECT_EQ(t.servers[0].host_ip, "10.1.0.1");
  EXPECT_EQ(t.ranks[1].host_ip, "10.1.0.1");
  EXPECT_EQ(t.ranks[2].server_id, "host1");
  EXPECT_EQ(t.ranks[2].device_id, 0);
}

TEST(RankTableParse, StandardLegacyLayout) {
  RankTable t;
  Status st = ParseRankTable(kStandard, &t);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(t.version, "Standard");
  ASSERT_EQ(t.ranks.size(), 4u);
  ASSERT_EQ(t.servers.size(), 2u);  // two pods of s0 form one server
  EXPECT_EQ(t.servers[0].ranks, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(t.ranks[1].device_ip, "1.1.1.2");
  EXPECT_EQ(t.ranks[3].server_id, "s1");
  EXPECT_EQ(t.ranks[3].device_id, 1);
}

TEST(RankTableParse, StatusNotCompletedIsAgain) {
  std::string text = kV10;
  text.replace(text.find("completed"), 9, "initializing");
  ExpectError(text, Code::kAgain, {"initializing", "not ready"});
  ExpectError(R"({"version": "1.0", "server_list": []})", Code::kPara, {"'status'", "missing"});
  ExpectError(R"({"status": 1, "version": "1.0", "server_list": []})", Code::kPara,
              {"'status'", "must be a string"});
}

TEST(RankTableParse, NumberWhereStringRequired) {
  ExpectError(V10("[" + Srv("a", R"({"device_id": "0", "rank_id": 0})") + "]", ""), Code::kPara,
              {"server_list[0].device[0].rank_id", "must be a string"});
  ExpectError(R"({"status": "completed", "version": "1.0", "server_count": 1, "server_list": []})",
              Code::kPara, {"'server_count'", "must be a string"});
}

TEST(RankTableParse, StringWhereNumberRequiredInV2) {
  std::string text = kV20;
  text.replace(text.find("\"rank_count\": 3"), 15, "\"rank_count\": \"3\"");
  ExpectError(text, Code::kPara, {"'rank_count'", "must be an integer number"});
  text = kV20;
  text.replace(text.find("\"rank_id\": 1"), 12, "\"rank_id\": 1.5");
  ExpectError(text, Code::kPara, {"rank_list[1].rank_id", "fractional"});
}

TEST(RankTableParse, WrongTypesAndMissingKeys) {
  ExpectError(V10(R"({"server_id": "a"})"), Code::kPara,
              {"'server_list'", "must be an array", "object"});
  ExpectError(V10(R"([{"server_id": "a", "device": "x"}])", ""), Code::kPara,
              {"server_list[0].device", "must be an array"});
  ExpectError(V10(R"([{"device": []}])", ""), Code::kPara, {"server_list[0].server_id", "missing"});
  ExpectError(V10("[" + Srv("a", R"({"device_id": "0"})") + "]", ""), Code::kPara,
              {"server_list[0].device[0].rank_id", "missing"});
  ExpectError(V10("[" + Srv("a", R"({"rank_id": "0"})") + "]", ""), Code::kPara,
              {"server_list[0].device[0].device_id", "missing"});
  ExpectError(V10("[" + Srv("a", R"({"device_id": "x1", "rank_id": "0"})") + "]", ""), Code::kPara,
              {"device_id", "not an integer"});
  ExpectError(V10("[" + Srv("a", R"({"device_id": "0", "rank_id": "-1"})") + "]", ""), Code::kPara,
              {"rank_id", "outside"});
  ExpectError(V10("[" + Srv("a", "") + "]", ""), Code::kPara, {"server_list[0].device", "empty"});
  ExpectError(V10("[" + Srv("a", Dev("0", "0")) + ", 7]", ""), Code::kPara,
              {"server_list[1]", "must be an object"});
  ExpectError(R"({"status": "completed", "version": "1.0"})", Code::kPara,
              {"'server_list'", "missing"});
  ExpectError(V10(R"([{"server_id": "a", "host_ip": 5, "device": []}])", ""), Code::kPara,
              {"server_list[0].host_ip", "must be a string"});
  ExpectError("[1, 2]", Code::kPara, {"top level", "object"});
  ExpectError(R"({"status": "completed", "version": 1.0, "server_list": []})", Code::kPara,
              {"'version'", "must be a string"});
}

TEST(RankTableParse, DuplicateRankIds) {
  ExpectError(
      V10("[" + Srv("a", Dev("0", "0") + "," + Dev("1", "1")) + "," +
          Srv("b", Dev("0", "1") + "," + Dev("1", "2")) + "]"),
      Code::kPara,
      {"server_list[1].device[0].rank_id", "duplicate rank id", "server_list[0].device[1]"});
}

TEST(RankTableParse, DuplicateServerIds) {
  ExpectError(V10("[" + Srv("a", Dev("0", "0")) + "," + Srv("a", Dev("1", "1")) + "]"), Code::kPara,
              {"server_list[1].server_id", "\"a\"", "duplicates"});
}

TEST(RankTableParse, RankIdsNotDense) {
  ExpectError(V10("[" + Srv("a", Dev("0", "0")) + "," + Srv("b", Dev("1", "2")) + "]"), Code::kPara,
              {"server_list[1].device[0].rank_id", "is 2", "0..1"});
}

TEST(RankTableParse, InterleavedServers) {
  ExpectError(V10("[" + Srv("a", Dev("0", "0") + "," + Dev("1", "3")) + "," +
                  Srv("b", Dev("0", "1") + "," + Dev("1", "2")) + "]"),
              Code::kPara, {"server_list[0]", "\"a\"", "interleaved", "contiguous"});
  std::string v2 = kV20;  // host0, host1, then host0 again
  v2.replace(v2.find("\"host1\""), 7, "\"hostX\"");
  v2.replace(
      v2.rfind("]}"), 2,
      R"(]}, {"rank_id": 3, "device_id": 2, "level_list": [{"net_layer": 0, "net_instance_id": "host0"}]})");
  v2.replace(v2.find("\"rank_count\": 3"), 15, "\"rank_count\": 4");
  ExpectError(v2, Code::kPara, {"rank_list[3]", "host0", "contiguous"});
}

TEST(RankTableParse, ServerCountMismatchAndZeroServers) {
  ExpectError(V10("[" + Srv("a", Dev("0", "0")) + "]"), Code::kPara,
              {"'server_count'", "is 2", "1 entries"});
  ExpectError(V10("[]", R"("server_count": "0",)"), Code::kPara, {"zero servers"});
  ExpectError(R"({"status": "completed", "group_list": []})", Code::kPara, {"zero servers"});
}

TEST(RankTableParse, BadJsonNamesByteOffset) {
  ExpectError(R"({"status": "completed", "version": "1.0",, })", Code::kPara,
              {"not valid JSON", "at byte 41"});
  ExpectError("", Code::kPara, {"not valid JSON", "at byte"});
  ExpectError(std::string(100000, '['), Code::kPara, {"deeper than 64"});
}

TEST(RankTableParse, UnsupportedVersions) {
  ExpectError(R"({"status": "completed", "version": "1.1"})", Code::kNotSupport, {"\"1.1\""});
  ExpectError(R"({"status": "completed", "version": "3.0"})", Code::kNotSupport, {"\"3.0\""});
}

TEST(RankTableParse, V12SuperPodErrors) {
  std::string text = kV12;
  text.replace(text.rfind("node_0"), 6, "node_9");
  ExpectError(text, Code::kPara,
              {"super_pod_list[0].server_list[0].server_id", "node_9", "not in server_list"});
}

// Deterministic mutation fuzzing: no input may crash the parser or return an unexpected code.
TEST(RankTableParse, MutationsNeverCrash) {
  std::mt19937 rng(12345);
  const std::string seeds[] = {kV10, kV12, kV20, kStandard};
  const char alphabet[] = "{}[]\",:0123456789-.aezAZ \\";
  for (int i = 0; i < 4000; ++i) {
    std::string s = seeds[i % 4];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 3) {
        case 0:
          s[pos] = alphabet[rng() % (sizeof(alphabet) - 1)];
          break;
        case 1:
          s.erase(pos, 1 + rng() % 8);
          break;
        default:
          s.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
          break;
      }
      if (s.empty()) s = "{";
    }
    RankTable t;
    Status st = ParseRankTable(s, &t);
    Code c = st.code();
    EXPECT_TRUE(c == Code::kSuccess || c == Code::kPara || c == Code::kAgain ||
                c == Code::kNotSupport)
        << st.ToString();
    if (st.ok()) {
      EXPECT_FALSE(t.ranks.empty());
      for (size_t r = 0; r < t.ranks.size(); ++r) EXPECT_EQ(t.ranks[r].rank_id, r);
    }
  }
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hostccl_ranktable_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)!system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string tmp = dir_ + "/." + name, path = dir_ + "/" + name;
    std::ofstream(tmp) << text;
    std::rename(tmp.c_str(), path.c_str());
    return path;
  }
  std::string dir_;
};

using RankTableLoad = TempDir;

TEST_F(RankTableLoad, ReadsFileAndKeepsBytes) {
  std::string path = Write("rt.json", kV10);
  RankTable t;
  std::string raw;
  Status st = LoadRankTable(path, Deadline::AfterMs(5000), &t, &raw);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(raw, kV10);
  EXPECT_EQ(t.ranks.size(), 4u);
}

TEST_F(RankTableLoad, MissingFileNamesPathAndErrno) {
  RankTable t;
  Status st = LoadRankTable(dir_ + "/nope.json", Deadline::AfterMs(1000), &t, nullptr);
  EXPECT_EQ(st.code(), Code::kOpenFile);
  EXPECT_NE(st.message().find(dir_ + "/nope.json"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("errno 2"), std::string::npos) << st.message();
}

TEST_F(RankTableLoad, PathTooLong) {
  RankTable t;
  Status st = LoadRankTable(std::string(5000, 'a'), Deadline::AfterMs(1000), &t, nullptr);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("5000"), std::string::npos) << st.message();
}

TEST_F(RankTableLoad, MalformedFileNamesKeyAndFile) {
  std::string path =
      Write("bad.json", V10("[" + Srv("a", R"({"device_id": "0", "rank_id": 0})") + "]", ""));
  RankTable t;
  Status st = LoadRankTable(path, Deadline::AfterMs(1000), &t, nullptr);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("rank_id"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

TEST_F(RankTableLoad, WaitsForCompleted) {
  std::string text = kV10;
  std::string initializing = text;
  initializing.replace(initializing.find("completed"), 9, "initializing");
  std::string path = Write("rt.json", initializing);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Write("rt.json", text);
  });
  RankTable t;
  std::string raw;
  Status st = LoadRankTable(path, Deadline::AfterMs(10000), &t, &raw);
  writer.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(raw, text);
}

TEST_F(RankTableLoad, NeverCompletedTimesOut) {
  std::string text = kV10;
  text.replace(text.find("completed"), 9, "initializing");
  std::string path = Write("rt.json", text);
  RankTable t;
  auto start = std::chrono::steady_clock::now();
  Status st = LoadRankTable(path, Deadline::AfterMs(300), &t, nullptr);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(RankTableLoad, HugeFileRejectedFast) {
  std::string path = dir_ + "/huge.json";
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kMaxRankTableBytes) + 1), 0);  // sparse: no disk used
  close(fd);
  RankTable t;
  auto start = std::chrono::steady_clock::now();
  Status st = LoadRankTable(path, Deadline::AfterMs(5000), &t, nullptr);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("limit"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(RankTableRootPlan, SingleServerUsesLoopback) {
  unsetenv("HCCL_IF_BASE_PORT");
  RankTable t;
  ASSERT_TRUE(ParseRankTable(kStandard, &t).ok());
  // Standard has two servers and no host_ip: refused with the reason.
  RootInfo info;
  Status st = RankTableRoot(t, kStandard, &info);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("2 servers"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("\"s0\""), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("host_ip"), std::string::npos) << st.message();

  std::string one = V10("[" + Srv("solo", Dev("0", "0") + "," + Dev("1", "1")) + "]", "");
  ASSERT_TRUE(ParseRankTable(one, &t).ok());
  ASSERT_TRUE(RankTableRoot(t, one, &info).ok());
  EXPECT_EQ(info.ip, "127.0.0.1");
  EXPECT_EQ(info.port, 60000);
  EXPECT_EQ(info.identifier, "hccl_world_group");
}

TEST(RankTableRootPlan, HostIpPortAndToken) {
  RankTable t;
  ASSERT_TRUE(ParseRankTable(kV10, &t).ok());
  setenv("HCCL_IF_BASE_PORT", "61000", 1);
  RootInfo a, b, c;
  ASSERT_TRUE(RankTableRoot(t, kV10, &a).ok());
  ASSERT_TRUE(RankTableRoot(t, kV10, &b).ok());
  ASSERT_TRUE(RankTableRoot(t, std::string(kV10) + " ", &c).ok());
  EXPECT_EQ(a.ip, "10.0.0.1");
  EXPECT_EQ(a.port, 61000);
  EXPECT_EQ(0, memcmp(a.token, b.token, 16));
  EXPECT_NE(0, memcmp(a.token, c.token, 16));
  setenv("HCCL_IF_BASE_PORT", "80", 1);
  Status st = RankTableRoot(t, kV10, &a);
  EXPECT_EQ(st.code(), Code::kPara);
  EXPECT_NE(st.message().find("HCCL_IF_BASE_PORT=80"), std::string::npos) << st.message();
  unsetenv("HCCL_IF_BASE_PORT");
}

// Issue 14 item 1: the launcher's job id is part of the token, so two jobs started from one file
// present different tokens; without any id the token is the file's alone (as before).
TEST(RankTableRootPlan, JobIdentityIsPartOfTheToken) {
  const char* kIds[] = {"HOSTCCL_JOB_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid",
                        "OMPI_MCA_orte_precondition_transports", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "SLURM_STEP_ID"};
  for (const char* v : kIds) unsetenv(v);
  RankTable t;
  ASSERT_TRUE(ParseRankTable(kV10, &t).ok());
  auto token = [&] {
    RootInfo r;
    EXPECT_TRUE(RankTableRoot(t, kV10, &r).ok());
    EXPECT_TRUE(r.shared_port);
    return std::string(reinterpret_cast<const char*>(r.token), 16);
  };
  uint8_t plain[16];
  HashBytes128(kV10, plain);
  EXPECT_EQ(token(), std::string(reinterpret_cast<const char*>(plain), 16));
  EXPECT_TRUE(LauncherJobIdentity().empty());
  EXPECT_EQ(LauncherJobIdentity().Describe(), "no launcher job id");

  setenv("HOSTCCL_JOB_ID", "run-a", 1);
  const std::string a = token();
  setenv("HOSTCCL_JOB_ID", "run-b", 1);
  const std::string b = token();
  EXPECT_NE(a, b);
  EXPECT_NE(a, std::string(reinterpret_cast<const char*>(plain), 16));
  EXPECT_EQ(LauncherJobIdentity().Describe(), "HOSTCCL_JOB_ID=run-b");
  setenv("PMIX_NAMESPACE", "123", 1);  // HOSTCCL_JOB_ID wins
  EXPECT_EQ(LauncherJobIdentity().Describe(), "HOSTCCL_JOB_ID=run-b");
  unsetenv("HOSTCCL_JOB_ID");
  setenv("OMPI_MCA_orte_precondition_transports", "k1", 1);
  EXPECT_EQ(LauncherJobIdentity().Describe(), "PMIX_NAMESPACE=123/k1");
  unsetenv("PMIX_NAMESPACE");
  setenv("OMPI_MCA_ess_base_jobid", "77", 1);
  EXPECT_EQ(LauncherJobIdentity().Describe(), "OMPI_MCA_ess_base_jobid=77/k1");
  unsetenv("OMPI_MCA_ess_base_jobid");
  unsetenv("OMPI_MCA_orte_precondition_transports");
  setenv("TORCHELASTIC_RUN_ID", "none", 1);  // torchrun's static default names no run
  setenv("SLURM_JOB_ID", "42", 1);
  setenv("SLURM_STEP_ID", "3", 1);
  EXPECT_EQ(LauncherJobIdentity().Describe(), "SLURM_JOB_ID=42.3");
  setenv("TORCHELASTIC_RUN_ID", "r9", 1);
  EXPECT_EQ(LauncherJobIdentity().Describe(), "TORCHELASTIC_RUN_ID=r9");
  for (const char* v : kIds) unsetenv(v);
}

}  // namespace
}  // namespace hostccl::boot
