// expiry-ctl and the audit trail (docs/api.md, "Audit trail") against a private redis-server:
// each write and admin command appends one record under the OS user, with its target and exit
// code; reads and usage errors append none; `expiry-ctl audit` filters, pages and prints JSON;
// audit_max_entries bounds the stream, and 0 writes nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctl/ctl_audit.h"
#include "integration/ctl/ctl_run.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

class CtlAuditTest : public ::testing::Test {
 protected:
  CtlRun ctl(std::vector<std::string> args, std::vector<std::pair<std::string, std::string>> env = {}) {
    args.push_back("--redis-url=" + server_.url());
    return run_ctl(args, std::move(env));
  }
  json audit_json(std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"audit", "--json"});
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return json::parse(run.output, nullptr, false);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(CtlAuditTest, EachWriteIsRecordedUnderTheOsUserWithItsOutcome) {
  ASSERT_EQ(ctl({"schedule", "order:1", "--delay-ms", "600000"}).exit_code, 0);
  ASSERT_EQ(ctl({"show", "order:1"}).exit_code, 0);  // a read: not recorded
  ASSERT_EQ(ctl({"run-now", "nobody"}).exit_code, 3);
  ASSERT_EQ(ctl({"cancel", "--prefix", "order:"}).exit_code, 0);
  ASSERT_EQ(ctl({"pause", "--for", "5m"}).exit_code, 0);
  ASSERT_EQ(ctl({"resume"}).exit_code, 0);
  ASSERT_EQ(ctl({"schedule", "bad", "--delay-ms", "-5"}).exit_code, 2);  // usage: nothing written, not recorded

  const json page = audit_json();
  ASSERT_EQ(page["count"], 5) << page.dump();
  const std::string user = os_user_name();
  const std::vector<std::vector<std::string>> expected = {  // newest first
      {"resume", "", "exit 0"},
      {"pause", "for=5m", "exit 0"},
      {"cancel", "prefix=order:", "exit 0"},
      {"run-now", "nobody", "exit 3"},
      {"schedule", "order:1", "exit 0"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& r = page["records"][i];
    EXPECT_EQ(r["actor"], user);
    EXPECT_EQ(r["via"], "cli");
    EXPECT_EQ(r["action"], expected[i][0]) << r.dump();
    EXPECT_EQ(r["target"], expected[i][1]) << r.dump();
    EXPECT_EQ(r["outcome"], expected[i][2]) << r.dump();
    EXPECT_GT(r["time_ms"].get<long long>(), 1700000000000LL);
  }
  EXPECT_EQ(redis_.command({"XLEN", "expiry:audit"}).integer, 5);
}

TEST_F(CtlAuditTest, AFailedCommandIsRecordedWithItsError) {
  // The schedule key holds a string: Redis refuses the write (exit 1), and the record says so.
  redis_.command({"SET", "expiry:{0}:schedule", "not a zset"});
  const CtlRun run = ctl({"schedule", "x", "--delay-ms", "1000"});
  ASSERT_EQ(run.exit_code, 1) << run.output;
  const json page = audit_json();
  ASSERT_EQ(page["count"], 1) << page.dump();
  const std::string outcome = page["records"][0]["outcome"];
  EXPECT_EQ(outcome.rfind("exit 1: FCALL expiry_schedule: WRONGTYPE", 0), 0u) << outcome;
}

TEST_F(CtlAuditTest, FiltersAndPages) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(ctl({"schedule", "t" + std::to_string(i), "--delay-ms", "600000"}).exit_code, 0);
  }
  ASSERT_EQ(ctl({"cancel", "t0"}).exit_code, 0);
  json page = audit_json({"--action", "cancel"});
  ASSERT_EQ(page["count"], 1);
  EXPECT_EQ(page["records"][0]["target"], "t0");
  EXPECT_EQ(audit_json({"--actor", "someone-else"})["count"], 0);
  EXPECT_EQ(audit_json({"--via", "api"})["count"], 0);
  EXPECT_EQ(audit_json({"--target", "t3"})["count"], 1);

  page = audit_json({"--count", "4"});
  ASSERT_EQ(page["count"], 4);
  EXPECT_EQ(page["records"][0]["action"], "cancel");
  const std::string before = page["next_before"];
  page = audit_json({"--count", "4", "--before", before});
  ASSERT_EQ(page["count"], 2) << page.dump();
  EXPECT_EQ(page["records"][1]["target"], "t0");
  EXPECT_EQ(page["records"][1]["action"], "schedule");

  const CtlRun text = ctl({"audit", "--count", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find(" via cli  cancel  t0  -> exit 0\n"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("more: expiry-ctl audit --before "), std::string::npos) << text.output;
  EXPECT_EQ(ctl({"audit", "--before", "yesterday"}).exit_code, 2);
}

TEST_F(CtlAuditTest, RetentionBoundsTheStreamAndZeroWritesNothing) {
  ASSERT_EQ(ctl({"schedule", "kept", "--delay-ms", "600000"}, {{"EXPIRY_RELAY_AUDIT_MAX_ENTRIES", "0"}}).exit_code, 0);
  EXPECT_EQ(redis_.command({"EXISTS", "expiry:audit"}).integer, 0);
  // MAXLEN ~ trims whole stream nodes (100 entries each by default): 300 appends with a
  // retention of 10 leave at most one node and a part beyond the 10.
  std::vector<std::vector<std::string>> appends;
  for (int i = 0; i < 299; ++i) {
    appends.push_back({"XADD", "expiry:audit", "*", "actor", "x", "via", "cli", "action", "schedule", "target",
                       std::to_string(i), "outcome", "exit 0"});
  }
  pipeline(redis_, appends);
  ASSERT_EQ(ctl({"cancel", "kept"}, {{"EXPIRY_RELAY_AUDIT_MAX_ENTRIES", "10"}}).exit_code, 0);
  const long long length = redis_.command({"XLEN", "expiry:audit"}).integer;
  EXPECT_GE(length, 10);
  EXPECT_LE(length, 200);
  EXPECT_EQ(audit_json({"--count", "1"})["records"][0]["target"], "kept");
}

}  // namespace
}  // namespace expiry::test
