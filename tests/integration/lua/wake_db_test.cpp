// The wake message of src/lua/expiry.lua on a real redis-server: "<due>@<db>" when the caller
// names its database (schedule, schedule_many, reschedule, retry, replay_dead), "<due>" when it
// does not; an invalid database is refused before anything is written.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/schedule_batch.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry", 0);
constexpr long long kDue = 4102444800000;  // 2100-01-01: never fires during the test

using Strings = std::vector<std::string>;

class WakeDb : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(redis_.command(load_library_argv()).failed()); }

  // Every message published on the bucket's wake channel while `action` ran.
  Strings wake_messages(const std::function<void()>& action) {
    return channel_messages(server_.host(), server_.port(), redis_, kKeys.wake_channel(), action);
  }

  void ok(const Strings& argv) {
    const Reply r = redis_.command(argv);
    ASSERT_FALSE(r.failed()) << r.describe();
  }

  long long zcard() { return redis_.command({"ZCARD", kKeys.schedule_key()}).integer; }
  long long exists(const std::string& key) { return redis_.command({"EXISTS", key}).integer; }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(WakeDb, ScheduleNamesTheDatabaseWhenGiven) {
  EXPECT_EQ(wake_messages([&] { ok(schedule_argv(kKeys, "a", ScheduleMode::At, kDue, "p", "", 3)); }),
            (Strings{std::to_string(kDue) + "@3"}));
  EXPECT_EQ(wake_messages([&] { ok(schedule_argv(kKeys, "b", ScheduleMode::At, kDue - 1, "p", "s:1", 0)); }),
            (Strings{std::to_string(kDue - 1) + "@0"}));
  EXPECT_EQ(redis_.command({"HGET", kKeys.shadow_key("b"), "stream"}).str, "s:1");
  EXPECT_FALSE(redis_.command({"HEXISTS", kKeys.shadow_key("a"), "stream"}).integer);  // '' is the default stream
}

TEST_F(WakeDb, ScheduleWithoutDatabasePublishesTheDueTimeAlone) {
  EXPECT_EQ(wake_messages([&] { ok(schedule_argv(kKeys, "a", ScheduleMode::At, kDue, "p")); }),
            (Strings{std::to_string(kDue)}));
  EXPECT_EQ(wake_messages([&] { ok(schedule_argv(kKeys, "b", ScheduleMode::At, kDue - 1, "p", "s:1")); }),
            (Strings{std::to_string(kDue - 1)}));
}

TEST_F(WakeDb, ScheduleManyTakesATrailingDatabase) {
  const std::vector<ScheduleBatchTask> tasks = {{"a", ScheduleMode::At, kDue, "pa", {}},
                                                {"b", ScheduleMode::At, kDue - 5, "pb", "s:1"}};
  EXPECT_EQ(wake_messages([&] { ok(schedule_many_argv(kKeys, tasks, 7)); }), (Strings{std::to_string(kDue - 5) + "@7"}));
  EXPECT_EQ(zcard(), 2);
  const std::vector<ScheduleBatchTask> earlier = {{"c", ScheduleMode::At, kDue - 9, "pc", {}}};
  EXPECT_EQ(wake_messages([&] { ok(schedule_many_argv(kKeys, earlier)); }), (Strings{std::to_string(kDue - 9)}));
}

TEST_F(WakeDb, RescheduleNamesTheDatabaseWhenGiven) {
  ok(schedule_argv(kKeys, "a", ScheduleMode::At, kDue, "p"));
  EXPECT_EQ(wake_messages([&] { ok(reschedule_argv(kKeys, "a", ScheduleMode::At, kDue - 1, 2)); }),
            (Strings{std::to_string(kDue - 1) + "@2"}));
  EXPECT_EQ(wake_messages([&] { ok(reschedule_argv(kKeys, "a", ScheduleMode::At, kDue - 2)); }),
            (Strings{std::to_string(kDue - 2)}));
}

