// Data a producer or an operator can put in Redis by hand, or send on our channels, that the
// library never writes: scores far in the future or at infinity, forged wake messages, trigger
// keys whose ids the library rejects, trigger keys in another database, keys under another
// prefix or bucket, streams inside the task key space, ids with invisible or line-breaking
// code points, tasks scheduled already due. One TEST per defect, each against a real
// redis-server and, where the defect was the relay's, a real expiry-relay process.
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <thread>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

using namespace std::string_literals;

constexpr const char* kSchedule = "expiry:{0}:schedule";

// U+0085 NEL, U+2028 LINE SEPARATOR, U+FEFF BYTE ORDER MARK as UTF-8.
const std::string kNel = "\xC2\x85";
const std::string kLineSep = "\xE2\x80\xA8";
const std::string kBom = "\xEF\xBB\xBF";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (contains(line, needle)) out.push_back(line);
  }
  return out;
}

// CPU time (user + system) the process `pid` has used so far, from /proc/<pid>/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f;
  std::string field;
  while (fields >> field) f.push_back(field);
  if (f.size() < 13) return -1;
  // Fields 14 and 15 of the man page (utime, stime) are 11 and 12 after the name.
  return static_cast<double>(std::stoll(f[11]) + std::stoll(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Calls of FCALL the server has executed (INFO commandstats), whoever sent them.
long long fcall_calls(SyncConnection& redis) {
  const std::string info = redis.command({"INFO", "commandstats"}).str;
  const std::string head = "cmdstat_fcall:calls=";
  const auto pos = info.find(head);
  return pos == std::string::npos ? 0 : std::stoll(info.substr(pos + head.size()));
}

struct RunResult {
  int exit_code = -1;
  std::string output;
};

// Runs `program` to completion (bounded) and returns its exit code and output.
RunResult run_to_exit(const std::string& program, const std::vector<std::string>& args) {
  ChildProcess child(program, args);
  RunResult run;
  auto rc = child.wait_exit(30s);
  if (!rc) {
    child.kill_hard();
    ADD_FAILURE() << program << " did not exit within 30 s: " << child.output();
    return run;
  }
  run.exit_code = *rc;
  run.output = child.output();
  return run;
}

class HostileDataTest : public ::testing::Test {
 protected:
  // Starts expiry-relay "r1" on `url` (default: the server's db 0) with metrics on a free port.
  void start(std::vector<std::string> extra = {}, const std::string& url = "") {
    metrics_port_ = free_port();
    std::vector<std::string> args = {"--redis-url", url.empty() ? server_.url() : url, "--instance", "r1",
                                     "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                     "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000",
                                     "--metrics-port", std::to_string(metrics_port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    relay_ = std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args,
                                            std::vector<std::pair<std::string, std::string>>{},
                                            server_.dir() + "/relay-r1.log");
  }

  // Waits until the relay is subscribed, has prepared Redis (through `redis`, a connection to
  // its database) and has answered its first sweep.
  void wait_ready(SyncConnection& redis) {
    ASSERT_NO_FATAL_FAILURE(wait_relay_ready(redis, "r1", *relay_));
    ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_sweep_batches_total") >= 1; }, 10s))
        << relay_->output();
  }
  void wait_ready() { wait_ready(redis_); }

  // The relay's current value of `series`, or -1 if the metrics endpoint does not answer.
  double metric(const std::string& series) {
    const HttpResponse r = http_get(metrics_port_, "/metrics");
    if (r.status != 200) return -1;
    return metric_value(r.body, series);
  }

  struct Usage {
    std::chrono::steady_clock::time_point at;
    double sweeps = 0;        // expiry_relay_sweep_batches_total
    long long fcalls = 0;     // FCALLs the server ran (sweeps, claims, our schedules)
    double cpu_s = 0;         // relay CPU time
  };
  Usage usage() {
    Usage u;
    u.at = std::chrono::steady_clock::now();
    u.sweeps = metric("expiry_relay_sweep_batches_total");
    u.fcalls = fcall_calls(redis_);
    u.cpu_s = cpu_seconds(relay_->pid());
    return u;
  }

  // Asserts the relay stayed idle from `before` until at least `window` later: a few sweeps
  // (one per sweep interval of 1 s, plus the ones asked for), little CPU. The window is a
  // measurement period, not a wait for a condition: a busy loop shows in any window. A loop of
  // sweep calls spends its time waiting for Redis, so the sweep and FCALL counts are what catch
  // it (thousands in 3 s); the CPU bound catches a loop inside the relay.
  void expect_idle_since(const Usage& before, std::chrono::milliseconds window, long long extra_fcalls) {
    ASSERT_GE(before.cpu_s, 0.0) << "cannot read /proc/" << relay_->pid() << "/stat";
    ASSERT_GE(before.sweeps, 1) << "metrics endpoint";
    std::this_thread::sleep_until(before.at + window);
    ASSERT_TRUE(relay_->running()) << relay_->output();
    const Usage after = usage();
    const double seconds = std::chrono::duration<double>(after.at - before.at).count();
    EXPECT_LE(after.sweeps - before.sweeps, 10) << "sweep calls in " << seconds << " s\n" << relay_->output();
    EXPECT_LE(after.fcalls - before.fcalls, 10 + extra_fcalls) << "FCALLs in " << seconds << " s";
    EXPECT_LT(after.cpu_s - before.cpu_s, 0.5) << "relay CPU seconds in " << seconds << " s";
  }

  // Schedules task `id` 1 s ahead and asserts it fires on time (fired_ms - due_ms < 500).
  void expect_task_fires_on_time(const std::string& id) {
    const auto due = schedule_all(redis_, {{id, 1000, "on time"}});
    ASSERT_EQ(due.size(), 1u);
    Entries entries;
    ASSERT_TRUE(wait_until(
        [&] {
          entries = xrange_all(redis_, "expiry:stream");
          for (const auto& e : entries) {
            if (e.at(entry_field::kId) == id) return true;
          }
          return false;
        },
        10s))
        << relay_->output();
    for (const auto& e : entries) {
      if (e.at(entry_field::kId) != id) continue;
      EXPECT_EQ(std::stoll(e.at(entry_field::kDueMs)), due.at(id));
      const long long late = std::stoll(e.at(entry_field::kFiredMs)) - std::stoll(e.at(entry_field::kDueMs));
      EXPECT_GE(late, 0);
      EXPECT_LT(late, 500) << "task " << id << " fired " << late << " ms late";
      EXPECT_EQ(e.at(entry_field::kPayload), "on time");
    }
  }

  // A huge score as the only member must not make the relay sweep in a loop.
  void expect_no_busy_loop_with_member_scored(const std::string& score) {
    ASSERT_EQ(integer(redis_, {"ZADD", kSchedule, score, "far"}), 1);
    start();
    ASSERT_NO_FATAL_FAILURE(wait_ready());
    const Usage before = usage();
    ASSERT_NO_FATAL_FAILURE(expect_task_fires_on_time("normal"));
    // The schedule FCALL, and at most a claim by event besides the sweeps.
    ASSERT_NO_FATAL_FAILURE(expect_idle_since(before, 3s, 2));
    auto kept = redis_.command({"ZSCORE", kSchedule, "far"});
    ASSERT_EQ(kept.type, Reply::Type::String) << "the far member must stay in the schedule";
    EXPECT_EQ(std::stod(kept.str), std::stod(score)) << kept.str;
    EXPECT_EQ(zcard(redis_), 1);
    EXPECT_EQ(xlen(redis_), 1) << "only the normal task was forwarded";
  }

  // Runs expiry-ctl with `args` and the server's URL.
  RunResult ctl(std::vector<std::string> args) {
    args.push_back("--redis-url=" + server_.url());
    return run_to_exit(EXPIRY_CTL_BIN, args);
  }

  long long dbsize() { return integer(redis_, {"DBSIZE"}); }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  int metrics_port_ = 0;
  std::unique_ptr<ChildProcess> relay_;
};

// ---------------------------------------------------------------- a. huge scores and wake values

TEST_F(HostileDataTest, AMemberScored1e16DoesNotMakeTheRelaySpin) {
  expect_no_busy_loop_with_member_scored("1e16");
}

TEST_F(HostileDataTest, AMemberScoredPlusInfDoesNotMakeTheRelaySpin) {
  expect_no_busy_loop_with_member_scored("+inf");
}

TEST_F(HostileDataTest, AMemberScoredMinusInfIsDueAndForwardedOnce) {
  ASSERT_EQ(integer(redis_, {"ZADD", kSchedule, "-inf", "gone"}), 1);
  start({"--sweep-interval-ms", "500"});  // the periodic sweeps below come sooner than the default 10 s
  ASSERT_NO_FATAL_FAILURE(wait_ready());
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 10s)) << relay_->output();
  EXPECT_EQ(zcard(redis_), 0);
  // Two more sweeps must not forward it again.
  const double sweeps = metric("expiry_relay_sweep_batches_total");
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_sweep_batches_total") >= sweeps + 2; }, 10s))
      << relay_->output();
  const auto entries = xrange_all(redis_, "expiry:stream");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at(entry_field::kId), "gone");
  EXPECT_EQ(entries[0].at(entry_field::kMissingPayload), "absent") << "a hand-written member has no shadow hash";
  EXPECT_EQ(metric("expiry_relay_tasks_scheduled_already_due_total"), 1) << "no lateness for an unknown schedule time";
  EXPECT_EQ(metric("expiry_relay_lateness_seconds_count"), 0);
  EXPECT_TRUE(relay_->running());
}

