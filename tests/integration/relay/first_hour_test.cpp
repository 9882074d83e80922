// What a new user stumbled on in the first hour: each case runs the real binaries against a
// private redis-server and checks the outcome in Redis. Where each of the report's items is
// checked (the tests not in this file name their file):
//   1 reschedule keeps the payload; warnings    FirstHourTest.Reschedule*, FirstHourTest.ScheduleWarns*
//   2 past due times and the lateness metric    FirstHourTest.TasksScheduledAlreadyDue*,
//                                               HostileDataTest.ATaskScheduledAlreadyDue* (hostile_data_test)
//   3 missing password, backoff, /healthz       Handshake.* (handshake_test), FirstHour.Healthz*
//   4 install, by-hand start, first FCALL       deploy_install (tests/deploy/check_install.sh)
//   5 expiry-ctl with the relay's config        CtlTest.StatsAndTailUseTheRelaysStreamAndGroup,
//                                               CtlTest.StatsSays*, CtlTest.TailHints* (ctl_test)
//   6 --check-config                            FirstHour.CheckConfig*
//   7 maxmemory-policy                          FirstHour.EvictionPolicy*, FirstHourTest.NoevictionGivesNoWarning
//   8 --version, exit 2, --help in words        FirstHour.EveryProgramHasVersion*, CommandLine.* (unit)
//   9 image: bind, healthcheck, order-sim drain deploy_dockerfile_build, OrderSimTest.* (order_sim_test)
//  10 bulk payloads, Ctrl-C, tail               CtlTest.BulkPayloadB64*, CtlTest.BulkStoppedBySignal*,
//                                               CtlTest.TailQuotesEscapesAndPrintsJson, BulkFile.*, EntryText.*
//  11 the demo canceller's own stream           OrderSimTest.TheCancellerLeavesTasksInTheDefaultStreamAlone
//  12 redis.conf binds loopback                 (configuration; .gitignore covers appendonlydir/)
//  13 log lines                                 Handshake.*, RelayNotifications.RequireNotificationsMakesItFatal
#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

struct Run {
  int exit_code = -1;
  std::string output;
};

Run run_ctl(const RedisServer& server, std::vector<std::string> args) {
  args.insert(args.begin() + 1, {"--redis-url", server.url()});
  ChildProcess child(EXPIRY_CTL_BIN, args);
  auto rc = child.wait_exit(60s);
  if (!rc) {
    child.kill_hard();
    ADD_FAILURE() << "expiry-ctl did not exit: " << child.output();
    return {};
  }
  return {*rc, child.output()};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class FirstHourTest : public ::testing::Test {
 protected:
  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  const KeyLayout keys_{"expiry"};
};

TEST_F(FirstHourTest, RescheduleMovesAPendingTaskAndKeepsItsPayloadAndStream) {
  auto s = run_ctl(server_, {"schedule", "order:42", "--delay-ms", "600000", "--payload", "{\"order_id\":\"42\"}",
                             "--stream", "orders:timeouts"});
  ASSERT_EQ(s.exit_code, 0) << s.output;
  const long long before = integer(redis_, {"PTTL", keys_.trigger_key("order:42")});
  auto r = run_ctl(server_, {"reschedule", "order:42", "--delay-ms", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "rescheduled order:42")) << r.output;
  EXPECT_EQ(redis_.command({"HGET", keys_.shadow_key("order:42"), "payload"}).str, "{\"order_id\":\"42\"}");
  EXPECT_EQ(redis_.command({"HGET", keys_.shadow_key("order:42"), "stream"}).str, "orders:timeouts");
  EXPECT_LT(integer(redis_, {"PTTL", keys_.trigger_key("order:42")}), before) << "the trigger moved with the task";
  // A relay forwards it at the new time, with its payload, to its own stream.
  auto relay = start_relay(server_, "r1");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, "orders:timeouts") == 1; }, 10s)) << relay->output();
  auto e = xrange_all(redis_, "orders:timeouts").at(0);
  EXPECT_EQ(e.at(entry_field::kPayload), "{\"order_id\":\"42\"}");
  EXPECT_LT(std::stoll(e.at(entry_field::kFiredMs)) - std::stoll(e.at(entry_field::kDueMs)), 1000);
  // Not pending any more: exit 3, and nothing is written.
  auto again = run_ctl(server_, {"reschedule", "order:42", "--delay-ms", "200"});
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_TRUE(has(again.output, "not pending")) << again.output;
  EXPECT_EQ(integer(redis_, {"EXISTS", keys_.shadow_key("order:42"), keys_.trigger_key("order:42")}), 0);
  EXPECT_EQ(zcard(redis_), 0);
  EXPECT_EQ(run_ctl(server_, {"reschedule", "order:42"}).exit_code, 2) << "one of --delay-ms or --at-ms is needed";
}

