// One RedisCluster shared by tests: per suite (SharedClusterTest) or per binary
// (SharedClusterEnvironment), with the ClusterClient options of the tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "config/redis_url.h"
#include "io/sync/cluster_client.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"

namespace expiry::test {

class SharedClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new RedisCluster(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static ClusterClient::Options options() {
    ClusterClient::Options o;
    o.connection = test_connection_options();
    return o;
  }
  static RedisEndpoint seed() { return parse_redis_url(cluster_->seed_url()); }

  static inline RedisCluster* cluster_ = nullptr;
};

// The cluster of SharedClusterEnvironment while the binary's tests run (null otherwise).
inline RedisCluster*& shared_cluster() {
  static RedisCluster* cluster = nullptr;
  return cluster;
}

// Starts one RedisCluster before a binary's first test and stops it after the last:
// ::testing::AddGlobalTestEnvironment(new SharedClusterEnvironment(options)) in main().
class SharedClusterEnvironment : public ::testing::Environment {
 public:
  SharedClusterEnvironment() = default;
  explicit SharedClusterEnvironment(RedisCluster::Options options) : options_(std::move(options)) {}
  void SetUp() override {
    cluster_ = std::make_unique<RedisCluster>(options_);
    shared_cluster() = cluster_.get();
  }
  void TearDown() override {
    shared_cluster() = nullptr;
    cluster_.reset();
  }

 private:
  RedisCluster::Options options_;
  std::unique_ptr<RedisCluster> cluster_;
};

}  // namespace expiry::test