TEST_F(HostileDataTest, ForgedWakeMessagesAtTheLimitsOfLongLongDoNotMakeTheRelaySpin) {
  start();
  ASSERT_NO_FATAL_FAILURE(wait_ready());
  const Usage before = usage();
  for (const char* due : {"9223372036854775807", "-9223372036854775808"}) {
    EXPECT_EQ(integer(redis_, {"PUBLISH", "expiry:{0}:wake", due}), 1) << "the relay is subscribed";
  }
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_wakeups_total") >= 2; }, 5s)) << relay_->output();
  ASSERT_NO_FATAL_FAILURE(expect_task_fires_on_time("after-wake"));
  ASSERT_NO_FATAL_FAILURE(expect_idle_since(before, 3s, 2));
  EXPECT_EQ(xlen(redis_), 1);
}

// ---------------------------------------------------------------- b. trigger keys with invalid ids

TEST_F(HostileDataTest, TriggerKeysWithInvalidIdsAreCountedLoggedRarelyAndClaimNothing) {
  start();
  ASSERT_NO_FATAL_FAILURE(wait_ready());
  const long long fcalls_before = fcall_calls(redis_);
  const double sweeps_before = metric("expiry_relay_sweep_batches_total");
  const int kKeys = 2000;
  // Three kinds of ids the library rejects; the kind of id i is i % 3.
  const std::string kinds[] = {"\n", kLineSep, "\xff"};
  std::vector<std::vector<std::string>> cmds;
  for (int i = 0; i < kKeys; ++i) {
    cmds.push_back({"SET", "expiry:{0}:t:bad" + kinds[i % 3] + std::to_string(i), "1", "PX", "50"});
  }
  pipeline(redis_, cmds);
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_events_invalid_id_total") == kKeys; }, 30s))
      << "invalid-id events counted: " << metric("expiry_relay_events_invalid_id_total") << "\n"
      << relay_->output();
  EXPECT_EQ(dbsize(), 1) << "only the relay's stream is left";

  const std::string log = relay_->output();
  const auto lines = lines_with(log, "holds no valid task id");
  ASSERT_GE(lines.size(), 1u) << log;
  EXPECT_LE(lines.size(), 3u) << log;
  // The line names the key, escaped so that it stays on one line.
  const std::regex named(R"re(expiry:\{0\}:t:bad(\\n|\\u2028|\\xff)(\d+))re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(lines[0], m, named)) << lines[0];
  const int i = std::stoi(m[2].str());
  EXPECT_LT(i, kKeys);
  const char* expected_escape[] = {R"(\n)", R"(\u2028)", R"(\xff)"};
  EXPECT_EQ(m[1].str(), expected_escape[i % 3]) << lines[0];
  // No key could start a line of its own in the log: every line is a log line.
  std::istringstream all(log);
  std::string line;
  const std::regex log_line(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} )");
  while (std::getline(all, line)) {
    if (!line.empty()) EXPECT_TRUE(std::regex_search(line, log_line)) << "not a log line: " << line;
  }

  // The events started no claims and no sweeps.
  EXPECT_LT(fcall_calls(redis_) - fcalls_before, 50);
  EXPECT_LT(metric("expiry_relay_sweep_batches_total") - sweeps_before, 50);
  EXPECT_EQ(metric("expiry_relay_claim_errors_total"), 0);
  EXPECT_EQ(xlen(redis_), 0);
  EXPECT_TRUE(relay_->running());
}

