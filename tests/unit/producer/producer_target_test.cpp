// The Producer's settings (src/producer/producer_target.h): resolved by the names every program
// reads, with the programs' defaults and checks. Pure (no connection is made).
#include "producer/producer_target.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

TEST(ProducerTarget, TakesTheProgramsDefaults) {
  const ProducerTarget t = resolve_producer_target({});
  EXPECT_EQ(t.redis.host, "127.0.0.1");
  EXPECT_EQ(t.redis.port, 6379);
  EXPECT_EQ(t.ns, "expiry");
  EXPECT_EQ(t.buckets, 0);
  EXPECT_EQ(t.stream, "expiry:stream");
  EXPECT_FALSE(t.redis.sentinel.enabled());
}

TEST(ProducerTarget, ReadsTheSharedSettings) {
  const ProducerTarget t = resolve_producer_target({{"redis_url", "redis://u:pw@10.0.0.2:7000/3"},
                                                    {"namespace", "orders"},
                                                    {"buckets", "16"},
                                                    {"stream", "orders:out"},
                                                    {"sentinel", "10.0.0.5:26379,10.0.0.6:26379"},
                                                    {"sentinel_master", "mymaster"}});
  EXPECT_EQ(t.redis.user, "u");
  EXPECT_EQ(t.redis.password, "pw");
  EXPECT_EQ(t.redis.db, 3);
  EXPECT_EQ(t.ns, "orders");
  EXPECT_EQ(t.buckets, 16);
  EXPECT_EQ(t.stream, "orders:out");
  ASSERT_TRUE(t.redis.sentinel.enabled());
  EXPECT_EQ(t.redis.sentinel.master, "mymaster");
  EXPECT_EQ(t.redis.sentinel.sentinels.size(), 2u);
}

TEST(ProducerTarget, RefusesWhatTheProgramsRefuseNamingTheSetting) {
  auto message = [](const std::map<std::string, std::string>& settings) {
    try {
      resolve_producer_target(settings);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message({{"buckets", "3"}}).find("--buckets"), std::string::npos);
  EXPECT_NE(message({{"namespace", "no spaces"}}).find("--namespace"), std::string::npos);
  EXPECT_NE(message({{"redis_url", "http://x"}}).find("--redis-url"), std::string::npos);
  EXPECT_NE(message({{"stream", "expiry:{0}:t:x"}}).find("--stream"), std::string::npos);
  EXPECT_EQ(message({{"no_such_setting", "1"}}), "unknown option --no-such-setting");
  EXPECT_NE(message({{"sentinel", "10.0.0.5:26379"}}).find("sentinel"), std::string::npos);  // no master name
}

}  // namespace
}  // namespace expiry
