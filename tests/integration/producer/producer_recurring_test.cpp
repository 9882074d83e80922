// The Producer's recurring-schedule calls (src/producer/producer.h, recurring.h) against a real
// redis-server: create and replace, show with the next occurrences, pause, resume, delete and
// the walk over every bucket, each outcome read back from the keys of docs/protocol.md
// "Recurring schedules"; and bad input refused as ConfigError with nothing written. Each test
// has its own server.
#include "producer/producer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "producer/task_placement.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

RecurringSpec every_30s(const std::string& id) {
  RecurringSpec spec;
  spec.id = id;
  spec.every = "30s";
  spec.payload = "{\"report\":\"daily\"}";
  return spec;
}

class ProducerRecurringTest : public ::testing::Test {
 protected:
  // A Producer on this test's server, namespace "p" with `buckets` buckets.
  std::unique_ptr<Producer> producer(int buckets = 1) {
    return std::make_unique<Producer>(std::map<std::string, std::string>{
        {"redis_url", server_.url()}, {"namespace", "p"}, {"buckets", std::to_string(buckets)}});
  }

  KeyLayout keys_of(const Producer& p, const std::string& id) { return p.placement().keys_of_task(id); }

  std::string hget(const std::string& key, const std::string& field) {
    const Reply r = redis_.command({"HGET", key, field});
    return r.type == Reply::Type::String ? r.str : "(nil)";
  }

  // The due time of the schedule's pending occurrence (task `id` in its bucket's ZSET), or -1.
  long long armed_in_redis(const Producer& p, const std::string& id) {
    const Reply r = redis_.command({"ZSCORE", keys_of(p, id).schedule_key(), id});
    return r.type == Reply::Type::String ? std::stoll(r.str) : -1;
  }

