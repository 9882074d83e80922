// expiry-relay and expiry-ctl through Redis Sentinel (a master, a replica and three sentinels
// started by SentinelGroup): discovery, a master name no sentinel knows, sentinels down at
// start, a manual failover and a crash of the master under load, and a relay killed during a
// failover. The oracle reads the stream on the master the sentinels name at the end.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fstream>

#include <nlohmann/json.hpp>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "orders/orders_library.h"
#include "support/redis_sentinel.h"

namespace expiry::test {
namespace {

using Clock = std::chrono::steady_clock;

// The flags that make a program find its Redis through the group's sentinels.
std::vector<std::string> sentinel_flags(const SentinelGroup& group, const std::string& master = "") {
  return {"--redis-url", "redis://127.0.0.1:1/0", "--sentinel", group.sentinel_addresses(), "--sentinel-master",
          master.empty() ? group.master_name() : master};
}

std::unique_ptr<ChildProcess> start_sentinel_relay(const SentinelGroup& group, const std::string& dir,
                                                   const std::string& instance, const std::string& master = "") {
  std::vector<std::string> args = sentinel_flags(group, master);
  const std::vector<std::string> rest = {"--instance", instance, "--reconnect-initial-ms", "20",
                                         "--reconnect-max-ms", "200", "--watchdog-interval-ms", "200",
                                         "--watchdog-timeout-ms", "1000", "--health-probe-interval-ms", "200"};
  args.insert(args.end(), rest.begin(), rest.end());
  return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        dir + "/relay-" + instance + ".log");
}

// Runs expiry-ctl with `args` through the sentinels until it exits; returns its exit code
// (-1: still running after 60 s) and its output.
std::pair<int, std::string> run_ctl(const SentinelGroup& group, const std::vector<std::string>& args,
                                    const std::string& master = "") {
  std::vector<std::string> argv = sentinel_flags(group, master);
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess ctl(EXPIRY_CTL_BIN, argv);
  const int rc = ctl.wait_exit(60s).value_or(-1);
  return {rc, ctl.output()};
}

// expiry-ctl schedules `n` tasks "<prefix><i>" with payload "p<i>" one call each, through the
// sentinels; adds them to `expected`.
void ctl_schedule(const SentinelGroup& group, const std::string& prefix, int n, long long delay_ms,
                  std::map<std::string, std::string>& expected) {
  for (int i = 0; i < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    expected[id] = "p" + std::to_string(i);
    const auto [rc, output] = run_ctl(group, {"schedule", id, "--delay-ms", std::to_string(delay_ms), "--payload", expected[id]});
    ASSERT_EQ(rc, 0) << output;
  }
}

// order-canceller `name` through the sentinels, logging into `dir`.
std::unique_ptr<ChildProcess> start_sentinel_canceller(const SentinelGroup& group, const std::string& dir,
                                                       const std::string& name, const std::string& master = "") {
  std::vector<std::string> args = sentinel_flags(group, master);
  const std::vector<std::string> rest = {"--consumer", name, "--block-ms", "200", "--reconnect-initial-ms", "20",
                                         "--reconnect-max-ms", "200", "--watchdog-interval-ms", "200",
                                         "--watchdog-timeout-ms", "2000"};
  args.insert(args.end(), rest.begin(), rest.end());
  return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        dir + "/canceller-" + name + ".log");
}

// The test's own connection to the node the sentinels name now.
std::unique_ptr<SyncConnection> connect_master(const SentinelGroup& group) {
  return connect_redis("127.0.0.1", group.master_port());
}

// `n` tasks "<prefix><i>" due over `spread_ms` from now, scheduled on the master and confirmed
// by its replica (WAIT), so that a failover cannot lose them.
std::map<std::string, std::string> schedule_confirmed(SyncConnection& master, const std::string& prefix, int n,
                                                      long long first_ms, long long spread_ms) {
  std::vector<Task> tasks;
  std::map<std::string, std::string> expected;
  for (int i = 0; i < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    tasks.push_back({id, first_ms + spread_ms * i / std::max(1, n), "payload-" + id});
    expected[id] = "payload-" + id;
  }
  schedule_all(master, tasks);
  EXPECT_EQ(integer(master, {"WAIT", "1", "5000"}), 1) << "the replica did not confirm the schedules";
  return expected;
}

