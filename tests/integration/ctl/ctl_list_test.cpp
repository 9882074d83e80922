// Integration tests of `expiry-ctl list`: due order, --due-before, cursor paging across the
// buckets while tasks are added, JSON, and usage errors; against a private redis-server.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "integration/ctl/ctl_run.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/sanitizer.h"

namespace expiry::test {
namespace {

class CtlListTest : public ::testing::Test {
 protected:
  CtlRun ctl(std::vector<std::string> args) {
    args.push_back("--redis-url=" + server_.url());
    return run_ctl(args);
  }

  // Schedules every (id, at_ms) through `schedule --file`.
  void schedule_all(const std::vector<std::pair<std::string, long long>>& tasks) {
    const std::string path = ::testing::TempDir() + "ctl_list_" + std::to_string(::getpid()) + ".jsonl";
    {
      std::ofstream out(path);
      for (const auto& [id, at] : tasks) out << nlohmann::json({{"id", id}, {"at_ms", at}, {"payload", "p-" + id}}).dump() << "\n";
    }
    const CtlRun run = ctl({"schedule", "--file", path});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::remove(path.c_str());
  }

  // One JSON page: the (due_ms, id) of its tasks and its next cursor ("" when null).
  struct Page {
    std::vector<std::pair<long long, std::string>> tasks;
    std::string next;
  };
  Page list_json(std::vector<std::string> args) {
    args.insert(args.begin(), {"list", "--json"});
    const CtlRun run = ctl(args);
    Page page;
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const auto j = nlohmann::json::parse(run.output);
    for (const auto& t : j.at("tasks")) page.tasks.emplace_back(t.at("due_ms").get<long long>(), t.at("id").get<std::string>());
    EXPECT_EQ(j.at("count").get<size_t>(), page.tasks.size());
    if (!j.at("next_cursor").is_null()) page.next = j.at("next_cursor").get<std::string>();
    return page;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(CtlListTest, TextAndJsonInDueOrderWithTiesByIdAndDueBefore) {
  const CtlRun stream_task = ctl({"schedule", "a", "--at-ms", "3000", "--payload", "h\xC3\xA9llo", "--stream", "own"});
  ASSERT_EQ(stream_task.exit_code, 0) << stream_task.output;
  ASSERT_EQ(ctl({"schedule", "c", "--at-ms", "1000"}).exit_code, 0);
  ASSERT_EQ(ctl({"schedule", "b", "--at-ms", "1000", "--payload", "\xFF\x01"}).exit_code, 0);

  const CtlRun text = ctl({"list"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.output,
            "1000 1970-01-01T00:00:01.000Z b stream=expiry:stream payload_bytes=2\n"
            "1000 1970-01-01T00:00:01.000Z c stream=expiry:stream payload_bytes=0\n"
            "3000 1970-01-01T00:00:03.000Z a stream=own payload_bytes=6\n");

  const CtlRun json = ctl({"list", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j["tasks"].size(), 3u);
  EXPECT_TRUE(j["next_cursor"].is_null());
  EXPECT_FALSE(j.contains("next")) << "the cursor has the API's name, next_cursor: " << j;
  EXPECT_EQ(j["tasks"][0]["id"], "b");
  EXPECT_EQ(j["tasks"][0]["payload_b64"], "/wE=");
  EXPECT_EQ(j["tasks"][0]["default_stream"], true);
  EXPECT_EQ(j["tasks"][2]["id"], "a");
  EXPECT_EQ(j["tasks"][2]["due_ms"], 3000);
  EXPECT_EQ(j["tasks"][2]["due"], "1970-01-01T00:00:03.000Z");
  EXPECT_EQ(j["tasks"][2]["stream"], "own");
  EXPECT_EQ(j["tasks"][2]["default_stream"], false);
  EXPECT_EQ(j["tasks"][2]["payload"], "h\xC3\xA9llo");
  EXPECT_EQ(j["tasks"][2]["payload_bytes"], 6);
  EXPECT_EQ(j["tasks"][2]["payload_truncated"], false);

  Page before = list_json({"--due-before", "3000"});
  ASSERT_EQ(before.tasks.size(), 2u);
  EXPECT_EQ(before.tasks[1].second, "c");
  EXPECT_TRUE(before.next.empty());
  EXPECT_EQ(list_json({"--due-before", "+0"}).tasks.size(), 3u);  // all three are past due
  EXPECT_EQ(list_json({"--due-before", "1000"}).tasks.size(), 0u);

  Page first = list_json({"--count", "2"});
  ASSERT_EQ(first.tasks.size(), 2u);
  ASSERT_FALSE(first.next.empty());
  Page rest = list_json({"--count", "2", "--cursor", first.next});
  ASSERT_EQ(rest.tasks.size(), 1u);
  EXPECT_EQ(rest.tasks[0].second, "a");
  EXPECT_TRUE(rest.next.empty());
}

TEST_F(CtlListTest, LongPayloadIsTruncatedInJson) {
  const std::string path = ::testing::TempDir() + "ctl_list_payload_" + std::to_string(::getpid());
  { std::ofstream(path) << std::string(5000, 'x'); }
  ASSERT_EQ(ctl({"schedule", "big", "--delay-ms", "60000", "--payload-file", path}).exit_code, 0);
  std::remove(path.c_str());
  const CtlRun run = ctl({"list", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto t = nlohmann::json::parse(run.output)["tasks"][0];
  EXPECT_EQ(t["payload_bytes"], 5000);
  EXPECT_EQ(t["payload"].get<std::string>(), std::string(1024, 'x'));
  EXPECT_EQ(t["payload_truncated"], true);
}

// Eight buckets, ties of 40 tasks on each due time, pages of 37: every task pending throughout
// is seen exactly once, in due order, while tasks are added before and after the cursor and
// the cursor's own task is cancelled.
// list reads at most the printed head of each payload: a full page of 10,000 tasks with 64 KiB
// payloads (655 MB in Redis) costs expiry-ctl well under 64 MB (it peaked at 706 MB when it read
// every whole payload).
TEST_F(CtlListTest, AJsonPageOfLargePayloadsIsBoundedInMemory) {
  constexpr int kTasks = 10000;
  const std::string payload(65536, 'x');
  TestConnection redis(server_.host(), server_.port());
  ASSERT_FALSE(redis.command(load_library_argv()).failed());
  const KeyLayout keys("expiry", 0);
  for (int first = 0; first < kTasks; first += 500) {
    std::vector<std::vector<std::string>> batch;
    for (int i = first; i < first + 500; ++i) {
      batch.push_back(schedule_argv(keys, "big-" + std::to_string(100000 + i), ScheduleMode::Delay, 3600000, payload));
    }
    pipeline(redis, batch);
  }
  ASSERT_EQ(integer(redis, {"ZCARD", keys.schedule_key()}), kTasks);

  const CtlRun run = ctl({"list", "--json", "--count", std::to_string(kTasks)});
  ASSERT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  if (!kAddressSanitized) {
    EXPECT_LT(usage.ru_maxrss, 64 * 1024) << "expiry-ctl list peaked at " << usage.ru_maxrss << " KiB";
  }
  const auto j = nlohmann::json::parse(run.output);
  ASSERT_EQ(j.at("count").get<int>(), kTasks);
  for (const auto& t : j.at("tasks")) {
    ASSERT_EQ(t.at("payload").get<std::string>(), std::string(1024, 'x'));
    ASSERT_TRUE(t.at("payload_truncated").get<bool>());
    ASSERT_EQ(t.at("payload_bytes").get<long long>(), 65536);
  }
}

TEST_F(CtlListTest, PagingAcrossBucketsSeesEveryTaskOnceWhileTasksAreAdded) {
  ASSERT_FALSE(redis_.command({"SET", "expiry:buckets", "8"}).failed());
  constexpr long long kBase = 1900000000000;
  std::vector<std::pair<std::string, long long>> tasks;
  for (int i = 0; i < 2000; ++i) tasks.emplace_back("t" + std::to_string(i), kBase + i % 50);
  schedule_all(tasks);
  ASSERT_EQ(integer(redis_, {"EVAL", "local n = 0 for b = 0, 7 do n = n + redis.call('ZCARD', 'expiry:{' .. b .. '}:schedule') end return n", "0"}), 2000);

  std::map<std::string, int> seen;
  std::vector<std::pair<long long, std::string>> order;
  std::set<std::string> added_after;
  std::string cursor;
  int pages = 0;
  do {
    std::vector<std::string> args = {"--count", "37"};
    if (!cursor.empty()) args.insert(args.end(), {"--cursor", cursor});
    const Page page = list_json(args);
    ASSERT_LE(page.tasks.size(), 37u);
    for (const auto& t : page.tasks) {
      ++seen[t.second];
      order.push_back(t);
    }
    cursor = page.next;
    ++pages;
    if (!page.next.empty()) {
      // One task due before the cursor (not to be listed on later pages) and one due after it
      // (to be listed exactly once), and one more tie on the cursor's own due time after it.
      const long long at = page.tasks.back().first;
      const std::string n = std::to_string(pages);
      std::vector<std::pair<std::string, long long>> more = {{"early" + n, kBase - 1}, {"late" + n, kBase + 100 + pages}};
      if (page.tasks.back().second < "zz") more.emplace_back("zz" + n, at);
      schedule_all(more);
      // The cursor's own task goes (as a fired one would): the next page starts after where it stood.
      ASSERT_EQ(ctl({"cancel", page.tasks.back().second}).exit_code, 0);
      added_after.insert("late" + n);
      if (more.size() == 3) added_after.insert("zz" + n);
    }
    ASSERT_LT(pages, 200) << "paging does not end";
  } while (!cursor.empty());

  for (const auto& [id, at] : tasks) EXPECT_EQ(seen[id], 1) << id;
  for (const auto& id : added_after) EXPECT_EQ(seen[id], 1) << id;
  for (const auto& [id, n] : seen) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_NE(id.rfind("early", 0), 0u) << id << " was due before the cursor when added";
  }
  for (size_t i = 1; i < order.size(); ++i) {
    EXPECT_TRUE(order[i - 1] < order[i]) << order[i - 1].second << " then " << order[i].second;
  }
}

TEST_F(CtlListTest, BadOptionsExit2WithAClearMessage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"list", "--count", "0"}, "--count"},
      {{"list", "--count", "10001"}, "--count"},
      {{"list", "--count", "many"}, "--count"},
      {{"list", "--cursor", "not a cursor"}, "--cursor is not a cursor printed by expiry-ctl list"},
      {{"list", "--cursor", "eHl6"}, "--cursor is not a cursor printed by expiry-ctl list"},
      {{"list", "--due-before", "soon"}, "--due-before must be epoch milliseconds"},
      {{"list", "--due-before", "-5"}, "--due-before must be epoch milliseconds"},
      {{"list", "--due-before", ""}, "--due-before must be epoch milliseconds"},
  };
  for (const auto& [args, message] : cases) {
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 2) << args.back() << ": " << run.output;
    EXPECT_TRUE(contains(run.output, message)) << args.back() << ": " << run.output;
  }
}

}  // namespace
}  // namespace expiry::test