  // Every key of a recurring schedule, in any bucket: definitions, next instants, indexes.
  std::vector<std::string> recur_keys() {
    std::vector<std::string> found;
    for (const Reply& k : redis_.command({"KEYS", "p:*recur*"}).elements) found.push_back(k.str);
    return found;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(ProducerRecurringTest, CreatesAScheduleInItsBucketAndShowsItsNextOccurrences) {
  auto p = producer(4);
  RecurringSpec spec = every_30s("report:daily");
  spec.stream = "reports";
  spec.misfire = MisfirePolicy::Skip;
  spec.max_late_ms = 5000;
  const long long before = p->now_ms();
  const RecurringSetResult created = p->set_recurring(spec);
  EXPECT_FALSE(created.replaced);
  EXPECT_EQ(created.version, 1);
  EXPECT_EQ(created.rule, "@every 30s");
  EXPECT_EQ(created.tz, "UTC");
  ASSERT_TRUE(created.armed_ms.has_value());
  EXPECT_GE(*created.armed_ms, before);
  EXPECT_LE(*created.armed_ms, before + 31000);

  // What docs/protocol.md says lands in Redis: the definition hash, the id in the bucket's index,
  // its next instants, and its occurrence as task `id` in the bucket's schedule.
  const KeyLayout keys = keys_of(*p, spec.id);
  EXPECT_EQ(hget(keys.recur_key(spec.id), "rule"), "@every 30s");
  EXPECT_EQ(hget(keys.recur_key(spec.id), "payload"), spec.payload);
  EXPECT_EQ(hget(keys.recur_key(spec.id), "misfire"), "skip");
  EXPECT_EQ(hget(keys.recur_key(spec.id), "max_late_ms"), "5000");
  EXPECT_EQ(integer(redis_, {"SISMEMBER", keys.ns() + ":{" + std::to_string(keys.bucket()) + "}:recurs", spec.id}), 1);
  EXPECT_GT(integer(redis_, {"ZCARD", keys.recur_next_key(spec.id)}), 0);
  EXPECT_EQ(armed_in_redis(*p, spec.id), *created.armed_ms);

  const auto shown = p->show_recurring(spec.id, 3);
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->id, spec.id);
  EXPECT_EQ(shown->rule, "@every 30s");
  EXPECT_EQ(shown->tz, "UTC");
  EXPECT_EQ(shown->payload, spec.payload);
  EXPECT_EQ(shown->stream, "reports");
  EXPECT_EQ(shown->misfire, MisfirePolicy::Skip);
  EXPECT_EQ(shown->misfire_grace_ms, 1000);
  EXPECT_EQ(shown->max_late_ms, 5000);
  EXPECT_FALSE(shown->paused);
  EXPECT_FALSE(shown->ended);
  EXPECT_EQ(shown->version, 1);
  EXPECT_EQ(shown->armed_ms, created.armed_ms);
  ASSERT_EQ(shown->next.size(), 3u);
  EXPECT_EQ(shown->next[0].utc_ms, *created.armed_ms);
  for (size_t i = 1; i < shown->next.size(); ++i) EXPECT_EQ(shown->next[i].utc_ms - shown->next[i - 1].utc_ms, 30000);
  EXPECT_EQ(shown->next[0].utc.back(), 'Z');
  EXPECT_NE(shown->next[0].local.find("+00:00"), std::string::npos) << shown->next[0].local;
  EXPECT_TRUE(p->show_recurring(spec.id, 0)->next.empty());
  EXPECT_FALSE(p->show_recurring("no-such-schedule").has_value());

  // Replaced by a cron rule in a zone: the same schedule, one version on, its times local.
  RecurringSpec noon = spec;
  noon.every.reset();
  noon.cron = "0 12 * * *";
  noon.tz = "Europe/Berlin";
  const RecurringSetResult replaced = p->set_recurring(noon);
  EXPECT_TRUE(replaced.replaced);
  EXPECT_EQ(replaced.version, 2);
  EXPECT_EQ(replaced.rule, "0 12 * * *");
  EXPECT_EQ(replaced.tz, "Europe/Berlin");
  const auto noons = p->show_recurring(spec.id, 2);
  ASSERT_TRUE(noons.has_value());
  ASSERT_EQ(noons->next.size(), 2u);
  EXPECT_EQ(noons->next[0].utc_ms, armed_in_redis(*p, spec.id));
  for (const RecurringOccurrence& o : noons->next) {
    EXPECT_NE(o.local.find("T12:00:00.000+0"), std::string::npos) << o.local;  // +01:00 or +02:00
  }
  EXPECT_EQ(hget(keys.recur_key(spec.id), "tz"), "Europe/Berlin");
}

TEST_F(ProducerRecurringTest, PauseRemovesThePendingOccurrenceAndResumeArmsTheNext) {
  auto p = producer();
  const std::string id = "poll";
  p->set_recurring(every_30s(id));
  ASSERT_GE(armed_in_redis(*p, id), 0);

  const RecurringStateResult paused = p->pause_recurring(id);
  EXPECT_TRUE(paused.exists);
  EXPECT_TRUE(paused.changed);
  EXPECT_FALSE(paused.armed_ms.has_value());
  EXPECT_EQ(armed_in_redis(*p, id), -1);
  EXPECT_EQ(hget(keys_of(*p, id).recur_key(id), "paused"), "1");
  const auto shown = p->show_recurring(id);
  ASSERT_TRUE(shown.has_value());
  EXPECT_TRUE(shown->paused);
  EXPECT_TRUE(shown->next.empty());
  EXPECT_FALSE(shown->armed_ms.has_value());
  EXPECT_FALSE(p->pause_recurring(id).changed);

  // A replacement keeps the pause.
  EXPECT_FALSE(p->set_recurring(every_30s(id)).armed_ms.has_value());
  EXPECT_EQ(armed_in_redis(*p, id), -1);

  const long long now = p->now_ms();
  const RecurringStateResult resumed = p->resume_recurring(id);
  EXPECT_TRUE(resumed.exists);
  EXPECT_TRUE(resumed.changed);
  ASSERT_TRUE(resumed.armed_ms.has_value());
  EXPECT_GT(*resumed.armed_ms, now);
  EXPECT_EQ(armed_in_redis(*p, id), *resumed.armed_ms);
  EXPECT_EQ(hget(keys_of(*p, id).recur_key(id), "paused"), "0");
  const RecurringStateResult again = p->resume_recurring(id);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.armed_ms, resumed.armed_ms);
  EXPECT_EQ(p->show_recurring(id)->next.size(), 5u);

  EXPECT_FALSE(p->pause_recurring("no-such-schedule").exists);
  EXPECT_FALSE(p->resume_recurring("no-such-schedule").exists);
}

TEST_F(ProducerRecurringTest, DeleteRemovesTheDefinitionAndItsOccurrence) {
  auto p = producer(4);
  const std::string id = "cleanup:nightly";
  p->set_recurring(every_30s(id));
  ASSERT_FALSE(recur_keys().empty());
  EXPECT_TRUE(p->delete_recurring(id));
  EXPECT_EQ(armed_in_redis(*p, id), -1);
  EXPECT_EQ(integer(redis_, {"EXISTS", keys_of(*p, id).recur_key(id), keys_of(*p, id).recur_next_key(id),
                             keys_of(*p, id).shadow_key(id), keys_of(*p, id).trigger_key(id)}), 0);
  EXPECT_EQ(recur_keys(), std::vector<std::string>{});
  EXPECT_FALSE(p->show_recurring(id).has_value());
  EXPECT_FALSE(p->delete_recurring(id));
}