// ---------------------------------------------------------------- c. producers on another database

TEST_F(HostileDataTest, ARelayOnDb1ReportsTriggerKeysExpiringInDb0AndLeavesThemAlone) {
  TestConnection db1(server_.host(), server_.port());
  db1.command({"SELECT", "1"});
  start({}, server_.url(1));
  ASSERT_NO_FATAL_FAILURE(wait_ready(db1));
  // A producer on db 0.
  schedule_all(redis_, {{"db0-task", 100, "p"}});
  ASSERT_TRUE(wait_until(
      [&] {
        return contains(relay_->output(), "must use the same database") &&
               metric("expiry_relay_events_other_db_total") >= 1;
      },
      10s))
      << relay_->output();
  const auto lines = lines_with(relay_->output(), "must use the same database");
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(contains(lines[0], "expiry:{0}:t:db0-task")) << lines[0];
  EXPECT_TRUE(contains(lines[0], "database 0")) << lines[0];
  // Another sweep later, the task is still pending in db 0 and nothing was forwarded anywhere.
  const double sweeps = metric("expiry_relay_sweep_batches_total");
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_sweep_batches_total") >= sweeps + 1; }, 10s));
  EXPECT_EQ(zcard(redis_), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:db0-task"}), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:stream"}), 0);
  EXPECT_EQ(xlen(db1), 0);
  EXPECT_EQ(zcard(db1), 0);
  EXPECT_EQ(metric("expiry_relay_claim_errors_total"), 0);
  EXPECT_TRUE(relay_->running());
}

