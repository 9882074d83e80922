// expiry-webhook end to end: a real redis-server, expiry-relay and expiry-webhook as child
// processes, and a Python receiver (receiver.py) that checks every signature with its own
// HMAC. Covers acks, retries with one webhook-id, Retry-After, dead letters (410, a refused
// private destination), connection refused, a slow endpoint beside a fast one, a dispatcher
// killed -9 mid-delivery (a second one reclaims and delivers everything), the bounded SIGTERM
// drain, the catch-up's count of entries without a webhook field, --check-config's endpoint
// verdicts, and bad configs.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "functions/recur_calls.h"
#include "integration/relay/relay_harness.h"
#include "support/tls_certs.h"

namespace expiry::test {
namespace {

const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";
const KeyLayout kLayout("expiry");
const std::string kSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1u";
const std::string kOtherSecret = "whsec_QUJDREVGR0hJSktMTU5PUA==";  // a key the receiver does not know
constexpr const char* kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class WebhookDelivery : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_.command(load_library_argv());
    relay_ = start_relay(server_, "r1");
    wait_relay_ready(redis_, "r1", *relay_);
    receiver_ = start_receiver("receiver", {}, receiver_port_);
  }

  // receiver.py on a free loopback port (HTTPS with `tls`: certificate and key), logging to
  // receiver_log_.
  std::unique_ptr<ChildProcess> start_receiver(const std::string& name, std::vector<std::string> tls, int& port) {
    const std::string port_file = server_.dir() + "/" + name + ".port";
    std::vector<std::string> args = {WEBHOOK_RECEIVER_PY, port_file, receiver_log_, kSecret};
    args.insert(args.end(), tls.begin(), tls.end());
    auto child = std::make_unique<ChildProcess>("/usr/bin/python3", args,
                                                std::vector<std::pair<std::string, std::string>>{},
                                                server_.dir() + "/" + name + ".out");
    EXPECT_TRUE(wait_until([&] { return std::ifstream(port_file).good(); }, 30s)) << child->output();
    std::ifstream(port_file) >> port;
    return child;
  }

  std::string url(const std::string& path, const std::string& host = "127.0.0.1") const {
    return "http://" + host + ":" + std::to_string(receiver_port_) + path;
  }

  // The usual config: one endpoint per receiver path, loopback allowed (127.0.0.1 only, so
  // 127.0.0.2 stands for a private destination outside allow_private).
  nlohmann::json config() const {
    nlohmann::json endpoints;
    for (const char* path : {"ok", "flaky", "limited", "gone"}) {
      endpoints[path] = {{"url", url(std::string("/") + path)}, {"secret", kSecret}, {"timeout_ms", 5000}};
    }
    endpoints["slow"] = {{"url", url("/slow")}, {"secret", kSecret}, {"timeout_ms", 10000}, {"max_in_flight", 1}};
    endpoints["rotating"] = {{"url", url("/ok")}, {"secret", kOtherSecret}, {"secrets", {kSecret}}};
    endpoints["timeout"] = {{"url", url("/slow")}, {"secret", kSecret}, {"timeout_ms", 300}};
    endpoints["refused"] = {{"url", "http://127.0.0.1:" + std::to_string(closed_port_) + "/"}, {"secret", kSecret}};
    endpoints["private"] = {{"url", url("/ok", "127.0.0.2")}, {"secret", kSecret}};
    endpoints["by_name"] = {{"url", url("/ok", "localhost")}, {"secret", kSecret}};
    return {{"endpoints", endpoints},
            {"default_endpoint", "ok"},
            {"allow_private", {"127.0.0.1/32"}},
            {"max_attempts", 4},
            {"retry_base_ms", 300},
            {"retry_max_ms", 5000}};
  }

  // expiry-webhook on a metrics port picked just before it starts (metrics_port_). A port that a
  // test running beside this one took in between makes it exit at once ("Address already in
  // use"): it is started again on another, up to 5 times.
  std::unique_ptr<ChildProcess> start_webhook(const std::string& config_text, const std::string& name = "w1",
                                              const std::string& min_idle_ms = "60000") {
    const std::string path = server_.dir() + "/" + name + ".json";
    std::ofstream(path) << config_text;
    for (int attempt = 1;; ++attempt) {
      metrics_port_ = free_port();
      auto webhook = std::make_unique<ChildProcess>(
          EXPIRY_WEBHOOK_BIN,
          std::vector<std::string>{"--config", path, "--redis-url", server_.url(), "--consumer", name, "--block-ms",
                                   "200", "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000",
                                   "--min-idle-ms", min_idle_ms, "--metrics-port", std::to_string(metrics_port_)},
          std::vector<std::pair<std::string, std::string>>{},
          server_.dir() + "/" + name + "-" + std::to_string(attempt) + ".log");
      const std::string listening = "metrics on http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics";
      wait_until([&] { return !webhook->running() || webhook->output().find(listening) != std::string::npos; }, 30s);
      const bool port_taken = !webhook->running() && webhook->output().find("Address already in use") != std::string::npos;
      if (!port_taken || attempt == 5) return webhook;
    }
  }

