// expiry-relay on a 3 + 3 Redis Cluster, under load: every task forwarded exactly once across
// all nodes with two relays (and read to the end by two consumers), through a manual failover, a resharding of loaded buckets' slots,
// a kill -9 of a relay, and (measured and reported) a kill -9 of a primary. One cluster serves
// every test; each test uses a namespace of its own, so their tasks never mix.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "harness/child_process.h"
#include "io/sync/cluster_client.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "shared_cluster_test.h"
#include "support/redis_cluster.h"
#include "support/server_binaries.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr int kBuckets = 64;   // the cluster default
constexpr int kTasks = 20000;  // the issue's load

RedisCluster*& g_cluster = shared_cluster();

// What the streams of a namespace hold, per task id.
struct Ledger {
  std::map<std::string, int> entries;  // id -> stream entries
  long long max_lateness_ms = 0;       // fired_ms - due_ms
  long long total = 0;
};

class ClusterRelayTest : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_NE(g_cluster, nullptr);
    g_cluster->wait_cluster_ok();
    client_ = std::make_unique<ClusterClient>(parse_redis_url(g_cluster->seed_url()));
    ns_ = std::string("c") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (ns_.size() > 60) ns_.resize(60);
  }

  std::unique_ptr<ChildProcess> start_relay(const std::string& instance, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--redis-url", g_cluster->seed_url(), "--namespace", ns_, "--instance", instance,
                                     "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                     "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                          g_cluster->dir() + "/relay-" + ns_ + "-" + instance + ".log");
  }

  // An order-canceller reading every bucket stream of the namespace (group "workers"). The
  // tasks are no orders, so it rejects each entry into its bucket's dead letters: it proves that
  // two consumers read every bucket stream on every node to the end.
  std::unique_ptr<ChildProcess> start_consumer(const std::string& name) {
    std::vector<std::string> args = {"--redis-url", g_cluster->seed_url(), "--namespace", ns_, "--consumer", name,
                                     "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"};
    return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                          g_cluster->dir() + "/consumer-" + ns_ + "-" + name + ".log");
  }

  // Entries of every bucket stream not yet delivered to the group, or delivered and not acked.
  long long unconsumed() {
    long long n = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const std::string stream = KeyLayout(ns_, b).bucket_stream();
      const Reply groups = client_->command({"XINFO", "GROUPS", stream}, bucket_slot(b));
      if (groups.type != Reply::Type::Array) return -1;
      for (const auto& g : groups.elements) {
        for (size_t i = 0; i + 1 < g.elements.size(); i += 2) {
          const std::string& field = g.elements[i].str;
          if (field == "pending" || field == "lag") n += g.elements[i + 1].integer;
        }
      }
    }
    return n;
  }

  void expect_consumed(std::initializer_list<ChildProcess*> consumers) {
    const bool done = wait_until([&] { return unconsumed() == 0; }, 120s);
    std::string outputs;
    for (auto* c : consumers) outputs += c->output();
    EXPECT_TRUE(done) << "entries left unconsumed: " << unconsumed() << "\n" << outputs;
  }

  // True once relay `instance` has a subscriber on every primary (its per-node health channel).
  bool relay_subscribed_everywhere(const std::string& instance) {
    for (const auto& p : g_cluster->primaries()) {
      const std::string channel =
          KeyLayout(ns_).health_channel(instance + "@" + p.host + ":" + std::to_string(p.port));
      const Reply numsub = g_cluster->command(p, {"PUBSUB", "NUMSUB", channel});
      if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
    }
    return true;
  }

  void wait_ready(const std::string& instance, ChildProcess& relay) {
    ASSERT_TRUE(wait_until([&] { return relay_subscribed_everywhere(instance); }, 60s))
        << "relay " << instance << " is not subscribed on every primary:\n"
        << relay.output();
  }

  // Schedules `count` tasks "t<first>".."t<first+count-1>", due between `from_ms` and
  // `from_ms + spread_ms` from now, pipelined per node. With `wait_replicas`, WAITs for one
  // replica after every window and counts the windows not acknowledged.
  void schedule(int first, int count, long long from_ms, long long spread_ms, bool wait_replicas = false,
                int* unacknowledged_windows = nullptr) {
    const int kWindow = 2000;
    for (int start = first; start < first + count; start += kWindow) {
      std::vector<ClusterClient::Routed> batch;
      for (int i = start; i < std::min(first + count, start + kWindow); ++i) {
        const std::string id = "t" + std::to_string(i);
        const int bucket = bucket_of(id, kBuckets);
        const long long delay = from_ms + (spread_ms * (i - first)) / std::max(1, count);
        batch.push_back({bucket_slot(bucket), schedule_argv(KeyLayout(ns_, bucket), id, ScheduleMode::Delay, delay,
                                                            "payload-" + id)});
      }
      const auto replies = client_->batch(batch);
      for (const auto& r : replies) ASSERT_FALSE(r.failed()) << r.describe();
      if (wait_replicas && client_->wait_replicas(1, 1000ms) < 1 && unacknowledged_windows) {
        ++*unacknowledged_windows;
      }
    }
  }

  Ledger ledger() {
    Ledger out;
    for (int b = 0; b < kBuckets; ++b) {
      const Reply entries = client_->command({"XRANGE", KeyLayout(ns_, b).bucket_stream(), "-", "+"}, bucket_slot(b));
      if (entries.type != Reply::Type::Array) {
        ADD_FAILURE() << "XRANGE bucket " << b << ": " << entries.describe();
        continue;
      }
      for (const auto& e : entries.elements) {
        std::map<std::string, std::string> fields;
        const auto& f = e.elements[1].elements;
        for (size_t i = 0; i + 1 < f.size(); i += 2) fields[f[i].str] = f[i + 1].str;
        ++out.entries[fields["id"]];
        ++out.total;
        if (!fields["due_ms"].empty() && !fields["fired_ms"].empty()) {
          out.max_lateness_ms = std::max(out.max_lateness_ms, std::stoll(fields["fired_ms"]) - std::stoll(fields["due_ms"]));
        }
      }
    }
    return out;
  }

  long long forwarded() {
    long long n = 0;
    for (int b = 0; b < kBuckets; ++b) {
      n += client_->command({"XLEN", KeyLayout(ns_, b).bucket_stream()}, bucket_slot(b)).integer;
    }
    return n;
  }

  long long pending() {
    long long n = 0;
    for (int b = 0; b < kBuckets; ++b) {
      n += client_->command({"ZCARD", KeyLayout(ns_, b).schedule_key()}, bucket_slot(b)).integer;
    }
    return n;
  }

  // Trigger keys and shadow hashes of this namespace left on any primary.
  long long task_keys_left() {
    long long n = 0;
    for (const auto& p : g_cluster->primaries()) {
      std::string cursor = "0";
      do {
        const Reply r = g_cluster->command(p, {"SCAN", cursor, "MATCH", ns_ + ":{*}:t*", "COUNT", "1000"});
        cursor = r.elements[0].str;
        for (const auto& key : r.elements[1].elements) {
          if (KeyLayout(ns_).parse_task_key(key.str)) ++n;
        }
      } while (cursor != "0");
    }
    return n;
  }

  // Counts lost (never forwarded) and duplicated tasks among t<0>..t<count-1>.
  void tally(const Ledger& l, int count, int* lost, int* duplicated) {
    *lost = 0;
    *duplicated = 0;
    for (int i = 0; i < count; ++i) {
      auto it = l.entries.find("t" + std::to_string(i));
      if (it == l.entries.end()) {
        ++*lost;
      } else if (it->second > 1) {
        *duplicated += it->second - 1;
      }
    }
  }

  // Waits until every task was forwarded and the schedules are empty, then asserts exactly once
  // and no orphaned keys, and prints the figures.
  void expect_exactly_once(const char* scenario, std::initializer_list<ChildProcess*> relays) {
    const bool drained = wait_until([&] { return pending() == 0 && forwarded() >= kTasks; }, 120s);
    std::string outputs;
    for (auto* r : relays) outputs += r->output();
    ASSERT_TRUE(drained) << "pending " << pending() << ", forwarded " << forwarded() << "\n" << outputs;
    const Ledger l = ledger();
    int lost = 0;
    int duplicated = 0;
    tally(l, kTasks, &lost, &duplicated);
    const long long orphaned = task_keys_left();
    std::printf("[cluster] %s: tasks=%d entries=%lld lost=%d duplicated=%d orphaned_keys=%lld max_lateness_ms=%lld\n",
                scenario, kTasks, l.total, lost, duplicated, orphaned, l.max_lateness_ms);
    EXPECT_EQ(lost, 0);
    EXPECT_EQ(duplicated, 0);
    EXPECT_EQ(l.total, kTasks);
    EXPECT_EQ(orphaned, 0);
  }

  std::unique_ptr<ClusterClient> client_;
  std::string ns_;
};



