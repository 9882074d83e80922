// Unit tests of parse_redis_url and RedisEndpoint::redacted (src/config/redis_url.h).
#include "config/redis_url.h"
#include "config/sentinel_settings.h"

#include <string>

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

// The ConfigError message of parse_redis_url(url), or "" if it parsed.
std::string parse_error(const std::string& url) {
  try {
    parse_redis_url(url);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

void expect_rejected(const std::string& url) {
  EXPECT_THROW(parse_redis_url(url), ConfigError) << "url: " << url;
}

TEST(RedisUrl, DefaultEndpointValues) {
  RedisEndpoint ep;
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_EQ(ep.user, "");
  EXPECT_EQ(ep.password, "");
}

TEST(RedisUrl, HostOnlyUsesDefaultPortAndDb) {
  auto ep = parse_redis_url("redis://localhost");
  EXPECT_EQ(ep.host, "localhost");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_EQ(ep.user, "");
  EXPECT_EQ(ep.password, "");
}

TEST(RedisUrl, HostAndPort) {
  auto ep = parse_redis_url("redis://10.1.2.3:6380");
  EXPECT_EQ(ep.host, "10.1.2.3");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 0);
}

TEST(RedisUrl, HostPortAndDb) {
  auto ep = parse_redis_url("redis://redis.example.com:7000/5");
  EXPECT_EQ(ep.host, "redis.example.com");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.db, 5);
}

TEST(RedisUrl, DbWithoutPort) {
  auto ep = parse_redis_url("redis://cache_1/12");
  EXPECT_EQ(ep.host, "cache_1");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 12);
}

TEST(RedisUrl, TrailingSlashMeansDbZero) {
  auto ep = parse_redis_url("redis://h:1234/");
  EXPECT_EQ(ep.port, 1234);
  EXPECT_EQ(ep.db, 0);
}

TEST(RedisUrl, PortAndDbBoundaries) {
  EXPECT_EQ(parse_redis_url("redis://h:1").port, 1);
  EXPECT_EQ(parse_redis_url("redis://h:65535").port, 65535);
  EXPECT_EQ(parse_redis_url("redis://h:6379/0").db, 0);
  EXPECT_EQ(parse_redis_url("redis://h:6379/15").db, 15);
  EXPECT_EQ(parse_redis_url("redis://h:6379/15999").db, 15999);
}

TEST(RedisUrl, UserAndPassword) {
  auto ep = parse_redis_url("redis://alice:s3cret@db.local:6390/2");
  EXPECT_EQ(ep.user, "alice");
  EXPECT_EQ(ep.password, "s3cret");
  EXPECT_EQ(ep.host, "db.local");
  EXPECT_EQ(ep.port, 6390);
  EXPECT_EQ(ep.db, 2);
}

TEST(RedisUrl, PasswordOnlyWithLeadingColon) {
  auto ep = parse_redis_url("redis://:s3cret@db.local");
  EXPECT_EQ(ep.user, "");
  EXPECT_EQ(ep.password, "s3cret");
  EXPECT_EQ(ep.host, "db.local");
  EXPECT_EQ(ep.port, 6379);
}

TEST(RedisUrl, PasswordOnlyWithoutColonAsRedisCliAccepts) {
  auto ep = parse_redis_url("redis://s3cret@db.local:6381");
  EXPECT_EQ(ep.user, "");
  EXPECT_EQ(ep.password, "s3cret");
  EXPECT_EQ(ep.host, "db.local");
  EXPECT_EQ(ep.port, 6381);
}

TEST(RedisUrl, PasswordMayContainColons) {
  auto ep = parse_redis_url("redis://bob:a:b:c@h");
  EXPECT_EQ(ep.user, "bob");
  EXPECT_EQ(ep.password, "a:b:c");
}

TEST(RedisUrl, RawAtInPasswordSplitsAtTheLastAt) {
  auto ep = parse_redis_url("redis://bob:p@ss@h:6379");
  EXPECT_EQ(ep.user, "bob");
  EXPECT_EQ(ep.password, "p@ss");
  EXPECT_EQ(ep.host, "h");
}

TEST(RedisUrl, PercentDecodesUserAndPassword) {
  auto ep = parse_redis_url("redis://us%65r%3a1:p%40ss%2Fw%3Ard%25@h:6379/1");
  EXPECT_EQ(ep.user, "user:1");
  EXPECT_EQ(ep.password, "p@ss/w:rd%");
  EXPECT_EQ(ep.host, "h");
  EXPECT_EQ(ep.db, 1);
}