TEST_F(WakeDb, ReplayDeadNamesTheDatabaseWhenGiven) {
  const std::string dead = kKeys.bucket_dead_stream();
  const std::string entry = redis_.command({"XADD", dead, "*", "id", "a", "payload", "p"}).str;
  const std::string delay = std::to_string(kDue);  // far away
  const Strings got = wake_messages([&] {
    ok({"FCALL", "expiry_replay_dead", "4", dead, kKeys.schedule_key(), kKeys.trigger_key("a"), kKeys.shadow_key("a"),
        entry, "a", delay, "default:stream", "5"});
  });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(got[0].size() - 2), "@5") << got[0];
  EXPECT_EQ(zcard(), 1);
  EXPECT_FALSE(redis_.command({"HEXISTS", kKeys.shadow_key("a"), "stream"}).integer);
}

TEST_F(WakeDb, RetryNamesTheDatabaseWhenGiven) {
  const std::string stream = kKeys.bucket_stream();
  ok({"XGROUP", "CREATE", stream, "g", "0", "MKSTREAM"});
  const std::string entry = redis_.command({"XADD", stream, "*", "id", "a", "payload", "p"}).str;
  ok({"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", stream, ">"});
  const Strings got = wake_messages([&] {
    ok({"FCALL", "expiry_retry", "5", stream, kKeys.bucket_dead_stream(), kKeys.schedule_key(), kKeys.trigger_key("a"),
        kKeys.shadow_key("a"), "g", entry, "a", "60000", "5", "failed", "4"});
  });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(got[0].size() - 2), "@4") << got[0];
  EXPECT_EQ(redis_.command({"HGET", kKeys.shadow_key("a"), "attempt"}).str, "2");
}

TEST_F(WakeDb, AnInvalidDatabaseIsRefusedAndWritesNothing) {
  ok(schedule_argv(kKeys, "old", ScheduleMode::At, kDue, "p"));
  for (const char* bad : {"-1", "x", "1.5", "1000001", "99999999999999999999", " 1", "1e3"}) {
    SCOPED_TRACE(bad);
    Reply r = redis_.command({"FCALL", "expiry_schedule", "3", kKeys.schedule_key(), kKeys.trigger_key("n"),
                              kKeys.shadow_key("n"), "n", "at", "1", "p", "", bad});
    ASSERT_TRUE(r.failed());
    EXPECT_NE(r.str.find("ERR expiry: database must be an integer 0..1000000"), std::string::npos) << r.str;
    std::vector<std::string> many = schedule_many_argv(kKeys, {{"n", ScheduleMode::At, 1, "p", {}}});
    many.push_back(bad);
    r = redis_.command(many);
    ASSERT_TRUE(r.failed());
    EXPECT_NE(r.str.find("database must be"), std::string::npos) << r.str;
    r = redis_.command({"FCALL", "expiry_reschedule", "3", kKeys.schedule_key(), kKeys.trigger_key("old"),
                        kKeys.shadow_key("old"), "old", "at", "1", bad});
    ASSERT_TRUE(r.failed());
    EXPECT_NE(r.str.find("database must be"), std::string::npos) << r.str;
    EXPECT_EQ(zcard(), 1);
    EXPECT_EQ(redis_.command({"ZSCORE", kKeys.schedule_key(), "old"}).str, std::to_string(kDue));
    EXPECT_EQ(exists(kKeys.shadow_key("n")), 0);
    EXPECT_EQ(exists(kKeys.trigger_key("n")), 0);
  }
  // Too many arguments for schedule_many: a db and one more.
  std::vector<std::string> many = schedule_many_argv(kKeys, {{"n", ScheduleMode::At, 1, "p", {}}}, 0);
  many.push_back("0");
  const Reply r = redis_.command(many);
  ASSERT_TRUE(r.failed());
  EXPECT_NE(r.str.find("1 + 5n or 2 + 5n arguments"), std::string::npos) << r.str;
  EXPECT_EQ(zcard(), 1);
}

}  // namespace
}  // namespace expiry::test