TEST_F(ClusterRelayTest, TwoRelaysForwardEveryTaskExactlyOnceAcrossAllNodes) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  wait_ready("r1", *r1);
  wait_ready("r2", *r2);
  auto c1 = start_consumer("c1");
  auto c2 = start_consumer("c2");
  EXPECT_EQ(client_->command({"GET", ns_ + ":buckets"}, key_hash_slot(ns_ + ":buckets")).str, "64");
  schedule(0, kTasks, 1000, 4000);
  expect_exactly_once("two relays", {r1.get(), r2.get()});
  expect_consumed({c1.get(), c2.get()});
  // Every primary forwarded some of them: the relays serve every node.
  for (const auto& p : g_cluster->primaries()) {
    long long on_node = 0;
    for (int b = 0; b < kBuckets; ++b) {
      if (g_cluster->primary_for_slot(bucket_slot(b)).port == p.port) {
        on_node += g_cluster->command(p, {"XLEN", KeyLayout(ns_, b).bucket_stream()}).integer;
      }
    }
    EXPECT_GT(on_node, 0) << "primary " << p.port;
  }
}

TEST_F(ClusterRelayTest, AManualFailoverLosesAndRepeatsNothing) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  wait_ready("r1", *r1);
  wait_ready("r2", *r2);
  auto c1 = start_consumer("c1");
  auto c2 = start_consumer("c2");
  schedule(0, kTasks, 500, 6000);
  ASSERT_TRUE(wait_until([&] { return forwarded() > kTasks / 5; }, 60s));
  const auto replicas = g_cluster->replicas();
  ASSERT_FALSE(replicas.empty());
  g_cluster->manual_failover(replicas.front());
  expect_exactly_once("manual failover", {r1.get(), r2.get()});
  expect_consumed({c1.get(), c2.get()});
}

