// The task JSON of expiry-api (src/api/task_json.h): `expiry-ctl show --json`'s shape, a
// payload that is not UTF-8 as payload_b64, and the schedule / run-now results.
#include "api/task_json.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(ApiTaskJson, PendingTaskAsExpiryCtlShowsIt) {
  TaskDetails t;
  t.pending = true;
  t.due_ms = 5000;
  t.now_ms = 1000;
  t.fields = {{"payload", "hi"},
              {"due_ms", "5000"},
              {"created_ms", "900"},
              {"max_late_ms", "60"},
              {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}};
  t.stream = "expiry:stream";
  t.trigger_pttl_ms = 4100;
  const auto j = task_details_json("t1", t);
  EXPECT_EQ(j["id"], "t1");
  EXPECT_EQ(j["pending"], true);
  EXPECT_EQ(j["due_ms"], 5000);
  EXPECT_EQ(j["due_in_ms"], 4000);
  EXPECT_EQ(j["created_ms"], 900);
  EXPECT_EQ(j["payload"], "hi");
  EXPECT_EQ(j["stream"], "expiry:stream");
  EXPECT_EQ(j["default_stream"], true);
  EXPECT_EQ(j["trigger_pttl_ms"], 4100);
  EXPECT_EQ(j["max_late_ms"], 60);
  EXPECT_EQ(j["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_FALSE(j.contains("payload_b64"));
}

TEST(ApiTaskJson, BinaryPayloadIsBase64) {
  TaskDetails t;
  t.pending = true;
  t.fields = {{"payload", std::string("\x00\xff", 2)}};
  const auto j = task_details_json("t1", t);
  EXPECT_TRUE(j["payload"].is_null());
  EXPECT_EQ(j["payload_b64"], "AP8=");
  EXPECT_TRUE(j["trigger_pttl_ms"].is_null());
  EXPECT_TRUE(j["created_ms"].is_null());
}

TEST(ApiTaskJson, Results) {
  const auto s = schedule_result_json("t1", {42, true, false});
  EXPECT_EQ(s, nlohmann::json({{"id", "t1"}, {"due_ms", 42}, {"replaced", true}, {"kept", false}}));
  const auto r = run_now_result_json("t1", {true, 10, 10});
  EXPECT_EQ(r["was_due"], true);
  EXPECT_EQ(json_text({{"k", std::string("\xff")}}), "{\"k\":\"\xef\xbf\xbd\"}");
}

}  // namespace
}  // namespace expiry
