// expiry_schedule_many (src/lua/expiry.lua) on a real redis-server: a batch does to each task
// exactly what expiry_schedule does, writes nothing when one task is invalid, and publishes on
// the wake channel at most once per call.
#include <gtest/gtest.h>

#include <functional>
#include <map>
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

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class ScheduleMany : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(redis_.command(load_library_argv()).failed()); }

  Reply many(const std::vector<ScheduleBatchTask>& tasks) { return redis_.command(schedule_many_argv(kKeys, tasks)); }

  std::vector<std::pair<std::string, std::string>> zrange() {
    std::vector<std::pair<std::string, std::string>> out;
    const Reply r = redis_.command({"ZRANGE", kKeys.schedule_key(), "0", "-1", "WITHSCORES"});
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out.emplace_back(r.elements[i].str, r.elements[i + 1].str);
    return out;
  }

  std::map<std::string, std::string> hash(const std::string& id) {
    std::map<std::string, std::string> out;
    const Reply r = redis_.command({"HGETALL", kKeys.shadow_key(id)});
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }

  long long now_ms() {
    const Reply t = redis_.command({"TIME"});
    return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
  }

  // Every message published on the bucket's wake channel while `action` ran.
  std::vector<std::string> wake_messages(const std::function<void()>& action) {
    return channel_messages(server_.host(), server_.port(), redis_, kKeys.wake_channel(), action);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(ScheduleMany, MixedNewAndReplacingTasksAreEachWhatExpiryScheduleWrites) {
  // "old" is pending with a stream and an attempt field: replacing it leaves neither.
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "old", ScheduleMode::At, 4102444800000, "before", "s:1")).failed());
  ASSERT_FALSE(redis_.command({"HSET", kKeys.shadow_key("old"), "attempt", "3"}).failed());

  const long long before = now_ms();
  const Reply r = many({{"old", ScheduleMode::At, 4102444800500, "after", {}},
                        {"new-delay", ScheduleMode::Delay, 60000, "p1", "orders:timeouts"},
                        {"new-past", ScheduleMode::At, 1000, std::string(300, 'x'), {}},
                        {"new-delay", ScheduleMode::Delay, 90000, "p2", {}}});  // the later one wins
  const long long after = now_ms();
  const auto results = decode_schedule_many(r, 4);
  ASSERT_TRUE(results.has_value()) << r.describe();
  EXPECT_EQ((*results)[0].due_ms, 4102444800500);
  EXPECT_TRUE((*results)[0].replaced);
  EXPECT_GE((*results)[1].due_ms, before + 60000);
  EXPECT_LE((*results)[1].due_ms, after + 60000);
  EXPECT_FALSE((*results)[1].replaced);
  EXPECT_EQ((*results)[2].due_ms, 1000);
  EXPECT_FALSE((*results)[2].replaced);
  const long long due = (*results)[3].due_ms;
  EXPECT_EQ(due, (*results)[1].due_ms + 30000) << "one clock for the whole call";
  EXPECT_TRUE((*results)[3].replaced) << "the id was pending by then";

  EXPECT_EQ(zrange(), (std::vector<std::pair<std::string, std::string>>{
                          {"new-past", "1000"}, {"new-delay", std::to_string(due)}, {"old", "4102444800500"}}));
  const std::string created = hash("old")["created_ms"];
  EXPECT_GE(std::stoll(created), before);
  EXPECT_LE(std::stoll(created), after);
  // The due times are the scores above only: the shadow hashes do not repeat them.
  EXPECT_EQ(hash("old"), (std::map<std::string, std::string>{
                             {"payload", "after"}, {"created_ms", created}}));
  EXPECT_EQ(hash("new-delay"), (std::map<std::string, std::string>{
                                   {"payload", "p2"}, {"created_ms", created}}));
  EXPECT_EQ(hash("new-past"), (std::map<std::string, std::string>{
                                  {"payload", std::string(300, 'x')}, {"created_ms", created}}));

  // Trigger TTLs: due - now + 100 ms of grace; an already due task gets the grace only.
  const long long ttl_old = integer(redis_, {"PTTL", kKeys.trigger_key("old")});
  EXPECT_GT(ttl_old, 4102444800500 - now_ms());
  EXPECT_LE(ttl_old, 4102444800500 - before + 100);
  const long long ttl_delay = integer(redis_, {"PTTL", kKeys.trigger_key("new-delay")});
  EXPECT_GT(ttl_delay, 80000);
  EXPECT_LE(ttl_delay, 90100);
  const long long ttl_past = integer(redis_, {"PTTL", kKeys.trigger_key("new-past")});
  EXPECT_TRUE(ttl_past == -2 || (ttl_past > 0 && ttl_past <= 100)) << ttl_past;
  // The schedule, three shadow hashes, three triggers (the already due one may have expired).
  EXPECT_EQ(integer(redis_, {"DBSIZE"}), 6 + integer(redis_, {"EXISTS", kKeys.trigger_key("new-past")}));
}

