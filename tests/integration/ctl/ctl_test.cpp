// Integration tests of expiry-ctl: the real binary against a private redis-server, with the
// outcomes checked in Redis itself.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "functions/key_layout.h"
#include "harness/child_process.h"
#include "integration/ctl/ctl_run.h"
#include "redis/hash_slot.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

constexpr const char* kSchedule = "expiry:{0}:schedule";

std::string trigger(const std::string& id) { return "expiry:{0}:t:" + id; }
std::string shadow(const std::string& id) { return "expiry:{0}:task:" + id; }


class CtlTest : public ::testing::Test {
 protected:
  std::string url_flag() const { return "--redis-url=" + server_.url(); }

  // Runs expiry-ctl with `args` and the server's URL appended.
  CtlRun ctl(std::vector<std::string> args) {
    args.push_back(url_flag());
    return run_ctl(args);
  }

  std::string write_file(const std::string& name, const std::string& content) { return scratch_.write(name, content); }

  long long zcard() { return integer(redis_, {"ZCARD", kSchedule}); }
  // The keys but the audit trail (expiry:audit), which each write command appends to.
  long long dbsize() { return integer(redis_, {"DBSIZE"}) - integer(redis_, {"EXISTS", "expiry:audit"}); }
  std::optional<std::string> hget(const std::string& key, const std::string& field) {
    auto r = redis_.command({"HGET", key, field});
    if (r.type != Reply::Type::String) return std::nullopt;
    return r.str;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  ScratchDir scratch_{"ctl_test"};
  const std::string& dir_ = scratch_.path();
};

// ---------------------------------------------------------------- single tasks

TEST_F(CtlTest, ScheduleCreatesMemberShadowAndTrigger) {
  const CtlRun run = ctl({"schedule", "job-1", "--delay-ms", "60000", "--payload", "h\xC3\xA9llo {\"n\": 1}\ttab"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.output, m, std::regex("^scheduled job-1 due_ms=(\\d+)\n$"))) << run.output;

  auto score = redis_.command({"ZSCORE", kSchedule, "job-1"});
  ASSERT_EQ(score.type, Reply::Type::String) << score.describe();
  EXPECT_EQ(std::stoll(score.str), std::stoll(m[1].str()));
  EXPECT_EQ(hget(shadow("job-1"), "payload"), "h\xC3\xA9llo {\"n\": 1}\ttab");
  EXPECT_FALSE(hget(shadow("job-1"), "due_ms").has_value()) << "the due time is the score only";
  EXPECT_FALSE(hget(shadow("job-1"), "stream").has_value());
  const long long pttl = integer(redis_, {"PTTL", trigger("job-1")});
  EXPECT_GT(pttl, 55000);
  EXPECT_LE(pttl, 60100);
}

TEST_F(CtlTest, PayloadFileIsStoredByteForByte) {
  const std::string payload = "\0\x01\xFF\xFE binary\r\n"s + std::string(1000, 'z') + "\x80"s;
  const std::string path = write_file("payload.bin", payload);
  const CtlRun run = ctl({"schedule", "bin", "--at-ms", "4102444800000", "--payload-file", path, "--stream", "out:s"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(hget(shadow("bin"), "payload"), payload);
  EXPECT_EQ(hget(shadow("bin"), "stream"), "out:s");
  EXPECT_EQ(redis_.command({"ZSCORE", kSchedule, "bin"}).str, "4102444800000");
}

TEST_F(CtlTest, ScheduleAgainReplaces) {
  ASSERT_EQ(ctl({"schedule", "job-1", "--delay-ms", "60000", "--payload", "first"}).exit_code, 0);
  const CtlRun run = ctl({"schedule", "job-1", "--delay-ms", "120000", "--payload", "second"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "(replaced an existing task)")) << run.output;
  EXPECT_EQ(zcard(), 1);
  EXPECT_EQ(hget(shadow("job-1"), "payload"), "second");
  EXPECT_GT(integer(redis_, {"PTTL", trigger("job-1")}), 100000);
}

TEST_F(CtlTest, CancelRemovesAllThreeKeys) {
  ASSERT_EQ(ctl({"schedule", "job-1", "--delay-ms", "60000", "--payload", "p"}).exit_code, 0);
  ASSERT_EQ(integer(redis_, {"EXISTS", trigger("job-1"), shadow("job-1")}), 2);

  const CtlRun run = ctl({"cancel", "job-1"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "cancelled job-1\n");
  EXPECT_EQ(zcard(), 0);
  EXPECT_EQ(integer(redis_, {"EXISTS", trigger("job-1"), shadow("job-1")}), 0);

  const CtlRun again = ctl({"cancel", "job-1"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output, "not pending: job-1\n");
}

TEST_F(CtlTest, CancelUnknownSaysNotPending) {
  const CtlRun run = ctl({"cancel", "never-scheduled"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, "not pending: never-scheduled\n");
  const CtlRun strict = ctl({"cancel", "never-scheduled", "--strict"});
  EXPECT_EQ(strict.exit_code, 3) << strict.output;
  EXPECT_TRUE(contains(strict.output, "not pending: never-scheduled")) << strict.output;
  EXPECT_EQ(dbsize(), 0);
}

TEST_F(CtlTest, ShowPendingTaskAsTextAndJson) {
  ASSERT_EQ(ctl({"schedule", "job-1", "--delay-ms", "60000", "--payload", "two\nlines", "--stream", "s1"}).exit_code,
            0);
  const CtlRun text = ctl({"show", "job-1"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "id: job-1\n")) << text.output;
  EXPECT_TRUE(contains(text.output, "stream: s1\n")) << text.output;
  EXPECT_TRUE(contains(text.output, "payload: two\\nlines\n")) << text.output;
  EXPECT_TRUE(std::regex_search(text.output, std::regex("trigger_pttl_ms: \\d+\n"))) << text.output;

  const CtlRun json = ctl({"show", "job-1", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j["id"], "job-1");
  EXPECT_EQ(j["pending"], true);
  EXPECT_EQ(j["payload"], "two\nlines");
  EXPECT_EQ(j["stream"], "s1");
  EXPECT_EQ(j["due_ms"].get<long long>(), std::stoll(redis_.command({"ZSCORE", kSchedule, "job-1"}).str));
  EXPECT_GT(j["due_in_ms"].get<long long>(), 50000);
  EXPECT_GT(j["trigger_pttl_ms"].get<long long>(), 50000);
  EXPECT_GT(j["created_ms"].get<long long>(), 0);
}

TEST_F(CtlTest, ShowAbsentTaskExits3) {
  const CtlRun text = ctl({"show", "nope"});
  EXPECT_EQ(text.exit_code, 3) << text.output;
  EXPECT_EQ(text.output, "not pending: nope\n");
  const CtlRun json = ctl({"show", "nope", "--json"});
  EXPECT_EQ(json.exit_code, 3) << json.output;
  EXPECT_EQ(nlohmann::json::parse(json.output)["pending"], false);
}

// ---------------------------------------------------------------- bad input: exit 2, nothing written

TEST_F(CtlTest, InvalidInputExits2AndWritesNothing) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"schedule", "a", "--delay-ms", "1", "--redis-url", "http://x"}, "scheme must be redis://"},
      {{"schedule", "", "--delay-ms", "1"}, "task id must not be empty"},
      {{"schedule", std::string(257, 'i'), "--delay-ms", "1"}, "task id longer than 256 bytes"},
      {{"schedule", "a", "--delay-ms", "1", "--payload", std::string(65537, 'p')}, "larger than the limit of 65536"},
      {{"schedule", "a"}, "one of --delay-ms or --at-ms is required"},
      {{"schedule", "a", "--delay-ms", "1", "--at-ms", "5"}, "excludes"},
      {{"schedule", "a", "--delay-ms", "-1"}, "delay_ms must be between 0"},
      {{"schedule", "a", "--delay-ms", "soon"}, "--delay-ms"},
      {{"schedule", "a\x01", "--delay-ms", "1"}, "control character"},
      {{"schedule", "a\xFF", "--delay-ms", "1"}, "not valid UTF-8"},
      {{"cancel", ""}, "task id must not be empty"},
      {{"frobnicate"}, "frobnicate"},
      {{"schedule", "--file", dir_ + "/missing.jsonl"}, "cannot read bulk file"},
      {{"schedule", "--namespace", "bad ns", "a", "--delay-ms", "1"}, "namespace"},
  };
  for (const auto& c : cases) {
    auto args = c.args;
    if (std::find(args.begin(), args.end(), "--redis-url") == args.end()) args.insert(args.begin() + 1, url_flag());
    const CtlRun run = run_ctl(args);
    EXPECT_EQ(run.exit_code, 2) << c.message << ": " << run.output;
    EXPECT_TRUE(contains(run.output, "expiry-ctl: ")) << run.output;
    EXPECT_TRUE(contains(run.output, c.message)) << "want '" << c.message << "' in: " << run.output;
    EXPECT_EQ(dbsize(), 0) << c.message;
  }
}

TEST_F(CtlTest, UnreachableRedisExits1) {
  RedisServer other;
  const std::string url = other.url();
  other.stop();
  const CtlRun run = run_ctl({"schedule", "a", "--delay-ms", "1", "--redis-url", url});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "expiry-ctl: cannot connect to " + url)) << run.output;
}

// ---------------------------------------------------------------- bulk files

std::string bulk_lines(int n, const std::string& prefix = "bulk-") {
  std::string text;
  for (int i = 0; i < n; ++i) {
    nlohmann::json line = {{"id", prefix + std::to_string(i)}, {"payload", "payload " + std::to_string(i)}};
    if (i % 3 == 0) {
      line["at_ms"] = 4102444800000LL + i;
    } else {
      line["delay_ms"] = 3600000 + i;
    }
    if (i % 7 == 0) line["stream"] = "other:stream";
    text += line.dump() + "\n";
    if (i % 100 == 50) text += "\n";  // blank lines are skipped
  }
  return text;
}

TEST_F(CtlTest, BulkFileSchedulesEveryLine) {
  const std::string path = write_file("tasks.jsonl", bulk_lines(2000));
  const CtlRun run = ctl({"schedule", "--file", path});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(std::regex_search(run.output, std::regex("scheduled 2000 tasks \\(0 replaced\\) in \\d+ ms\n")))
      << run.output;
  EXPECT_EQ(zcard(), 2000);
  EXPECT_EQ(hget(shadow("bulk-1999"), "payload"), "payload 1999");
  EXPECT_EQ(hget(shadow("bulk-7"), "stream"), "other:stream");
  EXPECT_EQ(redis_.command({"ZSCORE", kSchedule, "bulk-3"}).str, "4102444800003");
  EXPECT_EQ(integer(redis_, {"EXISTS", trigger("bulk-0"), trigger("bulk-1999")}), 2);

  // The same file again replaces every task.
  const CtlRun again = ctl({"schedule", "--file", path});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "scheduled 2000 tasks (2000 replaced)")) << again.output;
  EXPECT_EQ(zcard(), 2000);
}