// Waits until the master the sentinels name holds exactly `expected.size()` entries, then checks
// each task is there once with its payload.
void expect_forwarded_once(const SentinelGroup& group, const std::map<std::string, std::string>& expected,
                           ChildProcess& relay) {
  std::unique_ptr<SyncConnection> master;
  const bool all = wait_until(
      [&] {
        try {
          if (!master) master = connect_master(group);
          return xlen(*master) >= static_cast<long long>(expected.size()) && zcard(*master) == 0;
        } catch (const std::exception&) {
          master.reset();
          return false;
        }
      },
      60s);
  ASSERT_TRUE(master);
  EXPECT_TRUE(all) << "stream has " << xlen(*master) << " of " << expected.size() << ", " << zcard(*master)
                   << " pending; relay output:\n"
                   << tail_lines(relay.output(), 60);
  expect_exactly_once(xrange_all(*master, KeyLayout("expiry").default_stream()), expected);
}

// Waits for the first entry the relay forwards on `master` at or after `since_ms` (its clock);
// the entries before have older ids (they came from the old master by replication).
bool wait_first_entry_since(SyncConnection& master, long long since_ms) {
  return wait_until(
      [&] {
        const Reply r = master.command({"XREVRANGE", KeyLayout("expiry").default_stream(), "+", "-", "COUNT", "1"});
        if (r.failed() || r.elements.empty() || r.elements[0].elements.empty()) return false;
        return std::stoll(r.elements[0].elements[0].str) >= since_ms;
      },
      30s);
}

TEST(SentinelRelay, FindsTheMasterThroughTheSentinelsAndForwards) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  auto relay = start_sentinel_relay(group, dir, "r1");
  auto master = connect_master(group);
  wait_relay_ready(*master, "r1", *relay);

  // expiry-ctl schedules through the sentinels too.
  std::map<std::string, std::string> expected;
  ctl_schedule(group, "ctl-", 5, 200, expected);
  expect_forwarded_once(group, expected, *relay);
  EXPECT_TRUE(relay->running());
}

TEST(SentinelRelay, DataAndSentinelPasswordsAreEachUsedWhereTheyBelong) {
  SentinelGroup::Options options;
  options.data_password = "data-secret";
  options.sentinel_password = "sentinel-secret";
  SentinelGroup group(options);
  const std::string dir = group.node(0).dir();
  const std::string password_file = dir + "/sentinel.pass";
  std::ofstream(password_file) << "sentinel-secret\n";
  std::vector<std::string> args = {"--redis-url", "redis://:data-secret@127.0.0.1:1/0", "--sentinel",
                                   group.sentinel_addresses(), "--sentinel-master", group.master_name(),
                                   "--sentinel-password-file", password_file, "--instance", "r1",
                                   "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"};
  ChildProcess relay(EXPIRY_RELAY_BIN, args, {}, dir + "/relay-r1.log");
  RedisEndpoint endpoint = test_endpoint("127.0.0.1", group.master_port());
  endpoint.password = "data-secret";
  SyncConnection master(endpoint, test_connection_options());
  wait_relay_ready(master, "r1", relay);

  std::vector<std::string> ctl_args(args.begin(), args.begin() + 8);
  ctl_args.insert(ctl_args.end(), {"schedule", "pw-1", "--delay-ms", "100", "--payload", "p"});
  ChildProcess ctl(EXPIRY_CTL_BIN, ctl_args);
  ASSERT_EQ(ctl.wait_exit(60s).value_or(-1), 0) << ctl.output();
  ASSERT_TRUE(wait_until([&] { return xlen(master) == 1; }, 30s)) << tail_lines(relay.output(), 40);
  expect_exactly_once(xrange_all(master, KeyLayout("expiry").default_stream()), {{"pw-1", "p"}});

  // Without the sentinels' password no master is found: expiry-ctl fails, naming their NOAUTH.
  std::vector<std::string> no_pass(args.begin(), args.begin() + 6);
  no_pass.insert(no_pass.end(), {"schedule", "pw-2", "--delay-ms", "100"});
  ChildProcess refused(EXPIRY_CTL_BIN, no_pass);
  EXPECT_NE(refused.wait_exit(90s).value_or(-1), 0) << refused.output();
  EXPECT_NE(refused.output().find("NOAUTH"), std::string::npos) << refused.output();
}

