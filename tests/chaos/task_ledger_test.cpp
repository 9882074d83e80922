// TaskLedger's verdicts: the chaos test can only pass if its checker catches lost, duplicated,
// cancelled, rescheduled-but-fired-early and corrupted tasks, and wrongly handled orders.
#include <gtest/gtest.h>

#include "chaos/task_ledger.h"

namespace expiry::test {
namespace {

using Entry = std::map<std::string, std::string>;

Entry entry(const std::string& id, long long due, long long fired, const std::string& payload) {
  return {{"id", id},
          {"due_ms", std::to_string(due)},
          {"fired_ms", std::to_string(fired)},
          {"payload", payload},
          {"_entry_id", std::to_string(fired) + "-0"}};
}

TEST(TaskLedger, ExactlyOnceIsOk) {
  TaskLedger ledger;
  ledger.scheduled("a", "pa", 1000, false, 500);
  ledger.scheduled("b", "pb", 1200, false, 500);
  const auto report = ledger.check_stream({entry("a", 1000, 1003, "pa"), entry("b", 1200, 1250, "pb")});
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.expected_entries, 2u);
  EXPECT_EQ(report.max_lateness_ms, 50);
}

TEST(TaskLedger, LostDuplicatedAndCorruptedAreCaught) {
  TaskLedger ledger;
  ledger.scheduled("lost", "p", 1000, false, 500);
  ledger.scheduled("dup", "p", 1000, false, 500);
  ledger.scheduled("bad", "p", 1000, false, 500);
  auto report = ledger.check_stream(
      {entry("dup", 1000, 1001, "p"), entry("dup", 1000, 1002, "p"), entry("bad", 1000, 1001, "q")});
  EXPECT_EQ(report.lost, 1u);
  EXPECT_EQ(report.duplicated, 1u);
  EXPECT_EQ(report.payload_mismatch, 1u);
  EXPECT_FALSE(report.ok());
  Entry missing = entry("lost", 1000, 1001, "p");
  missing["missing_payload"] = "absent";
  report = ledger.check_stream({missing});
  EXPECT_EQ(report.payload_mismatch, 1u);
}

TEST(TaskLedger, CancelledAndReplacedMustNeverFire) {
  TaskLedger ledger;
  ledger.scheduled("c", "p", 1000, false, 500);
  ledger.cancel_answered("c", true, 600);
  ledger.scheduled("r", "p", 1000, false, 500);
  ledger.scheduled("r", "p", 3000, true, 700);
  EXPECT_EQ(ledger.live_due_ms("r"), 3000);
  EXPECT_FALSE(ledger.has_live("c"));
  auto report = ledger.check_stream({entry("c", 1000, 1001, "p"), entry("r", 1000, 1001, "p")});
  EXPECT_EQ(report.fired_cancelled, 1u);
  EXPECT_EQ(report.fired_replaced, 1u);
  EXPECT_EQ(report.lost, 1u);  // r at 3000
  report = ledger.check_stream({entry("r", 3000, 2999, "p")});
  EXPECT_EQ(report.early, 1u);
  report = ledger.check_stream({entry("r", 3000, 3000, "p"), entry("x", 5, 5, "p"), entry("r", 2000, 2000, "p")});
  EXPECT_EQ(report.unexpected, 2u);
}

TEST(TaskLedger, ACancelOrRescheduleThatLostTheRaceKeepsTheFiredInstance) {
  TaskLedger ledger;
  ledger.scheduled("c", "p", 1000, false, 500);
  ledger.cancel_answered("c", false, 1005);  // fired at 1000..1005: expected in the stream
  ledger.scheduled("r", "p", 1000, false, 500);
  ledger.scheduled("r", "p", 4000, false, 1010);  // the first one fired: both are expected
  const auto report = ledger.check_stream(
      {entry("c", 1000, 1002, "p"), entry("r", 1000, 1001, "p"), entry("r", 4000, 4001, "p")});
  EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
  EXPECT_EQ(report.expected_entries, 3u);
}

TEST(TaskLedger, ATaskMissingBeforeItsDueTimeIsAnAnomaly) {
  TaskLedger ledger;
  ledger.scheduled("c", "p", 5000, false, 500);
  ledger.cancel_answered("c", false, 1000);  // not pending although due only at 5000
  ledger.scheduled("r", "p", 5000, false, 500);
  ledger.scheduled("r", "p", 8000, false, 1000);  // replaced=0 although the first was not due
  const auto report = ledger.check_stream({entry("c", 5000, 5001, "p"), entry("r", 5000, 5001, "p"),
                                           entry("r", 8000, 8001, "p")});
  EXPECT_EQ(report.anomalies, 2u);
  EXPECT_FALSE(report.ok());
}

TEST(TaskLedger, OrdersArePaidOrCancelledAsTheirHistorySays) {
  TaskLedger ledger;
  ledger.scheduled("order:paid", "p", 1000, false, 500);
  ledger.pay_answered("order:paid", "pending");
  ledger.scheduled("order:late", "p", 1000, false, 500);
  ledger.pay_answered("order:late", "cancelled");  // payment refused: must end cancelled
  ledger.scheduled("order:plain", "p", 1000, false, 500);
  ledger.scheduled("order:dead", "p", 1000, false, 500);
  auto report = ledger.check_orders(
      {{"order:paid", "paid"}, {"order:late", "cancelled"}, {"order:plain", "cancelled"}, {"order:dead", "pending"}},
      {"order:dead"});
  EXPECT_EQ(report.missed, 1u);
  EXPECT_EQ(report.missed_dead_lettered, 1u);
  EXPECT_EQ(report.wrongly_cancelled, 0u);
  report = ledger.check_orders(
      {{"order:paid", "cancelled"}, {"order:late", "cancelled"}, {"order:plain", "cancelled"}, {"order:dead", "cancelled"}},
      {});
  EXPECT_EQ(report.wrongly_cancelled, 1u);
  EXPECT_FALSE(report.ok());
}

}  // namespace
}  // namespace expiry::test
