// Redis Sentinel under the faults issue 31 found (docs/reliability.md, "Redis Sentinel failover"):
// - three successive manual failovers and a crash of the master, under a steady producer
//   (expiry-ctl with its defaults, one call after the other) and a consumer that follows the
//   master: every schedule that exited 0 is forwarded exactly once, as one stream entry;
// - every sentinel frozen (SIGSTOP), and a sentinel that accepts and never answers listed
//   first: the relay keeps forwarding on time and its /healthz and /readyz answer at once;
// - a wrong or missing sentinel password: exit 2 at start.
// The programs' paths can be overridden (EXPIRY_TEST_RELAY_BIN, EXPIRY_TEST_CTL_BIN) to measure
// an older build with the same scenarios.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "config/sentinel_settings.h"
#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "io/sync/sentinel_discovery.h"
#include "support/redis_sentinel.h"

namespace expiry::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string program(const char* env, const char* built) {
  const char* over = std::getenv(env);
  return over != nullptr && *over != '\0' ? over : built;
}
std::string relay_bin() { return program("EXPIRY_TEST_RELAY_BIN", EXPIRY_RELAY_BIN); }
std::string ctl_bin() { return program("EXPIRY_TEST_CTL_BIN", EXPIRY_CTL_BIN); }

std::vector<std::string> sentinel_flags(const std::string& sentinels, const std::string& master) {
  return {"--redis-url", "redis://unused/0", "--sentinel", sentinels, "--sentinel-master", master};
}

std::unique_ptr<ChildProcess> start_relay_through(const std::string& sentinels, const std::string& master,
                                                  const std::string& dir, const std::string& instance,
                                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args = sentinel_flags(sentinels, master);
  const std::vector<std::string> rest = {"--instance", instance, "--reconnect-initial-ms", "20", "--reconnect-max-ms",
                                         "200"};
  args.insert(args.end(), rest.begin(), rest.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<ChildProcess>(relay_bin(), args, std::vector<std::pair<std::string, std::string>>{},
                                        dir + "/relay-" + instance + ".log");
}

// The master the sentinels name now, for the test's own connections (the product's discovery).
std::unique_ptr<SyncConnection> connect_to_master(const SentinelGroup& group) {
  RedisEndpoint endpoint = test_endpoint("127.0.0.1", 1);
  endpoint.sentinel.sentinels = parse_sentinel_list(group.sentinel_addresses());
  endpoint.sentinel.master = group.master_name();
  const RedisEndpoint master = SentinelDiscovery(endpoint).find_master();
  return connect_redis(master.host, master.port);
}

// A consumer that follows the master the sentinels name and records, per task id, every stream
// entry id it was handed. It counts an entry only once the master's replicas have it (WAIT for
// the replicas the master has): an entry a crashed master never replicated is gone after the
// failover, and a consumer that acted on it would act twice when the task is forwarded again.
// Entries read and not yet counted stay in its pending list and are read again (ID 0) first.
// With `by_occurrence`, entries are recorded by "<id>@<occurrence_ms>" (a recurring schedule's
// occurrences share its id).
class FollowingConsumer {
 public:
  explicit FollowingConsumer(const SentinelGroup& group, bool by_occurrence = false)
      : group_(group), by_occurrence_(by_occurrence), thread_([this] { run(); }) {}
  ~FollowingConsumer() { stop(); }

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::map<std::string, std::set<std::string>> seen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }
  size_t seen_count(const std::set<std::string>& ids) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const auto& id : ids) n += seen_.count(id);
    return n;
  }

 private:
  void run() {
    std::unique_ptr<SyncConnection> conn;
    while (!stop_) {
      try {
        if (!conn) {
          conn = connect_to_master(group_);
          conn->command({"XGROUP", "CREATE", kStream, "workers", "0", "MKSTREAM"});  // BUSYGROUP: exists
        }
        Reply r = conn->command({"XREADGROUP", "GROUP", "workers", "probe", "COUNT", "200", "STREAMS", kStream, "0"});
        if (!r.failed() && entries_of(r).empty()) {
          r = conn->command(
              {"XREADGROUP", "GROUP", "workers", "probe", "COUNT", "200", "BLOCK", "100", "STREAMS", kStream, ">"});
        }
        if (r.failed()) throw std::runtime_error(r.str);
        const std::vector<StreamEntry> entries = entries_of(r);
        if (entries.empty()) continue;
        const std::string info = conn->command({"INFO", "replication"}).str;
        const auto at = info.find("connected_slaves:");
        const int replicas = at == std::string::npos ? 0 : std::atoi(info.c_str() + at + 17);
        if (replicas > 0) {
          const Reply w = conn->command({"WAIT", std::to_string(replicas), "1000"});
          if (w.type != Reply::Type::Integer || w.integer < replicas) continue;  // not yet: read them again
        }
        std::vector<std::string> ack = {"XACK", kStream, "workers"};
        {
          std::lock_guard<std::mutex> lock(mutex_);
          for (const auto& e : entries) {
            seen_[by_occurrence_ ? e.field("id") + "@" + e.field("occurrence_ms") : e.field("id")].insert(e.entry_id);
            ack.push_back(e.entry_id);
          }
        }
        conn->command(ack);
      } catch (const std::exception&) {
        conn.reset();
        std::this_thread::sleep_for(milliseconds(50));  // the master is moving: ask the sentinels again
      }
    }
  }

  static std::vector<StreamEntry> entries_of(const Reply& r) {
    if (r.type != Reply::Type::Array || r.elements.empty()) return {};
    const Reply& stream = r.elements[0];
    if (stream.type != Reply::Type::Array || stream.elements.size() != 2) return {};
    return parse_stream_entries(stream.elements[1]);
  }

  static constexpr const char* kStream = "expiry:stream";
  const SentinelGroup& group_;
  const bool by_occurrence_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<std::string, std::set<std::string>> seen_;
  std::thread thread_;  // last
};