// Several thousand tasks over eight buckets of one Redis (expiry_schedule_many calls, one bucket
// each), some ids twice: every task ends up in its bucket exactly as its last line says.
TEST_F(CtlTest, BulkFileOverSeveralBucketsIsScheduledExactly) {
  constexpr int kBuckets = 8;
  constexpr int kTasks = 6000;
  constexpr int kAgain = 700;  // ids 0..kAgain-1 come again at the end of the file
  ASSERT_FALSE(redis_.command({"SET", "expiry:buckets", std::to_string(kBuckets)}).failed());
  std::string text;
  for (int i = 0; i < kTasks + kAgain; ++i) {
    const int n = i % kTasks;
    nlohmann::json line{{"id", "mb-" + std::to_string(n)},
                        {"at_ms", 4102444800000LL + i},
                        {"payload", (i < kTasks ? "first " : "again ") + std::to_string(n)}};
    if (n % 7 == 0) line["stream"] = "orders:timeouts";
    text += line.dump() + "\n";
    if (i % 1000 == 999) text += "\n";  // blank lines are skipped
  }
  const CtlRun run = ctl({"schedule", "--file", write_file("buckets.jsonl", text)});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "scheduled 6700 tasks (700 replaced)")) << run.output;

  long long pending = 0;
  for (int b = 0; b < kBuckets; ++b) pending += integer(redis_, {"ZCARD", KeyLayout("expiry", b).schedule_key()});
  EXPECT_EQ(pending, kTasks);
  std::vector<std::vector<std::string>> reads;
  for (int n = 0; n < kTasks; ++n) {
    const std::string id = "mb-" + std::to_string(n);
    const KeyLayout keys("expiry", bucket_of(id, kBuckets));
    reads.push_back({"ZSCORE", keys.schedule_key(), id});
    reads.push_back({"HMGET", keys.shadow_key(id), "payload", "due_ms", "stream"});
    reads.push_back({"PTTL", keys.trigger_key(id)});
  }
  std::vector<Reply> replies;
  pipeline(redis_, reads, &replies);
  int wrong = 0;
  for (int n = 0; n < kTasks; ++n) {
    const long long due = 4102444800000LL + (n < kAgain ? kTasks + n : n);
    const Reply& score = replies[3 * n];
    const Reply& fields = replies[3 * n + 1];
    const Reply& ttl = replies[3 * n + 2];
    const bool ok = score.str == std::to_string(due) && fields.elements.size() == 3 &&
                    fields.elements[0].str == (n < kAgain ? "again " : "first ") + std::to_string(n) &&
                    fields.elements[1].type == Reply::Type::Nil &&  // no due_ms: the score holds it
                    (n % 7 == 0 ? fields.elements[2].str == "orders:timeouts"
                                : fields.elements[2].type == Reply::Type::Nil) &&
                    ttl.type == Reply::Type::Integer && ttl.integer > 0;
    if (!ok && ++wrong <= 5) ADD_FAILURE() << "mb-" << n << ": " << score.describe() << " " << fields.describe();
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(dbsize(), 1 + kBuckets + 2 * kTasks) << "expiry:buckets, the schedules, two keys a task";
}

