// The cluster consumer's doorbell (node_consumer.h, src/lua/expiry/doorbell.lua), in-process on
// a 3+3 Redis Cluster with 64 buckets: an idle ClusterConsumer reads each primary at most twice a
// second, an entry a claim appended (expiry_v2_sweep, which rings) reaches the handler within
// milliseconds, far inside the safety poll, an entry appended without a ring (a lost doorbell)
// is read by the safety poll, and a claim by a user without the ring's channel rule rings
// nothing and fails nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/consumer_config.h"
#include "consumer/cluster_consumer.h"
#include "functions/key_layout.h"
#include "generated/expiry_lua.h"
#include "io/event_loop.h"
#include "redis/hash_slot.h"
#include "shared_cluster_test.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr int kBuckets = 64;
const std::string kNs = "expiry";

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
long long id_ms(const std::string& entry_id) { return std::stoll(entry_id.substr(0, entry_id.find('-'))); }

struct Received {
  std::string entry_id;
  std::string task_id;
  long long at_ms;  // wall clock when the handler got it
};

// calls=N of `command` in INFO commandstats of `node` (0 if it never ran).
long long calls_of(const RedisCluster& cluster, const RedisCluster::Node& node, const std::string& command) {
  const std::string info = cluster.command(node, {"INFO", "commandstats"}).str;
  const std::string tag = "cmdstat_" + command + ":calls=";
  const auto at = info.find(tag);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
}

class ConsumerDoorbellTest : public SharedClusterTest {
 protected:
  static void SetUpTestSuite() {
    SharedClusterTest::SetUpTestSuite();
    for (const auto& p : cluster_->primaries()) {
      const Reply r = cluster_->command(p, {"FUNCTION", "LOAD", "REPLACE", kExpiryLuaSource});
      ASSERT_NE(r.type, Reply::Type::Error) << r.str;
    }
    const std::string key = KeyLayout(kNs).buckets_key();
    cluster_->command(cluster_->primary_for_slot(key_hash_slot(key)), {"SET", key, std::to_string(kBuckets)});
  }

  void TearDown() override { stop_consumer(); }

  // A ClusterConsumer over the 64 bucket streams on a loop thread of its own.
  void start_consumer(std::chrono::milliseconds safety_poll) {
    config_.redis = seed();
    config_.ns = kNs;
    config_.group = "workers";
    config_.consumer = "doorbell-test";
    config_.safety_poll = safety_poll;
    config_.reclaim_interval = 1000ms;
    // Every stream is warm for 3 min_idle + reclaim_interval after the start (reclaimed every
    // interval), then only those rung: short here so that the idle test sees the cold state.
    config_.min_idle = 300ms;
    EntryHandler handler = [this](const StreamEntry& e, const EntryContext&, EntryDone done) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        received_.push_back(Received{e.entry_id, e.field(entry_field::kId), wall_ms()});
      }
      done(HandleOutcome::Done, "");
    };
    shared_ = std::make_unique<ConsumerShared>(
        ConsumerShared{config_, std::move(handler), {}, {}, {}, nullptr, nullptr, false});
    consumer_ = std::make_unique<ClusterConsumer>(loop_, *shared_, kBuckets);
    stop_check_ = std::make_unique<Timer>(loop_, [this] {
      if (!stop_.load()) {
        stop_check_->arm(20ms);
        return;
      }
      consumer_->stop([this] { loop_.stop(); });
    });
    consumer_->start();
    stop_check_->arm(20ms);
    thread_ = std::thread([this] { loop_.run(); });
  }

  void stop_consumer() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
    stop_check_.reset();
    consumer_.reset();
    shared_.reset();
    stop_ = false;
  }

  // Every bucket's ring is subscribed: PUBSUB CHANNELS is node-local, each primary holds its
  // NodeConsumer's doorbell subscriptions.
  int rings_subscribed() const {
    int n = 0;
    for (const auto& p : cluster_->primaries()) {
      n += static_cast<int>(cluster_->command(p, {"PUBSUB", "CHANNELS", kNs + ":{*}:ring"}).elements.size());
    }
    return n;
  }

  std::vector<Received> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }
  std::optional<Received> received_task(const std::string& task_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& r : received_) {
      if (r.task_id == task_id) return r;
    }
    return std::nullopt;
  }

  ConsumerConfig config_;
  EventLoop loop_;
  std::unique_ptr<ConsumerShared> shared_;
  std::unique_ptr<ClusterConsumer> consumer_;
  std::unique_ptr<Timer> stop_check_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Received> received_;
};