TEST(RedisUrl, PercentDecodesPasswordOnlyForms) {
  EXPECT_EQ(parse_redis_url("redis://:a%20b@h").password, "a b");
  EXPECT_EQ(parse_redis_url("redis://a%20b@h").password, "a b");
}

TEST(RedisUrl, RejectsBadPercentEscapes) {
  expect_rejected("redis://:abc%@h");
  expect_rejected("redis://:abc%4@h");
  expect_rejected("redis://:abc%zz@h");
  expect_rejected("redis://us%g1er:pw@h");
}

TEST(RedisUrl, BracketedIpv6) {
  auto ep = parse_redis_url("redis://[::1]:6380/3");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 3);

  auto ep2 = parse_redis_url("redis://[fe80::1:2]");
  EXPECT_EQ(ep2.host, "fe80::1:2");
  EXPECT_EQ(ep2.port, 6379);
  EXPECT_EQ(ep2.db, 0);

  auto ep3 = parse_redis_url("redis://u:pw@[2001:db8::7]:7000");
  EXPECT_EQ(ep3.user, "u");
  EXPECT_EQ(ep3.password, "pw");
  EXPECT_EQ(ep3.host, "2001:db8::7");
  EXPECT_EQ(ep3.port, 7000);
}

TEST(RedisUrl, RejectsMalformedIpv6) {
  expect_rejected("redis://[::1");
  expect_rejected("redis://[::1]:");
  expect_rejected("redis://[]:6379");
  expect_rejected("redis://[::1]6379");
  expect_rejected("redis://[::1]x");
  expect_rejected("redis://::1");  // unbracketed IPv6 is ambiguous with host:port
}

TEST(RedisUrl, RejectsOtherSchemes) {
  expect_rejected("http://localhost:6379");
  expect_rejected("tcp://localhost:6379");
  expect_rejected("unix:///tmp/redis.sock");
  expect_rejected("localhost:6379");
  expect_rejected("redis:/localhost");
  expect_rejected("redis:localhost");
  expect_rejected("");
  const std::string msg = parse_error("http://localhost");
  EXPECT_NE(msg.find("scheme must be redis:// or rediss://"), std::string::npos) << msg;
}

TEST(RedisUrl, RedissTurnsTlsOn) {
  const RedisEndpoint ep = parse_redis_url("rediss://user:pw@localhost:6380/2");
  EXPECT_TRUE(ep.tls.enabled);
  EXPECT_EQ(ep.host, "localhost");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.user, "user");
  EXPECT_EQ(ep.password, "pw");
  EXPECT_EQ(ep.db, 2);
  EXPECT_EQ(ep.redacted(), "rediss://user:***@localhost:6380/2");
  EXPECT_FALSE(parse_redis_url("redis://localhost").tls.enabled);
  const std::string msg = parse_error("redisss://localhost");
  EXPECT_NE(msg.find("rediss://"), std::string::npos) << msg;
}

TEST(RedisUrl, RejectsEmptyHost) {
  expect_rejected("redis://");
  expect_rejected("redis://:6379");
  expect_rejected("redis:///0");
  expect_rejected("redis://user:pw@");
  expect_rejected("redis://user:pw@:6379/0");
}

TEST(RedisUrl, RejectsBadPorts) {
  expect_rejected("redis://h:");
  expect_rejected("redis://h:0");
  expect_rejected("redis://h:65536");
  expect_rejected("redis://h:99999");
  expect_rejected("redis://h:123456789012");
  expect_rejected("redis://h:-1");
  expect_rejected("redis://h:+80");
  expect_rejected("redis://h:port");
  expect_rejected("redis://h:63 79");
  expect_rejected("redis://[::1]:0");
  expect_rejected("redis://[::1]:65536");
  EXPECT_NE(parse_error("redis://h:65536").find("port"), std::string::npos);
  EXPECT_NE(parse_error("redis://h:0").find("port"), std::string::npos);
}

TEST(RedisUrl, RejectsBadDb) {
  expect_rejected("redis://h:6379/abc");
  expect_rejected("redis://h:6379/-1");
  expect_rejected("redis://h:6379/1a");
  expect_rejected("redis://h:6379/16000");
  expect_rejected("redis://h:6379/ 1");
  EXPECT_NE(parse_error("redis://h:6379/abc").find("database"), std::string::npos);
}