TEST_F(CtlTest, BulkFileWithABadLineWritesNothing) {
  std::string text;
  for (int i = 1; i <= 1000; ++i) {
    text += i == 517 ? R"({"id":"x","delay_ms":"10"})" "\n"
                     : R"({"id":"t)" + std::to_string(i) + R"(","delay_ms":60000})" "\n";
  }
  text += "{\"id\":\"\xFF\",\"delay_ms\":1}\n";  // line 1001: raw invalid byte
  const CtlRun run = ctl({"schedule", "--file", write_file("bad.jsonl", text)});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "line 517: delay_ms must be an integer")) << run.output;
  EXPECT_TRUE(contains(run.output, "line 1001: not valid UTF-8")) << run.output;
  EXPECT_TRUE(contains(run.output, "nothing was written")) << run.output;
  EXPECT_EQ(zcard(), 0);
  EXPECT_EQ(dbsize(), 0);
}

TEST_F(CtlTest, BulkFromStdinAndFromAPipe) {
  // ChildProcess gives the child /dev/null as stdin: an empty input.
  const CtlRun empty = ctl({"schedule", "--file", "-"});
  EXPECT_EQ(empty.exit_code, 0) << empty.output;
  EXPECT_TRUE(contains(empty.output, "scheduled 0 tasks (0 replaced)")) << empty.output;

  // A FIFO cannot be read twice: expiry-ctl spools it before validating.
  const std::string fifo = dir_ + "/tasks.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::vector<std::string> args = {"schedule", "--file", fifo, url_flag()};
  ChildProcess child(EXPIRY_CTL_BIN, args);
  int fd = -1;
  ASSERT_TRUE(wait_until(
      [&] {
        fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // ENXIO until the reader has opened it
        return fd >= 0;
      },
      20s));
  const std::string text = bulk_lines(300, "fifo-");  // well under the pipe buffer
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  auto rc = child.wait_exit(30s);
  ASSERT_TRUE(rc.has_value()) << child.output();
  EXPECT_EQ(*rc, 0) << child.output();
  EXPECT_TRUE(contains(child.output(), "scheduled 300 tasks")) << child.output();
  EXPECT_EQ(zcard(), 300);
}

// payload_b64 carries any bytes: every byte value 0x00-0xFF arrives in the shadow hash exactly.
TEST_F(CtlTest, BulkPayloadB64IsStoredByteForByte) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  const std::string all_b64 =
      "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9Q"
      "UVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6Ch"
      "oqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy"
      "8/T19vf4+fr7/P3+/w==";
  const std::string text = R"({"id":"all-bytes","delay_ms":3600000,"payload_b64":")" + all_b64 + "\"}\n" +
                            R"({"id":"reversed","at_ms":4102444800000,"payload_b64":"/w=="})" "\n" +
                            R"({"id":"empty","delay_ms":3600000,"payload_b64":""})" "\n" +
                            R"({"id":"text","delay_ms":3600000,"payload":"{\"n\": 1}"})" "\n";
  const CtlRun run = ctl({"schedule", "--file", write_file("b64.jsonl", text)});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "scheduled 4 tasks")) << run.output;
  EXPECT_EQ(hget(shadow("all-bytes"), "payload"), bytes);
  EXPECT_EQ(hget(shadow("reversed"), "payload"), "\xFF"s);
  EXPECT_EQ(hget(shadow("empty"), "payload"), "");
  EXPECT_EQ(hget(shadow("text"), "payload"), R"({"n": 1})");
}

TEST_F(CtlTest, BulkInvalidBase64OrAJsonPayloadIsALineError) {
  const std::string text = R"({"id":"ok","delay_ms":60000,"payload_b64":"AAEC"})" "\n"
                           R"({"id":"space","delay_ms":60000,"payload_b64":"AA EC"})" "\n"
                           "\n"
                           R"({"id":"both","delay_ms":60000,"payload":"x","payload_b64":"eA=="})" "\n"
                           R"({"id":"object","delay_ms":60000,"payload":{"n":1}})" "\n"
                           R"({"id":"big","delay_ms":60000,"payload_b64":")" + std::string(87384, 'A') + "\"}\n";
  const CtlRun run = ctl({"schedule", "--file", write_file("bad-b64.jsonl", text)});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "line 2: payload_b64 is not valid base64: invalid character ' ' at position 3\n"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "line 4: payload and payload_b64 are mutually exclusive\n")) << run.output;
  EXPECT_TRUE(contains(run.output, "line 5: payload must be a string, got object")) << run.output;
  EXPECT_TRUE(contains(run.output, "line 6: payload_b64 decodes to 65538 bytes, larger than the limit of 65536\n"))
      << run.output;
  EXPECT_TRUE(contains(run.output, "4 invalid lines")) << run.output;
  EXPECT_EQ(dbsize(), 0);
}