// True once no further stream entry can appear: the master's schedule is empty (a claim needs
// the task's member) and the consumers' group has read and acknowledged the whole stream.
bool stream_settled(const SentinelGroup& group) {
  const auto field = [](const Reply& flat, const std::string& name) -> const Reply* {
    for (size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
      if (flat.elements[i].str == name) return &flat.elements[i + 1];
    }
    return nullptr;
  };
  try {
    auto master = connect_to_master(group);
    if (master->command({"ZCARD", "expiry:{0}:schedule"}).integer != 0) return false;
    const Reply stream = master->command({"XINFO", "STREAM", "expiry:stream"});
    const Reply* last = field(stream, "last-generated-id");
    if (last == nullptr) return false;
    for (const Reply& g : master->command({"XINFO", "GROUPS", "expiry:stream"}).elements) {
      const Reply* name = field(g, "name");
      const Reply* pending = field(g, "pending");
      const Reply* delivered = field(g, "last-delivered-id");
      if (name == nullptr || name->str != "workers" || pending == nullptr || delivered == nullptr) continue;
      return pending->integer == 0 && delivered->str == last->str;
    }
  } catch (const std::exception&) {
    // the master is moving: not settled yet
  }
  return false;
}

// expiry-ctl schedule with its defaults through the sentinels, one call after the other, until
// stopped; records each task's exit code.
class SteadyProducer {
 public:
  SteadyProducer(const SentinelGroup& group) : flags_(sentinel_flags(group.sentinel_addresses(), group.master_name())),
                                               thread_([this] { run(); }) {}
  ~SteadyProducer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::map<std::string, int> exits() {
    std::lock_guard<std::mutex> lock(mutex_);
    return exits_;
  }