TEST_F(ClusterRelayTest, ReshardingTheSlotsOfLoadedBucketsLosesRepeatsAndOrphansNothing) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  wait_ready("r1", *r1);
  wait_ready("r2", *r2);
  schedule(0, kTasks, 500, 6000);
  ASSERT_TRUE(wait_until([&] { return forwarded() > kTasks / 10; }, 60s));
  // Move eight loaded buckets, each to another primary, while their tasks fall due.
  const auto primaries = g_cluster->primaries();
  ASSERT_GE(primaries.size(), 2u);
  for (int b = 0; b < 8; ++b) {
    const int slot = bucket_slot(b);
    const auto owner = g_cluster->primary_for_slot(slot);
    const auto& to = primaries[0].port == owner.port ? primaries[1] : primaries[0];
    g_cluster->move_slots({slot}, to);
  }
  expect_exactly_once("reshard of 8 loaded buckets", {r1.get(), r2.get()});
}

// The same with the operator's tool: redis-cli --cluster reshard moves the lowest slots of one
// primary to another; the number of slots is chosen so that they hold four loaded buckets.
TEST_F(ClusterRelayTest, ARedisCliReshardOfLoadedBucketsLosesRepeatsAndOrphansNothing) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  wait_ready("r1", *r1);
  wait_ready("r2", *r2);
  schedule(0, kTasks, 500, 6000);
  ASSERT_TRUE(wait_until([&] { return forwarded() > kTasks / 10; }, 60s));
  const auto from = g_cluster->primary_for_slot(bucket_slot(0));
  RedisCluster::Node to;
  for (const auto& p : g_cluster->primaries()) {
    if (p.port != from.port) to = p;
  }
  std::vector<int> owned;  // the source's slots, ascending: redis-cli takes the lowest first
  const SlotMap map = g_cluster->slot_map();
  for (const auto& range : map.ranges()) {
    if (range.primary.port != from.port) continue;
    for (int slot = range.first; slot <= range.last; ++slot) owned.push_back(slot);
  }
  std::sort(owned.begin(), owned.end());
  std::set<int> bucket_slots;
  for (int b = 0; b < kBuckets; ++b) bucket_slots.insert(bucket_slot(b));
  int slots = 0;
  int buckets_moved = 0;
  for (int slot : owned) {
    ++slots;
    if (bucket_slots.count(slot) != 0 && ++buckets_moved == 4) break;
  }
  ASSERT_GE(buckets_moved, 1);
  ChildProcess reshard(redis_cli_binary(),
                       {"--cluster", "reshard", from.host + ":" + std::to_string(from.port), "--cluster-from", from.id,
                        "--cluster-to", to.id, "--cluster-slots", std::to_string(slots), "--cluster-yes"},
                       {}, g_cluster->dir() + "/reshard-" + ns_ + ".log");
  const auto code = reshard.wait_exit(240s);
  ASSERT_TRUE(code.has_value()) << reshard.output();
  ASSERT_EQ(*code, 0) << reshard.output();
  g_cluster->wait_cluster_ok();
  for (int i = 0; i < slots; ++i) {
    if (bucket_slots.count(owned[i]) != 0) {
      EXPECT_EQ(g_cluster->primary_for_slot(owned[i]).port, to.port) << "slot " << owned[i] << " moved";
    }
  }
  std::printf("[cluster] redis-cli --cluster reshard: %d slots holding %d loaded buckets\n", slots, buckets_moved);
  expect_exactly_once("redis-cli --cluster reshard", {r1.get(), r2.get()});
}