  void schedule(const std::string& id, const std::string& webhook, const std::string& payload,
                const std::string& extra_options = "") {
    const std::string options = (webhook.empty() ? "" : "webhook=" + webhook) + extra_options;
    const Reply r =
        redis_.command(schedule_argv(kLayout, id, ScheduleMode::Delay, 0, payload, {}, std::nullopt, options));
    ASSERT_FALSE(r.failed()) << r.describe();
  }

  std::vector<nlohmann::json> received(const std::string& path = "") const {
    std::vector<nlohmann::json> out;
    std::ifstream in(receiver_log_);
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && (path.empty() || j["path"] == path)) out.push_back(j);
    }
    return out;
  }

  long long group_pending() { return redis_.command({"XPENDING", kStream, "workers"}).elements.at(0).integer; }
  double metric(const std::string& series) { return metric_value(http_get(metrics_port_, "/metrics").body, series); }
  std::string logs(ChildProcess& webhook) { return webhook.output() + "\nrelay:\n" + relay_->output(); }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::unique_ptr<ChildProcess> relay_;
  std::unique_ptr<ChildProcess> receiver_;
  const std::string receiver_log_ = server_.dir() + "/received.jsonl";
  int receiver_port_ = 0;
  int metrics_port_ = 0;  // the last start_webhook's
  const int closed_port_ = free_port();
};

TEST_F(WebhookDelivery, ASignedPostIsAcknowledged) {
  auto webhook = start_webhook(config().dump());
  const std::string payload = R"({"order_id":"42","note":"caf\u00e9"})";
  schedule("order:42", "ok", payload, std::string(" traceparent=") + kTrace);
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1; }, 30s)) << logs(*webhook);
  const auto r = received("/ok")[0];
  EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
  EXPECT_EQ(r["body"], payload);
  EXPECT_EQ(r["content_type"], "application/json");
  EXPECT_EQ(r["traceparent"], kTrace);
  const Entries entries = xrange_all(redis_, kStream);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(r["id"], "order:42." + entries[0].at("due_ms"));
  const long long ts = std::stoll(r["timestamp"].get<std::string>());
  EXPECT_NEAR(static_cast<double>(ts), static_cast<double>(redis_now_ms(redis_) / 1000), 60);
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 30s)) << logs(*webhook);
  ASSERT_TRUE(wait_until([&] { return metric(R"(expiry_webhook_deliveries_total{endpoint="ok",class="2xx"})") == 1; },
                         30s))
      << http_get(metrics_port_, "/metrics").body;
  EXPECT_EQ(metric("expiry_webhook_delivery_latency_seconds_count"), 1);
  EXPECT_EQ(xlen(redis_, kDead), 0);
  EXPECT_EQ(webhook->terminate(), 0);
}

// A task id that is not ASCII verifies at a Python http.server receiver (which decodes header
// bytes as Latin-1): webhook-id carries it percent-encoded. Stream fields with CR LF (an entry
// written by anything with XADD rights) inject no header: the id is encoded, and a traceparent
// that is not W3C is left out.
TEST_F(WebhookDelivery, ANonAsciiIdVerifiesAndNoStreamFieldInjectsAHeader) {
  auto webhook = start_webhook(config().dump());
  schedule("commande:caf\xC3\xA9-\xE2\x98\x95", "ok", R"({"order_id":"7"})");
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1; }, 30s)) << logs(*webhook);
  const auto first = received("/ok")[0];
  EXPECT_TRUE(first["verified"].get<bool>()) << first.dump();
  const Entries entries = xrange_all(redis_, kStream);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(first["id"], "commande:caf%C3%A9-%E2%98%95." + entries[0].at("due_ms"));

  const Reply added = redis_.command({"XADD", kStream, "*", "id", "evil\r\nX-Injected: 1", "payload", "{}",
                                      "due_ms", "1700000000000", "webhook", "ok", "traceparent",
                                      std::string("00-") + std::string(32, 'a') + "-" + std::string(16, 'b') +
                                          "-01\r\nX-Evil: 2"});
  ASSERT_FALSE(added.failed()) << added.describe();
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 2; }, 30s)) << logs(*webhook);
  const auto second = received("/ok")[1];
  EXPECT_TRUE(second["verified"].get<bool>()) << second.dump();
  EXPECT_EQ(second["id"], "evil%0D%0AX-Injected:%201.1700000000000");
  EXPECT_EQ(second["traceparent"], "") << "a traceparent that is not W3C is left out";
  for (const auto& name : second["header_names"]) {
    EXPECT_NE(name, "x-injected") << second.dump();
    EXPECT_NE(name, "x-evil") << second.dump();
  }
  EXPECT_EQ(webhook->terminate(), 0);
}