TEST(SentinelRelay, AMasterNameNoSentinelKnowsIsAConfigurationError) {
  SentinelGroup group;
  auto relay = start_sentinel_relay(group, group.node(0).dir(), "r1", "no-such-master");
  const auto rc = relay->wait_exit(20s);
  ASSERT_TRUE(rc) << "the relay kept running with an unknown master name:\n" << relay->output();
  EXPECT_EQ(*rc, 2) << relay->output();
  EXPECT_NE(relay->output().find("no sentinel knows a master named \"no-such-master\""), std::string::npos)
      << relay->output();

  const auto [ctl_rc, ctl_output] = run_ctl(group, {"schedule", "x", "--delay-ms", "1000"}, "no-such-master");
  EXPECT_EQ(ctl_rc, 2) << ctl_output;
  EXPECT_NE(ctl_output.find("no-such-master"), std::string::npos) << ctl_output;

  auto canceller = start_sentinel_canceller(group, group.node(0).dir(), "c1", "no-such-master");
  EXPECT_EQ(canceller->wait_exit(20s).value_or(-1), 2) << canceller->output();
  EXPECT_NE(canceller->output().find("no sentinel knows a master named \"no-such-master\""), std::string::npos)
      << canceller->output();
}

TEST(SentinelRelay, StartsWhileEverySentinelIsDownAndForwardsOnceTheyAreUp) {
  SentinelGroup group;
  auto master = connect_master(group);
  const auto expected = schedule_confirmed(*master, "early-", 50, 0, 500);
  group.stop_sentinels();
  auto relay = start_sentinel_relay(group, group.node(0).dir(), "r1");
  // Without a sentinel the relay cannot know its master: it keeps trying, forwarding nothing.
  EXPECT_FALSE(wait_until([&] { return !relay->running() || xlen(*master) > 0; }, 3s)) << relay->output();
  group.start_sentinels();
  expect_forwarded_once(group, expected, *relay);
}

TEST(SentinelRelay, ManualFailoverUnderLoadLosesAndDuplicatesNothing) {
  SentinelGroup group;
  auto relay = start_sentinel_relay(group, group.node(0).dir(), "r1");
  auto old_master = connect_master(group);
  wait_relay_ready(*old_master, "r1", *relay);
  // Tasks come due before, during and after the failover (one every 10 ms over 8 s).
  auto expected = schedule_confirmed(*old_master, "load-", 800, 0, 8000);
  ASSERT_TRUE(wait_until([&] { return xlen(*old_master) > 50; }, 30s));
  const int old_port = group.master_port();
  const int new_port = group.failover();
  ASSERT_NE(new_port, old_port);
  const auto switched = Clock::now();
  auto new_master = connect_redis("127.0.0.1", new_port);
  const long long switch_ms = redis_now_ms(*new_master);
  ASSERT_TRUE(wait_first_entry_since(*new_master, switch_ms)) << tail_lines(relay->output(), 40);
  std::cout << "[ metric ] first task forwarded on the new master "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - switched).count()
            << " ms after the sentinels named it\n";
  // Tasks scheduled after the switch, through the sentinels, by expiry-ctl.
  ctl_schedule(group, "after-", 5, 100, expected);
  expect_forwarded_once(group, expected, *relay);
  EXPECT_TRUE(relay->running());
  // It stayed away from the old master from +try-failover and moved on the sentinels'
  // +switch-master, not on a READONLY or a lost connection.
  EXPECT_NE(relay->output().find("sentinel: failover of master mymaster started"), std::string::npos)
      << tail_lines(relay->output(), 60);
  EXPECT_NE(relay->output().find("sentinel: master mymaster switched"), std::string::npos)
      << tail_lines(relay->output(), 60);
}

