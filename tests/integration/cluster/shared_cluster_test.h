// A gtest base whose tests share one RedisCluster (started once per suite), with the
// ClusterClient options of the tests.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace expiry::test