// EXPIRY_WEBHOOK_CONFIG names the webhook JSON (as --help says), and a recurring schedule's
// occurrences are delivered each with its own webhook-id, <schedule id>.<occurrence_ms>.
TEST_F(WebhookDelivery, TheConfigCanBeNamedByEnvAndRecurringOccurrencesEachHaveTheirWebhookId) {
  const std::string path = server_.dir() + "/env.json";
  std::ofstream(path) << config().dump();
  metrics_port_ = free_port();
  ChildProcess webhook(EXPIRY_WEBHOOK_BIN,
                       std::vector<std::string>{"--redis-url", server_.url(), "--consumer", "env", "--block-ms", "200",
                                                "--metrics-port", std::to_string(metrics_port_)},
                       std::vector<std::pair<std::string, std::string>>{{"EXPIRY_WEBHOOK_CONFIG", path}},
                       server_.dir() + "/env.log");
  const long long now = redis_now_ms(redis_);
  std::vector<RecurInstant> instants;
  for (long long at : {now + 300, now + 1300}) instants.push_back({at, "2026-01-01T00:00:00.000+00:00"});
  RecurDefinition def;
  def.rule = "@every 1s";
  def.start_ms = now - 700;
  def.payload = "tick";
  def.webhook = "ok";
  const Reply set = redis_.command(recur_set_argv(kLayout, "tick", def, instants));
  ASSERT_FALSE(set.failed()) << set.describe();
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() >= 2; }, 30s)) << webhook.output();
  std::set<std::string> ids;
  for (const auto& r : received("/ok")) {
    EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
    ids.insert(r["id"].get<std::string>());
  }
  EXPECT_TRUE(ids.count("tick." + std::to_string(now + 300))) << webhook.output();
  EXPECT_TRUE(ids.count("tick." + std::to_string(now + 1300))) << webhook.output();
  EXPECT_EQ(webhook.terminate(), 0);
}

// During a rotation both secrets sign: a receiver that knows only one of them verifies.
TEST_F(WebhookDelivery, TwoSecretsSendTwoSignatures) {
  auto webhook = start_webhook(config().dump());
  schedule("rot", "rotating", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1; }, 30s)) << logs(*webhook);
  const auto r = received("/ok")[0];
  EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
  const std::string signature = r["signature"];
  EXPECT_EQ(std::count(signature.begin(), signature.end(), ' '), 1) << signature;
  EXPECT_EQ(signature.rfind("v1,", 0), 0u) << signature;
}

// An endpoint whose slots and queue are full sends further entries back to be retried later;
// every task is still delivered once.
TEST_F(WebhookDelivery, AFullEndpointQueueRetriesLater) {
  auto c = config();
  c["max_queued"] = 1;
  c["max_attempts"] = 8;  // a queue-full answer counts as an attempt: 300 ms, 600 ms, ... until there is room
  auto webhook = start_webhook(c.dump());
  for (int i = 0; i < 3; ++i) schedule("full" + std::to_string(i), "slow", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/slow").size() == 3 && group_pending() == 0; }, 60s))
      << logs(*webhook);
  std::set<std::string> ids;
  for (const auto& r : received("/slow")) ids.insert(r["id"].get<std::string>().substr(0, 5));
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_GE(metric(R"(expiry_webhook_retries_total{endpoint="slow"})"), 1);
  EXPECT_EQ(xlen(redis_, kDead), 0);
}

// --help lists only options that work: not the consumer's retry options, which the webhook
// JSON sets; such a flag is refused (exit 2) before anything starts.
TEST_F(WebhookDelivery, HelpListsOnlyOptionsThatWork) {
  ChildProcess help(EXPIRY_WEBHOOK_BIN, {"--help"});
  const auto code = help.wait_exit(30s);
  ASSERT_TRUE(code.has_value()) << help.output();
  EXPECT_EQ(*code, 0) << help.output();
  EXPECT_NE(help.output().find("--redis-url"), std::string::npos) << help.output();
  for (const char* flag : {"--max-deliveries", "--retry-base-ms", "--retry-max-ms"}) {
    EXPECT_EQ(help.output().find(flag), std::string::npos) << flag << " in:\n" << help.output();
  }
  const std::string path = server_.dir() + "/help.json";
  std::ofstream(path) << config().dump();
  ChildProcess refused(EXPIRY_WEBHOOK_BIN, {"--config", path, "--max-deliveries", "3", "--check-config"});
  const auto refused_code = refused.wait_exit(30s);
  ASSERT_TRUE(refused_code.has_value()) << refused.output();
  EXPECT_EQ(*refused_code, 2) << refused.output();
}

TEST_F(WebhookDelivery, ExpiryCtlSchedulesForAnEndpoint) {
  auto webhook = start_webhook(config().dump());
  ChildProcess ctl(EXPIRY_CTL_BIN, {"schedule", "ctl-1", "--delay-ms", "0", "--payload", "{\"via\":\"ctl\"}",
                                    "--webhook", "flaky", "--redis-url=" + server_.url()});
  const auto code = ctl.wait_exit(60s);
  ASSERT_TRUE(code);
  ASSERT_EQ(*code, 0) << ctl.output();
  ASSERT_TRUE(wait_until([&] { return !received("/flaky").empty(); }, 30s)) << logs(*webhook);
  EXPECT_EQ(received("/flaky")[0]["body"], "{\"via\":\"ctl\"}");
  const std::string file = server_.dir() + "/bulk.jsonl";
  std::ofstream(file) << R"({"id": "ctl-file", "delay_ms": 0, "payload": "{\"via\":\"file\"}", "webhook": "gone"})"
                      << "\n";
  ChildProcess bulk(EXPIRY_CTL_BIN, {"schedule", "--file", file, "--redis-url=" + server_.url()});
  const auto bulk_code = bulk.wait_exit(60s);
  ASSERT_TRUE(bulk_code);
  ASSERT_EQ(*bulk_code, 0) << bulk.output();
  ASSERT_TRUE(wait_until([&] { return !received("/gone").empty(); }, 30s)) << logs(*webhook);
  EXPECT_EQ(received("/gone")[0]["body"], "{\"via\":\"file\"}");
  ChildProcess bad(EXPIRY_CTL_BIN, {"schedule", "ctl-2", "--delay-ms", "0", "--payload", "{}", "--webhook", "no/slash",
                                    "--redis-url=" + server_.url()});
  const auto bad_code = bad.wait_exit(60s);
  ASSERT_TRUE(bad_code);
  EXPECT_NE(*bad_code, 0) << bad.output();
  EXPECT_NE(bad.output().find("webhook"), std::string::npos) << bad.output();
}

