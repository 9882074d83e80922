// The bodies and queries expiry-api reads (src/api/request_body.h): PUT /v1/tasks/{id},
// POST /v1/pause, GET /v1/tasks, the batch and the bulk actions' bodies and their cursor.
#include "api/request_body.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

constexpr const char* kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

Task task_of(const std::string& body, const std::optional<std::string>& header = std::nullopt) {
  auto parsed = parse_task_body(body, "t1", header);
  if (auto* err = std::get_if<std::string>(&parsed)) {
    ADD_FAILURE() << body << ": " << *err;
    return {};
  }
  return std::get<Task>(parsed);
}

std::string error_of(const std::string& body) {
  auto parsed = parse_task_body(body, "t1", std::nullopt);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  return "";
}

TEST(ApiRequestBody, TaskWithEveryField) {
  const Task t = task_of(R"({"delay_ms": 5000, "payload": "hello", "stream": "orders", "debounce_max_ms": 100,
                            "max_late_ms": 2000, "traceparent": ")" +
                         std::string(kTrace) + "\"}");
  EXPECT_EQ(t.id, "t1");
  EXPECT_EQ(t.mode, ScheduleMode::Delay);
  EXPECT_EQ(t.ms, 5000);
  EXPECT_EQ(t.payload, "hello");
  EXPECT_EQ(t.stream, "orders");
  EXPECT_EQ(t.options.debounce_max_ms, 100);
  EXPECT_EQ(t.options.max_late_ms, 2000);
  EXPECT_EQ(t.options.traceparent, kTrace);
  EXPECT_FALSE(t.options.if_absent);
}

TEST(ApiRequestBody, AtBase64AndIfAbsent) {
  const Task t = task_of(R"({"at_ms": 4102444800000, "payload_b64": "AAH/", "if_absent": true})");
  EXPECT_EQ(t.mode, ScheduleMode::At);
  EXPECT_EQ(t.ms, 4102444800000);
  EXPECT_EQ(t.payload, std::string("\x00\x01\xff", 3));
  EXPECT_TRUE(t.options.if_absent);
  EXPECT_TRUE(t.stream.empty());
}

TEST(ApiRequestBody, TraceparentHeaderIsTheDefault) {
  EXPECT_EQ(task_of(R"({"delay_ms": 1})", std::string(kTrace)).options.traceparent, kTrace);
  EXPECT_FALSE(task_of(R"({"delay_ms": 1})", std::string("garbage")).options.traceparent);
  const std::string other = "00-11111111111111111111111111111111-2222222222222222-01";
  EXPECT_EQ(task_of(R"({"delay_ms": 1, "traceparent": ")" + other + "\"}", std::string(kTrace)).options.traceparent,
            other);
}

TEST(ApiRequestBody, WebhookNamesTheEndpoint) {
  EXPECT_EQ(task_of(R"({"delay_ms": 1000, "payload": "{}", "webhook": "orders"})").options.webhook, "orders");
  EXPECT_FALSE(task_of(R"({"delay_ms": 1000})").options.webhook);
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "webhook": 3})"), "webhook must be a string");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "webhook": "no spaces"})"),
            "webhook must be an endpoint name of 1..64 characters [A-Za-z0-9_.-]");
  EXPECT_NE(error_of(R"({"delay_ms": 1, "webhook": ""})"), "");
}

TEST(ApiRequestBody, RefusedTasks) {
  EXPECT_EQ(error_of("{"), "the body is not valid JSON");
  EXPECT_EQ(error_of("[1]"), "the body must be a JSON object");
  EXPECT_EQ(error_of("{\"payload\": \"x\"}"), "give exactly one of delay_ms and at_ms");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "at_ms": 2})"), "give exactly one of delay_ms and at_ms");
  EXPECT_EQ(error_of(R"({"delay_ms": "1"})"), "delay_ms must be an integer");
  EXPECT_EQ(error_of(R"({"delay_ms": 1.5})"), "delay_ms must be an integer");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "payload": 3})"), "payload must be a string");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "payload": "a", "payload_b64": "YQ=="})"),
            "give at most one of payload and payload_b64");
  EXPECT_NE(error_of(R"({"delay_ms": 1, "payload_b64": "***"})").find("payload_b64 is not base64"), std::string::npos);
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "stream": ""})"), "stream must not be empty (omit it for the default stream)");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "if_absent": 1})"), "if_absent must be true or false");
  EXPECT_EQ(error_of(R"({"delay_ms": 1, "delay": 2})"), "unknown field \"delay\"");
  EXPECT_NE(error_of(R"({"delay_ms": -1})"), "");
  EXPECT_NE(error_of(R"({"at_ms": 0})"), "");
  EXPECT_NE(error_of(R"({"delay_ms": 1, "traceparent": "nope"})"), "");
  EXPECT_NE(error_of(R"({"delay_ms": 1, "if_absent": true, "debounce_max_ms": 5})"), "");
  EXPECT_NE(error_of(R"({"delay_ms": 1, "payload": ")" + std::string(65537, 'x') + "\"}"), "");
  EXPECT_EQ(error_of(R"({"delay_ms": 99999999999999999999})"), "delay_ms must be an integer");
}