TEST(SentinelRelay, MasterKilledUnderLoadKeepsEveryConfirmedTaskOnce) {
  SentinelGroup group;
  auto relay = start_sentinel_relay(group, group.node(0).dir(), "r1");
  auto old_master = connect_master(group);
  wait_relay_ready(*old_master, "r1", *relay);
  const auto expected = schedule_confirmed(*old_master, "crash-", 600, 0, 8000);
  ASSERT_TRUE(wait_until([&] { return xlen(*old_master) > 30; }, 30s));
  old_master.reset();
  const long long kill_ms = redis_now_ms(*group.connect_node(group.replica_index()));
  const auto killed = Clock::now();
  const int new_port = group.kill_master();
  const auto promoted = Clock::now();
  ASSERT_GT(new_port, 0);
  auto new_master = connect_redis("127.0.0.1", new_port);
  ASSERT_TRUE(wait_first_entry_since(*new_master, kill_ms)) << tail_lines(relay->output(), 40);
  const auto ms = [](Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::cout << "[ metric ] master killed: replica promoted after " << ms(promoted - killed)
            << " ms, first task forwarded on it " << ms(Clock::now() - promoted) << " ms later\n";
  // Every task was confirmed by the replica before the crash: each ends up once on the new
  // master (a claim the crash took back is claimed again there).
  expect_forwarded_once(group, expected, *relay);
}

// The window docs/reliability.md gives for a crash without WAIT: schedules the master
// acknowledged and its replica had not received when it was killed. Measured, not asserted (it
// is 0 when the replica keeps up); what is asserted is that the tasks the replica confirmed
// before (WAIT) all survive, and that nothing the master never acknowledged appears.
TEST(SentinelRelay, ACrashWithoutWaitLosesOnlyUnconfirmedSchedules) {
  SentinelGroup group;
  auto master = connect_master(group);
  master->command(load_library_argv());
  const auto confirmed = schedule_confirmed(*master, "safe-", 1000, 600000, 0);
  // A burst of schedules read back as acknowledged, then the crash at once, without WAIT.
  const int kBurst = 20000;
  KeyLayout keys("expiry");
  for (int i = 0; i < kBurst; ++i) {
    master->append(schedule_argv(keys, "burst-" + std::to_string(i), ScheduleMode::Delay, 600000, "p"));
  }
  int acknowledged = 0;
  for (int i = 0; i < kBurst; ++i) acknowledged += !master->read_reply().failed();
  ASSERT_EQ(acknowledged, kBurst);
  master.reset();
  const int new_port = group.kill_master();
  auto promoted = connect_redis("127.0.0.1", new_port);
  long long burst_kept = 0;
  for (int i = 0; i < kBurst; i += 1000) {
    std::vector<std::vector<std::string>> cmds;
    for (int j = i; j < i + 1000; ++j) cmds.push_back({"ZSCORE", keys.schedule_key(), "burst-" + std::to_string(j)});
    std::vector<Reply> replies;
    pipeline(*promoted, cmds, &replies);
    for (const Reply& r : replies) burst_kept += r.type != Reply::Type::Nil;
  }
  std::cout << "[ metric ] crash without WAIT: " << kBurst - burst_kept << " of " << kBurst
            << " acknowledged schedules lost\n";
  for (const auto& [id, payload] : confirmed) {
    EXPECT_NE(promoted->command({"ZSCORE", keys.schedule_key(), id}).type, Reply::Type::Nil) << id << " was confirmed";
  }
  EXPECT_EQ(zcard(*promoted), static_cast<long long>(confirmed.size()) + burst_kept);
}

TEST(SentinelRelay, ARelayKilledDuringAFailoverLosesNothingOnceRestarted) {
  SentinelGroup group;
  auto relay = start_sentinel_relay(group, group.node(0).dir(), "r1");
  auto master = connect_master(group);
  wait_relay_ready(*master, "r1", *relay);
  const auto expected = schedule_confirmed(*master, "k-", 300, 0, 3000);
  ASSERT_TRUE(wait_until([&] { return xlen(*master) > 20; }, 30s));
  relay->kill_hard();
  group.failover();
  auto restarted = start_sentinel_relay(group, group.node(0).dir(), "r2");
  expect_forwarded_once(group, expected, *restarted);
}

TEST(SentinelRelay, TheCancellerKeepsConsumingAcrossAFailoverAndActsOncePerOrder) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  auto relay = start_sentinel_relay(group, dir, "r1");
  auto master = connect_master(group);
  wait_relay_ready(*master, "r1", *relay);
  auto canceller_process = start_sentinel_canceller(group, dir, "c1");
  ChildProcess& canceller = *canceller_process;

  // 200 pending orders whose timeouts come due over 4 s, scheduled by expiry-ctl through the
  // sentinels from a bulk file, and confirmed by the replica (--wait-replicas 1).
  const int kOrders = 200;
  std::map<std::string, std::string> expected;
  std::ofstream bulk(dir + "/orders.jsonl");
  for (int i = 0; i < kOrders; ++i) {
    const std::string order = "o" + std::to_string(i);
    master->checked({"HSET", "order:" + order, "status", "pending"});
    expected["order:" + order] = nlohmann::json{{"order_id", order}}.dump();
    bulk << nlohmann::json{{"id", "order:" + order}, {"delay_ms", 1000 + 20 * i}, {"payload", expected["order:" + order]},
                           {"stream", kOrderTimeoutStream}}
                .dump()
         << "\n";
  }
  bulk.close();
  ASSERT_EQ(integer(*master, {"WAIT", "1", "5000"}), 1);
  const auto [ctl_rc, ctl_output] = run_ctl(group, {"schedule", "--file", dir + "/orders.jsonl", "--wait-replicas", "1"});
  ASSERT_EQ(ctl_rc, 0) << ctl_output;

  const auto cancelled_on = [&](SyncConnection& redis) {
    long long n = 0;
    for (const auto& [id, payload] : expected) n += redis.command({"HGET", id, "status"}).str == "cancelled";
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return cancelled_on(*master) > 20; }, 30s)) << canceller.output();
  group.failover();
  master.reset();
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          if (!master) master = connect_master(group);
          const Reply pending = master->command({"XPENDING", kOrderTimeoutStream, "workers"});
          return cancelled_on(*master) == kOrders && !pending.failed() && pending.elements.at(0).integer == 0;
        } catch (const std::exception&) {
          master.reset();
          return false;
        }
      },
      60s))
      << "relay:\n" << tail_lines(relay->output(), 40) << "\ncanceller:\n" << tail_lines(canceller.output(), 40);
  expect_exactly_once(xrange_all(*master, kOrderTimeoutStream), expected);
  EXPECT_EQ(canceller.terminate(), 0) << canceller.output();
  // Each order was cancelled once: no entry was handled on the old master after the switch and
  // then again on the new one.
  EXPECT_NE(canceller.output().find("cancelled=" + std::to_string(kOrders) + " "), std::string::npos)
      << tail_lines(canceller.output(), 20);
}

TEST(SentinelRelay, TheOrderDemoRunsThroughTheSentinels) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  auto relay = start_sentinel_relay(group, dir, "r1");
  auto master = connect_master(group);
  wait_relay_ready(*master, "r1", *relay);
  auto canceller = start_sentinel_canceller(group, dir, "c1");
  std::vector<std::string> sim_args = sentinel_flags(group);
  sim_args.insert(sim_args.end(), {"--run-id", "s", "--rate", "50", "--duration-ms", "3000", "--timeout-ms", "1000",
                                   "--grace-ms", "3000"});
  ChildProcess sim(ORDER_SIM_BIN, sim_args, {}, dir + "/order-sim.log");
  const auto rc = sim.wait_exit(60s);
  ASSERT_TRUE(rc) << sim.output();
  EXPECT_EQ(*rc, 0) << sim.output();
  EXPECT_NE(sim.output().find("\nresult: OK\n"), std::string::npos) << sim.output();
}

}  // namespace
}  // namespace expiry::test