TEST_F(WebhookDelivery, TheDefaultEndpointTakesTasksWithoutAWebhookField) {
  auto webhook = start_webhook(config().dump());
  schedule("plain", "", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1; }, 30s)) << logs(*webhook);
  EXPECT_TRUE(received("/ok")[0]["verified"].get<bool>());
}

TEST_F(WebhookDelivery, TwoFailuresThenSuccessKeepOneWebhookId) {
  auto webhook = start_webhook(config().dump());
  schedule("f1", "flaky", R"({"n":1})");
  ASSERT_TRUE(wait_until([&] { return received("/flaky").size() == 3 && group_pending() == 0; }, 60s))
      << logs(*webhook);
  const auto got = received("/flaky");
  EXPECT_EQ(got[0]["status"], 500);
  EXPECT_EQ(got[1]["status"], 500);
  EXPECT_EQ(got[2]["status"], 200);
  for (const auto& r : got) {
    EXPECT_EQ(r["id"], got[0]["id"]) << "one webhook-id for every attempt";
    EXPECT_TRUE(r["verified"].get<bool>());
    EXPECT_EQ(r["body"], R"({"n":1})");
  }
  // Backoff 300 ms, then 600 ms (receiver's clock; generous upper bounds for a busy machine).
  EXPECT_GE(got[1]["at"].get<double>() - got[0]["at"].get<double>(), 0.25);
  EXPECT_GE(got[2]["at"].get<double>() - got[1]["at"].get<double>(), 0.55);
  EXPECT_EQ(xlen(redis_, kDead), 0);
  EXPECT_EQ(xlen(redis_, kStream), 3);
}

TEST_F(WebhookDelivery, TooManyRequestsWaitsForRetryAfter) {
  auto webhook = start_webhook(config().dump());
  schedule("l1", "limited", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/limited").size() == 2 && group_pending() == 0; }, 60s))
      << logs(*webhook);
  const auto got = received("/limited");
  EXPECT_EQ(got[0]["status"], 429);
  EXPECT_EQ(got[1]["status"], 200);
  EXPECT_EQ(got[1]["id"], got[0]["id"]);
  EXPECT_GE(got[1]["at"].get<double>() - got[0]["at"].get<double>(), 1.9) << "Retry-After: 2, not the 300 ms backoff";
}

TEST_F(WebhookDelivery, GoneIsDeadLetteredAtOnce) {
  auto webhook = start_webhook(config().dump());
  schedule("g1", "gone", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 30s)) << logs(*webhook);
  EXPECT_EQ(received("/gone").size(), 1u);
  const Entries dead = xrange_all(redis_, kDead);
  EXPECT_NE(dead[0].at("reason").find("http 410: endpoint retired"), std::string::npos) << dead[0].at("reason");
  EXPECT_EQ(dead[0].at("id"), "g1");
  EXPECT_EQ(zcard(redis_), 0) << "not scheduled again";
}

TEST_F(WebhookDelivery, ConnectionRefusedIsRetriedThenDeadLettered) {
  auto webhook = start_webhook(config().dump());
  schedule("c1", "refused", "{}");
  // max_attempts 4: attempts 1..4, each refused, then the dead letters.
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 60s)) << logs(*webhook);
  EXPECT_EQ(xlen(redis_, kStream), 4);
  const Entries dead = xrange_all(redis_, kDead);
  EXPECT_NE(dead[0].at("reason").find("failed 4 attempts"), std::string::npos) << dead[0].at("reason");
  EXPECT_NE(dead[0].at("reason").find("onnect"), std::string::npos) << dead[0].at("reason");
  EXPECT_GE(metric(R"(expiry_webhook_retries_total{endpoint="refused"})"), 3);
}

TEST_F(WebhookDelivery, ATimeoutIsRetriedThenDeadLettered) {
  auto webhook = start_webhook(config().dump());
  schedule("t1", "timeout", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 60s)) << logs(*webhook);
  EXPECT_EQ(xlen(redis_, kStream), 4);
  const Entries dead = xrange_all(redis_, kDead);
  EXPECT_NE(dead[0].at("reason").find("failed 4 attempts"), std::string::npos) << dead[0].at("reason");
  EXPECT_NE(dead[0].at("reason").find("imeout"), std::string::npos) << dead[0].at("reason");
}