TEST_F(ClusterRelayTest, AKilledRelayLeavesTheOtherToForwardEverything) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  wait_ready("r1", *r1);
  wait_ready("r2", *r2);
  schedule(0, kTasks, 500, 5000);
  ASSERT_TRUE(wait_until([&] { return forwarded() > kTasks / 5; }, 60s));
  r1->kill_hard();
  expect_exactly_once("kill -9 of one relay", {r1.get(), r2.get()});
}


// The library on a slot being migrated, driven step by step: a sweep that meets a task whose
// shadow hash has moved reports migrating and writes nothing for it; a claim of that task is
// refused; once the slot has moved, the new owner forwards every task exactly once.
TEST_F(ClusterRelayTest, TheLibraryReportsAMigratingSlotAndWritesNothing) {
  const int bucket = 0;
  const int slot = bucket_slot(bucket);
  const KeyLayout keys(ns_, bucket);
  const auto owner = g_cluster->primary_for_slot(slot);
  const auto primaries = g_cluster->primaries();
  const auto& to = primaries[0].port == owner.port ? primaries[1] : primaries[0];
  client_->load_library_everywhere();
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back("m" + std::to_string(i));
  for (const auto& id : ids) {
    ASSERT_FALSE(client_->fcall(schedule_argv(keys, id, ScheduleMode::At, 1, "p"), slot).failed());
  }
  // The declared keys (schedule, stream) must both be on the source, or Redis itself answers
  // TRYAGAIN before the function runs.
  ASSERT_FALSE(client_->command({"XGROUP", "CREATE", keys.bucket_stream(), "workers", "0", "MKSTREAM"}, slot).failed());
  g_cluster->begin_migration(slot, to);
  // The checks run in a lambda (a failed ASSERT leaves it), so the slot always ends up moved
  // and later tests see a stable cluster.
  [&] {
    // The shadow hash of the first due task (ids sort by score, then name: m0) moves first.
    const Reply moved = g_cluster->command(owner, {"MIGRATE", to.host, std::to_string(to.port), "", "0", "5000", "KEYS",
                                                   keys.shadow_key("m0")});
    ASSERT_FALSE(moved.failed()) << moved.describe();

    const Reply sweep = g_cluster->command(owner, sweep_argv(keys, keys.bucket_stream(), 100, "sweep", "workers"));
    auto result = decode_sweep(sweep);
    ASSERT_TRUE(result.has_value()) << sweep.describe();
    EXPECT_TRUE(result->migrating);
    EXPECT_EQ(result->forwarded, 0) << "m0 is first: nothing may be claimed past it";
    EXPECT_EQ(g_cluster->command(owner, {"ZCARD", keys.schedule_key()}).integer, 10);
    EXPECT_EQ(g_cluster->command(owner, {"EXISTS", keys.trigger_key("m0")}).integer, 1);
    EXPECT_EQ(g_cluster->command(owner, {"XLEN", keys.bucket_stream()}).integer, 0) << "no entry was written";

    // A claim declares the shadow hash: Redis itself refuses it (TRYAGAIN) before the function runs.
    const Reply claim = g_cluster->command(owner, claim_argv(keys, "m0", "event", keys.bucket_stream(), "workers"));
    ASSERT_TRUE(claim.failed()) << claim.describe();
    const auto kind = classify(claim);
    EXPECT_TRUE(kind == RedisErrorKind::TryAgain || kind == RedisErrorKind::Migrating) << claim.str;
    EXPECT_EQ(g_cluster->command(owner, {"ZSCORE", keys.schedule_key(), "m0"}).type, Reply::Type::String);
  }();
  while (g_cluster->migrate_keys(slot, 100) > 0) {
  }
  g_cluster->finish_migration(slot);
  g_cluster->wait_cluster_ok();
  long long forwarded = 0;
  for (int round = 0; round < 10 && forwarded < 10; ++round) {
    const Reply reply = client_->fcall(sweep_argv(keys, keys.bucket_stream(), 100, "sweep", "workers"), slot);
    auto r = decode_sweep(reply);
    ASSERT_TRUE(r.has_value()) << reply.describe();
    forwarded += r->forwarded;
  }
  EXPECT_EQ(forwarded, 10);
  EXPECT_EQ(client_->command({"XLEN", keys.bucket_stream()}, slot).integer, 10);
  EXPECT_EQ(task_keys_left(), 0);
}

