// A task's local validation (src/producer/task.h) and the list cursor (src/producer/list_cursor.h).
// Pure.
#include "producer/task.h"

#include <string>

#include <gtest/gtest.h>

#include "functions/key_layout.h"
#include "producer/list_cursor.h"

namespace expiry {
namespace {

TEST(TaskError, MatchesTheLuaLimits) {
  Task t;
  t.id = "a";
  EXPECT_FALSE(task_error(t).has_value());
  t.ms = -1;
  EXPECT_TRUE(task_error(t).has_value());
  t.mode = ScheduleMode::At;
  t.ms = 0;
  EXPECT_TRUE(task_error(t).has_value());
  t.ms = kMaxTimeMs + 1;
  EXPECT_TRUE(task_error(t).has_value());
  t.ms = kMaxTimeMs;
  EXPECT_FALSE(task_error(t).has_value());
  t.payload.assign(kMaxPayloadBytes + 1, 'x');
  EXPECT_TRUE(task_error(t).has_value());
}

TEST(TaskError, NamesABadIdAndBadOptions) {
  Task t;
  EXPECT_NE(task_error(t).value_or("").find("id"), std::string::npos);
  t.id = "line\nbreak";
  EXPECT_TRUE(task_error(t).has_value());
  t.id = "ok";
  t.options.if_absent = true;
  t.options.debounce_max_ms = 10;
  EXPECT_EQ(task_error(t), "if-absent and debounce-max-ms exclude each other");
  t.options = {};
  t.options.traceparent = "00-0000";
  EXPECT_NE(task_error(t).value_or("").find("traceparent"), std::string::npos);
}

TEST(ListCursor, CarriesAPositionThereAndBack) {
  const TaskPosition p{"1700000000123", "order:7"};
  const auto back = decode_list_cursor(encode_list_cursor(p));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->score, p.score);
  EXPECT_EQ(back->member, p.member);
  std::string why;
  EXPECT_FALSE(decode_list_cursor("not a cursor!", &why).has_value());
  EXPECT_EQ(why, "it is not base64");
}

TEST(ListCursor, PositionsOrderByScoreThenIdBytes) {
  EXPECT_TRUE(position_before({"5", "b"}, {"10", "a"}));
  EXPECT_TRUE(position_before({"5", "a"}, {"5", "b"}));
  EXPECT_FALSE(position_before({"5", "b"}, {"5", "b"}));
  EXPECT_TRUE(position_before({"5", "Z"}, {"5", "\xc3\xa9"}));  // bytes, not code points
}

}  // namespace
}  // namespace expiry