// An entry held longer than min_idle (its request still out) is neither reclaimed by its own
// consumer, which would send it twice, nor dead-lettered for its delivery count (max_attempts 2
// here: two reclaims would have done it).
TEST_F(WebhookDelivery, AnEntryHeldLongerThanMinIdleIsSentOnceAndNotDeadLettered) {
  auto c = config();
  c["max_attempts"] = 2;
  auto webhook = start_webhook(c.dump(), "w1", "500");
  schedule("once", "slow", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/slow").size() == 1 && group_pending() == 0; }, 60s))
      << logs(*webhook);
  ASSERT_TRUE(wait_until([&] { return metric("expiry_webhook_entries_acked_total") >= 1; }, 30s));
  EXPECT_EQ(webhook->output().find("reclaimed"), std::string::npos) << webhook->output();
  EXPECT_EQ(received("/slow").size(), 1u);
  EXPECT_EQ(xlen(redis_, kDead), 0);
  EXPECT_EQ(xlen(redis_, kStream), 1);
}

// expiry-webhook killed -9 with requests in flight (and more entries queued behind them) loses
// nothing: a second one of the group (another consumer name, a short --min-idle-ms) reclaims
// the first one's pending entries and delivers them. Delivery is at least once: a request the
// endpoint saw from the killed process may come again, with the same webhook-id.
TEST_F(WebhookDelivery, KilledMidDeliveryASecondDispatcherDeliversEverything) {
  constexpr int kTasks = 6;
  constexpr int kSlots = 4;  // kSlots in flight at the kill, the rest queued behind them
  auto c = config();
  c["endpoints"]["hold"] = {
      {"url", url("/hold")}, {"secret", kSecret}, {"timeout_ms", 60000}, {"max_in_flight", kSlots}};
  auto first = start_webhook(c.dump(), "w1");
  std::set<std::string> tasks;
  for (int i = 0; i < kTasks; ++i) {
    tasks.insert("k" + std::to_string(i));
    schedule("k" + std::to_string(i), "hold", R"({"k":)" + std::to_string(i) + "}");
  }
  const auto held = [&] {
    const HttpResponse r = http_get(receiver_port_, "/held");
    return r.status == 200 ? std::stoi(r.body) : -1;
  };
  ASSERT_TRUE(wait_until([&] { return held() == kSlots; }, 30s)) << logs(*first);
  ASSERT_TRUE(wait_until(
      [&] {
        return metric(R"(expiry_webhook_in_flight{endpoint="hold"})") == kSlots &&
               metric(R"(expiry_webhook_queued{endpoint="hold"})") == kTasks - kSlots;
      },
      30s))
      << http_get(metrics_port_, "/metrics").body;
  ASSERT_EQ(group_pending(), kTasks) << "all read, none acknowledged";
  EXPECT_TRUE(received("/hold").empty());

  first->kill_hard();
  EXPECT_EQ(group_pending(), kTasks) << "the kill acknowledged nothing";
  // The held requests are answered now, into the killed process's closed connections: the
  // endpoint saw them, the dispatcher never heard. /hold answers at once from here on.
  ASSERT_EQ(http_get(receiver_port_, "/release").status, 200);
  ASSERT_TRUE(wait_until([&] { return received("/hold").size() == kSlots; }, 30s)) << first->output();

  auto second = start_webhook(c.dump(), "w2", "500");
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 60s)) << logs(*second);
  ASSERT_TRUE(wait_until([&] { return metric("expiry_webhook_entries_acked_total") == kTasks; }, 30s))
      << http_get(metrics_port_, "/metrics").body;
  EXPECT_EQ(metric(R"(expiry_webhook_deliveries_total{endpoint="hold",class="2xx"})"), kTasks)
      << "the second dispatcher sent every task once and got a 2xx";
  EXPECT_EQ(xlen(redis_, kDead), 0);
  EXPECT_EQ(metric(R"(expiry_webhook_dead_letters_total{endpoint="hold"})"), 0);
  EXPECT_EQ(xlen(redis_, kStream), kTasks) << "reclaimed, not scheduled again as retries";

  // Every task reached the endpoint with a 2xx at least once; every copy of a task carried
  // one webhook-id (and a valid signature); the kSlots held ones came twice.
  std::map<std::string, std::vector<nlohmann::json>> by_task;
  for (const auto& r : received("/hold")) {
    EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
    const std::string id = r["id"];
    by_task[id.substr(0, id.find('.'))].push_back(r);
  }
  std::set<std::string> delivered;
  int twice = 0;
  for (const auto& [task, copies] : by_task) {
    SCOPED_TRACE(task);
    for (const auto& r : copies) {
      EXPECT_EQ(r["id"], copies[0]["id"]) << "a redelivery keeps the webhook-id";
      EXPECT_EQ(r["body"], copies[0]["body"]);
      if (r["status"].get<int>() / 100 == 2) delivered.insert(task);
    }
    EXPECT_LE(copies.size(), 2u);
    if (copies.size() == 2) ++twice;
  }
  EXPECT_EQ(delivered, tasks);
  EXPECT_EQ(twice, kSlots) << "only the requests out at the kill were sent again";
  EXPECT_EQ(second->terminate(), 0) << second->output();
}