TEST_F(CtlTest, BulkStopsWhenRedisRejectsAWriteMidway) {
  const std::string text = [] {
    std::string t;
    for (int i = 0; i < 4000; ++i) {
      t += nlohmann::json{{"id", "oom-" + std::to_string(i)}, {"delay_ms", 3600000}, {"payload", std::string(2000, 'x')}}
               .dump() +
           "\n";
    }
    return t;
  }();
  const std::string path = write_file("big.jsonl", text);
  // Load the library before memory runs out (FUNCTION LOAD would be refused too).
  ASSERT_EQ(ctl({"load-functions"}).exit_code, 0);
  const auto info = redis_.command({"INFO", "memory"}).str;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(info, m, std::regex("used_memory:(\\d+)")));
  const long long limit = std::stoll(m[1].str()) + 2 * 1024 * 1024;  // room for roughly 500 tasks
  ASSERT_FALSE(redis_.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"}).failed());
  ASSERT_FALSE(redis_.command({"CONFIG", "SET", "maxmemory", std::to_string(limit)}).failed());

  const CtlRun run = ctl({"schedule", "--file", path});
  redis_.command({"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "OOM")) << run.output;
  ASSERT_TRUE(std::regex_search(
      run.output, m, std::regex("stopped: (\\d+) of 4000 tasks were written, (\\d+) rejected, (\\d+) not sent")))
      << run.output;
  const long long written = std::stoll(m[1].str());
  EXPECT_GT(written, 0);
  EXPECT_LT(written, 4000);
  EXPECT_GE(std::stoll(m[2].str()), 1);
  // Two windows are in flight: every reply of a sent window is read and counted.
  EXPECT_EQ(written + std::stoll(m[2].str()) + std::stoll(m[3].str()), 4000);
  EXPECT_EQ(zcard(), written);
}

// SIGINT or SIGTERM during a bulk write: no new window is sent, the replies of those in flight
// are read, and the count printed is exactly what Redis holds: the tasks of the first lines.
TEST_F(CtlTest, BulkStoppedBySignalReportsExactlyWhatWasWritten) {
  constexpr int kTasks = 300000;
  std::string text;
  text.reserve(kTasks * 40);
  for (int i = 1; i <= kTasks; ++i) text += R"({"id":"int-)" + std::to_string(i) + R"(","delay_ms":3600000})" "\n";
  const std::string path = write_file("large.jsonl", text);
  text.clear();

  for (const auto& [sig, code, name] : {std::tuple{SIGINT, 130, "SIGINT"}, std::tuple{SIGTERM, 143, "SIGTERM"}}) {
    SCOPED_TRACE(name);
    ASSERT_FALSE(redis_.command({"FLUSHALL"}).failed());
    ChildProcess child(EXPIRY_CTL_BIN, {"schedule", "--file", path, url_flag()});
    // Validation reads the whole file first; the signal comes once writes have begun.
    ASSERT_TRUE(wait_until([&] { return zcard() > 0 || !child.running(); }, 60s)) << child.output();
    ASSERT_TRUE(child.running()) << "finished before the signal: " << child.output();
    ASSERT_EQ(kill(child.pid(), sig), 0) << std::strerror(errno);
    auto rc = child.wait_exit(60s);
    ASSERT_TRUE(rc.has_value()) << child.output();
    EXPECT_EQ(*rc, code) << child.output();

    std::smatch m;
    const std::string output = child.output();
    ASSERT_TRUE(std::regex_search(
        output, m,
        std::regex(std::string("expiry-ctl: interrupted by ") + name +
                   ": (\\d+) of 300000 tasks were written \\(the tasks up to line (\\d+) of " + path +
                   "\\); the other (\\d+) were not\n")))
        << output;
    const long long written = std::stoll(m[1].str());
    RecordProperty(std::string("written_before_") + name, static_cast<int>(written));
    EXPECT_GT(written, 0);
    EXPECT_LT(written, kTasks);
    EXPECT_EQ(written + std::stoll(m[3].str()), kTasks);
    EXPECT_EQ(zcard(), written) << "the reported count is what Redis holds";
    EXPECT_EQ(std::stoll(m[2].str()), written) << "one task per line, no blank lines";
    // Exactly the first `written` lines: the last of them is scheduled, the next one is not.
    EXPECT_EQ(redis_.command({"ZSCORE", kSchedule, "int-" + std::to_string(written)}).type,
              Reply::Type::String);
    EXPECT_EQ(redis_.command({"ZSCORE", kSchedule, "int-" + std::to_string(written + 1)}).type,
              Reply::Type::Nil);
    EXPECT_EQ(integer(redis_, {"EXISTS", shadow("int-" + std::to_string(written))}), 1);
    EXPECT_FALSE(contains(output, "scheduled ")) << output;
  }
}

// ---------------------------------------------------------------- authentication

TEST(CtlAuthTest, WrongPasswordExits2WithoutEchoingIt) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"requirepass secret"};
  RedisServer server(opts);
  const std::string dir = ::testing::TempDir();
  const std::string base = "redis://127.0.0.1:" + std::to_string(server.port()) + "/0";
  const std::string wrong_url = "redis://:hunter2wrong@127.0.0.1:" + std::to_string(server.port()) + "/0";

  const CtlRun in_url = run_ctl({"schedule", "a", "--delay-ms", "1", "--redis-url", wrong_url});
  EXPECT_EQ(in_url.exit_code, 2) << in_url.output;
  EXPECT_TRUE(contains(in_url.output, "WRONGPASS") || contains(in_url.output, "authentication")) << in_url.output;
  EXPECT_FALSE(contains(in_url.output, "hunter2wrong")) << in_url.output;

  const std::string pw_file = dir + "/ctl_test_wrong.pw";
  std::ofstream(pw_file) << "hunter3wrong\n";
  const CtlRun in_file = run_ctl({"stats", "--redis-url", base, "--password-file", pw_file});
  EXPECT_EQ(in_file.exit_code, 2) << in_file.output;
  EXPECT_TRUE(contains(in_file.output, "WRONGPASS")) << in_file.output;
  EXPECT_FALSE(contains(in_file.output, "hunter3wrong")) << in_file.output;

  // No password: Redis refused, and where the password goes; not the command that met the refusal.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"schedule", "a", "--delay-ms", "1"},
                                               std::vector<std::string>{"stats"}, std::vector<std::string>{"list"},
                                               std::vector<std::string>{"recur", "list"}}) {
    std::vector<std::string> with_url = args;
    with_url.insert(with_url.end(), {"--redis-url", base});
    const CtlRun none = run_ctl(with_url);
    EXPECT_EQ(none.exit_code, 2) << none.output;
    EXPECT_TRUE(contains(none.output, "expiry-ctl: Redis at " + base +
                                          " refused to run commands without a password: NOAUTH"))
        << none.output;
    EXPECT_TRUE(contains(none.output, "--password-file")) << none.output;
    EXPECT_FALSE(contains(none.output, "INFO")) << "an internal command name:\n" << none.output;
  }

  // The right password, from the environment.
  const std::string good_file = dir + "/ctl_test_good.pw";
  std::ofstream(good_file) << "secret\n";
  const CtlRun ok = run_ctl({"schedule", "a", "--delay-ms", "60000"},
                         {{"EXPIRY_RELAY_REDIS_URL", base}, {"EXPIRY_RELAY_PASSWORD_FILE", good_file}});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_FALSE(contains(ok.output, "secret")) << ok.output;
  TestConnection redis(server.host(), server.port());
  ASSERT_FALSE(redis.command({"AUTH", "secret"}).failed());
  EXPECT_EQ(integer(redis, {"ZCARD", kSchedule}), 1);
  std::remove(pw_file.c_str());
  std::remove(good_file.c_str());
}

// ---------------------------------------------------------------- settings layers

