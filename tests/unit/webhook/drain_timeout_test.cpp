// expiry-webhook's --drain-timeout setting (webhook/drain_timeout.h).
#include "webhook/drain_timeout.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

using std::chrono::milliseconds;

TEST(DrainTimeout, TakesDurationsWithAUnitAndZero) {
  EXPECT_EQ(parse_drain_timeout("10s"), milliseconds(10000));
  EXPECT_EQ(parse_drain_timeout("1500ms"), milliseconds(1500));
  EXPECT_EQ(parse_drain_timeout("2m"), milliseconds(120000));
  EXPECT_EQ(parse_drain_timeout("1h"), milliseconds(3600000));
  EXPECT_EQ(parse_drain_timeout("0"), milliseconds(0)) << "0: exit at once, everything held left pending";
}

TEST(DrainTimeout, RefusesABareNumberAndWhatIsNotADuration) {
  for (const char* text : {"10", "1500", "", "10 s", "-1s", "1.5s", "10sec", "s", "0s", "61m", "2h"}) {
    SCOPED_TRACE(text);
    std::string error;
    EXPECT_FALSE(parse_drain_timeout(text, &error));
    EXPECT_FALSE(error.empty());
  }
  std::string error;
  parse_drain_timeout("10", &error);
  EXPECT_NE(error.find("needs a unit"), std::string::npos) << error;
}

TEST(DrainTimeout, ResolvesFromEveryLayerNamingTheSourceOfABadValue) {
  const std::vector<OptionSpec> specs = {drain_timeout_option_spec()};
  const EnvLookup no_env = [](const std::string&) { return std::nullopt; };
  EXPECT_EQ(drain_timeout_from(Settings::resolve(specs, nullptr, "", no_env, "EXPIRY_WEBHOOK", {})),
            milliseconds(10000))
      << "default 10 s";
  const EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "EXPIRY_WEBHOOK_DRAIN_TIMEOUT") return "3s";
    return std::nullopt;
  };
  EXPECT_EQ(drain_timeout_from(Settings::resolve(specs, nullptr, "", env, "EXPIRY_WEBHOOK", {})), milliseconds(3000));
  const std::map<std::string, std::string> flag = {{"drain_timeout", "250ms"}};
  EXPECT_EQ(drain_timeout_from(Settings::resolve(specs, nullptr, "", env, "EXPIRY_WEBHOOK", flag)), milliseconds(250))
      << "a flag beats the environment";
  try {
    drain_timeout_from(Settings::resolve(specs, nullptr, "", no_env, "EXPIRY_WEBHOOK", {{"drain_timeout", "10"}}));
    FAIL() << "a bare number was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--drain-timeout"), std::string::npos) << e.what();
  }
}

TEST(DrainTimeout, ShowsTheLargestWholeUnit) {
  EXPECT_EQ(drain_timeout_text(milliseconds(0)), "0");
  EXPECT_EQ(drain_timeout_text(milliseconds(10000)), "10s");
  EXPECT_EQ(drain_timeout_text(milliseconds(1500)), "1500ms");
  EXPECT_EQ(drain_timeout_text(milliseconds(120000)), "2m");
  EXPECT_EQ(drain_timeout_text(milliseconds(3600000)), "1h");
}

}  // namespace
}  // namespace expiry