 private:
  void run() {
    for (int n = 0; !stop_; ++n) {
      const auto started = Clock::now();
      const std::string id = "f-" + std::to_string(n);
      std::vector<std::string> argv = flags_;
      argv.insert(argv.end(), {"schedule", id, "--delay-ms", "1500", "--payload", "p" + std::to_string(n)});
      ChildProcess ctl(ctl_bin(), argv);
      const int rc = ctl.wait_exit(std::chrono::seconds(120)).value_or(-1);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        exits_[id] = rc;
      }
      std::this_thread::sleep_until(started + milliseconds(25));  // pacing the load
    }
  }

  const std::vector<std::string> flags_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<std::string, int> exits_;
  std::thread thread_;  // last
};

TEST(SentinelFailover, SuccessiveFailoversAndACrashLoseNothingAcknowledgedAndDoubleNothing) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  auto r1 = start_relay_through(group.sentinel_addresses(), group.master_name(), dir, "r1");
  auto r2 = start_relay_through(group.sentinel_addresses(), group.master_name(), dir, "r2");
  FollowingConsumer consumer(group);
  SteadyProducer producer(group);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // steady load before the first failover
  for (int i = 0; i < 3; ++i) {
    group.failover();
    std::this_thread::sleep_for(std::chrono::seconds(2));  // load on the new master
    group.wait_replica_in_sync();                           // the old master is its replica now
  }
  const int killed = group.master_index();
  group.kill_master();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  group.restart_node(killed);
  group.wait_replica_in_sync();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  producer.stop();

  const auto exits = producer.exits();
  std::set<std::string> acknowledged;
  size_t refused = 0;
  for (const auto& [id, rc] : exits) (rc == 0 ? acknowledged.insert(id), 0 : ++refused);
  ASSERT_GE(acknowledged.size(), 100u) << "the producer ran too little to say anything";
  // Every acknowledged task comes due within 1.5 s of its schedule: wait until the consumer saw
  // each, or long enough that a missing one is lost.
  wait_until([&] { return consumer.seen_count(acknowledged) == acknowledged.size(); }, std::chrono::seconds(90));
  // A duplicate is a second entry for a task: none can follow once the stream has settled.
  EXPECT_TRUE(wait_until([&] { return stream_settled(group); }, std::chrono::seconds(60)))
      << "tasks still scheduled, or entries not yet read, 60 s after the load";
  consumer.stop();
  const auto seen = consumer.seen();
  std::vector<std::string> lost, doubled;
  for (const auto& id : acknowledged) {
    auto it = seen.find(id);
    if (it == seen.end()) {
      lost.push_back(id);
    } else if (it->second.size() > 1) {
      doubled.push_back(id);
    }
  }
  std::cout << "failover figures: " << exits.size() << " schedules, " << acknowledged.size() << " exited 0, "
            << refused << " exited non-zero; lost " << lost.size() << ", forwarded twice " << doubled.size() << "\n";
  EXPECT_TRUE(lost.empty()) << lost.size() << " acknowledged schedules never reached the consumer, e.g. "
                            << lost.front() << "\nrelay r1:\n" << tail_lines(r1->output(), 40);
  EXPECT_TRUE(doubled.empty()) << doubled.size() << " tasks were forwarded twice, e.g. " << doubled.front()
                               << "\nrelay r1:\n" << tail_lines(r1->output(), 40);
}