TEST(RedisUrl, RejectsStrayText) {
  expect_rejected("redis://h:6379/0/1");
  expect_rejected("redis://h:6379/0?timeout=1");
  expect_rejected("redis://h:6379/0#x");
  expect_rejected("redis://h:6379x");
  expect_rejected("redis://h:6379:6380");
  expect_rejected("redis://my host:6379");
  expect_rejected("redis://h?x=1");
  expect_rejected("redis://h:6379 ");
  expect_rejected(" redis://h:6379");
}

TEST(RedisUrl, ErrorMessageShowsExpectedGrammar) {
  const std::string msg = parse_error("redis://h:0");
  EXPECT_NE(msg.find("invalid Redis URL"), std::string::npos) << msg;
  EXPECT_NE(msg.find("redis://[user:password@]host:port[/db]"), std::string::npos) << msg;
}

// Through Sentinel the URL's host is a placeholder: where() names the sentinels instead.
TEST(RedisUrl, WhereNamesTheSentinelsInsteadOfThePlaceholderHost) {
  RedisEndpoint ep = parse_redis_url("redis://app:s3cret@unused/2");
  EXPECT_EQ(ep.where(), ep.redacted()) << "without Sentinel, where() is redacted()";
  ep.sentinel.sentinels = parse_sentinel_list("10.0.0.7:26379,10.0.0.8:26379");
  ep.sentinel.master = "orders";
  EXPECT_EQ(ep.where(), "redis://app:***@<sentinel master orders via 10.0.0.7:26379,10.0.0.8:26379>/2");
  EXPECT_EQ(ep.where().find("unused"), std::string::npos);
  EXPECT_EQ(ep.where().find("s3cret"), std::string::npos);
}

TEST(RedisUrl, RedactedFormats) {
  EXPECT_EQ(parse_redis_url("redis://localhost").redacted(), "redis://localhost:6379/0");
  EXPECT_EQ(parse_redis_url("redis://h:7000/3").redacted(), "redis://h:7000/3");
  EXPECT_EQ(parse_redis_url("redis://alice:s3cret@h:7000/3").redacted(), "redis://alice:***@h:7000/3");
  EXPECT_EQ(parse_redis_url("redis://:s3cret@h").redacted(), "redis://:***@h:6379/0");
  EXPECT_EQ(parse_redis_url("redis://s3cret@h").redacted(), "redis://:***@h:6379/0");
  EXPECT_EQ(parse_redis_url("redis://[::1]:6380/2").redacted(), "redis://[::1]:6380/2");
  EXPECT_EQ(parse_redis_url("redis://u:pw@[::1]:6380").redacted(), "redis://u:***@[::1]:6380/0");
}

TEST(RedisUrl, RedactedNeverContainsThePassword) {
  const char* urls[] = {
      "redis://alice:Tr0ub4dor@h:6379/0",
      "redis://:Tr0ub4dor@h",
      "redis://Tr0ub4dor@h",
      "redis://alice:Tr0ub%344dor@h",  // decodes to Tr0ub44dor
      "redis://alice:Tr0ub4dor@[::1]:1/1",
      "redis://a%40b:Tr0ub4dor@h",
  };
  for (const char* url : urls) {
    auto ep = parse_redis_url(url);
    ASSERT_FALSE(ep.password.empty()) << url;
    const std::string r = ep.redacted();
    EXPECT_EQ(r.find(ep.password), std::string::npos) << url << " -> " << r;
    EXPECT_EQ(r.find("Tr0ub"), std::string::npos) << url << " -> " << r;
    EXPECT_NE(r.find("***"), std::string::npos) << url << " -> " << r;
  }
}

TEST(RedisUrl, RedactedOfHandBuiltEndpoint) {
  RedisEndpoint ep;
  ep.host = "cache";
  ep.port = 6400;
  ep.db = 7;
  ep.password = "hunter2";
  EXPECT_EQ(ep.redacted(), "redis://:***@cache:6400/7");
  ep.user = "svc";
  EXPECT_EQ(ep.redacted(), "redis://svc:***@cache:6400/7");
  ep.password.clear();
  EXPECT_EQ(ep.redacted(), "redis://svc@cache:6400/7");
}

}  // namespace
}  // namespace expiry
