// Parsing expiry-webhook's --config JSON (webhook/webhook_config.h), without sockets.
#include "webhook/webhook_config.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

// base64 of 24 bytes "0123456789abcdefghijklmn"
const std::string kSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1u";

std::string config_with(const std::string& endpoint_extra, const std::string& top_extra = "") {
  return R"({"endpoints": {"orders": {"url": "https://hooks.example.com/in", "secret": ")" + kSecret + "\"" +
         endpoint_extra + "}}" + top_extra + "}";
}

std::string error_of(const std::string& json) {
  try {
    parse_webhook_config(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(WebhookConfig, ParsesTheFullExample) {
  const auto c = parse_webhook_config(R"({
    "endpoints": {
      "orders": {"url": "https://hooks.example.com/in", "secret": ")" + kSecret + R"(",
                 "secrets": ["whsec_QUJDREVGR0hJSktMTU5PUA=="], "timeout_ms": 2500, "max_in_flight": 7,
                 "ca_file": "/etc/ca.pem"},
      "billing": {"url": "http://127.0.0.1:8080/hook", "secret": ")" + kSecret + R"("}
    },
    "default_endpoint": "orders", "allow_private": ["10.0.0.0/8", "fd00::/8"],
    "max_attempts": 5, "retry_base_ms": 200, "retry_max_ms": 60000})");
  ASSERT_EQ(c.endpoints.size(), 2u);
  const auto& o = c.endpoints.at("orders");
  EXPECT_EQ(o.url, "https://hooks.example.com/in");
  ASSERT_EQ(o.secrets.size(), 2u);
  EXPECT_EQ(o.secrets[0], "0123456789abcdefghijklmn");
  EXPECT_EQ(o.secrets[1], "ABCDEFGHIJKLMNOP");
  EXPECT_EQ(o.timeout.count(), 2500);
  EXPECT_EQ(o.max_in_flight, 7u);
  EXPECT_EQ(*o.ca_file, "/etc/ca.pem");
  EXPECT_EQ(c.endpoints.at("billing").timeout.count(), 5000) << "default";
  EXPECT_EQ(c.endpoints.at("billing").max_in_flight, 100u) << "default";
  EXPECT_EQ(c.default_endpoint, "orders");
  EXPECT_EQ(c.allow_private.size(), 2u);
  EXPECT_EQ(c.max_attempts, 5);
  EXPECT_EQ(c.retry_base.count(), 200);
  EXPECT_EQ(c.retry_max.count(), 60000);
  EXPECT_EQ(c.endpoint_for("")->name, "orders");
  EXPECT_EQ(c.endpoint_for("billing")->name, "billing");
  EXPECT_EQ(c.endpoint_for("nope"), nullptr);
}

TEST(WebhookConfig, DefaultsWithoutOptionalKeys) {
  const auto c = parse_webhook_config(config_with(""));
  EXPECT_EQ(c.max_attempts, 8);
  EXPECT_EQ(c.retry_base.count(), 1000);
  EXPECT_EQ(c.retry_max.count(), 300000);
  EXPECT_TRUE(c.allow_private.empty());
  EXPECT_EQ(c.endpoint_for(""), nullptr) << "no default endpoint";
}

TEST(WebhookConfig, RefusesWhatIsWrongNamingIt) {
  const std::pair<std::string, std::string> cases[] = {
      {config_with("", R"(, "bogus": 1)"), "bogus: unknown key"},
      {config_with(R"(, "timeout": 5)"), "endpoints.orders.timeout: unknown key"},
      {R"({"endpoints": {"o": {"url": "ftp://x/", "secret": ")" + kSecret + "\"}}}", "endpoints.o.url"},
      {R"({"endpoints": {"o": {"url": "https:///x", "secret": ")" + kSecret + "\"}}}", "no host"},
      {R"({"endpoints": {"o": {"url": "https://u:p@x/", "secret": ")" + kSecret + "\"}}}", "user info"},
      {R"({"endpoints": {"o": {"url": "https://x:99999/", "secret": ")" + kSecret + "\"}}}", "bad port"},
      {R"({"endpoints": {"o": {"url": "https://x/", "secret": "abc"}}})", "whsec_"},
      {R"({"endpoints": {"o": {"url": "https://x/", "secret": "whsec_!!!!"}}})", "not base64"},
      {R"({"endpoints": {"o": {"url": "https://x/", "secret": "whsec_YQ=="}}})", "16..64 bytes"},
      {R"({"endpoints": {"o": {"url": "https://x/"}}})", "needs a secret"},
      {R"({"endpoints": {"a/b": {"url": "https://x/", "secret": ")" + kSecret + "\"}}}", "endpoint name"},
      {config_with("", R"(, "allow_private": ["10.0.0.1/8"])"), "allow_private"},
      {config_with("", R"(, "allow_private": ["nonsense"])"), "not a CIDR"},
      {config_with("", R"(, "default_endpoint": "other")"), "names no endpoint"},
      {config_with("", R"(, "max_attempts": 0)"), "max_attempts"},
      {config_with("", R"(, "retry_base_ms": 5000, "retry_max_ms": 10)"), "retry_max_ms"},
      {config_with(R"(, "max_in_flight": 0)"), "max_in_flight"},
      {R"({"endpoints": {}})", "endpoints"},
      {"[1]", "JSON object"},
      {"{not json", "not valid JSON"},
  };
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json);
    const std::string error = error_of(json);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace expiry