// A per-second recurring schedule through the sentinels across a manual failover: every
// occurrence from the first the consumer saw to the last reaches it exactly once (a grace wider
// than the failover, so no occurrence counts as missed).
TEST(SentinelFailover, ARecurringScheduleFiresEachOccurrenceOnceAcrossAFailover) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  auto r1 = start_relay_through(group.sentinel_addresses(), group.master_name(), dir, "r1");
  auto r2 = start_relay_through(group.sentinel_addresses(), group.master_name(), dir, "r2");
  FollowingConsumer consumer(group, true);
  std::vector<std::string> argv = sentinel_flags(group.sentinel_addresses(), group.master_name());
  argv.insert(argv.end(), {"recur", "set", "tick", "--cron", "* * * * * *", "--misfire-grace-ms", "20000"});
  ChildProcess set(ctl_bin(), argv);
  ASSERT_EQ(set.wait_exit(std::chrono::seconds(60)).value_or(-1), 0) << set.output();
  group.wait_replica_in_sync();
  const auto count = [&] { return consumer.seen().size(); };
  ASSERT_TRUE(wait_until([&] { return count() >= 3; }, std::chrono::seconds(30))) << tail_lines(r1->output(), 40);
  group.failover();
  group.wait_replica_in_sync();
  const size_t after_failover = count();
  ASSERT_TRUE(wait_until([&] { return count() >= after_failover + 5; }, std::chrono::seconds(60)))
      << "occurrences stopped after the failover\nrelay r1:\n" << tail_lines(r1->output(), 40);
  consumer.stop();
  const auto seen = consumer.seen();
  std::set<long long> occurrences;
  for (const auto& [key, entries] : seen) {
    EXPECT_EQ(entries.size(), 1u) << key << " was forwarded " << entries.size() << " times";
    occurrences.insert(std::stoll(key.substr(key.find('@') + 1)));
  }
  ASSERT_FALSE(occurrences.empty());
  const long long first = *occurrences.begin(), last = *occurrences.rbegin();
  EXPECT_EQ(static_cast<long long>(occurrences.size()), (last - first) / 1000 + 1)
      << "an occurrence between " << first << " and " << last << " never reached the consumer";
}

// A listener that accepts connections and never answers (and never closes them).
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0) {
      throw std::runtime_error("SilentListener: bind/listen failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }  // the backlog keeps accepted-but-unread connections silent
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The lateness (fired_ms - due_ms) of every entry in the stream, smallest first.
std::vector<long long> lateness_of(SyncConnection& master) {
  std::vector<long long> out;
  for (const auto& e : xrange_all(master, "expiry:stream")) {
    out.push_back(std::stoll(e.at("fired_ms")) - std::stoll(e.at("due_ms")));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The slowest of `n` GETs of `path` (one every 50 ms), in ms; a GET that fails counts as 10 s.
long long slowest_http(int port, const std::string& path, int n) {
  long long worst = 0;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    const HttpResponse r = http_get(port, path);
    long long ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    if (r.status == 0) ms = 10000;
    worst = std::max(worst, ms);
    std::this_thread::sleep_for(milliseconds(50));
  }
  return worst;
}

// Every sentinel frozen while the master is healthy: the relay keeps forwarding on time and
// answers its probes at once (a blocking sentinel check stalled its loop for seconds, and its
// watchdog then dropped its own healthy connection).
TEST(SentinelStall, EveryFrozenSentinelCostsTheRelayNothing) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  const int port = free_port();
  auto relay = start_relay_through(group.sentinel_addresses(), group.master_name(), dir, "r1",
                                   {"--metrics-port", std::to_string(port)});
  auto master = connect_to_master(group);
  wait_relay_ready(*master, "r1", *relay);
  for (int i = 0; i < SentinelGroup::kSentinels; ++i) ASSERT_EQ(::kill(group.sentinel_pid(i), SIGSTOP), 0);
  struct Thaw {
    SentinelGroup& g;
    ~Thaw() {
      for (int i = 0; i < SentinelGroup::kSentinels; ++i) ::kill(g.sentinel_pid(i), SIGCONT);
    }
  } thaw{group};

  std::vector<Task> tasks;
  for (int i = 0; i < 150; ++i) tasks.push_back({"frozen-" + std::to_string(i), 500 + i * 40, "p"});
  schedule_all(*master, tasks);  // due over 6 s: more than one recheck period of the sentinels
  const long long slowest_ready = slowest_http(port, "/readyz", 60);
  const long long slowest_health = slowest_http(port, "/healthz", 20);
  ASSERT_TRUE(wait_until([&] { return xlen(*master) == 150; }, std::chrono::seconds(60))) << tail_lines(relay->output(), 40);
  const auto late = lateness_of(*master);
  EXPECT_LE(late.back(), 200) << "a task fired " << late.back() << " ms late while the sentinels were frozen";
  EXPECT_LT(slowest_ready, 100) << "/readyz took " << slowest_ready << " ms";
  EXPECT_LT(slowest_health, 100) << "/healthz took " << slowest_health << " ms";
  EXPECT_EQ(relay->output().find("no reply for"), std::string::npos) << tail_lines(relay->output(), 40);
  std::cout << "frozen sentinels: 150 tasks, lateness max " << late.back() << " ms; /readyz slowest "
            << slowest_ready << " ms, /healthz slowest " << slowest_health << " ms\n";
}

// A sentinel that accepts and never answers, listed first: start-up and forwarding do not wait
// for it (the sentinels are asked at once, off the loop).
TEST(SentinelStall, ASentinelThatNeverAnswersListedFirstDelaysNothing) {
  SentinelGroup group;
  SilentListener silent;
  const std::string dir = group.node(0).dir();
  const std::string sentinels = "127.0.0.1:" + std::to_string(silent.port()) + "," + group.sentinel_addresses();
  auto master = connect_to_master(group);
  const auto started = Clock::now();
  auto relay = start_relay_through(sentinels, group.master_name(), dir, "r1");
  wait_relay_ready(*master, "r1", *relay);
  const auto startup = std::chrono::duration_cast<milliseconds>(Clock::now() - started).count();

  std::vector<Task> tasks;
  for (int i = 0; i < 100; ++i) tasks.push_back({"silent-" + std::to_string(i), 300 + i * 60, "p"});
  schedule_all(*master, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(*master) == 100; }, std::chrono::seconds(60))) << tail_lines(relay->output(), 40);
  const auto late = lateness_of(*master);
  EXPECT_LE(late.back(), 200) << "a task fired " << late.back() << " ms late";
  EXPECT_LT(startup, 2000) << "start-up took " << startup << " ms";
  std::cout << "a silent sentinel listed first: start-up " << startup << " ms, lateness max " << late.back() << " ms\n";
}