// A per-task stream must share the task's slot: one elsewhere is refused at schedule, and one
// written by hand into a shadow hash is marked undeliverable at claim (into the bucket's stream)
// instead of failing every sweep of the bucket.
TEST_F(ClusterRelayTest, APerTaskStreamInAnotherSlotNeverStallsItsBucket) {
  const int bucket = 3;
  const int slot = bucket_slot(bucket);
  const KeyLayout keys(ns_, bucket);
  client_->load_library_everywhere();
  const Reply refused = client_->fcall(schedule_argv(keys, "s1", ScheduleMode::At, 1, "p", "orders:elsewhere"), slot);
  ASSERT_TRUE(refused.failed()) << refused.describe();
  EXPECT_NE(refused.str.find("is not in the hash slot of task"), std::string::npos) << refused.str;
  const std::string same_slot = "orders:{" + std::to_string(bucket) + "}:timeouts";
  ASSERT_FALSE(client_->fcall(schedule_argv(keys, "s2", ScheduleMode::At, 1, "p", same_slot), slot).failed());
  ASSERT_FALSE(client_->fcall(schedule_argv(keys, "s3", ScheduleMode::At, 1, "p"), slot).failed());
  ASSERT_FALSE(client_->command({"HSET", keys.shadow_key("s3"), "stream", "orders:elsewhere"}, slot).failed());
  const Reply sweep = client_->fcall(sweep_argv(keys, keys.bucket_stream(), 100, "sweep", "workers"), slot);
  auto result = decode_sweep(sweep);
  ASSERT_TRUE(result.has_value()) << sweep.describe();
  EXPECT_EQ(result->forwarded, 2);
  EXPECT_EQ(client_->command({"XLEN", same_slot}, slot).integer, 1) << "s2 went to its own stream";
  const Reply entries = client_->command({"XRANGE", keys.bucket_stream(), "-", "+"}, slot);
  ASSERT_EQ(entries.elements.size(), 1u) << entries.describe();
  std::map<std::string, std::string> fields;
  const auto& f = entries.elements[0].elements[1].elements;
  for (size_t i = 0; i + 1 < f.size(); i += 2) fields[f[i].str] = f[i + 1].str;
  EXPECT_EQ(fields["id"], "s3");
  EXPECT_EQ(fields["undeliverable_stream"], "orders:elsewhere");
  EXPECT_NE(fields["undeliverable_reason"].find("hash slot"), std::string::npos) << fields["undeliverable_reason"];
}