TEST(ApiRequestBody, PauseBody) {
  EXPECT_EQ(std::get<long long>(parse_pause_body("")), 0);
  EXPECT_EQ(std::get<long long>(parse_pause_body("{}")), 0);
  EXPECT_EQ(std::get<long long>(parse_pause_body(R"({"for_ms": 60000})")), 60000);
  EXPECT_EQ(std::get<std::string>(parse_pause_body(R"({"for_ms": -1})")),
            "for_ms must be between 0 and 253402300799999");
  EXPECT_EQ(std::get<std::string>(parse_pause_body(R"({"for": 1})")), "unknown field \"for\"");
  EXPECT_EQ(std::get<std::string>(parse_pause_body("nope")), "the body is not valid JSON");
}

TEST(ApiRequestBody, ListQuery) {
  auto ok = parse_list_query({{"prefix", "order:"}, {"due_before", "4102444800000"}, {"limit", "1000"}});
  ASSERT_TRUE(std::holds_alternative<TaskListRequest>(ok));
  const auto& q = std::get<TaskListRequest>(ok);
  EXPECT_EQ(q.prefix, "order:");
  EXPECT_EQ(q.query.due_before_ms, 4102444800000);
  EXPECT_EQ(q.query.count, 1000);
  EXPECT_EQ(std::get<TaskListRequest>(parse_list_query({})).query.count, kDefaultPageLimit);
  EXPECT_EQ(std::get<std::string>(parse_list_query({{"limit", "1001"}})), "limit must be between 1 and 1000");
  EXPECT_EQ(std::get<std::string>(parse_list_query({{"limit", "0"}})), "limit must be between 1 and 1000");
  EXPECT_EQ(std::get<std::string>(parse_list_query({{"due_before", "soon"}})), "due_before must be epoch milliseconds");
  EXPECT_EQ(std::get<std::string>(parse_list_query({{"limit", "1"}, {"limit", "2"}})),
            "query parameter limit is given more than once");
  EXPECT_EQ(std::get<std::string>(parse_list_query({{"count", "1"}})), "unknown query parameter \"count\"");
  EXPECT_NE(std::get<std::string>(parse_list_query({{"cursor", "garbage"}})).find("cursor is not a cursor"),
            std::string::npos);
}

TEST(ApiRequestBody, DeadReplayBody) {
  auto ok = parse_dead_replay_body(R"({"entries": ["1-0", "3/2-1"], "delay_ms": 500})");
  ASSERT_TRUE(std::holds_alternative<DeadReplayRequest>(ok));
  EXPECT_EQ(std::get<DeadReplayRequest>(ok).entries, (std::vector<std::string>{"1-0", "3/2-1"}));
  EXPECT_EQ(std::get<DeadReplayRequest>(ok).delay_ms, 500);
  std::string list;
  for (int i = 0; i <= 100; ++i) list += std::string(i ? "," : "") + "\"1-" + std::to_string(i) + "\"";
  EXPECT_EQ(std::get<std::string>(parse_dead_replay_body("{\"entries\": [" + list + "]}")),
            "entries must be an array of 1 to 100 entry names");
  EXPECT_EQ(std::get<std::string>(parse_dead_replay_body(R"({"entries": []})")),
            "entries must be an array of 1 to 100 entry names");
  EXPECT_EQ(std::get<std::string>(parse_dead_replay_body(R"({"entries": [1]})")),
            "entries must hold entry names (strings)");
  EXPECT_EQ(std::get<std::string>(parse_dead_replay_body(R"({"entries": ["1-0"], "delay_ms": -5})")),
            "delay_ms must be between 0 and 253402300799999");
  EXPECT_EQ(std::get<std::string>(parse_dead_replay_body(R"({"entries": ["1-0"], "all": true})")),
            "unknown field \"all\"");
  EXPECT_EQ(std::get<long long>(parse_dead_list_query({{"limit", "7"}})), 7);
  EXPECT_EQ(std::get<long long>(parse_dead_list_query({})), kDefaultPageLimit);
  EXPECT_EQ(std::get<std::string>(parse_dead_list_query({{"count", "7"}})), "unknown query parameter \"count\"");
}