TEST_F(CtlTest, EnvAndSharedConfigFile) {
  // The URL from the environment, the namespace from a config file that also holds relay keys.
  const std::string config = write_file(
      "relay.json", R"({"namespace": "shared", "sweep_batch": 50, "log_level": "debug", "group": "g"})");
  const CtlRun run =
      run_ctl({"schedule", "a", "--delay-ms", "60000", "--config", config}, {{"EXPIRY_RELAY_REDIS_URL", server_.url()}});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(integer(redis_, {"ZCARD", "shared:{0}:schedule"}), 1);
  EXPECT_EQ(zcard(), 0);

  // A flag beats the file.
  ASSERT_EQ(ctl({"schedule", "b", "--delay-ms", "60000", "--config", config, "--namespace", "flagged"}).exit_code, 0);
  EXPECT_EQ(integer(redis_, {"ZCARD", "flagged:{0}:schedule"}), 1);

  // Keys that are neither connection nor relay options are still typos.
  const std::string typo = write_file("typo.json", R"({"namepsace": "x"})");
  const CtlRun bad = ctl({"stats", "--config", typo});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "unknown key 'namepsace'")) << bad.output;
}

// A config or password file that is a directory, or whose read fails, is an input error
// (exit 2 naming the file), never an uncaught exception reported as a Redis error (exit 1).
TEST_F(CtlTest, ConfigOrPasswordFileThatCannotBeReadExits2) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"stats", "--config", dir_}, {}, "config file " + dir_ + " is a directory"},
      {{"--config", dir_, "stats"}, {}, "config file " + dir_ + " is a directory"},
      {{"stats"}, {{"EXPIRY_RELAY_CONFIG", dir_}}, "config file " + dir_ + " is a directory"},
      {{"stats", "--password-file", dir_}, {}, "password file " + dir_ + " is a directory"},
      {{"stats"}, {{"EXPIRY_RELAY_PASSWORD_FILE", dir_}}, "password file " + dir_ + " is a directory"},
      {{"schedule", "a", "--delay-ms", "1", "--config", "/proc/self/mem"}, {},
       "cannot read config file /proc/self/mem: Input/output error"},
      {{"cancel", "a", "--password-file", "/proc/self/mem"}, {},
       "cannot read password file /proc/self/mem: Input/output error"},
  };
  for (const auto& c : cases) {
    auto args = c.args;
    args.push_back(url_flag());
    const CtlRun run = run_ctl(args, c.env);
    EXPECT_EQ(run.exit_code, 2) << c.message << ": " << run.output;
    EXPECT_TRUE(contains(run.output, "expiry-ctl: " + c.message)) << run.output;
  }
  EXPECT_EQ(dbsize(), 0);
}

// ---------------------------------------------------------------- check: orphaned keys

// The first line of `output` that starts with '{', parsed (stderr lines are interleaved).
nlohmann::json json_line(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] == '{') return nlohmann::json::parse(line);
  }
  ADD_FAILURE() << "no JSON line in: " << output;
  return nlohmann::json::object();
}

std::string id_lines(const std::string& prefix, int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += nlohmann::json{{"id", prefix + std::to_string(i)}, {"delay_ms", 3600000}, {"payload", "p"}}.dump() + "\n";
  }
  return text;
}

// The schedule ZSET deleted from outside leaves every task's shadow hash and trigger key
// behind. check reports them (exit 1), --repair deletes exactly those whose id is still not
// scheduled, and a task scheduled in between keeps its keys.
TEST_F(CtlTest, CheckReportsAndRepairsOrphansOfADeletedSchedule) {
  ASSERT_EQ(ctl({"schedule", "--file", write_file("tasks.jsonl", id_lines("o-", 30))}).exit_code, 0);
  CtlRun clean = ctl({"check"});
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_TRUE(contains(clean.output, "examined 60 task keys of namespace expiry\nno orphans")) << clean.output;

  ASSERT_EQ(integer(redis_, {"DEL", kSchedule}), 1);
  // Keys the check must never touch: not ours, though SCAN's pattern matches the first.
  redis_.command({"SET", "expiry:{0}:tomato", "x"});
  redis_.command({"HSET", "other:{0}:task:o-1", "payload", "p"});

  const CtlRun found = ctl({"check"});
  EXPECT_EQ(found.exit_code, 1) << found.output;
  EXPECT_TRUE(contains(found.output, "orphans: 60 (30 shadow hashes, 30 trigger keys) whose id is not in the schedule"))
      << found.output;
  EXPECT_TRUE(contains(found.output, "  ... and 50 more\n")) << found.output;
  EXPECT_TRUE(contains(found.output, "60 orphaned keys found and not deleted; run 'expiry-ctl check --repair'"))
      << found.output;
  EXPECT_EQ(dbsize(), 62);  // reporting deletes nothing

  const CtlRun json = ctl({"check", "--json", "--examples", "3"});
  EXPECT_EQ(json.exit_code, 1) << json.output;
  const auto j = json_line(json.output);
  EXPECT_EQ(j["namespace"], "expiry");
  EXPECT_EQ(j["examined"], 60);
  EXPECT_EQ(j["orphans"], 60);
  EXPECT_EQ(j["orphan_shadow_hashes"], 30);
  EXPECT_EQ(j["orphan_trigger_keys"], 30);
  EXPECT_EQ(j["repair"], false);
  EXPECT_EQ(j["clean"], false);
  EXPECT_TRUE(j["deleted"].is_null());
  ASSERT_EQ(j["examples"].size(), 3u);
  const auto& example = j["examples"][0];
  EXPECT_EQ(example["key"].get<std::string>(),
            (example["kind"] == "shadow" ? shadow : trigger)(example["id"].get<std::string>()));

  // Meanwhile a new task, and one of the orphans' ids scheduled again.
  ASSERT_EQ(ctl({"schedule", "new-1", "--delay-ms", "3600000"}).exit_code, 0);
  ASSERT_EQ(ctl({"schedule", "o-7", "--delay-ms", "3600000", "--payload", "again"}).exit_code, 0);

  const CtlRun repaired = ctl({"check", "--repair", "--json"});
  EXPECT_EQ(repaired.exit_code, 0) << repaired.output;
  const auto r = json_line(repaired.output);
  EXPECT_EQ(r["orphans"], 58);
  EXPECT_EQ(r["deleted"], 58);
  EXPECT_EQ(r["kept_scheduled"], 0);
  EXPECT_EQ(r["clean"], true);
  // Exactly the orphans are gone: the schedule, the two tasks' four keys and the two foreign keys remain.
  EXPECT_EQ(zcard(), 2);
  EXPECT_EQ(integer(redis_, {"EXISTS", trigger("new-1"), shadow("new-1"), trigger("o-7"), shadow("o-7")}), 4);
  EXPECT_EQ(hget(shadow("o-7"), "payload"), "again");
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:tomato", "other:{0}:task:o-1"}), 2);
  EXPECT_EQ(dbsize(), 1 + 4 + 2);

  const CtlRun again = ctl({"check"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "examined 4 task keys of namespace expiry\nno orphans")) << again.output;
}