TEST_F(FirstHourTest, ScheduleWarnsWhenItErasesAPayloadOrTheDueTimeIsPast) {
  ASSERT_EQ(run_ctl(server_, {"schedule", "a", "--delay-ms", "600000", "--payload", "keep me"}).exit_code, 0);
  auto erase = run_ctl(server_, {"schedule", "a", "--delay-ms", "600000"});
  ASSERT_EQ(erase.exit_code, 0) << erase.output;
  EXPECT_TRUE(has(erase.output, "warning: replaced the pending task a whole, and its payload is now empty"))
      << erase.output;
  EXPECT_TRUE(has(erase.output, "expiry-ctl reschedule")) << erase.output;
  // A new task without a payload, or a replacement with one, is not worth a warning.
  auto fresh = run_ctl(server_, {"schedule", "fresh", "--delay-ms", "600000"});
  EXPECT_FALSE(has(fresh.output, "warning")) << fresh.output;
  auto with_payload = run_ctl(server_, {"schedule", "a", "--delay-ms", "600000", "--payload", "new"});
  EXPECT_FALSE(has(with_payload.output, "warning")) << with_payload.output;
  auto past = run_ctl(server_, {"schedule", "b", "--at-ms", "1000", "--payload", "p"});
  ASSERT_EQ(past.exit_code, 0) << past.output;
  EXPECT_TRUE(has(past.output, "warning: --at-ms 1000 lies")) << past.output;
  EXPECT_TRUE(has(past.output, "due at once")) << past.output;
  auto future = run_ctl(server_, {"schedule", "c", "--delay-ms", "1000", "--payload", "p"});
  EXPECT_FALSE(has(future.output, "warning")) << future.output;
}

TEST(FirstHour, EvictionPolicyOtherThanNoevictionWarnsOrExitsWithRequireNoeviction) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"maxmemory-policy allkeys-lru"};
  RedisServer server(opts);
  TestConnection redis(server.host(), server.port());
  auto relay = start_relay(server, "r1");
  wait_relay_ready(redis, "r1", *relay);
  ASSERT_TRUE(wait_until([&] { return has(relay->output(), "maxmemory-policy is 'allkeys-lru'"); }, 10s))
      << relay->output();
  EXPECT_TRUE(has(relay->output(), "CONFIG SET maxmemory-policy noeviction")) << relay->output();
  EXPECT_TRUE(relay->running());
  EXPECT_EQ(relay->terminate(), 0);

  auto strict = start_relay(server, "r2", {"--require-noeviction"});
  auto rc = strict->wait_exit(10s);
  ASSERT_TRUE(rc.has_value()) << strict->output();
  EXPECT_EQ(*rc, 2);
  EXPECT_TRUE(has(strict->output(), "require_noeviction is set")) << strict->output();
}

TEST_F(FirstHourTest, NoevictionGivesNoWarning) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  schedule_all(redis_, {{"x", 50, "p"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 10s));
  EXPECT_FALSE(has(relay->output(), "maxmemory-policy")) << relay->output();
}

TEST_F(FirstHourTest, TasksScheduledAlreadyDueStayOutOfTheLatenessHistogram) {
  const int port = free_port();
  auto relay = start_relay(server_, "r1", {"--metrics-port", std::to_string(port)});
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command(load_library_argv());
  ASSERT_FALSE(redis_.command(schedule_argv(keys_, "past", ScheduleMode::At, 1, "p")).failed());
  schedule_all(redis_, {{"future", 100, "p"}});
  std::string text;
  ASSERT_TRUE(wait_until(
      [&] {
        text = http_get(port, "/metrics").body;
        return metric_value(text, "expiry_relay_tasks_scheduled_already_due_total") == 1 &&
               metric_value(text, "expiry_relay_lateness_seconds_count") == 1;
      },
      10s))
      << text;
  EXPECT_LT(metric_value(text, "expiry_relay_lateness_seconds_sum"), 5.0) << "a task due in 1970 broke the sum";
}

TEST(FirstHour, HealthzTurnsUnhealthyAfterTheDocumentedLimitWithoutRedisAndReadyzAgreesWithMetrics) {
  RedisServer server;
  TestConnection redis(server.host(), server.port());
  const int port = free_port();
  auto relay = start_relay(server, "r1", {"--metrics-port", std::to_string(port), "--unhealthy-after-ms", "1500"});
  wait_relay_ready(redis, "r1", *relay);
  auto agree = [&](int status, const char* gauge) {
    const auto text = http_get(port, "/metrics").body;
    return metric_value(text, gauge) == (status == 200 ? 1 : 0);
  };
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 10s));
  EXPECT_EQ(http_get(port, "/healthz").status, 200);
  EXPECT_TRUE(agree(200, "expiry_relay_ready"));
  EXPECT_TRUE(agree(200, "expiry_relay_healthy"));

  server.stop();
  // Not ready at once; still healthy until the limit has passed, then 503 with the reason.
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 503; }, 10s)) << relay->output();
  EXPECT_TRUE(agree(503, "expiry_relay_ready"));
  EXPECT_EQ(metric_value(http_get(port, "/metrics").body, R"(expiry_relay_connected{connection="commands"})"), 0);
  HttpResponse health;
  ASSERT_TRUE(wait_until([&] { return (health = http_get(port, "/healthz")).status == 503; }, 10s));
  EXPECT_NE(health.body.find("no ready connection to Redis"), std::string::npos) << health.body;
  EXPECT_TRUE(agree(503, "expiry_relay_healthy"));

  server.start();
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/healthz").status == 200; }, 15s)) << relay->output();
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 15s)) << relay->output();
  EXPECT_TRUE(agree(200, "expiry_relay_ready"));
}