TEST(ApiRequestBody, DeadPurgeBody) {
  auto ok = parse_dead_purge_body(R"({"entries": ["1-0", "3/2-1"]})");
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(ok));
  EXPECT_EQ(std::get<std::vector<std::string>>(ok), (std::vector<std::string>{"1-0", "3/2-1"}));
  EXPECT_EQ(std::get<std::string>(parse_dead_purge_body(R"({"entries": []})")),
            "entries must be an array of 1 to 100 entry names");
  EXPECT_EQ(std::get<std::string>(parse_dead_purge_body(R"({"entries": ["1-0"], "delay_ms": 5})")),
            "unknown field \"delay_ms\"");
  EXPECT_EQ(std::get<std::string>(parse_dead_purge_body("[]")), "the body must be a JSON object");
}

TEST(ApiRequestBody, RescheduleBody) {
  auto delay = parse_reschedule_body(R"({"delay_ms": 300000})");
  ASSERT_TRUE(std::holds_alternative<RescheduleRequest>(delay));
  EXPECT_EQ(std::get<RescheduleRequest>(delay).mode, ScheduleMode::Delay);
  EXPECT_EQ(std::get<RescheduleRequest>(delay).ms, 300000);
  auto at = parse_reschedule_body(R"({"at_ms": 1700000000000})");
  ASSERT_TRUE(std::holds_alternative<RescheduleRequest>(at));
  EXPECT_EQ(std::get<RescheduleRequest>(at).mode, ScheduleMode::At);
  EXPECT_EQ(std::get<RescheduleRequest>(at).ms, 1700000000000);
  EXPECT_EQ(std::get<std::string>(parse_reschedule_body("{}")), "give exactly one of delay_ms and at_ms");
  EXPECT_EQ(std::get<std::string>(parse_reschedule_body(R"({"delay_ms": 1, "at_ms": 2})")),
            "give exactly one of delay_ms and at_ms");
  EXPECT_EQ(std::get<std::string>(parse_reschedule_body(R"({"delay_ms": -1})")),
            "delay_ms must be between 0 and 253402300799999");
  EXPECT_EQ(std::get<std::string>(parse_reschedule_body(R"({"delay_ms": "5"})")), "delay_ms must be an integer");
  EXPECT_EQ(std::get<std::string>(parse_reschedule_body(R"({"payload": "x"})")), "unknown field \"payload\"");
}

TEST(ApiRequestBody, ScheduleBodyNamesItsFieldsAsTheCliFlags) {
  auto parsed = parse_schedule_body(
      R"({"cron": "0 9 * * *", "tz": "Europe/Berlin", "start": 1700000000000, "end": "2030-01-01T00:00:00Z",
          "payload": "p", "stream": "s", "webhook": "orders", "misfire": "all", "misfire_grace_ms": 5000,
          "misfire_max": 3, "max_late_ms": 60000})");
  ASSERT_TRUE(std::holds_alternative<RecurringWrite>(parsed)) << std::get<std::string>(parsed);
  const RecurringWrite& w = std::get<RecurringWrite>(parsed);
  EXPECT_EQ(w.rule.cron, "0 9 * * *");
  EXPECT_FALSE(w.rule.every);
  EXPECT_EQ(w.rule.tz, "Europe/Berlin");
  EXPECT_EQ(w.rule.start, "1700000000000");
  EXPECT_EQ(w.rule.end, "2030-01-01T00:00:00Z");
  EXPECT_EQ(w.payload, "p");
  EXPECT_EQ(w.stream, "s");
  EXPECT_EQ(w.webhook, "orders");
  EXPECT_EQ(w.misfire, "all");
  EXPECT_EQ(w.misfire_grace_ms, 5000);
  EXPECT_EQ(w.misfire_max, 3);
  EXPECT_EQ(w.max_late_ms, 60000);

  const auto error = [](const char* body) {
    auto p = parse_schedule_body(body);
    return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string("(parsed)");
  };
  EXPECT_EQ(error(R"({"every": "1h", "colour": 1})"), "unknown field \"colour\"");
  EXPECT_EQ(error(R"({"every": 5})"), "every must be a string");
  EXPECT_EQ(error(R"({"every": "1h", "allow_sub_second": "yes"})"), "allow_sub_second must be true or false");
  EXPECT_EQ(error(R"({"every": "1h", "start": true})"),
            "start must be a time: epoch ms, or a string as expiry-ctl recur takes it");
  EXPECT_EQ(error(R"({"every": "1h", "misfire_max": 0})"), "misfire_max must be 1 or more");
  EXPECT_EQ(error("[]"), "the body must be a JSON object");
}

