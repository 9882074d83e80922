// expiry-relay and expiry-ctl through Redis Sentinel over TLS: a TLS-only SentinelGroup (data
// nodes and sentinels on TLS ports only, replication and the sentinels' links over TLS) and
// programs given a rediss:// URL with --sentinel and the --tls-* flags, which apply to the
// sentinels and the data nodes alike. The oracle is the fixture's own TLS connection to the
// master the sentinels name.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "integration/relay/relay_harness.h"
#include "integration/tls/suite_certs.h"
#include "integration/tls/tls_harness.h"
#include "support/redis_sentinel.h"

namespace expiry::test {
namespace {

// A TLS SentinelGroup serving TlsCerts' server certificate; its probes present the client
// certificate, which every node and sentinel requires when `client` is Present (tls-auth-clients
// yes: the nodes' and sentinels' own links then present it too).
SentinelGroup::Options tls_group_options(const TlsCerts& certs, ClientCert client) {
  RedisTlsOptions tls;
  tls.cert_file = certs.server().cert;
  tls.key_file = certs.server().key;
  tls.ca_cert_file = certs.ca_file();
  tls.auth_clients = client == ClientCert::Present;
  tls.probe_cert_file = certs.client().cert;
  tls.probe_key_file = certs.client().key;
  SentinelGroup::Options options;
  options.tls = tls;
  return options;
}

// The flags that make a program find its Redis through the group's TLS sentinels, verify every
// server (sentinels and data nodes) with the CA and present the client certificate if `client`.
std::vector<std::string> sentinel_tls_flags(const SentinelGroup& group, const TlsCerts& certs, ClientCert client) {
  std::vector<std::string> flags = {"--redis-url", "rediss://127.0.0.1:1/0", "--sentinel", group.sentinel_addresses(),
                                    "--sentinel-master", group.master_name()};
  const auto tls = tls_flags(certs, client);
  flags.insert(flags.end(), tls.begin(), tls.end());
  return flags;
}

std::unique_ptr<ChildProcess> start_sentinel_tls_relay(const SentinelGroup& group, const TlsCerts& certs,
                                                       ClientCert client, const std::string& instance) {
  std::vector<std::string> args = sentinel_tls_flags(group, certs, client);
  const std::vector<std::string> rest = {"--instance", instance, "--reconnect-initial-ms", "20",
                                         "--reconnect-max-ms", "200", "--watchdog-interval-ms", "200",
                                         "--watchdog-timeout-ms", "1000", "--health-probe-interval-ms", "200"};
  args.insert(args.end(), rest.begin(), rest.end());
  return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        group.node(0).dir() + "/relay-" + instance + ".log");
}

// expiry-ctl schedules `n` tasks "<prefix><i>" through the sentinels (each run must exit 0);
// adds them to `expected`.
void schedule_with_ctl(const SentinelGroup& group, const TlsCerts& certs, ClientCert client,
                       const std::string& prefix, int n, std::map<std::string, std::string>& expected) {
  for (int i = 0; i < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    expected[id] = "payload-" + id;
    std::vector<std::string> args = sentinel_tls_flags(group, certs, client);
    args.insert(args.end(), {"schedule", id, "--delay-ms", "200", "--payload", expected[id]});
    ChildProcess ctl(EXPIRY_CTL_BIN, args);
    ASSERT_EQ(ctl.wait_exit(60s).value_or(-1), 0) << "expiry-ctl schedule " << id << ":\n" << ctl.output();
  }
}

// Waits until the master the sentinels name holds `expected.size()` stream entries and no pending
// task, then checks each task is there exactly once with its payload.
void expect_forwarded_once(const SentinelGroup& group, const std::map<std::string, std::string>& expected,
                           ChildProcess& relay) {
  std::unique_ptr<SyncConnection> master;
  const bool all = wait_until(
      [&] {
        try {
          if (!master) master = group.connect_node(group.master_index());
          return xlen(*master) >= static_cast<long long>(expected.size()) && zcard(*master) == 0;
        } catch (const std::exception&) {
          master.reset();
          return false;
        }
      },
      60s);
  ASSERT_TRUE(master) << "no TLS connection to the master; relay output:\n" << tail_lines(relay.output(), 60);
  EXPECT_TRUE(all) << "stream has " << xlen(*master) << " of " << expected.size() << ", " << zcard(*master)
                   << " pending; relay output:\n"
                   << tail_lines(relay.output(), 60);
  expect_exactly_once(xrange_all(*master, KeyLayout("expiry").default_stream()), expected);
}

// Parameter: whether the servers require (and the programs present) the client certificate.
class SentinelTls : public SuiteCerts<::testing::TestWithParam<ClientCert>> {};

TEST_P(SentinelTls, ForwardsEveryTaskOnceBeforeAndAfterAFailover) {
  const ClientCert client = GetParam();
  SentinelGroup group(tls_group_options(certs(), client));
  auto relay = start_sentinel_tls_relay(group, certs(), client, "r1");
  {
    auto master = group.connect_node(group.master_index());
    wait_relay_ready(*master, "r1", *relay);
  }

  std::map<std::string, std::string> expected;
  schedule_with_ctl(group, certs(), client, "before-", 20, expected);
  expect_forwarded_once(group, expected, *relay);
  {
    // The replica holds every forwarded entry before the failover (so the new master does).
    auto master = group.connect_node(group.master_index());
    EXPECT_EQ(integer(*master, {"WAIT", "1", "5000"}), 1) << "the replica did not confirm the stream";
  }

  const int old_port = group.master_port();
  const int new_port = group.failover();
  ASSERT_NE(new_port, old_port);

  schedule_with_ctl(group, certs(), client, "after-", 20, expected);
  expect_forwarded_once(group, expected, *relay);
  EXPECT_EQ(group.master_port(), new_port);
  EXPECT_TRUE(relay->running()) << tail_lines(relay->output(), 60);
  // It followed the sentinels' +switch-master (its subscription to them is over TLS too).
  EXPECT_NE(relay->output().find("sentinel: master mymaster switched"), std::string::npos)
      << tail_lines(relay->output(), 60);
}

INSTANTIATE_TEST_SUITE_P(ClientCertificate, SentinelTls, ::testing::Values(ClientCert::None, ClientCert::Present),
                         [](const ::testing::TestParamInfo<ClientCert>& info) {
                           return info.param == ClientCert::Present ? "Required" : "NotRequired";
                         });

}  // namespace
}  // namespace expiry::test