// SIGTERM with a request the endpoint never answers: expiry-webhook stops reading, waits
// --drain-timeout for it, then exits, the entry left unacknowledged (pending in the group, not
// lost): another member of the group reclaims and delivers it.
TEST_F(WebhookDelivery, TheDrainIsBoundedAndLeavesWhatIsInFlightPending) {
  auto c = config();
  c["endpoints"]["hold"] = {{"url", url("/hold")}, {"secret", kSecret}, {"timeout_ms", 120000}};
  const std::string path = server_.dir() + "/drain.json";
  std::ofstream(path) << c.dump();
  metrics_port_ = free_port();
  ChildProcess webhook(EXPIRY_WEBHOOK_BIN,
                       std::vector<std::string>{"--config", path, "--redis-url", server_.url(), "--consumer", "w1",
                                                "--block-ms", "200", "--min-idle-ms", "60000", "--metrics-port",
                                                std::to_string(metrics_port_)},
                       std::vector<std::pair<std::string, std::string>>{{"EXPIRY_WEBHOOK_DRAIN_TIMEOUT", "2s"}},
                       server_.dir() + "/drain.log");
  schedule("d1", "hold", R"({"d":1})");
  const auto held = [&] {
    const HttpResponse r = http_get(receiver_port_, "/held");
    return r.status == 200 ? std::stoi(r.body) : -1;
  };
  ASSERT_TRUE(wait_until([&] { return held() == 1; }, 30s)) << webhook.output();
  ASSERT_TRUE(wait_until([&] { return metric(R"(expiry_webhook_in_flight{endpoint="hold"})") == 1; }, 30s))
      << http_get(metrics_port_, "/metrics").body;
  ASSERT_EQ(group_pending(), 1);

  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_TRUE(webhook.send_signal(SIGTERM));
  const auto code = webhook.wait_exit(60s);
  const auto took = std::chrono::steady_clock::now() - signalled;
  ASSERT_TRUE(code.has_value()) << "still draining a minute after SIGTERM:\n" << webhook.output();
  EXPECT_EQ(*code, 0) << webhook.output();
  EXPECT_GE(took, 1900ms) << "it waited for the delivery in flight";
  EXPECT_LE(took, 2s + 10s) << "the drain timeout (2s) plus slack for a loaded machine";
  EXPECT_NE(webhook.output().find("drain timeout (2s) reached: exiting with 1 entries left pending (1 requests in "
                                  "flight, 0 queued)"),
            std::string::npos)
      << webhook.output();

  // Pending in the group, owned by w1, never acknowledged nor dead-lettered.
  ASSERT_EQ(group_pending(), 1);
  const Reply pending = redis_.command({"XPENDING", kStream, "workers", "-", "+", "10"});
  ASSERT_EQ(pending.elements.size(), 1u) << pending.describe();
  EXPECT_EQ(pending.elements[0].elements.at(1).str, "w1") << pending.describe();
  EXPECT_EQ(xlen(redis_, kDead), 0);
  EXPECT_TRUE(received("/hold").empty());

  // Nothing lost: a second member reclaims it and delivers it.
  ASSERT_EQ(http_get(receiver_port_, "/release").status, 200);
  auto second = start_webhook(c.dump(), "w2", "500");
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 60s)) << logs(*second);
  ASSERT_TRUE(wait_until(
      [&] { return metric(R"(expiry_webhook_deliveries_total{endpoint="hold",class="2xx"})") == 1; }, 30s))
      << http_get(metrics_port_, "/metrics").body;
  EXPECT_EQ(xlen(redis_, kDead), 0);
  // A drain with nothing out ends at once, well within the default 10 s, and says so.
  EXPECT_EQ(second->terminate(30s), 0) << second->output();
  EXPECT_NE(second->output().find("within the drain timeout (10s)"), std::string::npos) << second->output();
}

// A group's first start reads the stream from its beginning: the entries already there without
// a webhook field (no default_endpoint) are dead-lettered, and one start-up line counts them.
// A restart with nothing to catch up logs the line with zeros.
TEST_F(WebhookDelivery, TheCatchUpCountsTheEntriesWithoutAWebhookField) {
  auto c = config();
  c.erase("default_endpoint");
  for (int i = 0; i < 3; ++i) schedule("bare" + std::to_string(i), "", "{}");
  schedule("stray", "nosuch", "{}");
  schedule("named0", "ok", "{}");
  schedule("named1", "ok", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 6; }, 30s)) << relay_->output();

  auto webhook = start_webhook(c.dump());
  const std::string line =
      "catch-up of expiry:stream done (the stream is read to its end): read the 6 entries appended before "
      "start-up: 3 without a webhook field, dead-lettered (no default_endpoint is configured); 1 naming an "
      "unknown endpoint, dead-lettered; 2 for a configured endpoint";
  ASSERT_TRUE(wait_until([&] { return webhook->output().find("catch-up of") != std::string::npos; }, 60s))
      << webhook->output();
  EXPECT_NE(webhook->output().find(line), std::string::npos) << webhook->output();
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 4 && group_pending() == 0; }, 30s)) << logs(*webhook);
  EXPECT_EQ(received("/ok").size(), 2u);
  EXPECT_EQ(webhook->terminate(30s), 0);

  auto again = start_webhook(c.dump(), "w2");
  ASSERT_TRUE(wait_until([&] { return again->output().find("catch-up of") != std::string::npos; }, 60s))
      << again->output();
  EXPECT_NE(again->output().find("read the 0 entries appended before start-up: 0 without a webhook field"),
            std::string::npos)
      << again->output();
  EXPECT_EQ(xlen(redis_, kDead), 4) << "nothing dead-lettered twice";
}