TEST_F(ScheduleMany, APerTaskStreamIsStoredForThatTaskOnly) {
  const Reply r = many({{"a", ScheduleMode::At, 4102444800000, "pa", "orders:timeouts"},
                        {"b", ScheduleMode::At, 4102444800001, "pb", {}},
                        {"c", ScheduleMode::At, 4102444800002, "pc", "billing:stream"}});
  ASSERT_TRUE(decode_schedule_many(r, 3).has_value()) << r.describe();
  EXPECT_EQ(hash("a")["stream"], "orders:timeouts");
  EXPECT_EQ(hash("b").count("stream"), 0u);
  EXPECT_EQ(hash("c")["stream"], "billing:stream");
}

TEST_F(ScheduleMany, TheSameTaskIsStoredAsExpiryScheduleStoresIt) {
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "one", ScheduleMode::At, 4102444800000, "p", "s:x")).failed());
  ASSERT_TRUE(decode_schedule_many(many({{"many", ScheduleMode::At, 4102444800000, "p", "s:x"}}), 1).has_value());
  auto one = hash("one");
  auto batched = hash("many");
  one.erase("created_ms");
  batched.erase("created_ms");
  EXPECT_EQ(one, batched);
  EXPECT_EQ(redis_.command({"ZSCORE", kKeys.schedule_key(), "one"}).str,
            redis_.command({"ZSCORE", kKeys.schedule_key(), "many"}).str);
}

TEST_F(ScheduleMany, AnInvalidTaskAnywhereWritesNothingAndIsNamed) {
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "pending", ScheduleMode::At, 4102444800000, "keep")).failed());
  const std::string big(65537, 'x');
  struct Case {
    ScheduleBatchTask bad;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"bad\nid", ScheduleMode::Delay, 1000, "p", {}}, "task #2 (id bad\\x0Aid): task id contains a control character"},
      {{"big", ScheduleMode::Delay, 1000, big, {}}, "task #2 (id big): payload larger than 65536 bytes"},
      {{"in-space", ScheduleMode::Delay, 1000, "p", "expiry:{3}:task:x"}, "task #2 (id in-space): stream expiry:{3}:task:x lies inside the task key space"},
      {{"far", ScheduleMode::At, 253402300800000, "p", {}}, "task #2 (id far): due time must be a non-negative integer"},
      {{"neg", ScheduleMode::Delay, -1, "p", {}}, "task #2 (id neg): delay must be a non-negative integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.says);
    const long long keys_before = integer(redis_, {"DBSIZE"});
    std::vector<std::string> messages;
    Reply r;
    messages = wake_messages([&] {
      r = many({{"first", ScheduleMode::At, 1, "p", {}}, c.bad, {"pending", ScheduleMode::At, 5, "new", {}}});
    });
    ASSERT_EQ(r.type, Reply::Type::Error) << r.describe();
    EXPECT_TRUE(contains(r.str, "ERR expiry: " + c.says)) << r.str;
    EXPECT_TRUE(contains(r.str, "nothing was written")) << r.str;
    EXPECT_EQ(schedule_many_failed_task(r), 1u);
    EXPECT_TRUE(messages.empty());
    EXPECT_EQ(integer(redis_, {"DBSIZE"}), keys_before);
    EXPECT_EQ(zrange(), (std::vector<std::pair<std::string, std::string>>{{"pending", "4102444800000"}}));
    EXPECT_EQ(hash("pending")["payload"], "keep");
  }
  // A bad mode, and keys that are not the task's.
  Reply r = redis_.command({"FCALL", "expiry_schedule_many", "5", kKeys.schedule_key(), kKeys.trigger_key("a"),
                            kKeys.shadow_key("a"), kKeys.trigger_key("b"), kKeys.shadow_key("a"), "2",
                            "a", "soon", "1", "p", "", "b", "at", "1", "p", ""});
  EXPECT_TRUE(contains(r.str, "ERR expiry: task #1 (id a): mode must be 'delay' or 'at'")) << r.str;
  r = redis_.command({"FCALL", "expiry_schedule_many", "5", kKeys.schedule_key(), kKeys.trigger_key("a"),
                      kKeys.shadow_key("a"), kKeys.trigger_key("b"), kKeys.shadow_key("a"), "2",
                      "a", "at", "1", "p", "", "b", "at", "1", "p", ""});
  EXPECT_TRUE(contains(r.str, "ERR expiry: task #2 (id b): keys do not match the layout")) << r.str;
  EXPECT_EQ(zrange().size(), 1u);
}

