// Unit tests of the recurring rule as a user gives it (src/recur/recur_spec.h): one of cron and
// every, the field names of each face in its errors, the interval's anchor, and the preview.
#include "recur/recur_spec.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

std::string error_of(const RecurRuleSpec& spec, const RecurFieldNames& names) {
  try {
    parse_recur_rule_spec(spec, 1'700'000'000'000, names);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(RecurSpec, ErrorsNameTheFieldsAsEachFaceCallsThem) {
  RecurRuleSpec none;
  EXPECT_EQ(error_of(none, kRecurFlagNames), "give exactly one of --cron and --every");
  EXPECT_EQ(error_of(none, kRecurJsonNames), "give exactly one of cron and every");
  RecurRuleSpec bare;
  bare.every = "1";
  EXPECT_EQ(error_of(bare, kRecurJsonNames).rfind("every: ", 0), 0u) << error_of(bare, kRecurJsonNames);
  EXPECT_EQ(error_of(bare, kRecurFlagNames).rfind("--every: ", 0), 0u);
  RecurRuleSpec zone;
  zone.cron = "0 9 * * *";
  zone.tz = "localtime";
  EXPECT_EQ(error_of(zone, kRecurJsonNames).rfind("tz: ", 0), 0u) << error_of(zone, kRecurJsonNames);
  RecurRuleSpec backwards;
  backwards.cron = "0 9 * * *";
  backwards.start = "2030-01-02T00:00:00Z";
  backwards.end = "2030-01-01T00:00:00Z";
  EXPECT_EQ(error_of(backwards, kRecurJsonNames), "end lies before start");
}

TEST(RecurSpec, AnIntervalWithoutAStartIsAnchoredWhereItIsRead) {
  RecurRuleSpec spec;
  spec.every = "15m";
  const ParsedRecurRule parsed = parse_recur_rule_spec(spec, 1'700'000'000'000, kRecurJsonNames);
  EXPECT_EQ(parsed.start_ms, 1'700'000'000'000);
  EXPECT_EQ(parsed.zone.name(), "UTC");
  const auto next = preview_recur_rule(spec, 1'700'000'000'000, 3, kRecurJsonNames);
  ASSERT_EQ(next.size(), 3u);
  EXPECT_EQ(next[0].utc_ms, 1'700'000'000'000 + 15 * 60'000);
  EXPECT_EQ(next[2].utc_ms - next[1].utc_ms, 15 * 60'000);
}

TEST(RecurSpec, TheMisfirePolicies) {
  for (const char* ok : {"skip", "once", "all"}) EXPECT_FALSE(recur_misfire_error(ok)) << ok;
  EXPECT_TRUE(recur_misfire_error("sometimes"));
}

}  // namespace
}  // namespace expiry