// --check-config resolves each endpoint and shows the address policy's verdict on each address;
// an endpoint on a refused address (cloud metadata, a private network outside allow_private)
// can never be delivered to and fails the check (exit 2), the allowed loopback one passes.
TEST_F(WebhookDelivery, CheckConfigShowsEachEndpointsAddressesAndVerdict) {
  const auto check = [&](const nlohmann::json& c, const std::string& name) {
    const std::string path = server_.dir() + "/" + name + ".json";
    std::ofstream(path) << c.dump();
    auto child = std::make_unique<ChildProcess>(EXPIRY_WEBHOOK_BIN, std::vector<std::string>{"--config", path,
                                                                                             "--check-config"},
                                                std::vector<std::pair<std::string, std::string>>{},
                                                server_.dir() + "/" + name + ".out");
    const auto code = child->wait_exit(60s);
    EXPECT_TRUE(code.has_value()) << child->output();
    return std::make_pair(code.value_or(-1), child->output());
  };
  nlohmann::json endpoints;
  endpoints["local"] = {{"url", url("/ok")}, {"secret", kSecret}};
  nlohmann::json good = {{"endpoints", endpoints}, {"allow_private", {"127.0.0.1/32"}}};
  const auto [good_code, good_out] = check(good, "good");
  EXPECT_EQ(good_code, 0) << good_out;
  EXPECT_NE(good_out.find("endpoint local " + url("/ok") + ": deliverable"), std::string::npos) << good_out;
  EXPECT_NE(good_out.find("  127.0.0.1: allowed (loopback, in allow_private)"), std::string::npos) << good_out;
  EXPECT_NE(good_out.find("configuration OK"), std::string::npos) << good_out;
  EXPECT_NE(good_out.find("drain_timeout=10s (default)"), std::string::npos) << good_out;

  endpoints["metadata"] = {{"url", "http://169.254.169.254/latest/meta-data"}, {"secret", kSecret}};
  endpoints["internal"] = {{"url", "http://10.0.0.1:8080/hook"}, {"secret", kSecret}};
  nlohmann::json bad = {{"endpoints", endpoints}, {"allow_private", {"127.0.0.1/32"}}};
  const auto [bad_code, bad_out] = check(bad, "bad");
  EXPECT_EQ(bad_code, 2) << bad_out;
  EXPECT_EQ(bad_out.find("configuration OK"), std::string::npos) << bad_out;
  EXPECT_NE(bad_out.find("  127.0.0.1: allowed (loopback, in allow_private)"), std::string::npos) << bad_out;
  EXPECT_NE(bad_out.find("endpoint metadata http://169.254.169.254/latest/meta-data: NEVER DELIVERABLE"),
            std::string::npos)
      << bad_out;
  EXPECT_NE(bad_out.find("  169.254.169.254: refused: link-local address 169.254.169.254 is not in allow_private"),
            std::string::npos)
      << bad_out;
  EXPECT_NE(bad_out.find("endpoint internal http://10.0.0.1:8080/hook: NEVER DELIVERABLE"), std::string::npos)
      << bad_out;
  EXPECT_NE(bad_out.find("  10.0.0.1: refused: private address 10.0.0.1 is not in allow_private"),
            std::string::npos)
      << bad_out;
  EXPECT_NE(bad_out.find("configuration error: endpoints that can never be delivered to"), std::string::npos)
      << bad_out;

  // Allowing the private network makes that endpoint deliverable; the metadata one still fails.
  bad["allow_private"] = {"127.0.0.1/32", "10.0.0.0/8"};
  const auto [partly_code, partly_out] = check(bad, "partly");
  EXPECT_EQ(partly_code, 2) << partly_out;
  EXPECT_NE(partly_out.find("  10.0.0.1: allowed (private, in allow_private)"), std::string::npos) << partly_out;
  EXPECT_NE(partly_out.find("metadata: the address policy refuses every address"), std::string::npos) << partly_out;
  EXPECT_EQ(partly_out.find("internal: "), std::string::npos) << partly_out;

  // A drain timeout without a unit is refused (10 would be 10 ms).
  const std::string path = server_.dir() + "/good.json";
  ChildProcess unitless(EXPIRY_WEBHOOK_BIN, {"--config", path, "--drain-timeout", "10", "--check-config"});
  const auto unitless_code = unitless.wait_exit(30s);
  ASSERT_TRUE(unitless_code.has_value()) << unitless.output();
  EXPECT_EQ(*unitless_code, 2) << unitless.output();
  EXPECT_NE(unitless.output().find("drain_timeout needs a unit"), std::string::npos) << unitless.output();
}

TEST_F(WebhookDelivery, APrivateDestinationOutsideAllowPrivateIsRefused) {
  auto webhook = start_webhook(config().dump());
  schedule("p1", "private", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 30s)) << logs(*webhook);
  const Entries dead = xrange_all(redis_, kDead);
  EXPECT_NE(dead[0].at("reason").find("destination not allowed"), std::string::npos) << dead[0].at("reason");
  EXPECT_TRUE(received().empty()) << "nothing reached the receiver";
}

