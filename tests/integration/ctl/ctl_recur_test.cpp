// Integration tests of expiry-ctl recur against a private redis-server (no relay: the tests read
// what the commands stored, and claim occurrences with expiry_v2_sweep themselves): set, show
// (with the next 5), list, pause, resume, delete, a rule replaced, the exit codes, usage errors
// that write nothing, and preview, which takes no connection options and needs no Redis at all.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/ctl/ctl_run.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

class CtlRecurTest : public ::testing::Test {
 protected:
  CtlRun ctl(std::vector<std::string> args) {
    args.push_back("--redis-url=" + server_.url());
    return run_ctl(args);
  }
  nlohmann::json show_json(const std::string& id) {
    const CtlRun run = ctl({"recur", "show", id, "--json"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return nlohmann::json::parse(run.output);
  }
  long long armed(const std::string& id) {
    const Reply r = redis_.command({"ZSCORE", "expiry:{0}:schedule", id});
    return r.type == Reply::Type::String ? static_cast<long long>(std::stod(r.str)) : -1;
  }
  // The keys but the audit trail (expiry:audit), which each write command appends to.
  long long keys() { return integer(redis_, {"DBSIZE"}) - integer(redis_, {"EXISTS", "expiry:audit"}); }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(CtlRecurTest, SetStoresTheRuleArmsTheFirstOccurrenceAndShowListsTheNextFive) {
  const CtlRun set = ctl({"recur", "set", "report", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--payload", "p1",
                          "--misfire", "all", "--misfire-max", "3"});
  ASSERT_EQ(set.exit_code, 0) << set.output;
  EXPECT_NE(set.output.find("created report version=1 rule='30 2 * * *' tz=Europe/Berlin next="), std::string::npos)
      << set.output;
  const nlohmann::json def = show_json("report");
  EXPECT_EQ(def["rule"], "30 2 * * *");
  EXPECT_EQ(def["tz"], "Europe/Berlin");
  EXPECT_EQ(def["payload"], "p1");
  EXPECT_EQ(def["misfire"], "all");
  EXPECT_EQ(def["misfire_max"], 3);
  EXPECT_EQ(def["paused"], false);
  ASSERT_EQ(def["next"].size(), 5u);
  // The first of the next five is the armed occurrence, at 02:30 local on consecutive days.
  EXPECT_EQ(def["next"][0]["utc_ms"].get<long long>(), armed("report"));
  for (const auto& o : def["next"]) EXPECT_NE(o["local"].get<std::string>().find("T02:30:00.000+0"), std::string::npos) << o;
  EXPECT_EQ(redis_.command({"HGET", "expiry:{0}:task:report", "recur"}).str, "1");

  const CtlRun text = ctl({"recur", "show", "report"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("state: active"), std::string::npos) << text.output;
  const CtlRun list = ctl({"recur", "list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.output.find("report rule='30 2 * * *' tz=Europe/Berlin next="), std::string::npos) << list.output;
}

TEST_F(CtlRecurTest, SetReplacesTheRuleAtomicallyAndRearmsAtTheNewRulesFirstInstant) {
  ASSERT_EQ(ctl({"recur", "set", "r", "--cron", "0 0 1 1 *"}).exit_code, 0);
  const long long first = armed("r");
  const CtlRun again = ctl({"recur", "set", "r", "--cron", "0 12 * * *", "--tz", "Asia/Kathmandu"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("replaced r version=2"), std::string::npos) << again.output;
  const nlohmann::json def = show_json("r");
  EXPECT_NE(armed("r"), first);
  EXPECT_EQ(def["next"][0]["utc_ms"].get<long long>(), armed("r"));
  EXPECT_NE(def["next"][0]["local"].get<std::string>().find("T12:00:00.000+05:45"), std::string::npos) << def;
  EXPECT_EQ(integer(redis_, {"ZCARD", "expiry:{0}:schedule"}), 1);
}

TEST_F(CtlRecurTest, PauseRemovesTheOccurrenceResumeArmsTheNextAndDeleteRemovesEverything) {
  ASSERT_EQ(ctl({"recur", "set", "p", "--every", "1h"}).exit_code, 0);
  ASSERT_GT(armed("p"), 0);
  const CtlRun pause = ctl({"recur", "pause", "p"});
  EXPECT_EQ(pause.exit_code, 0);
  EXPECT_NE(pause.output.find("paused p"), std::string::npos) << pause.output;
  EXPECT_EQ(armed("p"), -1);
  EXPECT_EQ(show_json("p")["paused"], true);
  EXPECT_NE(ctl({"recur", "pause", "p"}).output.find("already paused: p"), std::string::npos);
  const CtlRun listed = ctl({"recur", "list"});
  EXPECT_NE(listed.output.find(" next=- paused "), std::string::npos) << "no next while paused: " << listed.output;
  const CtlRun resume = ctl({"recur", "resume", "p"});
  EXPECT_EQ(resume.exit_code, 0) << resume.output;
  EXPECT_NE(resume.output.find("resumed p next="), std::string::npos) << resume.output;
  EXPECT_GT(armed("p"), 0);
  const CtlRun del = ctl({"recur", "delete", "p"});
  EXPECT_EQ(del.exit_code, 0);
  EXPECT_EQ(keys(), 0) << "a deleted schedule leaves no key behind";
  EXPECT_EQ(ctl({"recur", "delete", "p"}).exit_code, 3);
  EXPECT_EQ(ctl({"recur", "show", "p"}).exit_code, 3);
  EXPECT_EQ(ctl({"recur", "pause", "p"}).exit_code, 3);
  EXPECT_EQ(ctl({"recur", "resume", "p"}).exit_code, 3);
}

TEST_F(CtlRecurTest, CancellingAnOccurrenceSkipsItAndAsksTheRelaysToArmTheNext) {
  ASSERT_EQ(ctl({"recur", "set", "c", "--every", "1h"}).exit_code, 0);
  const long long first = armed("c");
  ASSERT_GT(first, 0);
  EXPECT_EQ(integer(redis_, {"ZCARD", "expiry:{0}:recur_refill"}), 0);
  const CtlRun cancel = ctl({"cancel", "c"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_EQ(armed("c"), -1);
  EXPECT_EQ(redis_.command({"ZSCORE", "expiry:{0}:recur_refill", "c"}).type, Reply::Type::String)
      << "the schedule waits for a relay's refill, which arms its next occurrence";
  EXPECT_EQ(show_json("c")["paused"], false);
}

TEST_F(CtlRecurTest, BadRulesZonesTimesAndAOneOffTaskIdExitTwoWithNothingWritten) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"recur", "set", "x", "--cron", "0 0 31 2 *"},
           {"recur", "set", "x", "--cron", "61 * * * *"},
           {"recur", "set", "x", "--cron", "* * * *"},
           {"recur", "set", "x", "--every", "soon"},
           {"recur", "set", "x", "--every", "1"},     // a bare number: no unit
           {"recur", "set", "x", "--every", "1ms"},   // below 1 s without --allow-sub-second
           {"recur", "set", "x", "--cron", "@daily", "--tz", "localtime"},  // each machine's own zone
           {"recur", "set", "x", "--cron", "@daily", "--tz", "Mars/Base"},
           {"recur", "set", "x", "--cron", "@daily", "--misfire", "sometimes"},
           {"recur", "set", "x", "--cron", "@daily", "--end", "2020-01-01T00:00:00Z"},
           {"recur", "set", "x", "--cron", "@daily", "--start", "tomorrow"},
           {"recur", "set", "x"},
           {"recur", "set", "x", "--cron", "@daily", "--every", "1h"},
       }) {
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 2) << args[3] << ": " << run.output;
  }
  EXPECT_EQ(keys(), 0);
  const CtlRun fast = ctl({"recur", "set", "fast", "--every", "500ms", "--allow-sub-second"});
  EXPECT_EQ(fast.exit_code, 0) << fast.output;
  EXPECT_EQ(redis_.command({"EXISTS", "expiry:{0}:recur:fast"}).integer, 1);
  ASSERT_EQ(ctl({"recur", "delete", "fast"}).exit_code, 0);
  ASSERT_EQ(ctl({"schedule", "one-off", "--delay-ms", "600000"}).exit_code, 0);
  const CtlRun clash = ctl({"recur", "set", "one-off", "--cron", "@daily"});
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_NE(clash.output.find("one-off task"), std::string::npos) << clash.output;
  EXPECT_EQ(redis_.command({"EXISTS", "expiry:{0}:recur:one-off"}).integer, 0);
}

TEST_F(CtlRecurTest, PreviewNeedsNoRedisAndPrintsUtcAndLocalTimesAcrossTheSpringForwardGap) {
  const CtlRun run = run_ctl({"recur", "preview", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--from",
                              "2026-03-28T00:00:00Z", "--count", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output,
            "2026-03-28T01:30:00.000Z 2026-03-28T02:30:00.000+01:00\n"
            "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00\n"
            "2026-03-30T00:30:00.000Z 2026-03-30T02:30:00.000+02:00\n");
  const CtlRun json = run_ctl({"recur", "preview", "--every", "15m", "--tz", "Asia/Kathmandu", "--from",
                               "2026-01-01T00:00:00Z", "--count", "1", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["occurrences"][0]["utc"], "2026-01-01T00:15:00.000Z");
  EXPECT_EQ(j["occurrences"][0]["local"], "2026-01-01T06:00:00.000+05:45");
  EXPECT_EQ(run_ctl({"recur", "preview", "--cron", "0 0 30 2 *"}).exit_code, 2);
}

// A misspelt zone is refused with the closest name of the zone database (issue 43).
TEST_F(CtlRecurTest, AMisspeltZoneGetsADidYouMean) {
  const CtlRun preview = run_ctl({"recur", "preview", "--cron", "0 9 * * *", "--tz", "Europe/Berln"});
  EXPECT_EQ(preview.exit_code, 2) << preview.output;
  EXPECT_NE(preview.output.find("unknown time zone 'Europe/Berln'; did you mean 'Europe/Berlin'?"), std::string::npos)
      << preview.output;
  const CtlRun set = ctl({"recur", "set", "x", "--cron", "@daily", "--tz", "america/new_york"});
  EXPECT_EQ(set.exit_code, 2) << set.output;
  EXPECT_NE(set.output.find("did you mean 'America/New_York'?"), std::string::npos) << set.output;
  EXPECT_EQ(keys(), 0);
}

}  // namespace
}  // namespace expiry::test
