// Unit tests of the consumer's retry options (src/config/consumer_config.h): retry_base_ms,
// retry_max_ms and max_deliveries from flags, env and JSON, and their validation.
#include "config/consumer_config.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace expiry {
namespace {

using Flags = std::map<std::string, std::string>;
using Env = std::map<std::string, std::string>;
using std::chrono::milliseconds;

Settings settings(const Flags& flags, const Env& env = {}, const nlohmann::json* file = nullptr) {
  EnvLookup lookup = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return Settings::resolve(consumer_option_specs(), file, file ? "c.json" : "", lookup, "ORDER_CANCELLER", flags);
}

// The error of resolving and validating these settings, or "" if they are accepted.
std::string error_of(const Flags& flags, const Env& env = {}) {
  try {
    consumer_config_from(settings(flags, env));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ConsumerRetryOptions, Defaults) {
  const ConsumerConfig c = consumer_config_from(settings({}));
  EXPECT_EQ(c.retry.initial, milliseconds(1000));
  EXPECT_EQ(c.retry.max, milliseconds(300000));
  EXPECT_DOUBLE_EQ(c.retry.jitter, 0.0);
  EXPECT_EQ(c.max_deliveries, 5);
}

TEST(ConsumerRetryOptions, FromFlagsEnvAndJson) {
  const ConsumerConfig f = consumer_config_from(settings({{"retry_base_ms", "250"}, {"retry_max_ms", "4000"}}));
  EXPECT_EQ(f.retry.initial, milliseconds(250));
  EXPECT_EQ(f.retry.max, milliseconds(4000));
  const ConsumerConfig e =
      consumer_config_from(settings({}, {{"ORDER_CANCELLER_RETRY_BASE_MS", "300"}, {"ORDER_CANCELLER_MAX_DELIVERIES", "7"}}));
  EXPECT_EQ(e.retry.initial, milliseconds(300));
  EXPECT_EQ(e.max_deliveries, 7);
  const nlohmann::json file = {{"retry_max_ms", 9000}};
  const ConsumerConfig j = consumer_config_from(settings({}, {}, &file));
  EXPECT_EQ(j.retry.max, milliseconds(9000));
}

TEST(ConsumerRetryOptions, RejectsOutOfRangeValues) {
  EXPECT_NE(error_of({{"retry_base_ms", "0"}}), "");
  EXPECT_NE(error_of({{"retry_base_ms", "-5"}}), "");
  EXPECT_NE(error_of({{"retry_max_ms", "soon"}}), "");
  EXPECT_NE(error_of({{"max_deliveries", "0"}}), "");
}

TEST(ConsumerRetryOptions, RejectsAMaximumBelowTheBase) {
  const std::string msg = error_of({{"retry_base_ms", "5000"}, {"retry_max_ms", "1000"}});
  EXPECT_NE(msg.find("retry_max_ms (1000) must be at least retry_base_ms (5000)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace expiry