// ---------------------------------------------------------------- d. keys under another prefix or a malformed bucket

TEST_F(HostileDataTest, TheLibraryRefusesKeysUnderAnotherBucketOrPrefix) {
  redis_.command(load_library_argv());
  struct Layout {
    std::string schedule, trigger, shadow, message;
  };
  const std::vector<Layout> layouts = {
      {"expiry:{01}:schedule", "expiry:{01}:t:a", "expiry:{01}:task:a", "bucket {01} is not a bucket number"},
      {"expiry:{16384}:schedule", "expiry:{16384}:t:a", "expiry:{16384}:task:a", "is not a bucket number"},
      {"expiry:0:schedule", "expiry:0:t:a", "expiry:0:task:a", "first key must be the schedule key"},
      {"expiry:{0}:schedule", "expiry:{1}:t:a", "expiry:{1}:task:a", "keys do not match the layout"},
  };
  for (const auto& l : layouts) {
    auto r = redis_.command({"FCALL", "expiry_schedule", "3", l.schedule, l.trigger, l.shadow, "a", "delay", "100",
                             "p"});
    ASSERT_TRUE(r.failed()) << l.schedule << ": " << r.describe();
    EXPECT_EQ(r.str.rfind("ERR expiry: ", 0), 0u) << r.str;
    EXPECT_TRUE(contains(r.str, l.message)) << r.str;
    auto keys = redis_.command({"KEYS", "*"});
    EXPECT_TRUE(keys.elements.empty()) << l.schedule << " wrote " << keys.describe();
    EXPECT_EQ(dbsize(), 0);
  }

  // A task written by hand under the non-canonical bucket {01} and under an untagged prefix: due, with a shadow
  // hash and a trigger. Neither sweep nor cancel may touch them through such keys.
  for (const std::string prefix : {"expiry:{01}:", "expiry:0:"}) {
    redis_.command({"ZADD", prefix + "schedule", "1", "a"});
    redis_.command({"HSET", prefix + "task:a", "payload", "p", "due_ms", "1"});
    redis_.command({"SET", prefix + "t:a", "1"});
  }
  for (const std::string prefix : {"expiry:{01}:", "expiry:0:"}) {
    auto sweep = redis_.command({"FCALL", "expiry_sweep", "2", prefix + "schedule", "expiry:stream", "100", "sweep",
                                 "workers"});
    ASSERT_TRUE(sweep.failed()) << prefix << ": " << sweep.describe();
    EXPECT_EQ(sweep.str.rfind("ERR expiry: ", 0), 0u) << sweep.str;
    auto cancel = redis_.command(
        {"FCALL", "expiry_cancel", "3", prefix + "schedule", prefix + "t:a", prefix + "task:a", "a"});
    ASSERT_TRUE(cancel.failed()) << prefix << ": " << cancel.describe();
    EXPECT_EQ(cancel.str.rfind("ERR expiry: ", 0), 0u) << cancel.str;
    auto claim = redis_.command({"FCALL", "expiry_claim", "4", prefix + "schedule", prefix + "t:a", prefix + "task:a",
                                 "expiry:stream", "a", "event", "workers"});
    ASSERT_TRUE(claim.failed()) << prefix << ": " << claim.describe();
    EXPECT_EQ(claim.str.rfind("ERR expiry: ", 0), 0u) << claim.str;
  }
  for (const std::string prefix : {"expiry:{01}:", "expiry:0:"}) {
    EXPECT_EQ(integer(redis_, {"ZCARD", prefix + "schedule"}), 1) << prefix;
    EXPECT_EQ(integer(redis_, {"EXISTS", prefix + "task:a", prefix + "t:a"}), 2) << prefix;
  }
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:stream"}), 0) << "no stream may be created";
  EXPECT_EQ(dbsize(), 6);
}