// A host name is checked on the addresses it resolves to: localhost's 127.0.0.1 is allowed
// (allow_private), its ::1 (if any) refused, and the request goes to the allowed one.
TEST_F(WebhookDelivery, AHostNameIsCheckedOnItsResolvedAddresses) {
  auto webhook = start_webhook(config().dump());
  schedule("n1", "by_name", "{}");
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1 && group_pending() == 0; }, 30s)) << logs(*webhook);
  EXPECT_EQ(xlen(redis_, kDead), 0);
  auto c = config();
  c["allow_private"] = nlohmann::json::array();
  webhook->terminate();
  auto strict = start_webhook(c.dump(), "w2");
  schedule("n2", "by_name", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 30s)) << logs(*strict);
  EXPECT_NE(xrange_all(redis_, kDead)[0].at("reason").find("destination not allowed"), std::string::npos);
  EXPECT_EQ(received("/ok").size(), 1u);
}

TEST_F(WebhookDelivery, ASlowEndpointDoesNotHoldUpAFastOne) {
  auto webhook = start_webhook(config().dump());
  for (int i = 0; i < 3; ++i) schedule("s" + std::to_string(i), "slow", "{}");
  ASSERT_TRUE(wait_until([&] { return metric(R"(expiry_webhook_in_flight{endpoint="slow"})") == 1; }, 30s))
      << logs(*webhook);
  for (int i = 0; i < 5; ++i) schedule("q" + std::to_string(i), "ok", "{}");
  // The slow endpoint (one at a time, 3 s each) needs 9 s for its three; the fast one's five
  // arrive while the first slow one is still out.
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 5; }, 30s)) << logs(*webhook);
  EXPECT_LE(received("/slow").size(), 1u);
  ASSERT_TRUE(wait_until([&] { return received("/slow").size() == 3 && group_pending() == 0; }, 60s))
      << logs(*webhook);
}

TEST_F(WebhookDelivery, AnUnknownEndpointIsDeadLettered) {
  auto c = config();
  c.erase("default_endpoint");
  auto webhook = start_webhook(c.dump());
  schedule("u1", "nosuch", "{}");
  schedule("u2", "", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 2 && group_pending() == 0; }, 30s)) << logs(*webhook);
  const Entries dead = xrange_all(redis_, kDead);
  std::set<std::string> reasons;
  for (const auto& d : dead) reasons.insert(d.at("reason"));
  EXPECT_EQ(reasons, (std::set<std::string>{"rejected: unknown webhook endpoint nosuch",
                                            "rejected: no webhook field and no default_endpoint"}));
  EXPECT_TRUE(received().empty());
}

TEST_F(WebhookDelivery, HttpsIsVerifiedAgainstTheEndpointsCaFile) {
  TlsCerts certs;
  int tls_port = 0;
  auto tls_receiver = start_receiver("tls", {certs.server().cert, certs.server().key}, tls_port);
  auto c = config();
  const std::string tls_url = "https://127.0.0.1:" + std::to_string(tls_port) + "/ok";
  c["endpoints"]["tls"] = {{"url", tls_url}, {"secret", kSecret}, {"ca_file", certs.ca_file()}};
  c["endpoints"]["tls_wrong_ca"] = {{"url", tls_url}, {"secret", kSecret}, {"ca_file", certs.wrong_ca_file()}};
  auto webhook = start_webhook(c.dump());
  schedule("tls-1", "tls", R"({"secure":true})");
  ASSERT_TRUE(wait_until([&] { return received("/ok").size() == 1; }, 30s)) << logs(*webhook) << tls_receiver->output();
  EXPECT_TRUE(received("/ok")[0]["verified"].get<bool>());
  EXPECT_EQ(received("/ok")[0]["body"], R"({"secure":true})");
  schedule("tls-2", "tls_wrong_ca", "{}");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDead) == 1 && group_pending() == 0; }, 60s)) << logs(*webhook);
  EXPECT_EQ(received("/ok").size(), 1u) << "an unverified server gets nothing";
  const Entries dead = xrange_all(redis_, kDead);
  EXPECT_EQ(dead[0].at("id"), "tls-2");
  EXPECT_NE(dead[0].at("reason").find("failed 4 attempts"), std::string::npos) << dead[0].at("reason");
}

TEST_F(WebhookDelivery, ABadConfigExitsWithTwo) {
  const std::vector<std::string> bad_configs = {
      R"({"endpoints": {}})", "{nope", config().dump().replace(0, 1, R"({"surprise": 1,)"),
      R"({"endpoints": {"a": {"url": "https://x/", "secret": "plain"}}})"};
  for (const std::string& bad : bad_configs) {
    SCOPED_TRACE(bad);
    auto webhook = start_webhook(bad, "bad");
    const auto code = webhook->wait_exit(30s);
    ASSERT_TRUE(code) << webhook->output();
    EXPECT_EQ(*code, 2) << webhook->output();
    EXPECT_NE(webhook->output().find("webhook config"), std::string::npos) << webhook->output();
  }
}

}  // namespace
}  // namespace expiry::test