// A reader that polls every bucket stream while the relays run, so entries that a crashed
// primary loses after they were read still count as delivered.
class StreamWatcher {
 public:
  StreamWatcher(ClusterClient& client, std::string ns) : client_(client), ns_(std::move(ns)), last_(kBuckets, "0") {}
  void poll() {
    for (int b = 0; b < kBuckets; ++b) {
      const Reply r = client_.command({"XRANGE", KeyLayout(ns_, b).bucket_stream(), "(" + last_[b], "+"}, bucket_slot(b));
      if (r.type != Reply::Type::Array) continue;
      for (const auto& e : r.elements) {
        last_[b] = e.elements[0].str;
        const auto& f = e.elements[1].elements;
        for (size_t i = 0; i + 1 < f.size(); i += 2) {
          if (f[i].str == "id") deliveries_[f[i + 1].str].insert(std::to_string(b) + "/" + e.elements[0].str);
        }
      }
    }
  }
  // After a failover the new primary's stream may end before what was read: start over there.
  void rewind() { std::fill(last_.begin(), last_.end(), "0"); }
  const std::map<std::string, std::set<std::string>>& deliveries() const { return deliveries_; }

 private:
  ClusterClient& client_;
  std::string ns_;
  std::vector<std::string> last_;
  std::map<std::string, std::set<std::string>> deliveries_;  // task id -> distinct entries seen
};

// kill -9 of a primary under load: measured and reported, not asserted to be zero (a crashed
// primary loses what it had not replicated). With WAIT after every window of schedules, no
// acknowledged schedule may be lost.
void kill_primary_run(ClusterRelayTest& t, bool wait_replicas) {
  auto r1 = t.start_relay("r1");
  auto r2 = t.start_relay("r2");
  t.wait_ready("r1", *r1);
  t.wait_ready("r2", *r2);
  int unacknowledged = 0;
  t.schedule(0, kTasks, 1500, 6000, wait_replicas, &unacknowledged);
  StreamWatcher watcher(*t.client_, t.ns_);
  ASSERT_TRUE(wait_until([&] {
    watcher.poll();
    return watcher.deliveries().size() > kTasks / 5;
  }, 60s));
  // The primary owning bucket 0's slot dies while its tasks fall due; the second run picks
  // another primary (primaries refuse a second failover of the same node for 2 x node timeout).
  auto victim = g_cluster->primary_for_slot(bucket_slot(0));
  if (wait_replicas) {
    for (const auto& p : g_cluster->primaries()) {
      if (p.port != victim.port) {
        victim = p;
        break;
      }
    }
  }
  const auto killed_at = std::chrono::steady_clock::now();
  g_cluster->kill_hard(victim);
  const bool promoted = wait_until([&] {
    try {
      t.client_->refresh();
      for (const auto& primary : t.client_->slot_map().primaries()) {
        if (primary.port == victim.port) return false;
      }
      return t.client_->slot_map().complete();
    } catch (const std::exception&) {
      return false;
    }
  }, 60s);
  ASSERT_TRUE(promoted) << "no replica was promoted";
  const auto failover_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at).count();
  watcher.rewind();
  const bool drained = wait_until([&] {
    watcher.poll();
    return t.pending() == 0;
  }, 120s);
  ASSERT_TRUE(drained) << r1->output() << r2->output();
  watcher.poll();
  int lost = 0;
  int repeated = 0;
  for (int i = 0; i < kTasks; ++i) {
    auto it = watcher.deliveries().find("t" + std::to_string(i));
    if (it == watcher.deliveries().end()) {
      ++lost;
    } else if (it->second.size() > 1) {
      repeated += static_cast<int>(it->second.size()) - 1;
    }
  }
  std::printf("[cluster] kill -9 of a primary (%s): tasks=%d lost=%d repeated=%d failover_ms=%lld "
              "unacknowledged_windows=%d\n",
              wait_replicas ? "--wait-replicas 1" : "no WAIT", kTasks, lost, repeated,
              static_cast<long long>(failover_ms), unacknowledged);
  if (wait_replicas && unacknowledged == 0) {
    EXPECT_EQ(lost, 0) << "a schedule acknowledged by a replica was lost";
  }
  // The killed node comes back as a replica of its successor, for the next test.
  g_cluster->restart(victim);
  g_cluster->wait_cluster_ok();
}

