// The SSRF address classifier (webhook/address_policy.h).
#include "webhook/address_policy.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

std::optional<std::string> kind(const char* ip) {
  auto a = parse_ip(ip);
  EXPECT_TRUE(a) << ip;
  return a ? non_public_kind(*a) : std::nullopt;
}

TEST(AddressPolicy, ClassifiesNonPublicAddresses) {
  const std::pair<const char*, const char*> cases[] = {
      {"127.0.0.1", "loopback"},    {"127.255.0.9", "loopback"},  {"::1", "loopback"},
      {"10.1.2.3", "private"},      {"172.16.0.1", "private"},    {"172.31.255.255", "private"},
      {"192.168.1.1", "private"},   {"fc00::1", "private"},       {"fdff::1", "private"},
      {"169.254.169.254", "link-local"}, {"fe80::1", "link-local"}, {"0.0.0.0", "unspecified"},
      {"::", "unspecified"},        {"224.0.0.1", "multicast"},   {"ff02::1", "multicast"},
      {"100.64.0.1", "cgnat"},      {"100.127.255.255", "cgnat"}, {"255.255.255.255", "reserved"},
      {"::ffff:127.0.0.1", "loopback"}, {"::ffff:10.0.0.1", "private"}, {"64:ff9b::a00:1", "reserved"},
  };
  for (const auto& [ip, expected] : cases) {
    SCOPED_TRACE(ip);
    ASSERT_TRUE(kind(ip));
    EXPECT_EQ(*kind(ip), expected);
  }
}

TEST(AddressPolicy, PublicAddressesPass) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255",
                         "192.169.0.1", "2606:4700::1111", "2a00:1450::1"}) {
    SCOPED_TRACE(ip);
    EXPECT_FALSE(kind(ip));
  }
}

TEST(AddressPolicy, AllowPrivateOpensOnlyItsNetworks) {
  AddressPolicy policy({*parse_cidr("127.0.0.0/8"), *parse_cidr("fd00::/8")});
  EXPECT_FALSE(policy.refusal(*parse_ip("127.0.0.1")));
  EXPECT_FALSE(policy.refusal(*parse_ip("::ffff:127.0.0.2")));
  EXPECT_FALSE(policy.refusal(*parse_ip("fd12::1")));
  EXPECT_FALSE(policy.refusal(*parse_ip("8.8.8.8")));
  const auto refused = policy.refusal(*parse_ip("10.0.0.1"));
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("private address 10.0.0.1"), std::string::npos) << *refused;
  EXPECT_TRUE(policy.refusal(*parse_ip("::1")));
  EXPECT_TRUE(AddressPolicy().refusal(*parse_ip("127.0.0.1")));
}

TEST(AddressPolicy, ParsesCidrsStrictly) {
  EXPECT_TRUE(parse_cidr("10.0.0.0/8"));
  EXPECT_TRUE(parse_cidr("0.0.0.0/0"));
  EXPECT_TRUE(parse_cidr("10.1.2.3"));
  EXPECT_TRUE(parse_cidr("fc00::/7"));
  EXPECT_TRUE(parse_cidr("10.1.2.3")->contains(*parse_ip("10.1.2.3")));
  EXPECT_FALSE(parse_cidr("10.1.2.3")->contains(*parse_ip("10.1.2.4")));
  std::string error;
  for (const char* bad : {"10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "fc00::/129", "x/1", "10.0.0.0/8x"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_cidr(bad, &error));
    EXPECT_FALSE(error.empty());
  }
}

}  // namespace
}  // namespace expiry