TEST_F(ConsumerDoorbellTest, IdleReadsAtMostTwicePerNodeSecondAndARingIsHandedOverAtOnce) {
  start_consumer(30000ms);
  ASSERT_TRUE(wait_until([&] { return rings_subscribed() == kBuckets; }, 20s)) << rings_subscribed();

  // Idle: what the consumer sends each primary, its reclaims' XPENDING included, once the
  // streams have gone cold (every one is warm for 1.9 s after the start: its XPENDING then runs
  // every second).
  const auto primaries = cluster_->primaries();
  const auto xpending_total = [&] {
    long long n = 0;
    for (const auto& p : primaries) n += calls_of(*cluster_, p, "xpending");
    return n;
  };
  long long last_xpending = xpending_total();
  auto last_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until(
      [&] {
        if (std::chrono::steady_clock::now() - last_at < 1500ms) return false;
        const long long now = xpending_total();
        const bool cold = now - last_xpending < kBuckets / 2;  // no longer every stream per second
        last_xpending = now;
        last_at = std::chrono::steady_clock::now();
        return cold;
      },
      30s))
      << "the streams stayed warm";
  const std::vector<std::string> periodic = {"xreadgroup", "ping", "publish", "xpending"};
  std::map<int, std::map<std::string, long long>> before;
  for (const auto& p : primaries) {
    for (const auto& c : periodic) before[p.port][c] = calls_of(*cluster_, p, c);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(5s);  // the measurement window, not a wait for a condition
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Reads are what touches the streams (XREADGROUP, XPENDING): at most 2 per node per second.
  // The keepalive PINGs and the doorbell's probes come on top: all of it under 3.
  for (const auto& p : primaries) {
    long long reads = 0;
    long long all = 0;
    std::string detail;
    for (const auto& c : periodic) {
      const long long n = calls_of(*cluster_, p, c) - before[p.port][c];
      all += n;
      if (c == "xreadgroup" || c == "xpending") reads += n;
      detail += " " + c + "=" + std::to_string(n);
    }
    std::printf("idle primary %d over %.1f s:%s -> %.2f reads/s, %.2f commands/s\n", p.port, seconds, detail.c_str(),
                reads / seconds, all / seconds);
    EXPECT_LE(reads / seconds, 2.0) << "primary " << p.port << ":" << detail;
    EXPECT_LT(all / seconds, 3.0) << "primary " << p.port << ":" << detail;
  }

  // Claims ring: schedule a task due now and sweep its bucket, as the relay does.
  std::vector<long long> lateness;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "ring-" + std::to_string(i);
    const int b = bucket_of(id, kBuckets);
    const KeyLayout keys(kNs, b);
    const auto primary = cluster_->primary_for_slot(bucket_slot(b));
    Reply r = cluster_->command(primary, {"FCALL", "expiry_v2_schedule", "3", keys.schedule_key(),
                                          keys.trigger_key(id), keys.shadow_key(id), id, "delay", "0", "{}"});
    ASSERT_NE(r.type, Reply::Type::Error) << r.str;
    r = cluster_->command(primary, {"FCALL", "expiry_v2_sweep", "2", keys.schedule_key(), keys.bucket_stream(), "100",
                                    "sweep", "workers"});
    ASSERT_NE(r.type, Reply::Type::Error) << r.str;
    ASSERT_TRUE(wait_until([&] { return received_task(id).has_value(); }, 10s, 1ms)) << id;
    const Received got = *received_task(id);
    lateness.push_back(got.at_ms - id_ms(got.entry_id));
  }
  std::sort(lateness.begin(), lateness.end());
  const long long p50 = lateness[lateness.size() / 2];
  const long long p99 = lateness[(lateness.size() * 99) / 100];
  std::printf("append -> handler over %zu rung entries: p50 %lld ms, p99 %lld ms, max %lld ms\n", lateness.size(),
              p50, p99, lateness.back());
  // The safety poll reads a lane once per 30 s: only the ring explains entries handed over
  // within milliseconds, every time.
  EXPECT_LE(p50, 5);
  EXPECT_LT(lateness.back(), 1000);
}

