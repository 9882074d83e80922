// A namespace of several buckets on one Redis: the relay reads or records the count in
// NS:buckets, sweeps every bucket into the bucket's own stream, and refuses another count.
#include "relay_harness.h"

#include "redis/hash_slot.h"

namespace expiry::test {
namespace {

class BucketTest : public ::testing::Test {
 protected:
  RedisServer server_;
  SyncConnection redis_{parse_redis_url(server_.url())};

  // Schedules `count` tasks due in `delay_ms`, each into its bucket of `buckets`.
  std::set<std::string> schedule_bucketed(int count, int buckets, long long delay_ms) {
    redis_.command(load_library_argv());
    std::vector<std::vector<std::string>> cmds;
    std::set<std::string> ids;
    for (int i = 0; i < count; ++i) {
      const std::string id = "order-" + std::to_string(i);
      ids.insert(id);
      cmds.push_back(schedule_argv(KeyLayout("expiry", bucket_of(id, buckets)), id, ScheduleMode::Delay, delay_ms,
                                   "p" + std::to_string(i)));
    }
    std::vector<Reply> replies;
    pipeline(redis_, cmds, &replies);
    for (const auto& r : replies) EXPECT_FALSE(r.failed()) << r.describe();
    return ids;
  }

  long long forwarded(int buckets) {
    long long n = 0;
    for (int b = 0; b < buckets; ++b) n += xlen(redis_, KeyLayout("expiry", b).bucket_stream());
    return n;
  }

  bool subscribed(const std::string& instance) {
    auto numsub = redis_.command({"PUBSUB", "NUMSUB", KeyLayout("expiry").health_channel(instance)});
    return numsub.elements.size() == 2 && numsub.elements[1].integer == 1;
  }

  // Subscribed, the count recorded and every bucket stream's group created: the relay subscribes
  // on its own connection, beside (not after) the SET NX of the count and the XGROUP CREATEs.
  bool prepared(const std::string& instance, int buckets) {
    if (!subscribed(instance) || redis_.command({"GET", "expiry:buckets"}).str != std::to_string(buckets)) return false;
    for (int b = 0; b < buckets; ++b) {
      if (redis_.command({"XINFO", "GROUPS", KeyLayout("expiry", b).bucket_stream()}).failed()) return false;
    }
    return true;
  }
};

TEST_F(BucketTest, TheRelayRecordsTheCountAndForwardsEveryBucketIntoItsOwnStream) {
  constexpr int kBuckets = 4;
  auto relay = start_relay(server_, "b1", {"--buckets", std::to_string(kBuckets)});
  ASSERT_TRUE(wait_until([&] { return prepared("b1", kBuckets); }, 20s)) << relay->output();
  const Reply stored = redis_.command({"GET", "expiry:buckets"});
  EXPECT_EQ(stored.str, "4");
  for (int b = 0; b < kBuckets; ++b) {
    auto groups = redis_.command({"XINFO", "GROUPS", KeyLayout("expiry", b).bucket_stream()});
    EXPECT_FALSE(groups.failed()) << "bucket " << b << ": " << groups.describe();
  }

  const auto ids = schedule_bucketed(400, kBuckets, 300);
  ASSERT_TRUE(wait_until([&] { return forwarded(kBuckets) >= 400; }, 30s)) << relay->output();
  std::set<std::string> seen;
  for (int b = 0; b < kBuckets; ++b) {
    const Reply entries = redis_.command({"XRANGE", KeyLayout("expiry", b).bucket_stream(), "-", "+"});
    for (const auto& e : entries.elements) {
      const auto& fields = e.elements[1].elements;
      for (size_t i = 0; i + 1 < fields.size(); i += 2) {
        if (fields[i].str != "id") continue;
        EXPECT_TRUE(seen.insert(fields[i + 1].str).second) << "forwarded twice: " << fields[i + 1].str;
        EXPECT_EQ(bucket_of(fields[i + 1].str, kBuckets), b) << fields[i + 1].str << " in the wrong bucket stream";
      }
    }
    EXPECT_EQ(integer(redis_, {"ZCARD", KeyLayout("expiry", b).schedule_key()}), 0);
  }
  EXPECT_EQ(seen, ids);
  EXPECT_EQ(forwarded(kBuckets), 400) << "no duplicates";
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:stream"}), 0) << "a bucketed namespace does not use NS:stream";
}

TEST_F(BucketTest, ARelayWithoutTheSettingTakesTheStoredCount) {
  redis_.command({"SET", "expiry:buckets", "2"});
  auto relay = start_relay(server_, "b2");
  ASSERT_TRUE(wait_until([&] { return subscribed("b2"); }, 20s)) << relay->output();
  schedule_bucketed(50, 2, 100);
  ASSERT_TRUE(wait_until([&] { return forwarded(2) >= 50; }, 30s)) << relay->output();
  EXPECT_GT(xlen(redis_, KeyLayout("expiry", 1).bucket_stream()), 0);
  EXPECT_EQ(forwarded(2), 50);
}

TEST_F(BucketTest, ARelayConfiguredWithAnotherCountRefusesToStart) {
  redis_.command({"SET", "expiry:buckets", "4"});
  auto relay = start_relay(server_, "b3", {"--buckets", "8"});
  auto code = relay->wait_exit(20s);
  ASSERT_TRUE(code.has_value()) << relay->output();
  EXPECT_EQ(*code, 2) << relay->output();
  EXPECT_NE(relay->output().find("has 4 buckets"), std::string::npos) << relay->output();
  EXPECT_EQ(redis_.command({"GET", "expiry:buckets"}).str, "4") << "the stored count is never overwritten";
}

TEST_F(BucketTest, AStoredValueThatIsNoBucketCountIsRefused) {
  redis_.command({"SET", "expiry:buckets", "3"});
  auto relay = start_relay(server_, "b4");
  auto code = relay->wait_exit(20s);
  ASSERT_TRUE(code.has_value()) << relay->output();
  EXPECT_EQ(*code, 2) << relay->output();
  EXPECT_NE(relay->output().find("not a bucket count"), std::string::npos) << relay->output();
}

TEST_F(BucketTest, ALegacyNamespaceStaysOneBucketWithoutAKey) {
  auto relay = start_relay(server_, "b5");
  wait_relay_ready(redis_, "b5", *relay);
  EXPECT_EQ(redis_.command({"EXISTS", "expiry:buckets"}).integer, 0) << "one bucket on one Redis records nothing";
  schedule_all(redis_, {{"a", 50, "x"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 20s)) << relay->output();
}

}  // namespace
}  // namespace expiry::test
