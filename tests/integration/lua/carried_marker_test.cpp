// src/lua/expiry.lua on a real redis-server: a task forwarded with a missing_payload marker keeps
// it when expiry_retry or expiry_replay_dead schedules it again, so the next entry says again
// that the payload was lost instead of passing an empty payload off as a real one.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry", 0);
using Strings = std::vector<std::string>;
using Entry = std::map<std::string, std::string>;

class CarriedMarker : public ::testing::Test {
 protected:
  void SetUp() override {
    ok(load_library_argv());
    ok({"XGROUP", "CREATE", stream_, "g", "0", "MKSTREAM"});
  }

  void ok(const Strings& argv) {
    const Reply r = redis_.command(argv);
    ASSERT_FALSE(r.failed()) << r.describe();
  }

  // A delivered (pending) entry of task `id` in the stream, with these extra fields.
  std::string delivered_entry(const std::string& id, const Strings& extra) {
    Strings argv{"XADD", stream_, "*", "id", id, "payload", "", "due_ms", "1", "fired_ms", "1", "via", "sweep"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const std::string entry = redis_.command(argv).str;
    EXPECT_FALSE(redis_.command({"XREADGROUP", "GROUP", "g", "c", "STREAMS", stream_, ">"}).failed());
    return entry;
  }

  void retry(const std::string& id, const std::string& entry) {
    const Reply r = redis_.command({"FCALL", "expiry_retry", "5", stream_, kKeys.bucket_dead_stream(),
                                    kKeys.schedule_key(), kKeys.trigger_key(id), kKeys.shadow_key(id), "g", entry, id,
                                    "0", "5", "handler failed"});
    ASSERT_EQ(r.elements.size(), 3u) << r.describe();
    EXPECT_EQ(r.elements[0].integer, 1) << "scheduled again";
  }

  // Claims every due task (the retried ones are due at once) and returns the stream's entries.
  std::vector<Entry> forward_due() {
    const Reply r = redis_.command(sweep_argv(kKeys, stream_, 100, "sweep", "g"));
    EXPECT_FALSE(r.failed()) << r.describe();
    return xrange_all(redis_, stream_);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  const std::string stream_ = kKeys.bucket_stream();
};

TEST_F(CarriedMarker, ARetryKeepsTheMissingPayloadMarker) {
  retry("lost", delivered_entry("lost", {"missing_payload", "absent"}));
  const std::vector<Entry> entries = forward_due();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].at("id"), "lost");
  EXPECT_EQ(entries[1].at("attempt"), "2");
  EXPECT_EQ(entries[1].at("payload"), "");
  ASSERT_EQ(entries[1].count("missing_payload"), 1u) << "the marker was dropped on the retry";
  EXPECT_EQ(entries[1].at("missing_payload"), "absent");
}

TEST_F(CarriedMarker, ARetryOfAnEntryWithItsPayloadAddsNoMarker) {
  retry("fine", delivered_entry("fine", {}));
  const std::vector<Entry> entries = forward_due();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].at("attempt"), "2");
  EXPECT_EQ(entries[1].count("missing_payload"), 0u);
}

TEST_F(CarriedMarker, AReplayOfADeadEntryKeepsTheMarker) {
  const std::string dead = kKeys.bucket_dead_stream();
  const std::string entry = redis_.command({"XADD", dead, "*", "original_id", "1-1", "original_stream", stream_,
                                            "reason", "poison", "id", "odd", "payload", "",
                                            "missing_payload", "wrongtype"}).str;
  ok({"FCALL", "expiry_replay_dead", "4", dead, kKeys.schedule_key(), kKeys.trigger_key("odd"),
      kKeys.shadow_key("odd"), entry, "odd", "0", stream_});
  const std::vector<Entry> entries = forward_due();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("id"), "odd");
  ASSERT_EQ(entries[0].count("missing_payload"), 1u) << "the marker was dropped on the replay";
  EXPECT_EQ(entries[0].at("missing_payload"), "wrongtype");
  EXPECT_EQ(redis_.command({"XLEN", dead}).integer, 0);
}

}  // namespace
}  // namespace expiry::test