// A wrong or missing sentinel password is a configuration error: exit 2 at start, naming the
// sentinels' refusal (the relay retried it forever).
TEST(SentinelAuth, AWrongOrMissingSentinelPasswordExitsTwo) {
  SentinelGroup::Options options;
  options.sentinel_password = "sentinel-secret";
  SentinelGroup group(options);
  const std::string dir = group.node(0).dir();
  const std::string wrong = dir + "/wrong.pass";
  std::ofstream(wrong) << "not-the-password\n";
  for (const bool give_password : {true, false}) {
    std::vector<std::string> extra;
    if (give_password) extra = {"--sentinel-password-file", wrong};
    auto relay = start_relay_through(group.sentinel_addresses(), group.master_name(), dir,
                                     give_password ? "wrong" : "missing", extra);
    const auto rc = relay->wait_exit(std::chrono::seconds(30));
    ASSERT_TRUE(rc) << "the relay kept running:\n" << tail_lines(relay->output(), 20);
    EXPECT_EQ(*rc, 2) << relay->output();
    EXPECT_NE(relay->output().find("the sentinels refuse the sentinel password"), std::string::npos)
        << relay->output();
    EXPECT_EQ(relay->output().find("not-the-password"), std::string::npos);
    EXPECT_EQ(relay->output().find("unused"), std::string::npos) << "the placeholder URL was logged";

    std::vector<std::string> argv = sentinel_flags(group.sentinel_addresses(), group.master_name());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"schedule", "x", "--delay-ms", "1000"});
    ChildProcess ctl(ctl_bin(), argv);
    EXPECT_EQ(ctl.wait_exit(std::chrono::seconds(60)).value_or(-1), 2) << ctl.output();
    EXPECT_NE(ctl.output().find("the sentinels refuse the sentinel password"), std::string::npos) << ctl.output();
  }
}

}  // namespace
}  // namespace expiry::test
