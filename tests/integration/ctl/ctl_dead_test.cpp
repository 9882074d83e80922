// Integration tests of `expiry-ctl dead`: list, show, purge and replay of dead letters, and
// replay and purge while a relay and an order-canceller run on the same streams.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/ctl/ctl_run.h"
#include "integration/relay/relay_harness.h"
#include "orders/orders_library.h"

namespace expiry::test {
namespace {

const std::string kDead = "expiry:stream:dead";

class CtlDeadTest : public ::testing::Test {
 protected:
  CtlRun ctl(std::vector<std::string> args) {
    args.push_back("--redis-url=" + server_.url());
    return run_ctl(args);
  }

  // A dead letter as expiry_dead_letter writes it, with the entry id `at` ("*": now).
  std::string add_dead(const std::string& task, const std::string& at = "*", const std::string& payload = "p") {
    return redis_
        .command({"XADD", kDead, at, "original_id", "1-1", "original_stream", "expiry:stream", "group", "workers",
                  "reason", "max deliveries", "deliveries", "3", "dead_ms", "1000", "id", task, "via", "sweep",
                  "due_ms", "900", "fired_ms", "950", "payload", payload})
        .str;
  }

  std::vector<std::string> dead_ids(const std::string& stream = kDead) {
    std::vector<std::string> ids;
    for (const auto& e : redis_.command({"XRANGE", stream, "-", "+"}).elements) ids.push_back(e.elements.at(0).str);
    return ids;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(CtlDeadTest, ListAndShowTextAndJson) {
  const std::string first = add_dead("job-1", "1700000000000-0", "h\xC3\xA9llo");
  const std::string second = add_dead("job 2", "1700000000001-0");

  const CtlRun text = ctl({"dead", "list"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.output,
            "1700000000000-0 2023-11-14T22:13:20.000Z task=job-1 reason=\"max deliveries\" deliveries=3\n"
            "1700000000001-0 2023-11-14T22:13:20.001Z task=\"job 2\" reason=\"max deliveries\" deliveries=3\n");

  const CtlRun json = ctl({"dead", "list", "--json", "--count", "1"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["more"], true);
  EXPECT_EQ(j["entries"][0]["entry"], first);
  EXPECT_EQ(j["entries"][0]["task_id"], "job-1");
  EXPECT_EQ(j["entries"][0]["deliveries"], 3);
  EXPECT_EQ(j["entries"][0]["when_ms"], 1700000000000LL);
  EXPECT_EQ(j["entries"][0]["original_stream"], "expiry:stream");

  const CtlRun show = ctl({"dead", "show", first});
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_TRUE(contains(show.output, "stream: expiry:stream:dead\n")) << show.output;
  EXPECT_TRUE(contains(show.output, "payload: h\xC3\xA9llo\n")) << show.output;
  EXPECT_TRUE(contains(show.output, "original_id: 1-1\n")) << show.output;
  const CtlRun show_json = ctl({"dead", "show", second, "--json"});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.output;
  EXPECT_EQ(nlohmann::json::parse(show_json.output)["fields"]["id"], "job 2");

  const CtlRun absent = ctl({"dead", "show", "1-0"});
  EXPECT_EQ(absent.exit_code, 3) << absent.output;
}

TEST_F(CtlDeadTest, PurgeNamedOlderThanAndAll) {
  const std::string old1 = add_dead("old-1", "1000-0");
  const std::string old2 = add_dead("old-2", "2000-0");
  const std::string fresh1 = add_dead("fresh-1");
  const std::string fresh2 = add_dead("fresh-2");
  const std::string fresh3 = add_dead("fresh-3");

  const CtlRun older = ctl({"dead", "purge", "--older-than-ms", "3600000"});
  ASSERT_EQ(older.exit_code, 0) << older.output;
  EXPECT_EQ(older.output, "purged 2\n");
  EXPECT_EQ(dead_ids(), (std::vector<std::string>{fresh1, fresh2, fresh3}));

  const CtlRun named = ctl({"dead", "purge", fresh2, old1});
  EXPECT_EQ(named.exit_code, 3) << named.output;  // old1 was already gone
  EXPECT_TRUE(contains(named.output, "purged 1 of 2\n")) << named.output;
  EXPECT_EQ(dead_ids(), (std::vector<std::string>{fresh1, fresh3}));

  for (int i = 0; i < 1200; ++i) add_dead("many-" + std::to_string(i));  // more than one batch
  const CtlRun all = ctl({"dead", "purge", "--all"});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output, "purged 1202\n");
  EXPECT_TRUE(dead_ids().empty());
}

TEST_F(CtlDeadTest, BadUsageExits2AndTouchesNothing) {
  const std::string id = add_dead("job-1");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"dead"}, "subcommand is required"},
      {{"dead", "purge"}, "exactly one of"},
      {{"dead", "purge", "--all", id}, "excludes"},
      {{"dead", "purge", "not-an-id"}, "is not a stream entry id"},
      {{"dead", "purge", "0/" + id}, "one dead stream"},
      {{"dead", "replay"}, "ENTRY... or --all"},
      {{"dead", "replay", "--all", "--delay-ms", "-1"}, "--delay-ms"},
      {{"dead", "list", "--count", "0"}, "--count"},
      {{"dead", "show"}, "entry"},
  };
  for (const auto& [args, message] : cases) {
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 2) << args.back() << ": " << run.output;
    EXPECT_TRUE(contains(run.output, message)) << args.back() << ": " << run.output;
  }
  EXPECT_EQ(dead_ids(), std::vector<std::string>{id});
}

TEST_F(CtlDeadTest, ReplaySchedulesThroughTheLibraryAndDeletesTheEntryOnce) {
  const std::string a = add_dead("job-a", "*", "payload-a");
  const CtlRun run = ctl({"dead", "replay", a, "--delay-ms", "600000"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "replayed " + a + " task=job-a due_ms=")) << run.output;
  EXPECT_TRUE(dead_ids().empty());
  EXPECT_EQ(redis_.command({"HGET", "expiry:{0}:task:job-a", "payload"}).str, "payload-a");
  EXPECT_EQ(redis_.command({"HEXISTS", "expiry:{0}:task:job-a", "stream"}).integer, 0);  // its default stream
  EXPECT_GT(integer(redis_, {"PTTL", "expiry:{0}:t:job-a"}), 590000);
  const long long due = std::stoll(redis_.command({"ZSCORE", "expiry:{0}:schedule", "job-a"}).str);

  const CtlRun again = ctl({"dead", "replay", a});
  EXPECT_EQ(again.exit_code, 3) << again.output;  // gone: nothing scheduled a second time
  EXPECT_EQ(std::stoll(redis_.command({"ZSCORE", "expiry:{0}:schedule", "job-a"}).str), due);

  // The function itself refuses an entry that is gone, writing nothing.
  const Reply direct = redis_.command({"FCALL", "expiry_replay_dead", "4", kDead, "expiry:{0}:schedule",
                                       "expiry:{0}:t:job-b", "expiry:{0}:task:job-b", a, "job-b", "0",
                                       "expiry:stream"});
  EXPECT_TRUE(direct.failed());
  EXPECT_TRUE(contains(direct.str, "already replayed or purged")) << direct.str;
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:job-b"}), 0);
}

TEST_F(CtlDeadTest, BucketStreamsAreNamedByBucket) {
  ASSERT_FALSE(redis_.command({"SET", "expiry:buckets", "8"}).failed());
  // Dead-letter a task of some bucket into that bucket's dead stream, as a bucket consumer does.
  const CtlRun sched = ctl({"schedule", "bucketed", "--delay-ms", "600000"});
  ASSERT_EQ(sched.exit_code, 0) << sched.output;
  const CtlRun shown = ctl({"show", "bucketed", "--json"});
  const std::string stream = nlohmann::json::parse(shown.output)["stream"];
  const std::string bucket = std::regex_replace(stream, std::regex("^expiry:\\{(\\d+)\\}:stream$"), "$1");
  ASSERT_EQ(ctl({"cancel", "bucketed"}).exit_code, 0);
  const std::string dead = "expiry:{" + bucket + "}:dead";
  const std::string id = redis_.command({"XADD", dead, "*", "original_stream", stream, "reason", "r", "deliveries",
                                         "2", "id", "bucketed", "payload", "x"}).str;

  const CtlRun list = ctl({"dead", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(contains(list.output, bucket + "/" + id + " ")) << list.output;
  const CtlRun bare = ctl({"dead", "show", id});
  EXPECT_EQ(bare.exit_code, 2) << bare.output;
  const CtlRun replay = ctl({"dead", "replay", bucket + "/" + id});
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  EXPECT_EQ(integer(redis_, {"XLEN", dead}), 0);
  EXPECT_EQ(integer(redis_, {"ZCARD", "expiry:{" + bucket + "}:schedule"}), 1);
  EXPECT_EQ(integer(redis_, {"HEXISTS", "expiry:{" + bucket + "}:task:bucketed", "stream"}), 0);
}

// Forty order timeouts whose handler fails (the order key is not a hash) are dead-lettered by
// a running order-canceller; the orders are repaired; ten dead letters are purged and two
// concurrent `replay --all` replay the thirty others while the relay and canceller run: each
// replayed task is delivered exactly once more and cancels its order, the purged ones never.
TEST_F(CtlDeadTest, ReplayAndPurgeWhileTheRelayAndCancellerRun) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  auto canceller = std::make_unique<ChildProcess>(
      ORDER_CANCELLER_BIN,
      std::vector<std::string>{"--redis-url", server_.url(), "--consumer", "c1", "--block-ms", "200",
                               "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000", "--min-idle-ms",
                               "100", "--reclaim-interval-ms", "100", "--max-deliveries", "1"},
      std::vector<std::pair<std::string, std::string>>{}, server_.dir() + "/canceller-c1.log");
  const std::string stream = kOrderTimeoutStream;
  const std::string dead = stream + ":dead";
  ASSERT_TRUE(wait_until([&] { return !redis_.command({"XINFO", "GROUPS", stream}).failed(); }, 10s))
      << canceller->output();

  constexpr int kOrders = 40;
  for (int k = 0; k < kOrders; ++k) {
    const std::string n = std::to_string(k);
    redis_.command({"SET", "order:" + n, "not a hash"});
    const CtlRun s = ctl({"schedule", "order:" + n, "--delay-ms", "0", "--stream", stream, "--payload",
                          nlohmann::json{{"order_id", n}}.dump()});
    ASSERT_EQ(s.exit_code, 0) << s.output;
  }
  ASSERT_TRUE(wait_until([&] { return integer(redis_, {"XLEN", dead}) == kOrders; }, 30s))
      << integer(redis_, {"XLEN", dead}) << "\n" << canceller->output();
  std::map<std::string, std::string> entry_of;  // order number -> dead entry id
  for (const auto& e : redis_.command({"XRANGE", dead, "-", "+"}).elements) {
    const auto& f = e.elements.at(1).elements;
    for (size_t i = 0; i + 1 < f.size(); i += 2) {
      if (f[i].str == "id") entry_of[f[i + 1].str.substr(6)] = e.elements.at(0).str;
    }
  }
  ASSERT_EQ(entry_of.size(), static_cast<size_t>(kOrders));
  for (int k = 0; k < kOrders; ++k) {
    redis_.command({"DEL", "order:" + std::to_string(k)});
    redis_.command({"HSET", "order:" + std::to_string(k), "status", "pending"});
  }

  std::vector<std::string> purge = {"dead", "purge", "--dead-stream", dead};
  for (int k = 0; k < 10; ++k) purge.push_back(entry_of[std::to_string(k)]);
  const CtlRun purged = ctl(purge);
  ASSERT_EQ(purged.exit_code, 0) << purged.output;
  EXPECT_EQ(integer(redis_, {"XLEN", dead}), kOrders - 10);

  std::vector<std::unique_ptr<ChildProcess>> replays;
  for (int i = 0; i < 2; ++i) {
    replays.push_back(std::make_unique<ChildProcess>(
        EXPIRY_CTL_BIN, std::vector<std::string>{"dead", "replay", "--all", "--dead-stream", dead, "--redis-url",
                                                 server_.url()},
        std::vector<std::pair<std::string, std::string>>{}));
  }
  long long replayed = 0;
  for (auto& r : replays) {
    const auto rc = r->wait_exit(60s);
    ASSERT_TRUE(rc.has_value());
    EXPECT_EQ(*rc, 0) << r->output();
    std::smatch m;
    const std::string out = r->output();
    ASSERT_TRUE(std::regex_search(out, m, std::regex("replayed (\\d+)(, \\d+ already gone)?\n$"))) << out;
    replayed += std::stoll(m[1]);
  }
  EXPECT_EQ(replayed, kOrders - 10);  // each entry replayed by exactly one of the two

  auto status = [&](int k) { return redis_.command({"HGET", "order:" + std::to_string(k), "status"}).str; };
  ASSERT_TRUE(wait_until([&] {
    for (int k = 10; k < kOrders; ++k) {
      if (status(k) != "cancelled") return false;
    }
    return true;
  }, 30s)) << canceller->output();
  // Settled: the group has nothing pending, nothing is scheduled, no new dead letters.
  ASSERT_TRUE(wait_until([&] { return redis_.command({"XPENDING", stream, "workers"}).elements.at(0).integer == 0; }, 30s));
  EXPECT_EQ(integer(redis_, {"XLEN", dead}), 0);
  EXPECT_EQ(integer(redis_, {"ZCARD", "expiry:{0}:schedule"}), 0);
  std::map<std::string, int> deliveries;
  for (const auto& e : redis_.command({"XRANGE", stream, "-", "+"}).elements) {
    const auto& f = e.elements.at(1).elements;
    for (size_t i = 0; i + 1 < f.size(); i += 2) {
      if (f[i].str == "id") ++deliveries[f[i + 1].str];
    }
  }
  for (int k = 0; k < kOrders; ++k) {
    const std::string id = "order:" + std::to_string(k);
    EXPECT_EQ(deliveries[id], k < 10 ? 1 : 2) << id;  // the failed delivery, and one per replay
    EXPECT_EQ(status(k), k < 10 ? "pending" : "cancelled") << id;
  }
}

}  // namespace
}  // namespace expiry::test