// Retention per bucket stream, on the node that owns it: once the group has acknowledged every
// entry, each bucket's stream is trimmed to nothing; a bucket whose first entry is still pending
// keeps it and everything after it.
TEST_F(ClusterRelayTest, EachBucketStreamIsTrimmedOnItsNode) {
  constexpr int kCount = 500;
  auto relay = start_relay("r1", {"--stream-retention-ms", "0", "--stream-trim-interval-ms", "100"});
  wait_ready("r1", *relay);
  schedule(0, kCount, 50, 200);
  ASSERT_TRUE(wait_until([&] { return pending() == 0 && forwarded() >= kCount; }, 60s)) << relay->output();
  ASSERT_EQ(forwarded(), kCount) << "nothing is trimmed before the group has read it";
  const int held = bucket_of("t0", kBuckets);  // its bucket keeps its first entry pending
  std::vector<std::string> held_entries;
  for (int b = 0; b < kBuckets; ++b) {
    const std::string stream = KeyLayout(ns_, b).bucket_stream();
    const Reply read = client_->command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "100000", "STREAMS", stream, ">"},
                                        bucket_slot(b));
    if (read.type != Reply::Type::Array) continue;  // an empty bucket
    const auto& entries = read.elements.at(0).elements.at(1).elements;
    if (b == held) {
      for (const auto& e : entries) held_entries.push_back(e.elements[0].str);
    }
    for (size_t i = b == held ? 1 : 0; i < entries.size(); ++i) {
      client_->command({"XACK", stream, "workers", entries[i].elements[0].str}, bucket_slot(b));
    }
  }
  ASSERT_FALSE(held_entries.empty());
  const long long kept = static_cast<long long>(held_entries.size());
  ASSERT_TRUE(wait_until([&] { return forwarded() == kept; }, 60s)) << "left: " << forwarded() << "\n" << relay->output();
  const Reply left = client_->command({"XRANGE", KeyLayout(ns_, held).bucket_stream(), "-", "+"}, bucket_slot(held));
  std::vector<std::string> left_ids;
  for (const auto& e : left.elements) left_ids.push_back(e.elements[0].str);
  EXPECT_EQ(left_ids, held_entries) << "the pending entry and those after it stay";
}

TEST_F(ClusterRelayTest, KillingAPrimaryIsMeasuredWithoutWaitReplicas) { kill_primary_run(*this, false); }
TEST_F(ClusterRelayTest, KillingAPrimaryIsMeasuredWithWaitReplicas) { kill_primary_run(*this, true); }

}  // namespace
}  // namespace expiry::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  expiry::test::RedisCluster::Options options;
  options.node_timeout = std::chrono::milliseconds(2000);  // a killed primary's failover in ~3 s instead of ~8 s
  ::testing::AddGlobalTestEnvironment(new expiry::test::SharedClusterEnvironment(options));
  return RUN_ALL_TESTS();
}