TEST_F(ProducerRecurringTest, ForEachVisitsTheSchedulesOfEveryBucket) {
  auto p = producer(4);
  std::set<std::string> ids;
  std::set<int> buckets;
  for (int i = 0; i < 12; ++i) {
    const std::string id = "s" + std::to_string(i);
    p->set_recurring(every_30s(id));
    ids.insert(id);
    buckets.insert(p->placement().bucket_of_task(id));
  }
  ASSERT_GT(buckets.size(), 1u);
  p->pause_recurring("s0");

  std::set<std::string> seen;
  p->for_each_recurring([&](const RecurringDetails& d) {
    EXPECT_TRUE(seen.insert(d.id).second) << d.id;
    EXPECT_EQ(d.next.size(), d.paused ? 0u : 2u) << d.id;
    EXPECT_EQ(d.paused, d.id == "s0");
    return true;
  }, 2);
  EXPECT_EQ(seen, ids);

  int visited = 0;
  p->for_each_recurring([&](const RecurringDetails&) { return ++visited < 3; });
  EXPECT_EQ(visited, 3);
}

TEST_F(ProducerRecurringTest, ABadRuleZoneOrBoundIsAConfigErrorAndWritesNothing) {
  auto p = producer(4);
  // The message, or "" when nothing was thrown.
  auto error_of = [&](const RecurringSpec& spec) -> std::string {
    try {
      p->set_recurring(spec);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  auto with = [](auto change) {
    RecurringSpec spec = every_30s("bad");
    change(spec);
    return spec;
  };
  // The CLI's messages, naming the RecurringSpec members where the CLI names its flags.
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.tz = "Europe/Berln"; })),
            "unknown time zone 'Europe/Berln'; did you mean 'Europe/Berlin'?");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.tz = "localtime"; })),
            "tz: 'localtime' is not an IANA time zone name the same on every machine; name the place, such as "
            "Europe/Berlin, America/New_York or UTC");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.every = "30"; })),
            "every: '30' needs a unit, such as 30s, 15m or 2h (a bare number would mean milliseconds)");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) {
              s.every.reset();
              s.cron = "61 * * * *";
            })),
            "cron: minute field '61' is out of range 0-59");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.cron = "* * * * *"; })), "give exactly one of cron and every");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.every.reset(); })), "give exactly one of cron and every");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) {
              s.start = "2021-01-01T00:00:00Z";
              s.end = "2020-01-01T00:00:00Z";
            })),
            "end lies before start");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.end = "2020-01-01T00:00:00Z"; })),
            "end lies in the past: the schedule would never fire");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.every = "500ms"; })), "");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.id = ""; })), "");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.id = "bad\n"; })), "");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.id = std::string(201, 'x'); })), "");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.webhook = "no spaces allowed"; })), "");
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.stream = "p:{0}:task:x"; })), "");  // the task key space
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.misfire_grace_ms = -1; })), "misfire_grace_ms must be 0..86400000");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.misfire_max = 0; })), "misfire_max must be 1..100000");
  EXPECT_EQ(error_of(with([](RecurringSpec& s) { s.max_late_ms = -1; })), "max_late_ms must be 0 or more");
  EXPECT_THROW(p->show_recurring("bad", -1), ConfigError);
  EXPECT_THROW(p->show_recurring("bad\n"), ConfigError);
  EXPECT_EQ(recur_keys(), std::vector<std::string>{});

  // An id that is a pending one-off task is refused by the library, and the task kept.
  Task task;
  task.id = "order:7";
  task.ms = 60000;
  task.payload = "one-off";
  const long long due = p->schedule(task).due_ms;
  EXPECT_NE(error_of(with([](RecurringSpec& s) { s.id = "order:7"; })).find("is a pending one-off task"),
            std::string::npos);
  EXPECT_EQ(armed_in_redis(*p, "order:7"), due);
  EXPECT_EQ(p->show("order:7").field("payload"), "one-off");
  EXPECT_EQ(recur_keys(), std::vector<std::string>{});
}

}  // namespace
}  // namespace expiry::test
