// Interface selection: HCCL_SOCKET_IFNAME syntax and the pick rule over fake interface lists.
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/local_address.h"

namespace hostccl::boot {
namespace {

TEST(IfnameSpec, Parse) {
  IfnameFilter f;
  ASSERT_TRUE(ParseIfnameSpec("eth,enp", &f).ok());
  EXPECT_FALSE(f.exclude);
  EXPECT_FALSE(f.exact);
  EXPECT_EQ(f.names, (std::vector<std::string>{"eth", "enp"}));
  ASSERT_TRUE(ParseIfnameSpec("^eth", &f).ok());
  EXPECT_TRUE(f.exclude);
  EXPECT_FALSE(f.exact);
  ASSERT_TRUE(ParseIfnameSpec("=eth0,enp0", &f).ok());
  EXPECT_TRUE(f.exact);
  EXPECT_FALSE(f.exclude);
  ASSERT_TRUE(ParseIfnameSpec("^=eth0", &f).ok());
  EXPECT_TRUE(f.exact);
  EXPECT_TRUE(f.exclude);
  EXPECT_EQ(ParseIfnameSpec("", &f).code(), Code::kPara);
  EXPECT_EQ(ParseIfnameSpec("^=", &f).code(), Code::kPara);
  EXPECT_EQ(ParseIfnameSpec("averyveryverylongname", &f).code(), Code::kPara);
}

TEST(IfnameSpec, Match) {
  IfnameFilter f;
  ASSERT_TRUE(ParseIfnameSpec("eth,enp", &f).ok());
  EXPECT_TRUE(IfnameMatches(f, "eth0"));
  EXPECT_TRUE(IfnameMatches(f, "enp3s0"));
  EXPECT_FALSE(IfnameMatches(f, "lo"));
  ASSERT_TRUE(ParseIfnameSpec("^eth", &f).ok());
  EXPECT_FALSE(IfnameMatches(f, "eth1"));
  EXPECT_TRUE(IfnameMatches(f, "ens5"));
  ASSERT_TRUE(ParseIfnameSpec("=eth0", &f).ok());
  EXPECT_TRUE(IfnameMatches(f, "eth0"));
  EXPECT_FALSE(IfnameMatches(f, "eth01"));
  ASSERT_TRUE(ParseIfnameSpec("^=eth0", &f).ok());
  EXPECT_FALSE(IfnameMatches(f, "eth0"));
  EXPECT_TRUE(IfnameMatches(f, "eth01"));
}

std::vector<LocalInterface> FakeIfs() {
  return {
      {"lo", "127.0.0.1", AF_INET, true},
      {"docker0", "172.17.0.1", AF_INET, false},
      {"eth1", "10.0.0.2", AF_INET, false},
      {"enp3s0", "10.0.1.5", AF_INET, false},
      {"eth0", "10.0.0.1", AF_INET, false},
      {"eth0", "fd00::1", AF_INET6, false},
      {"lo", "::1", AF_INET6, true},
  };
}

std::string Pick(const std::vector<LocalInterface>& ifs, const std::string& spec, int fam = AF_INET) {
  std::string ip;
  Status st = PickLocalAddress(ifs, spec, fam, &ip);
  return st.ok() ? ip : "ERR:" + st.message();
}

TEST(PickAddress, DefaultOrder) {
  EXPECT_EQ(Pick(FakeIfs(), ""), "10.0.1.5");  // enp3s0 < eth0 < eth1 by name; docker and lo last
  std::vector<LocalInterface> only_docker = {{"lo", "127.0.0.1", AF_INET, true}, {"docker0", "172.17.0.1", AF_INET, false}};
  EXPECT_EQ(Pick(only_docker, ""), "172.17.0.1");
  EXPECT_EQ(Pick({{"lo", "127.0.0.1", AF_INET, true}}, ""), "127.0.0.1");
  EXPECT_EQ(Pick(FakeIfs(), "", AF_INET6), "fd00::1");
  EXPECT_EQ(Pick({}, "").rfind("ERR:", 0), 0u);
}

TEST(PickAddress, IfnameSpecs) {
  EXPECT_EQ(Pick(FakeIfs(), "eth"), "10.0.0.1");
  EXPECT_EQ(Pick(FakeIfs(), "eth,enp"), "10.0.0.1");   // first listed prefix wins
  EXPECT_EQ(Pick(FakeIfs(), "enp,eth"), "10.0.1.5");
  EXPECT_EQ(Pick(FakeIfs(), "=eth1"), "10.0.0.2");
  EXPECT_EQ(Pick(FakeIfs(), "^en"), "10.0.0.1");
  EXPECT_EQ(Pick(FakeIfs(), "^=enp3s0,eth0"), "10.0.0.2");
  EXPECT_EQ(Pick(FakeIfs(), "=lo"), "127.0.0.1");
  std::string err = Pick(FakeIfs(), "ib");
  EXPECT_NE(err.find("matches no interface"), std::string::npos) << err;
  EXPECT_NE(err.find("eth0"), std::string::npos) << err;
}

TEST(ChooseLocalAddress, EnvPriority) {
  setenv("HCCL_IF_IP", "127.0.0.1", 1);
  setenv("HCCL_SOCKET_IFNAME", "nosuchnic", 1);
  std::string ip;
  ASSERT_TRUE(ChooseLocalAddress(&ip).ok());
  EXPECT_EQ(ip, "127.0.0.1");
  setenv("HCCL_IF_IP", "not-an-ip", 1);
  EXPECT_EQ(ChooseLocalAddress(&ip).code(), Code::kPara);
  unsetenv("HCCL_IF_IP");
  EXPECT_EQ(ChooseLocalAddress(&ip).code(), Code::kPara);  // the NIC does not exist
  setenv("HCCL_SOCKET_IFNAME", "=lo", 1);
  ASSERT_TRUE(ChooseLocalAddress(&ip).ok());
  EXPECT_EQ(ip, "127.0.0.1");
  unsetenv("HCCL_SOCKET_IFNAME");
  ASSERT_TRUE(ChooseLocalAddress(&ip).ok());
  EXPECT_FALSE(ip.empty());
}

}  // namespace
}  // namespace hostccl::boot