TEST(ApiRequestBody, SchedulePreviewBodyAndQuery) {
  auto parsed = parse_schedule_preview_body(R"({"every": "15m", "from": 1700000000000, "count": 3})");
  ASSERT_TRUE(std::holds_alternative<SchedulePreviewRequest>(parsed));
  EXPECT_EQ(std::get<SchedulePreviewRequest>(parsed).count, 3);
  EXPECT_EQ(std::get<SchedulePreviewRequest>(parsed).from, "1700000000000");
  EXPECT_EQ(std::get<std::string>(parse_schedule_preview_body(R"({"every": "15m", "count": 1001})")),
            "count must be between 1 and 1000");
  EXPECT_EQ(std::get<std::string>(parse_schedule_preview_body(R"({"every": "15m", "payload": "x"})")),
            "unknown field \"payload\"");
  EXPECT_EQ(std::get<long long>(parse_preview_query({})), 10);
  EXPECT_EQ(std::get<long long>(parse_preview_query({{"count", "7"}})), 7);
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_preview_query({{"count", "0"}})));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_preview_query({{"limit", "3"}})));
}

// The batch of POST /v1/tasks/batch: the body's faults refuse it all, an item's are its own.
TEST(ApiRequestBody, BatchBodyKeepsEachItemsOwnRefusal) {
  auto parsed = parse_batch_body(R"({"tasks": [{"id": "a", "delay_ms": 5, "payload": "x"},
                                               {"id": "b", "delay_ms": "soon"},
                                               {"delay_ms": 5},
                                               {"id": "c\u0001", "delay_ms": 5},
                                               7,
                                               {"id": "d", "at_ms": 4102444800000, "colour": 1},
                                               {"id": "e", "at_ms": 4102444800000}]})",
                                 std::string(kTrace));
  ASSERT_TRUE((std::holds_alternative<std::vector<BatchItem>>(parsed)));
  const auto& items = std::get<std::vector<BatchItem>>(parsed);
  ASSERT_EQ(items.size(), 7u);
  ASSERT_TRUE(std::holds_alternative<Task>(items[0].task));
  EXPECT_EQ(items[0].id, "a");
  EXPECT_EQ(std::get<Task>(items[0].task).id, "a");
  EXPECT_EQ(std::get<Task>(items[0].task).payload, "x");
  EXPECT_EQ(std::get<Task>(items[0].task).options.traceparent, kTrace) << "the header is every item's default";
  EXPECT_EQ(std::get<std::string>(items[1].task), "delay_ms must be an integer");
  EXPECT_EQ(items[2].id, "");
  EXPECT_EQ(std::get<std::string>(items[2].task), "id must be a string, the task's id");
  EXPECT_TRUE(std::holds_alternative<std::string>(items[3].task)) << "a control character in the id";
  EXPECT_NE(std::get<std::string>(items[4].task).find("must be a JSON object"), std::string::npos);
  EXPECT_EQ(std::get<std::string>(items[5].task), "unknown field \"colour\"");
  ASSERT_TRUE(std::holds_alternative<Task>(items[6].task));
  EXPECT_EQ(std::get<Task>(items[6].task).mode, ScheduleMode::At);

  EXPECT_TRUE((std::get<std::vector<BatchItem>>(parse_batch_body(R"({"tasks": []})", std::nullopt)).empty()));
}

TEST(ApiRequestBody, BatchBodyRefusedWhole) {
  const auto refusal = [](const std::string& body) {
    auto p = parse_batch_body(body, std::nullopt);
    return std::holds_alternative<BodyRefusal>(p) ? std::get<BodyRefusal>(p) : BodyRefusal{0, "(parsed)"};
  };
  EXPECT_EQ(refusal("{").status, 400);
  EXPECT_EQ(refusal("[]").status, 400);
  EXPECT_EQ(refusal("{}").status, 400);
  EXPECT_EQ(refusal(R"({"tasks": {"id": "a"}})").status, 400);
  EXPECT_EQ(refusal(R"({"tasks": [], "atomic": true})").detail, "unknown field \"atomic\"");
  std::string many = R"({"tasks": [)";
  for (size_t i = 0; i <= kMaxBatchTasks; ++i) many += std::string(i ? "," : "") + R"({"id": "t", "delay_ms": 1})";
  const BodyRefusal over = refusal(many + "]}");
  EXPECT_EQ(over.status, 413);
  EXPECT_NE(over.detail.find("1001 tasks; at most 1000"), std::string::npos) << over.detail;
  many.clear();
  for (size_t i = 0; i < kMaxBatchTasks; ++i) many += std::string(i ? "," : "") + R"({"id": "t", "delay_ms": 1})";
  EXPECT_EQ(refusal(R"({"tasks": [)" + many + "]}").detail, "(parsed)");
}