// ---------------------------------------------------------------- e. streams inside the task key space

TEST_F(HostileDataTest, TheLibraryRefusesAStreamInsideTheTaskKeySpace) {
  redis_.command(load_library_argv());
  for (const std::string stream : {"expiry:{0}:task:b", "expiry:{0}:t:b", "expiry:{0}:schedule", "expiry:{7}:x"}) {
    auto r = redis_.command(schedule_argv(KeyLayout("expiry"), "a", ScheduleMode::Delay, 100, "p", stream));
    ASSERT_TRUE(r.failed()) << stream << ": " << r.describe();
    EXPECT_EQ(r.str.rfind("ERR expiry: ", 0), 0u) << r.str;
    EXPECT_TRUE(contains(r.str, "task key space")) << r.str;
    EXPECT_EQ(dbsize(), 0) << stream;
  }
  // The relay's default stream there: sweep and claim refuse before touching anything.
  ASSERT_FALSE(redis_.command(schedule_argv(KeyLayout("expiry"), "a", ScheduleMode::At, 1, "p")).failed());
  auto sweep = redis_.command(sweep_argv(KeyLayout("expiry"), "expiry:{0}:task:b", 100, "sweep", "workers"));
  ASSERT_TRUE(sweep.failed()) << sweep.describe();
  EXPECT_TRUE(contains(sweep.str, "task key space")) << sweep.str;
  auto claim = redis_.command(claim_argv(KeyLayout("expiry"), "a", "event", "expiry:{0}:task:b", "workers"));
  ASSERT_TRUE(claim.failed()) << claim.describe();
  EXPECT_TRUE(contains(claim.str, "task key space")) << claim.str;
  EXPECT_EQ(zcard(redis_), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:b"}), 0);
}

TEST_F(HostileDataTest, ExpiryCtlRefusesAStreamInsideTheTaskKeySpace) {
  const RunResult one = ctl({"schedule", "x", "--delay-ms", "100", "--stream", "expiry:{0}:task:b"});
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_TRUE(contains(one.output, "task key space")) << one.output;
  EXPECT_EQ(dbsize(), 0);

  const std::string path = server_.dir() + "/tasks.jsonl";
  {
    std::ofstream out(path);
    out << R"({"id":"ok-1","delay_ms":60000})" "\n"
        << R"({"id":"x","delay_ms":100,"stream":"expiry:{0}:task:b"})" "\n"
        << R"({"id":"ok-2","delay_ms":60000,"stream":"orders:stream"})" "\n";
  }
  const RunResult bulk = ctl({"schedule", "--file", path});
  EXPECT_EQ(bulk.exit_code, 2) << bulk.output;
  EXPECT_TRUE(contains(bulk.output, "line 2")) << bulk.output;
  EXPECT_TRUE(contains(bulk.output, "task key space")) << bulk.output;
  EXPECT_TRUE(contains(bulk.output, "nothing was written")) << bulk.output;
  EXPECT_EQ(dbsize(), 0);
}

TEST_F(HostileDataTest, RelayAndCancellerRefuseAStreamInsideTheTaskKeySpace) {
  ChildProcess relay(EXPIRY_RELAY_BIN, {"--redis-url", server_.url(), "--instance", "r1", "--stream",
                                        "expiry:{0}:task:b"});
  auto code = relay.wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << relay.output();
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(contains(relay.output(), "task key space")) << relay.output();

  for (const std::vector<std::string> flags : {std::vector<std::string>{"--stream", "expiry:{0}:task:b"},
                                               std::vector<std::string>{"--dead-stream", "expiry:{0}:t:dead"}}) {
    std::vector<std::string> args = {"--redis-url", server_.url(), "--consumer", "c1"};
    args.insert(args.end(), flags.begin(), flags.end());
    ChildProcess canceller(ORDER_CANCELLER_BIN, args);
    auto rc = canceller.wait_exit(10s);
    ASSERT_TRUE(rc.has_value()) << canceller.output();
    EXPECT_EQ(*rc, 2) << flags[0];
    EXPECT_TRUE(contains(canceller.output(), "task key space")) << canceller.output();
  }
  EXPECT_EQ(dbsize(), 0);
}

TEST_F(HostileDataTest, AShadowHashPointingIntoTheTaskKeySpaceIsForwardedToTheDefaultStream) {
  start();
  ASSERT_NO_FATAL_FAILURE(wait_ready());
  schedule_all(redis_, {{"y", 600000, "y's payload"}, {"x", 300, "x's payload"}});
  const auto y_before = redis_.command({"HGETALL", "expiry:{0}:task:y"});
  ASSERT_EQ(integer(redis_, {"HSET", "expiry:{0}:task:x", "stream", "expiry:{0}:task:y"}), 1);

  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 10s)) << relay_->output();
  const auto entries = xrange_all(redis_, "expiry:stream");
  ASSERT_EQ(entries.size(), 1u);
  const auto& e = entries[0];
  EXPECT_EQ(e.at(entry_field::kId), "x");
  EXPECT_EQ(e.at(entry_field::kPayload), "x's payload");
  ASSERT_EQ(e.count(entry_field::kUndeliverableStream), 1u);
  EXPECT_EQ(e.at(entry_field::kUndeliverableStream), "expiry:{0}:task:y");
  ASSERT_EQ(e.count(entry_field::kUndeliverableReason), 1u);
  EXPECT_TRUE(contains(e.at(entry_field::kUndeliverableReason), "task key space")) << e.at(entry_field::kUndeliverableReason);
  // y's shadow hash is untouched and y still pending.
  EXPECT_EQ(redis_.command({"TYPE", "expiry:{0}:task:y"}).str, "hash");
  EXPECT_EQ(redis_.command({"HGETALL", "expiry:{0}:task:y"}).describe(), y_before.describe());
  EXPECT_EQ(zcard(redis_), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:t:y"}), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:x", "expiry:{0}:t:x"}), 0);
}

