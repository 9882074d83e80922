// Self tests of SentinelGroup (needs redis-server: support/server_binaries.h). One group is
// shared by the tests, which run in order: each starts from whatever master the previous one
// left and leaves the group able to fail over (wait_replica_in_sync) or says why not.
#include <signal.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/redis_client.h"
#include "support/redis_sentinel.h"
#include "support/tls_certs.h"

namespace expiry::test {
namespace {

class SentinelGroupTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { group_ = new SentinelGroup(); }
    static void TearDownTestSuite() {
        delete group_;
        group_ = nullptr;
    }
    static SentinelGroup* group_;
};
SentinelGroup* SentinelGroupTest::group_ = nullptr;

std::string role(SentinelGroup& group, int index) {
    return group.connect_node(index)->checked({"ROLE"}).elements.at(0).str;
}

// True if 127.0.0.1:port answers PONG to a PING without TLS.
bool answers_plain_ping(int port) {
    SyncConnection::Options options;
    options.connect_timeout = std::chrono::milliseconds(1000);
    options.command_timeout = std::chrono::milliseconds(2000);
    try {
        SyncConnection c(test_endpoint("127.0.0.1", port), options);
        const Reply r = c.command({"PING"});
        return r.type == Reply::Type::Status && r.str == "PONG";
    } catch (const std::exception&) {
        return false;
    }
}

TEST_F(SentinelGroupTest, StartsWithAMasterAReplicaAndThreeSentinelsThatKnowThem) {
    EXPECT_EQ(group_->master_name(), "mymaster");
    EXPECT_EQ(role(*group_, 0), "master");
    EXPECT_EQ(role(*group_, 1), "slave");
    EXPECT_EQ(group_->master_index(), 0);
    EXPECT_EQ(group_->master_port(), group_->node(0).port());

    const auto ports = group_->sentinel_ports();
    ASSERT_EQ(ports.size(), 3u);
    EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), 3u);
    EXPECT_EQ(group_->sentinel_addresses(), "127.0.0.1:" + std::to_string(ports[0]) + ",127.0.0.1:" +
                                                std::to_string(ports[1]) + ",127.0.0.1:" + std::to_string(ports[2]));
    std::set<pid_t> pids;
    for (int i = 0; i < 3; ++i) {
        const pid_t pid = group_->sentinel_pid(i);
        EXPECT_GT(pid, 0);
        pids.insert(pid);
        auto sentinel = group_->connect_sentinel(i);
        const Reply info = sentinel->checked({"INFO", "server"});
        EXPECT_NE(info.str.find("redis_mode:sentinel"), std::string::npos);
        EXPECT_NE(info.str.find("process_id:" + std::to_string(pid) + "\r\n"), std::string::npos);
        const Reply addr = sentinel->checked({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"});
        ASSERT_EQ(addr.elements.size(), 2u);
        EXPECT_EQ(addr.elements[0].str, "127.0.0.1");
        EXPECT_EQ(addr.elements[1].str, std::to_string(group_->node(0).port()));
    }
    EXPECT_EQ(pids.size(), 3u);

    for (int i = 0; i < 2; ++i) {
        const Reply events = group_->connect_node(i)->checked({"CONFIG", "GET", "notify-keyspace-events"});
        ASSERT_EQ(events.elements.size(), 2u);
        EXPECT_NE(events.elements[1].str.find('E'), std::string::npos);
        EXPECT_NE(events.elements[1].str.find('x'), std::string::npos);
    }
    EXPECT_EQ(group_->data_url_of(group_->node(1).port(), 3),
              "redis://127.0.0.1:" + std::to_string(group_->node(1).port()) + "/3");
}

TEST_F(SentinelGroupTest, FailoverMovesTheMasterWithItsDataAndASecondOneGoesBack) {
    const int old_master = group_->master_index();
    const int old_port = group_->node(old_master).port();
    {
        auto master = group_->connect_node(old_master);
        master->checked({"SET", "sentinel-self-test:key", "before-failover"});
        EXPECT_EQ(integer(*master, {"WAIT", "1", "1000"}), 1);
    }

    const int new_port = group_->failover();
    EXPECT_NE(new_port, old_port);
    EXPECT_EQ(new_port, group_->node(1 - old_master).port());
    EXPECT_EQ(group_->master_port(), new_port);
    EXPECT_EQ(group_->master_index(), 1 - old_master);
    for (int i = 0; i < 3; ++i) {
        const Reply addr = group_->connect_sentinel(i)->checked({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"});
        EXPECT_EQ(addr.elements.at(1).str, std::to_string(new_port));
    }
    {
        auto master = group_->connect_node(1 - old_master);
        EXPECT_EQ(master->checked({"GET", "sentinel-self-test:key"}).str, "before-failover");
        master->checked({"SET", "sentinel-self-test:key", "after-failover"});
    }

    group_->wait_replica_in_sync();
    EXPECT_EQ(role(*group_, old_master), "slave");
    EXPECT_EQ(integer(*group_->connect_node(1 - old_master), {"WAIT", "1", "1000"}), 1);

    EXPECT_EQ(group_->failover(), old_port);
    EXPECT_EQ(group_->master_index(), old_master);
    EXPECT_EQ(group_->connect_node(old_master)->checked({"GET", "sentinel-self-test:key"}).str, "after-failover");
}

TEST_F(SentinelGroupTest, KillingTheMasterPromotesTheReplicaAndTheRestartedNodeRejoinsAsReplica) {
    group_->wait_replica_in_sync();
    const int old_master = group_->master_index();
    const pid_t old_pid = group_->node(old_master).pid();

    const int new_port = group_->kill_master();
    EXPECT_EQ(new_port, group_->node(1 - old_master).port());
    EXPECT_FALSE(group_->node(old_master).running());
    EXPECT_NE(kill(old_pid, 0), 0);
    EXPECT_EQ(role(*group_, 1 - old_master), "master");

    group_->restart_node(old_master);
    EXPECT_EQ(role(*group_, old_master), "slave");
    group_->wait_replica_in_sync();
    EXPECT_EQ(group_->master_index(), 1 - old_master);
}

TEST_F(SentinelGroupTest, StoppedSentinelsStartAgainOnTheirPortsAndReportTheMaster) {
    const auto ports = group_->sentinel_ports();
    std::vector<pid_t> old_pids;
    for (int i = 0; i < 3; ++i) old_pids.push_back(group_->sentinel_pid(i));

    group_->stop_sentinels();
    for (pid_t pid : old_pids) EXPECT_NE(kill(pid, 0), 0);
    for (int i = 0; i < 3; ++i) EXPECT_ANY_THROW(group_->connect_sentinel(i));

    group_->start_sentinels();
    EXPECT_EQ(group_->sentinel_ports(), ports);
    for (int i = 0; i < 3; ++i) EXPECT_NE(group_->sentinel_pid(i), old_pids[i]);
    const int master = group_->master_index();
    EXPECT_EQ(group_->master_port(), group_->node(master).port());
    group_->wait_replica_in_sync();
}

TEST(SentinelGroupWithPasswords, StartsEveryoneAsksForThemAndAKilledMasterIsReplaced) {
    SentinelGroup::Options options;
    options.master_name = "secured";
    options.data_password = "data p@ss";
    options.sentinel_password = "sentinel-pass";
    SentinelGroup group(options);

    EXPECT_EQ(group.master_name(), "secured");
    EXPECT_EQ(group.master_port(), group.node(0).port());
    EXPECT_EQ(group.master_index(), 0);
    EXPECT_EQ(role(group, 1), "slave");
    EXPECT_EQ(group.data_url_of(group.node(0).port(), 0),
              "redis://:data%20p%40ss@127.0.0.1:" + std::to_string(group.node(0).port()) + "/0");

    TestConnection node(group.node(0).host(), group.node(0).port());
    const Reply refused = node.command({"GET", "k"});
    ASSERT_EQ(refused.type, Reply::Type::Error);
    EXPECT_EQ(refused.str.rfind("NOAUTH", 0), 0u) << refused.str;

    TestConnection sentinel("127.0.0.1", group.sentinel_ports().at(0));
    const Reply refused_sentinel = sentinel.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "secured"});
    ASSERT_EQ(refused_sentinel.type, Reply::Type::Error);
    EXPECT_EQ(refused_sentinel.str.rfind("NOAUTH", 0), 0u) << refused_sentinel.str;
    EXPECT_EQ(sentinel.command({"AUTH", "sentinel-pass"}).str, "OK");
    const Reply addr = sentinel.checked({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "secured"});
    EXPECT_EQ(addr.elements.at(1).str, std::to_string(group.node(0).port()));

    // An automatic failover needs the sentinels' votes, asked over their password-protected links.
    EXPECT_EQ(group.kill_master(), group.node(1).port());
    EXPECT_EQ(role(group, 1), "master");
}

TEST(SentinelGroupWithTls, EveryoneSpeaksTlsOnlyRequiresClientCertificatesAndAKilledMasterIsReplaced) {
    TlsCerts certs;
    RedisTlsOptions tls;
    tls.cert_file = certs.server().cert;
    tls.key_file = certs.server().key;
    tls.ca_cert_file = certs.ca_file();
    tls.auth_clients = true;
    tls.probe_cert_file = certs.client().cert;
    tls.probe_key_file = certs.client().key;
    SentinelGroup::Options options;
    options.tls = tls;
    SentinelGroup group(options);  // replication and the sentinels' links work over TLS

    EXPECT_EQ(group.master_index(), 0);
    EXPECT_EQ(role(group, 1), "slave");
    EXPECT_EQ(group.data_url_of(group.node(0).port(), 2),
              "rediss://127.0.0.1:" + std::to_string(group.node(0).port()) + "/2");
    for (int i = 0; i < SentinelGroup::kNodes; ++i) {
        EXPECT_TRUE(group.node(i).tls());
        EXPECT_FALSE(answers_plain_ping(group.node(i).port())) << "node " << i;
        const Reply info = group.connect_node(i)->checked({"INFO", "replication"});
        EXPECT_NE(info.str.find(i == 0 ? "role:master" : "master_link_status:up"), std::string::npos) << info.str;
    }
    for (int i = 0; i < SentinelGroup::kSentinels; ++i) {
        EXPECT_FALSE(answers_plain_ping(group.sentinel_ports().at(i))) << "sentinel " << i;
        auto sentinel = group.connect_sentinel(i);
        const Reply addr = sentinel->checked({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"});
        EXPECT_EQ(addr.elements.at(1).str, std::to_string(group.node(0).port()));
    }
    // Without the client certificate, a node and a sentinel refuse the handshake.
    for (const int port : {group.node(0).port(), group.sentinel_ports().at(0)}) {
        RedisEndpoint endpoint = test_endpoint("127.0.0.1", port);
        endpoint.tls.enabled = true;
        endpoint.tls.ca_cert_file = certs.ca_file();
        bool answered = false;
        try {
            SyncConnection c(endpoint, test_connection_options());
            answered = c.command({"PING"}).str == "PONG";
        } catch (const std::exception&) {
        }
        EXPECT_FALSE(answered) << "port " << port << " answered a client without a certificate";
    }

    // An automatic failover needs the sentinels' votes, asked over their TLS links.
    EXPECT_EQ(group.kill_master(), group.node(1).port());
    EXPECT_EQ(role(group, 1), "master");
}

}  // namespace
}  // namespace expiry::test