TEST_F(ConsumerDoorbellTest, AnEntryAppendedWithoutARingIsReadByTheSafetyPoll) {
  start_consumer(3000ms);
  ASSERT_TRUE(wait_until([&] { return rings_subscribed() == kBuckets; }, 20s)) << rings_subscribed();
  const std::string id = "no-ring-1";
  const int b = bucket_of(id, kBuckets);
  const KeyLayout keys(kNs, b);
  const Reply r = cluster_->command(cluster_->primary_for_slot(bucket_slot(b)),
                                    {"XADD", keys.bucket_stream(), "*", "id", id, "payload", "{}", "due_ms", "1",
                                     "fired_ms", "2", "via", "sweep"});
  ASSERT_EQ(r.type, Reply::Type::String) << r.str;
  const auto t0 = std::chrono::steady_clock::now();
  // Bounded by the safety poll (3 s here), plus a read's round trip and slack for a loaded machine.
  ASSERT_TRUE(wait_until([&] { return received_task(id).has_value(); }, 5s, 5ms));
  std::printf("entry without a ring read after %lld ms (safety poll 3000 ms)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count()));
}

// A doorbell connection killed by the server: the node polls every stream meanwhile (an entry
// appended without a ring is read within --idle-ms, not the safety poll), subscribes again by
// itself, and rings are heard again.
TEST_F(ConsumerDoorbellTest, ALostDoorbellPollsThenSubscribesAgain) {
  start_consumer(30000ms);
  ASSERT_TRUE(wait_until([&] { return rings_subscribed() == kBuckets; }, 20s)) << rings_subscribed();
  const std::string id = "after-kill";
  const int b = bucket_of(id, kBuckets);
  const KeyLayout keys(kNs, b);
  const auto primary = cluster_->primary_for_slot(bucket_slot(b));
  const std::string list = cluster_->command(primary, {"CLIENT", "LIST"}).str;
  const auto at = list.find("name=expiry-consumer-doorbell-doorbell-test");
  ASSERT_NE(at, std::string::npos) << list;
  const auto line = list.rfind("id=", at);
  const std::string client_id = list.substr(line + 3, list.find(' ', line) - line - 3);
  ASSERT_EQ(cluster_->command(primary, {"CLIENT", "KILL", "ID", client_id}).integer, 1);
  // Not rung: while the doorbell is down, only the polling every --idle-ms reads it this soon
  // (unless the doorbell is back already, whose subscription reads every stream once).
  ASSERT_EQ(cluster_->command(primary, {"XADD", keys.bucket_stream(), "*", "id", id, "payload", "{}", "due_ms", "1",
                                        "fired_ms", "2", "via", "sweep"})
                .type,
            Reply::Type::String);
  EXPECT_TRUE(wait_until([&] { return received_task(id).has_value(); }, 3s, 5ms));
  ASSERT_TRUE(wait_until([&] { return rings_subscribed() == kBuckets; }, 20s)) << rings_subscribed();
  const std::string rung = "rung-after-kill";
  const int rb = bucket_of(rung, kBuckets);
  const KeyLayout rkeys(kNs, rb);
  const auto rprimary = cluster_->primary_for_slot(bucket_slot(rb));
  ASSERT_NE(cluster_->command(rprimary, {"FCALL", "expiry_v2_schedule", "3", rkeys.schedule_key(),
                                         rkeys.trigger_key(rung), rkeys.shadow_key(rung), rung, "delay", "0", "{}"})
                .type,
            Reply::Type::Error);
  ASSERT_NE(cluster_->command(rprimary, {"FCALL", "expiry_v2_sweep", "2", rkeys.schedule_key(), rkeys.bucket_stream(),
                                         "100", "sweep", "workers"})
                .type,
            Reply::Type::Error);
  EXPECT_TRUE(wait_until([&] { return received_task(rung).has_value(); }, 1s, 1ms)) << "the ring was not heard";
}

// The ring is a PUBLISH inside the sweep, made only when the caller's ACL user may publish on
// NS:{B}:ring (docs/security.md: `&expiry:{*}:ring` on a cluster); without the rule the sweep
// forwards all the same and publishes nothing. ACL users are per node: created on every primary.
TEST_F(ConsumerDoorbellTest, TheRingNeedsItsChannelRuleAndItsAbsenceFailsNoClaim) {
  for (const bool with_rule : {true, false}) {
    const std::string user = with_rule ? "relay-ring" : "relay-no-ring";
    for (const auto& p : cluster_->primaries()) {
      std::vector<std::string> acl = {"ACL", "SETUSER", user, "reset", "resetchannels", "on", ">pw",
                                      "~expiry:{*}:*", "%R~expiry:buckets", "&expiry:{*}:wake", "+@all"};
      if (with_rule) acl.push_back("&expiry:{*}:ring");
      ASSERT_EQ(cluster_->command(p, acl).type, Reply::Type::Status);
    }
    const std::string id = "acl-" + user;
    const int b = bucket_of(id, kBuckets);
    const KeyLayout keys(kNs, b);
    const auto primary = cluster_->primary_for_slot(bucket_slot(b));
    auto conn = cluster_->connect(primary);
    ASSERT_EQ(conn->command({"AUTH", user, "pw"}).type, Reply::Type::Status);
    Reply r = conn->command({"FCALL", "expiry_v2_schedule", "3", keys.schedule_key(), keys.trigger_key(id),
                             keys.shadow_key(id), id, "delay", "0", "{}"});
    ASSERT_NE(r.type, Reply::Type::Error) << r.str;
    const long long published = calls_of(*cluster_, primary, "publish");
    r = conn->command({"FCALL", "expiry_v2_sweep", "2", keys.schedule_key(), keys.bucket_stream(), "100", "sweep",
                       "workers"});
    ASSERT_EQ(r.type, Reply::Type::Array) << r.str;
    EXPECT_EQ(r.elements[0].integer, 1) << user << ": the task was not forwarded";
    EXPECT_EQ(calls_of(*cluster_, primary, "publish") - published, with_rule ? 1 : 0) << user;
  }
}

}  // namespace
}  // namespace expiry::test