// --repair checks each orphan again in the same atomic step as the delete: tasks scheduled
// again while it runs keep their keys, and every id left unscheduled loses both.
TEST_F(CtlTest, CheckRepairNeverDeletesATaskScheduledWhileItRuns) {
  const int kTasks = 5000;
  ASSERT_EQ(ctl({"schedule", "--file", write_file("tasks.jsonl", id_lines("r-", kTasks))}).exit_code, 0);
  ASSERT_EQ(integer(redis_, {"DEL", kSchedule}), 1);
  ChildProcess repair(EXPIRY_CTL_BIN, {"check", "--repair", "--json", url_flag()});
  // Schedule every other id again, from the end (the scan's order is the hash table's, not ours).
  for (int start = kTasks - 1; start >= 0; start -= 500) {
    std::vector<std::vector<std::string>> cmds;
    for (int i = start; i > start - 500 && i >= 0; --i) {
      if (i % 2 != 0) continue;
      const std::string id = "r-" + std::to_string(i);
      cmds.push_back({"FCALL", "expiry_schedule", "3", kSchedule, trigger(id), shadow(id), id, "delay", "3600000", "q"});
    }
    std::vector<Reply> replies;
    pipeline(redis_, cmds, &replies);
    for (const auto& reply : replies) ASSERT_FALSE(reply.failed()) << reply.describe();
  }
  auto rc = repair.wait_exit(60s);
  ASSERT_TRUE(rc.has_value()) << repair.output();
  EXPECT_EQ(*rc, 0) << repair.output();
  const auto report = json_line(repair.output());
  RecordProperty("orphans_deleted", static_cast<int>(report["deleted"].get<long long>()));
  RecordProperty("kept_scheduled_meanwhile", static_cast<int>(report["kept_scheduled"].get<long long>()));
  EXPECT_EQ(report["deleted"].get<long long>() + report["kept_scheduled"].get<long long>() +
                report["already_gone"].get<long long>(),
            report["orphans"].get<long long>());
  EXPECT_EQ(zcard(), kTasks / 2);
  std::vector<std::vector<std::string>> cmds;
  for (int i = 0; i < kTasks; ++i) {
    const std::string id = "r-" + std::to_string(i);
    cmds.push_back({"EXISTS", trigger(id), shadow(id)});
  }
  std::vector<Reply> exists;
  pipeline(redis_, cmds, &exists);
  int wrong = 0;
  for (int i = 0; i < kTasks; ++i) {
    const long long want = i % 2 == 0 ? 2 : 0;  // scheduled: both keys; not: neither
    if (exists[i].integer != want && ++wrong <= 5) ADD_FAILURE() << "r-" << i << ": " << exists[i].integer << " keys";
  }
  EXPECT_EQ(wrong, 0);
  const CtlRun after = ctl({"check"});
  EXPECT_EQ(after.exit_code, 0) << after.output;
}

// Tasks already under a bucket no relay serves (written before the library refused them, or by
// hand) are reported, with their bucket, and exit 1; --repair leaves them (they are tasks).
TEST_F(CtlTest, CheckReportsTasksInBucketsNoRelayServes) {
  ASSERT_EQ(ctl({"schedule", "served", "--delay-ms", "600000"}).exit_code, 0);
  const KeyLayout one("expiry", 1);
  ASSERT_EQ(integer(redis_, {"ZADD", one.schedule_key(), "4102444800000", "lost-1"}), 1);
  ASSERT_EQ(integer(redis_, {"HSET", one.shadow_key("lost-1"), "payload", "x", "due_ms", "4102444800000"}), 2);
  const CtlRun run = ctl({"check"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "unserved: 1 pending task in bucket {1}, which no relay serves (the namespace has 1 bucket)"))
      << run.output;
  EXPECT_TRUE(contains(run.output, one.shadow_key("lost-1"))) << run.output;
  const CtlRun json = ctl({"check", "--json"});
  const size_t brace = json.output.find('{');
  ASSERT_NE(brace, std::string::npos) << json.output;
  const auto j = nlohmann::json::parse(json.output.substr(brace, json.output.find('\n', brace) - brace));
  EXPECT_EQ(j.at("unserved_tasks").get<int>(), 1);
  EXPECT_EQ(j.at("unserved_buckets"), nlohmann::json::array({1}));
  EXPECT_FALSE(j.at("clean").get<bool>());
  EXPECT_EQ(ctl({"check", "--repair"}).exit_code, 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", one.shadow_key("lost-1")}), 1) << "--repair deleted a task";
}

TEST_F(CtlTest, CheckUsageErrorsExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"check", "--examples", "-1"},
                                                                {"check", "--examples", "many"},
                                                                {"check", "--repiar"}}) {
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 2) << run.output;
  }
}

// ---------------------------------------------------------------- usage: did-you-mean, --help

TEST(CtlUsage, AMistypedCommandGetsADidYouMean) {
  const CtlRun typo = run_ctl({"shedule", "a", "--delay-ms", "1000"});
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_TRUE(contains(typo.output, "expiry-ctl: unknown command 'shedule'; did you mean 'schedule'?")) << typo.output;
  const CtlRun nested = run_ctl({"dead", "lst"});
  EXPECT_EQ(nested.exit_code, 2) << nested.output;
  EXPECT_TRUE(contains(nested.output, "unknown command 'dead lst'; did you mean 'dead list'?")) << nested.output;
  const CtlRun far = run_ctl({"frobnicate"});
  EXPECT_EQ(far.exit_code, 2) << far.output;
  EXPECT_TRUE(contains(far.output, "unknown command 'frobnicate'")) << far.output;
  EXPECT_FALSE(contains(far.output, "did you mean")) << far.output;
}

// --help shows what to give and says ranges and defaults in words, not CLI11's type names
// (issue 43: "--tz TEXT=UTC", "INT:INT in [...]").
TEST(CtlUsage, HelpShowsPlaceholdersAndRangesInWords) {
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {}, {"schedule"}, {"cancel"}, {"list"}, {"tail"}, {"check"}, {"dead", "list"}, {"dead", "replay"},
           {"recur", "set"}, {"recur", "preview"}}) {
    std::vector<std::string> args = command;
    args.push_back("--help");
    const CtlRun help = run_ctl(args);
    ASSERT_EQ(help.exit_code, 0) << help.output;
    for (const char* artefact : {" TEXT", " INT", "=UTC", " in [", "Excludes:", "REQUIRED"}) {
      EXPECT_FALSE(contains(help.output, artefact)) << artefact << " in the help of " << args.front() << ":\n"
                                                    << help.output;
    }
  }
  const CtlRun set = run_ctl({"recur", "set", "--help"});
  EXPECT_TRUE(contains(set.output, "--tz ZONE ")) << set.output;
  EXPECT_TRUE(contains(set.output, "[default: UTC]")) << set.output;
  EXPECT_TRUE(contains(set.output, "[0 to 86400000; default: 1000]")) << set.output;
  const CtlRun schedule = run_ctl({"schedule", "--help"});
  EXPECT_TRUE(contains(schedule.output, "--wait-timeout-ms MS ")) << schedule.output;
  EXPECT_TRUE(contains(schedule.output, "[1 to 3600000; default: 1000]")) << schedule.output;
  EXPECT_TRUE(contains(schedule.output, "--delay-ms MS ")) << schedule.output;
  EXPECT_TRUE(contains(schedule.output, "[not with --at-ms, --file]")) << schedule.output;
}