TEST(ApiRequestBody, RangeBodyTakesExactlyOneForm) {
  auto parsed = parse_range_body(R"({"prefix": "order:"})");
  ASSERT_TRUE(std::holds_alternative<RangeRequest>(parsed)) << std::get<std::string>(parsed);
  EXPECT_EQ(std::get<RangeRequest>(parsed).prefix, "order:");
  EXPECT_EQ(std::get<RangeRequest>(parsed).limit, kMaxRangeExamined);
  EXPECT_FALSE(std::get<RangeRequest>(parsed).cursor);

  parsed = parse_range_body(R"({"due_from_ms": 1000, "due_to_ms": 2000, "limit": 5, "cursor": "2/1500:3"})");
  ASSERT_TRUE(std::holds_alternative<RangeRequest>(parsed)) << std::get<std::string>(parsed);
  const RangeRequest& r = std::get<RangeRequest>(parsed);
  EXPECT_TRUE(r.prefix.empty());
  EXPECT_EQ(r.due_from_ms, 1000);
  EXPECT_EQ(r.due_to_ms, 2000);
  EXPECT_EQ(r.limit, 5);
  ASSERT_TRUE(r.cursor);
  EXPECT_EQ(r.cursor->bucket, 2);
  EXPECT_EQ(r.cursor->step, "1500:3");
  EXPECT_TRUE(std::holds_alternative<RangeRequest>(parse_range_body(R"({"due_to_ms": 2000})")));
  EXPECT_TRUE(std::holds_alternative<RangeRequest>(parse_range_body(R"({"due_from_ms": 0})")));

  const auto error = [](const char* body) {
    auto p = parse_range_body(body);
    return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string("(parsed)");
  };
  const std::string one_form =
      R"(give exactly one form: {"prefix": ...} or {"due_from_ms": ..., "due_to_ms": ...})";
  EXPECT_EQ(error("{}"), one_form);
  EXPECT_EQ(error(R"({"limit": 5})"), one_form);
  EXPECT_EQ(error(R"({"prefix": "a", "due_to_ms": 5})"), one_form);
  EXPECT_EQ(error(R"({"prefix": "a", "due_from_ms": 1, "due_to_ms": 5})"), one_form);
  EXPECT_EQ(error(R"({"prefix": ""})"), "prefix must not be empty");
  EXPECT_EQ(error(R"({"prefix": 5})"), "prefix must be a string");
  EXPECT_EQ(error(R"({"due_from_ms": 5, "due_to_ms": 5})"),
            "due_from_ms must be less than due_to_ms (the range is due_from_ms <= due < due_to_ms)");
  EXPECT_EQ(error(R"({"due_to_ms": -1})"), "due_to_ms must be between 0 and 253402300799999");
  EXPECT_EQ(error(R"({"due_to_ms": "soon"})"), "due_to_ms must be an integer");
  EXPECT_EQ(error(R"({"prefix": "a", "limit": 0})"), "limit must be between 1 and 10000");
  EXPECT_EQ(error(R"({"prefix": "a", "limit": 10001})"), "limit must be between 1 and 10000");
  EXPECT_EQ(error(R"({"prefix": "a", "cursor": "garbage"})"), "cursor is not a next_cursor this API gave");
  EXPECT_EQ(error(R"({"prefix": "a", "before": 1})"), "unknown field \"before\"");
  EXPECT_EQ(error("[]"), "the body must be a JSON object");
}

TEST(ApiRequestBody, RangeCursorRoundTripsAndRefusesOtherText) {
  for (const RangeCursor& c : {RangeCursor{0, ""}, RangeCursor{3, "1767225600000:2"}, RangeCursor{15, "1.5e+12:0"}}) {
    const auto back = parse_range_cursor(range_cursor_text(c));
    ASSERT_TRUE(back) << range_cursor_text(c);
    EXPECT_EQ(back->bucket, c.bucket);
    EXPECT_EQ(back->step, c.step);
  }
  EXPECT_EQ(range_cursor_text({3, "17:2"}), "3/17:2");
  for (const char* bad : {"", "/", "x/", "0", "-1/", "0/17", "0/:2", "0/17:", "0/17:x", "0/a:b:2", "123456/",
                          "0/1:2:3"}) {
    EXPECT_FALSE(parse_range_cursor(bad)) << bad;
  }
}

}  // namespace
}  // namespace expiry