// ---------------------------------------------------------------- f. invisible and line-breaking ids

TEST_F(HostileDataTest, IdsWithNelLineSeparatorOrBomAreRejectedByLibraryAndCtl) {
  redis_.command(load_library_argv());
  const std::vector<std::pair<std::string, std::string>> ids = {
      {"order" + kNel + "42", "U+0085"}, {"order" + kLineSep + "42", "U+2028"}, {kBom + "order42", "U+FEFF"}};
  for (const auto& [id, code_point] : ids) {
    auto r = redis_.command(schedule_argv(KeyLayout("expiry"), id, ScheduleMode::Delay, 100, "p"));
    ASSERT_TRUE(r.failed()) << code_point << ": " << r.describe();
    EXPECT_EQ(r.str.rfind("ERR expiry: ", 0), 0u) << r.str;
    EXPECT_TRUE(contains(r.str, code_point)) << r.str;
    EXPECT_EQ(dbsize(), 0) << code_point;

    const RunResult run = ctl({"schedule", id, "--delay-ms", "100"});
    EXPECT_EQ(run.exit_code, 2) << code_point << ": " << run.output;
    EXPECT_TRUE(contains(run.output, code_point)) << run.output;
    EXPECT_EQ(dbsize(), 0) << code_point;
  }
}