// ---------------------------------------------------------------- stats, functions, tail

TEST_F(CtlTest, StatsJsonCountsPendingAndOverdue) {
  for (const char* id : {"f1", "f2", "f3"}) ASSERT_EQ(ctl({"schedule", id, "--delay-ms", "600000"}).exit_code, 0);
  for (const char* id : {"o1", "o2"}) ASSERT_EQ(ctl({"schedule", id, "--at-ms", "1000"}).exit_code, 0);

  CtlRun run = ctl({"stats", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto j = nlohmann::json::parse(run.output);
  EXPECT_EQ(j["pending"], 5);
  EXPECT_EQ(j["overdue"], 2);
  EXPECT_EQ(j["next_due_ms"], 1000);
  EXPECT_LT(j["next_due_in_ms"].get<long long>(), 0);
  EXPECT_EQ(j["stream"], "expiry:stream");
  EXPECT_EQ(j["stream_length"], 0);
  EXPECT_TRUE(j["group_lag"].is_null());
  EXPECT_TRUE(j["group_pending"].is_null());

  ASSERT_FALSE(redis_.command({"XGROUP", "CREATE", "expiry:stream", "workers", "0", "MKSTREAM"}).failed());
  for (int i = 0; i < 3; ++i) redis_.command({"XADD", "expiry:stream", "*", "id", "x" + std::to_string(i)});
  redis_.command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "1", "STREAMS", "expiry:stream", ">"});
  run = ctl({"stats", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  j = nlohmann::json::parse(run.output);
  EXPECT_EQ(j["stream_length"], 3);
  EXPECT_EQ(j["group_lag"], 2);
  EXPECT_EQ(j["group_pending"], 1);

  const CtlRun text = ctl({"stats", "--group", "nobody"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "pending: 5\n")) << text.output;
  EXPECT_TRUE(contains(text.output, "overdue: 2\n")) << text.output;
  EXPECT_TRUE(contains(text.output, "group_lag: null\n")) << text.output;
}

TEST_F(CtlTest, LoadFunctionsAndAutomaticReload) {
  ASSERT_FALSE(redis_.command({"FUNCTION", "FLUSH"}).failed());
  const CtlRun load = ctl({"load-functions"});
  EXPECT_EQ(load.exit_code, 0) << load.output;
  EXPECT_EQ(load.output, "expiry_v1\n");
  EXPECT_TRUE(contains(redis_.command({"FUNCTION", "LIST"}).describe(), "expiry_v1"));

  ASSERT_FALSE(redis_.command({"FUNCTION", "FLUSH"}).failed());
  const CtlRun schedule = ctl({"schedule", "a", "--delay-ms", "60000"});
  EXPECT_EQ(schedule.exit_code, 0) << schedule.output;
  EXPECT_EQ(zcard(), 1);
}

TEST_F(CtlTest, TailPrintsEntriesOthersAdd) {
  ChildProcess tail(EXPIRY_CTL_BIN, {"tail", "--count", "2", "--timeout-ms", "30000", url_flag()});
  // Entries are printed from the moment tail is blocked in XREAD.
  ASSERT_TRUE(wait_until([&] { return contains(redis_.command({"CLIENT", "LIST"}).str, "cmd=xread"); }, 20s))
      << tail.output();
  const auto first = redis_.command({"XADD", "expiry:stream", "*", "id", "t1", "payload", "hello world", "due_ms",
                                     "1000", "fired_ms", "1007", "via", "event"});
  const auto second = redis_.command({"XADD", "expiry:stream", "*", "id", "t2", "payload", "", "due_ms", "5",
                                      "fired_ms", "5", "via", "sweep", "missing_payload", "absent"});
  auto rc = tail.wait_exit(20s);
  ASSERT_TRUE(rc.has_value()) << tail.output();
  EXPECT_EQ(*rc, 0) << tail.output();
  // The stream did not exist when tail started: one hint on stderr comes first.
  EXPECT_EQ(tail.output(),
            "expiry-ctl: stream expiry:stream does not exist yet; waiting for the relay to create it ...\n" +
                first.str + " id=t1 via=event due_ms=1000 fired_ms=1007 late_ms=7 payload=hello world\n" +
                second.str + " id=t2 via=sweep due_ms=5 fired_ms=5 late_ms=0 missing_payload=absent payload=\n");

  // --from 0 prints what is there, then stops after the quiet timeout.
  const CtlRun all = ctl({"tail", "--from", "0", "--timeout-ms", "300"});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.rfind(first.str + " id=t1", 0), 0u) << all.output;
  EXPECT_TRUE(contains(all.output, second.str + " id=t2")) << all.output;
}

// The XREAD calls Redis has run so far (INFO commandstats).
long long xread_calls(SyncConnection& redis) {
  const std::string info = redis.command({"INFO", "commandstats"}).str;
  std::smatch m;
  if (!std::regex_search(info, m, std::regex("cmdstat_xread:calls=(\\d+)"))) return 0;
  return std::stoll(m[1].str());
}

size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// expiry-ctl reads the relay's stream and group from the relay's own config file and env
// variables (flag > env > file > default); a subcommand's --stream / --group still wins.
TEST_F(CtlTest, StatsAndTailUseTheRelaysStreamAndGroup) {
  const std::string config =
      write_file("relay.json", R"({"stream": "shop:fired", "group": "billing", "sweep_batch": 50})");
  ASSERT_FALSE(redis_.command({"XGROUP", "CREATE", "shop:fired", "billing", "0", "MKSTREAM"}).failed());
  const auto fired = redis_.command({"XADD", "shop:fired", "*", "id", "t1", "payload", "p"});
  const auto elsewhere = redis_.command({"XADD", "expiry:stream", "*", "id", "elsewhere"});
  redis_.command({"XADD", "expiry:stream", "*", "id", "elsewhere-2"});

  CtlRun run = ctl({"stats", "--json", "--config", config});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto j = json_line(run.output);
  EXPECT_EQ(j["stream"], "shop:fired");
  EXPECT_EQ(j["stream_exists"], true);
  EXPECT_EQ(j["stream_length"], 1);
  EXPECT_EQ(j["group"], "billing");
  EXPECT_EQ(j["group_exists"], true);
  EXPECT_EQ(j["group_lag"], 1);

  // The env variables beat the file.
  const std::vector<std::pair<std::string, std::string>> env = {{"EXPIRY_RELAY_STREAM", "expiry:stream"},
                                                                {"EXPIRY_RELAY_GROUP", "nobody"}};
  run = run_ctl({"stats", "--json", "--config", config, url_flag()}, env);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  j = json_line(run.output);
  EXPECT_EQ(j["stream"], "expiry:stream");
  EXPECT_EQ(j["stream_length"], 2);
  EXPECT_EQ(j["group"], "nobody");
  EXPECT_EQ(j["group_exists"], false);

  // The subcommand's flags beat both.
  run = run_ctl({"stats", "--json", "--config", config, "--stream", "shop:fired", "--group", "billing", url_flag()},
                env);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  j = json_line(run.output);
  EXPECT_EQ(j["stream"], "shop:fired");
  EXPECT_EQ(j["group_exists"], true);

  // tail reads the file's stream, the env's, or its own --stream.
  run = ctl({"tail", "--from", "0", "--timeout-ms", "300", "--config", config});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, fired.str + " id=t1 payload=p\n");
  run = run_ctl({"tail", "--from", "0", "--count", "1", "--timeout-ms", "5000", url_flag()},
                {{"EXPIRY_RELAY_STREAM", "shop:fired"}});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, fired.str + " id=t1 payload=p\n");
  run = run_ctl({"tail", "--from", "0", "--count", "1", "--timeout-ms", "5000", "--stream", "expiry:stream",
                 "--config", config, url_flag()},
                {{"EXPIRY_RELAY_STREAM", "shop:fired"}});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output, elsewhere.str + " id=elsewhere\n");

  // A relay stream the relay itself would refuse is refused here too, naming where it came from.
  const std::string bad = write_file("bad.json", R"({"stream": "expiry:{0}:task:x"})");
  run = ctl({"stats", "--config", bad});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "expiry-ctl: config file " + bad + ": stream expiry:{0}:task:x lies inside"))
      << run.output;
}

