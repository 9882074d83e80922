// The webhook=NAME schedule option (docs/protocol.md, "Schedule options") on a real redis-server:
// stored in the shadow hash, copied into the stream entry as the field `webhook`, carried with
// occurrence_ms through expiry_v2_retry, and a bad name refused with nothing written.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/schedule_batch.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry", 0);
const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";

class WebhookOption : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(redis_.command(load_library_argv()).failed());
    ASSERT_FALSE(redis_.command({"XGROUP", "CREATE", kStream, "workers", "0", "MKSTREAM"}).failed());
  }

  Reply schedule(const std::string& id, const std::string& options) {
    return redis_.command(schedule_argv(kKeys, id, ScheduleMode::At, 1, "{\"a\":1}", {}, std::nullopt, options));
  }

  std::map<std::string, std::string> hash(const std::string& key) {
    std::map<std::string, std::string> out;
    const Reply r = redis_.command({"HGETALL", key});
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }

  // Reads the next entry for consumer c; its id and fields.
  std::pair<std::string, std::map<std::string, std::string>> read_one() {
    const Reply r = redis_.command({"XREADGROUP", "GROUP", "workers", "c", "COUNT", "1", "STREAMS", kStream, ">"});
    std::map<std::string, std::string> fields;
    if (r.type != Reply::Type::Array || r.elements.empty()) return {"", fields};
    const Reply& e = r.elements[0].elements[1].elements[0];
    const auto& list = e.elements[1].elements;
    for (size_t i = 0; i + 1 < list.size(); i += 2) fields[list[i].str] = list[i + 1].str;
    return {e.elements[0].str, fields};
  }

  Reply claim(const std::string& id) {
    return redis_.command(claim_argv(kKeys, id, "event", kStream, "workers", {0, ""}));
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(WebhookOption, TheEntryCarriesTheWebhookField) {
  ASSERT_FALSE(schedule("w1", "webhook=orders.v2_x-1").failed());
  EXPECT_EQ(hash(kKeys.shadow_key("w1"))["webhook"], "orders.v2_x-1");
  const auto c = decode_claim(claim("w1"));
  ASSERT_TRUE(c);
  ASSERT_EQ(c->outcome, ClaimResult::Outcome::Forwarded);
  const auto [entry_id, fields] = read_one();
  ASSERT_FALSE(entry_id.empty());
  EXPECT_EQ(fields.at("webhook"), "orders.v2_x-1");
  EXPECT_EQ(fields.at("payload"), "{\"a\":1}");
  EXPECT_EQ(fields.count("occurrence_ms"), 0u) << "only retries carry it";
}

TEST_F(WebhookOption, ARetryKeepsTheWebhookAndTheFirstDueTime) {
  ASSERT_FALSE(schedule("w2", "webhook=hooks").failed());
  ASSERT_TRUE(decode_claim(claim("w2")));
  const auto [first_id, first] = read_one();
  ASSERT_FALSE(first_id.empty());
  const Reply r = redis_.command({"FCALL", "expiry_v2_retry", "5", kStream, kDead, kKeys.schedule_key(),
                                  kKeys.trigger_key("w2"), kKeys.shadow_key("w2"), "workers", first_id, "w2", "0", "5",
                                  "http 500"});
  ASSERT_EQ(r.type, Reply::Type::Array) << r.describe();
  ASSERT_EQ(r.elements[0].integer, 1) << "scheduled again";
  ASSERT_TRUE(decode_claim(claim("w2")));
  const auto [second_id, second] = read_one();
  ASSERT_FALSE(second_id.empty());
  EXPECT_EQ(second.at("webhook"), "hooks");
  EXPECT_EQ(second.at("occurrence_ms"), first.at("due_ms"));
  EXPECT_EQ(second.at("attempt"), "2");
}

TEST_F(WebhookOption, ABadNameIsRefusedAndNothingIsWritten) {
  const long long keys_before = redis_.command({"DBSIZE"}).integer;
  for (const std::string& bad : std::vector<std::string>{"webhook=", "webhook=a/b", "webhook=" + std::string(65, 'a'),
                                                         "webhook=caf\xc3\xa9", "webhook=x webhook=a:b"}) {
    SCOPED_TRACE(bad);
    const Reply r = schedule("x", bad);
    EXPECT_EQ(r.type, Reply::Type::Error) << r.describe();
    EXPECT_EQ(redis_.command({"DBSIZE"}).integer, keys_before);
  }
  EXPECT_FALSE(schedule("ok", "webhook=" + std::string(64, 'a')).failed());
}

}  // namespace
}  // namespace expiry::test