// ---------------------------------------------------------------- g. tasks scheduled already due

TEST_F(HostileDataTest, ATaskScheduledAlreadyDueIsCountedApartFromTheLatencyHistogram) {
  start();
  ASSERT_NO_FATAL_FAILURE(wait_ready());
  ASSERT_EQ(metric("expiry_relay_lateness_seconds_count"), 0);
  ASSERT_EQ(metric("expiry_relay_tasks_scheduled_already_due_total"), 0);
  // Due at 1 ms after the epoch: decades "late" if it were measured.
  auto r = redis_.command(schedule_argv(KeyLayout("expiry"), "ancient", ScheduleMode::At, 1, "p"));
  ASSERT_FALSE(r.failed()) << r.describe();
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_tasks_scheduled_already_due_total") == 1; }, 10s))
      << relay_->output();
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s));
  EXPECT_EQ(xrange_all(redis_, "expiry:stream")[0].at(entry_field::kId), "ancient");
  EXPECT_EQ(metric("expiry_relay_lateness_seconds_count"), 0);
  EXPECT_LT(metric("expiry_relay_lateness_seconds_sum"), 1.0);

  // A task scheduled in the future is measured.
  schedule_all(redis_, {{"future", 200, "p"}});
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_lateness_seconds_count") == 1; }, 10s))
      << relay_->output();
  EXPECT_EQ(xlen(redis_), 2);
  EXPECT_GE(metric("expiry_relay_lateness_seconds_sum"), 0.0);
  EXPECT_LT(metric("expiry_relay_lateness_seconds_sum"), 1.0);
  EXPECT_EQ(metric("expiry_relay_tasks_scheduled_already_due_total"), 1) << "the ancient task was counted once";
  EXPECT_EQ(metric(R"(expiry_relay_tasks_forwarded_total{via="sweep"})") +
                metric(R"(expiry_relay_tasks_forwarded_total{via="event"})"),
            2);
}

}  // namespace
}  // namespace expiry::test