TEST_F(CtlTest, StatsSaysWhenTheStreamDoesNotExist) {
  CtlRun run = ctl({"stats"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "stream: expiry:stream\nstream_exists: false\nstream_length: 0\n")) << run.output;
  EXPECT_TRUE(contains(run.output, "expiry-ctl: stream expiry:stream does not exist (yet)")) << run.output;
  run = ctl({"stats", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto j = nlohmann::json::parse(run.output);  // stdout holds the JSON alone
  EXPECT_EQ(j["stream_exists"], false);
  EXPECT_EQ(j["group_exists"], false);

  // Once the relay has created it (with its group), both say so.
  ASSERT_FALSE(redis_.command({"XGROUP", "CREATE", "expiry:stream", "workers", "$", "MKSTREAM"}).failed());
  run = ctl({"stats"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "stream_exists: true\nstream_length: 0\n")) << run.output;
  EXPECT_TRUE(contains(run.output, "group_exists: true\n")) << run.output;
  EXPECT_FALSE(contains(run.output, "does not exist")) << run.output;
  j = nlohmann::json::parse(ctl({"stats", "--json"}).output);
  EXPECT_EQ(j["stream_exists"], true);
  EXPECT_EQ(j["group_exists"], true);
}

// tail on a stream that does not exist says so once, keeps waiting across its XREAD calls, and
// prints the first entry once the stream appears; on an existing stream it says nothing.
TEST_F(CtlTest, TailHintsOnceWhileTheStreamDoesNotExist) {
  const std::string hint = "expiry-ctl: stream late:stream does not exist yet; waiting for the relay to create it ...\n";
  ChildProcess tail(EXPIRY_CTL_BIN, {"tail", "--stream", "late:stream", "--count", "1", "--timeout-ms", "30000",
                                     url_flag()});
  // Three XREAD calls of one second each: it waited, and said it once.
  ASSERT_TRUE(wait_until([&] { return xread_calls(redis_) >= 3; }, 20s)) << tail.output();
  EXPECT_EQ(tail.output(), hint);
  const auto entry = redis_.command({"XADD", "late:stream", "*", "id", "t1"});
  auto rc = tail.wait_exit(20s);
  ASSERT_TRUE(rc.has_value()) << tail.output();
  EXPECT_EQ(*rc, 0) << tail.output();
  EXPECT_EQ(tail.output(), hint + entry.str + " id=t1\n");
  EXPECT_EQ(count_of(tail.output(), "does not exist"), 1u);

  const CtlRun existing = ctl({"tail", "--stream", "late:stream", "--from", "0", "--timeout-ms", "300"});
  EXPECT_EQ(existing.exit_code, 0) << existing.output;
  EXPECT_EQ(existing.output, entry.str + " id=t1\n");
}

// tail's text lines keep ids with spaces in one token and tell a backslash-n from a line break;
// --json gives every field, with bytes that are not UTF-8 in base64.
TEST_F(CtlTest, TailQuotesEscapesAndPrintsJson) {
  const auto spaced = redis_.command({"XADD", "expiry:stream", "*", "id", "order 42", "via", "sweep", "due_ms", "10",
                                      "fired_ms", "12", "payload", "literal a\\nb"});
  const auto broken = redis_.command({"XADD", "expiry:stream", "*", "id", "a\\nb", "payload", "real a\nb"});
  const auto binary = redis_.command({"XADD", "expiry:stream", "*", "id", "bin", "payload", "\0\xFF\x80 x"s});

  const CtlRun text = ctl({"tail", "--from", "0", "--count", "3", "--timeout-ms", "5000"});
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.output, spaced.str + R"( id="order 42" via=sweep due_ms=10 fired_ms=12 late_ms=2 payload=literal a\\nb)" +
                             "\n" + broken.str + R"( id=a\\nb payload=real a\nb)" + "\n" + binary.str +
                             R"( id=bin payload=\x00\xff\x80 x)" + "\n");

  const CtlRun json = ctl({"tail", "--json", "--from", "0", "--count", "3", "--timeout-ms", "5000"});
  EXPECT_EQ(json.exit_code, 0) << json.output;
  std::istringstream lines(json.output);
  std::vector<nlohmann::json> entries;
  for (std::string line; std::getline(lines, line);) entries.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(entries.size(), 3u) << json.output;
  EXPECT_EQ(entries[0], nlohmann::json::parse(R"({"entry_id": ")" + spaced.str + R"(", "late_ms": 2, "fields":
      {"id": "order 42", "via": "sweep", "due_ms": "10", "fired_ms": "12", "payload": "literal a\\nb"}})"));
  EXPECT_EQ(entries[1]["fields"]["id"], "a\\nb");
  EXPECT_EQ(entries[1]["fields"]["payload"], "real a\nb");
  EXPECT_TRUE(entries[1]["late_ms"].is_null());
  EXPECT_EQ(entries[2]["fields"], nlohmann::json({{"id", "bin"}}));
  EXPECT_EQ(entries[2]["fields_b64"], nlohmann::json({{"payload", "AP+AIHg="}}));
}

}  // namespace
}  // namespace expiry::test