TEST_F(ScheduleMany, TheCallsShapeAndSizeAreChecked) {
  EXPECT_EQ(many({}).elements.size(), 0u);
  EXPECT_EQ(many({}).type, Reply::Type::Array);
  // Counts that do not match the keys or arguments.
  Reply r = redis_.command({"FCALL", "expiry_schedule_many", "3", kKeys.schedule_key(), kKeys.trigger_key("a"),
                            kKeys.shadow_key("a"), "2", "a", "at", "1", "p", ""});
  EXPECT_TRUE(contains(r.str, "needs 1 + 2n keys")) << r.str;
  r = redis_.command({"FCALL", "expiry_schedule_many", "3", kKeys.schedule_key(), kKeys.trigger_key("a"),
                      kKeys.shadow_key("a"), "1", "a", "at", "1", "p"});
  EXPECT_TRUE(contains(r.str, "needs 1 + 2n keys")) << r.str;
  r = redis_.command({"FCALL", "expiry_schedule_many", "1", "not-a-schedule", "0"});
  EXPECT_TRUE(contains(r.str, "first key must be the schedule key")) << r.str;
  // More than 250 tasks, or more than 4 MiB of payloads, in one call.
  std::vector<std::string> ids;
  for (size_t i = 0; i < kMaxScheduleBatchTasks + 1; ++i) ids.push_back("t" + std::to_string(i));
  std::vector<ScheduleBatchTask> tasks;
  for (const auto& id : ids) tasks.push_back({id, ScheduleMode::Delay, 60000, "p", {}});
  r = many(tasks);
  EXPECT_TRUE(contains(r.str, "the task count (first argument, after opts) must be an integer 0..250")) << r.str;
  tasks.pop_back();
  ASSERT_TRUE(decode_schedule_many(many(tasks), kMaxScheduleBatchTasks).has_value());
  EXPECT_EQ(integer(redis_, {"ZCARD", kKeys.schedule_key()}), static_cast<long long>(kMaxScheduleBatchTasks));
  const std::string payload(60000, 'y');
  std::vector<ScheduleBatchTask> heavy;
  for (size_t i = 0; i < 70; ++i) heavy.push_back({ids[i], ScheduleMode::Delay, 1, payload, {}});
  r = many(heavy);
  EXPECT_TRUE(contains(r.str, "the payloads add up to 4200000 bytes")) << r.str;
  EXPECT_EQ(hash("t0")["payload"], "p");
}

TEST_F(ScheduleMany, PublishesOnceAndOnlyWhenTheHeadMovesEarlier) {
  auto call = [&](std::vector<ScheduleBatchTask> tasks) {
    return wake_messages([&] { ASSERT_TRUE(decode_schedule_many(many(tasks), tasks.size()).has_value()); });
  };
  EXPECT_EQ(call({{"h", ScheduleMode::At, 10000, "p", {}}, {"i", ScheduleMode::At, 9000, "p", {}}}),
            std::vector<std::string>{"9000"})
      << "an empty schedule: once, the earliest";
  EXPECT_EQ(call({{"j", ScheduleMode::At, 20000, "p", {}}, {"k", ScheduleMode::At, 9000, "p", {}}}),
            std::vector<std::string>{})
      << "not earlier than the head";
  EXPECT_EQ(call({{"l", ScheduleMode::At, 8500, "p", {}}, {"m", ScheduleMode::At, 7000, "p", {}},
                  {"n", ScheduleMode::At, 8000, "p", {}}}),
            std::vector<std::string>{"7000"});
  EXPECT_EQ(call({{"m", ScheduleMode::At, 30000, "p", {}}}), std::vector<std::string>{})
      << "moving the head later publishes nothing, as expiry_schedule";
}

TEST_F(ScheduleMany, AUserWhoMayNotRunACommandOfTheCallWritesNothing) {
  ASSERT_FALSE(redis_.command({"ACL", "SETUSER", "producer", "on", ">pw", "~expiry:{0}:*", "&expiry:{0}:wake",
                               "+fcall|expiry_schedule_many", "+time", "+zrange", "+zadd", "+del", "+set",
                               "+publish"}).failed());  // no +hset
  TestConnection producer(server_.host(), server_.port());
  ASSERT_FALSE(producer.command({"AUTH", "producer", "pw"}).failed());
  const Reply r = producer.command(schedule_many_argv(kKeys, {{"a", ScheduleMode::Delay, 60000, "p", {}},
                                                             {"b", ScheduleMode::Delay, 60000, "p", {}}}));
  EXPECT_TRUE(contains(r.str, "the Redis user may not run HSET")) << r.describe();
  EXPECT_EQ(integer(redis_, {"DBSIZE"}), 0);
  const Reply refused = producer.command(schedule_argv(kKeys, "a", ScheduleMode::Delay, 1, "p"));
  EXPECT_TRUE(contains(refused.str, "NOPERM")) << refused.describe();
}

}  // namespace
}  // namespace expiry::test
