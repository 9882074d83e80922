// --check-config's endpoint verdicts (webhook/endpoint_check.h), with a resolver of the test's.
#include "webhook/endpoint_check.h"

#include <gtest/gtest.h>

#include <map>

namespace expiry {
namespace {

WebhookEndpoint endpoint(const std::string& name, const std::string& url) {
  WebhookEndpoint ep;
  ep.name = name;
  ep.url = url;
  return ep;
}

// Resolves names from a table; IP literals to themselves; anything else does not resolve.
ResolveHost table(std::map<std::string, std::vector<std::string>> names) {
  return [names](const std::string& host, std::string& error) {
    std::vector<IpAddress> out;
    if (auto ip = parse_ip(host)) return std::vector<IpAddress>{*ip};
    auto it = names.find(host);
    if (it == names.end()) {
      error = "Name or service not known";
      return out;
    }
    for (const auto& text : it->second) out.push_back(*parse_ip(text));
    return out;
  };
}

Cidr cidr(const char* text) { return *parse_cidr(text); }

TEST(EndpointCheck, APublicOrAllowedAddressIsDeliverable) {
  const auto resolve = table({{"hooks.example.com", {"93.184.216.34"}}});
  const auto pub = check_endpoint(endpoint("a", "https://hooks.example.com/x"), AddressPolicy(), resolve);
  EXPECT_TRUE(pub.deliverable());
  EXPECT_EQ(pub.host, "hooks.example.com");
  EXPECT_EQ(describe_verdict(pub), "endpoint a https://hooks.example.com/x: deliverable\n"
                                   "  93.184.216.34: allowed (public)\n");
  const auto local = check_endpoint(endpoint("b", "http://127.0.0.1:8080/x"), AddressPolicy({cidr("127.0.0.1/32")}),
                                    resolve);
  EXPECT_TRUE(local.deliverable());
  EXPECT_NE(describe_verdict(local).find("127.0.0.1: allowed (loopback, in allow_private)"), std::string::npos);
}

TEST(EndpointCheck, EveryAddressRefusedOrNoneIsNeverDeliverable) {
  const auto resolve = table({{"internal.example", {"10.0.0.1", "fd00::1"}}, {"empty.example", {}}});
  const AddressPolicy policy;
  const auto metadata = check_endpoint(endpoint("m", "http://169.254.169.254/latest"), policy, resolve);
  EXPECT_FALSE(metadata.deliverable());
  EXPECT_EQ(describe_verdict(metadata),
            "endpoint m http://169.254.169.254/latest: NEVER DELIVERABLE (the address policy refuses every address "
            "of its host 169.254.169.254)\n"
            "  169.254.169.254: refused: link-local address 169.254.169.254 is not in allow_private\n");
  const auto internal = check_endpoint(endpoint("i", "http://internal.example/x"), policy, resolve);
  EXPECT_FALSE(internal.deliverable());
  ASSERT_EQ(internal.addresses.size(), 2u);
  EXPECT_TRUE(internal.addresses[0].refusal);
  EXPECT_TRUE(internal.addresses[1].refusal);
  const auto unknown = check_endpoint(endpoint("u", "https://nowhere.invalid/"), policy, resolve);
  EXPECT_FALSE(unknown.deliverable());
  EXPECT_EQ(unknown.why_not(), "its host nowhere.invalid does not resolve: Name or service not known");
  EXPECT_FALSE(check_endpoint(endpoint("e", "https://empty.example/"), policy, resolve).deliverable());
}

// Like a delivery (which tries the next address when one is refused), one allowed address of
// several is enough: localhost's 127.0.0.1 allowed, its ::1 refused.
TEST(EndpointCheck, OneAllowedAddressOfSeveralIsEnough) {
  const auto resolve = table({{"localhost", {"::1", "127.0.0.1"}}});
  const auto v = check_endpoint(endpoint("l", "http://localhost:9000/x"), AddressPolicy({cidr("127.0.0.1/32")}),
                                resolve);
  EXPECT_TRUE(v.deliverable());
  EXPECT_EQ(describe_verdict(v), "endpoint l http://localhost:9000/x: deliverable\n"
                                 "  ::1: refused: loopback address ::1 is not in allow_private\n"
                                 "  127.0.0.1: allowed (loopback, in allow_private)\n");
}

TEST(EndpointCheck, AnIpv6LiteralIsResolvedWithoutItsBrackets) {
  const auto v = check_endpoint(endpoint("six", "http://[2001:db8::1]:8443/x"), AddressPolicy(), table({}));
  EXPECT_EQ(v.host, "2001:db8::1");
  ASSERT_EQ(v.addresses.size(), 1u);
}

}  // namespace
}  // namespace expiry