TEST(FirstHour, CheckConfigShowsResolvedValuesAndHidesOnlyPasswords) {
  ChildProcess plain(EXPIRY_RELAY_BIN, {"--check-config", "--namespace", "orders", "--instance", "r9"});
  ASSERT_EQ(plain.wait_exit(10s), std::optional<int>(0)) << plain.output();
  EXPECT_TRUE(has(plain.output(), "redis_url=redis://127.0.0.1:6379/0 (default)")) << plain.output();
  EXPECT_TRUE(has(plain.output(), "stream=orders:stream (default, resolved)")) << plain.output();
  EXPECT_TRUE(has(plain.output(), "instance=r9 (flag --instance)")) << plain.output();
  EXPECT_TRUE(has(plain.output(), "dead_stream=orders:stream:dead on one Redis with one bucket, else orders:{B}:dead "
                                  "per bucket (default, resolved)"))
      << "the dead stream in effect, not the empty setting:\n" << plain.output();
  ChildProcess bucketed(EXPIRY_RELAY_BIN, {"--check-config", "--buckets", "4", "--dead-stream", "mine:dead"});
  ASSERT_EQ(bucketed.wait_exit(10s), std::optional<int>(0)) << bucketed.output();
  EXPECT_TRUE(has(bucketed.output(), "dead_stream=expiry:{B}:dead per bucket (flag --dead-stream, resolved)"))
      << bucketed.output();
  ChildProcess secret(EXPIRY_RELAY_BIN, {"--check-config", "--redis-url", "redis://app:hunter2@10.0.0.5:6380/1"});
  ASSERT_EQ(secret.wait_exit(10s), std::optional<int>(0)) << secret.output();
  EXPECT_TRUE(has(secret.output(), "redis_url=redis://app:***@10.0.0.5:6380/1")) << secret.output();
  EXPECT_FALSE(has(secret.output(), "hunter2")) << secret.output();
  EXPECT_FALSE(has(secret.output(), "instance= ")) << "the instance name is resolved:\n" << secret.output();
  ChildProcess canceller(ORDER_CANCELLER_BIN, {"--check-config"});
  ASSERT_EQ(canceller.wait_exit(10s), std::optional<int>(0)) << canceller.output();
  EXPECT_TRUE(has(canceller.output(), "dead_stream=")) << canceller.output();
  EXPECT_FALSE(has(canceller.output(), "stream= ")) << canceller.output();
}

TEST(FirstHour, EveryProgramHasVersionAndExitsTwoOnUsageErrors) {
  for (const char* bin : {EXPIRY_RELAY_BIN, ORDER_CANCELLER_BIN, ORDER_SIM_BIN, EXPIRY_CTL_BIN}) {
    SCOPED_TRACE(bin);
    ChildProcess version(bin, {"--version"});
    ASSERT_EQ(version.wait_exit(10s), std::optional<int>(0)) << version.output();
    EXPECT_TRUE(has(version.output(), "0.")) << version.output();
    ChildProcess bad(bin, {"--no-such-option"});
    ASSERT_EQ(bad.wait_exit(10s), std::optional<int>(2)) << bad.output();
    EXPECT_TRUE(has(bad.output(), "--help")) << bad.output();
  }
  // --help says what to give (MS, FILE, N ...), never CLI11's type names (issue 43).
  for (const char* bin : {EXPIRY_RELAY_BIN, ORDER_CANCELLER_BIN, ORDER_SIM_BIN}) {
    SCOPED_TRACE(bin);
    ChildProcess help(bin, {"--help"});
    ASSERT_EQ(help.wait_exit(10s), std::optional<int>(0));
    for (const char* artefact : {" TEXT", " INT", " in [", "Excludes:"}) {
      EXPECT_FALSE(has(help.output(), artefact)) << artefact << ":\n" << help.output();
    }
  }
  ChildProcess help(EXPIRY_RELAY_BIN, {"--help"});
  ASSERT_EQ(help.wait_exit(10s), std::optional<int>(0));
  EXPECT_TRUE(has(help.output(), "--sweep-interval-ms MS ")) << help.output();
  EXPECT_TRUE(has(help.output(), "--password-file FILE ")) << help.output();
}

}  // namespace
}  // namespace expiry::test
