// Stream retention (StreamTrimmer + expiry_trim) against a real Redis: the relay trims only the
// entries every consumer group has acknowledged and that are older than --stream-retention-ms,
// and leaves a stream without a group alone. Entries are added with XADD so each test controls
// the ids and the groups' positions exactly; passes are counted with INFO commandstats (every
// expiry_trim call on an existing stream runs XINFO GROUPS once).
#include "relay_harness.h"

#include <algorithm>

namespace expiry::test {
namespace {

const std::string kStream = "expiry:stream";

class RetentionTest : public ::testing::Test {
 protected:
  RedisServer server_;
  SyncConnection redis_{parse_redis_url(server_.url())};
  int metrics_port_ = free_port();
  std::unique_ptr<ChildProcess> relay_;

  void start(const std::string& retention_ms, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--stream-retention-ms", retention_ms, "--stream-trim-interval-ms", "100",
                                     "--metrics-port", std::to_string(metrics_port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    relay_ = start_relay(server_, "ret", args);
    // Subscribed, and the group exists on every stream it serves.
    std::vector<std::string> streams{kStream};
    if (std::find(extra.begin(), extra.end(), "--buckets") != extra.end()) {
      streams = {"expiry:{0}:stream", "expiry:{1}:stream"};
    }
    ASSERT_TRUE(wait_until(
        [&] {
          auto numsub = redis_.command({"PUBSUB", "NUMSUB", KeyLayout("expiry").health_channel("ret")});
          if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
          for (const auto& stream : streams) {
            if (integer(redis_, {"EXISTS", stream}) == 0) return false;  // created with its group (MKSTREAM)
          }
          return true;
        },
        20s))
        << relay_->output();
  }

  // expiry_trim calls that reached an existing stream so far (each runs XINFO GROUPS once).
  long long trim_calls() {
    const Reply info = redis_.command({"INFO", "commandstats"});
    const std::string key = "cmdstat_xinfo|groups:calls=";
    const auto at = info.str.find(key);
    return at == std::string::npos ? 0 : std::stoll(info.str.substr(at + key.size()));
  }

  // Waits until `passes` more trim calls have run.
  void wait_passes(long long passes) {
    const long long from = trim_calls();
    // Passes that change nothing come ever more slowly (up to 32 intervals apart).
    ASSERT_TRUE(wait_until([&] { return trim_calls() >= from + passes; }, 60s)) << relay_->output();
  }

  std::vector<std::string> add(int count, const std::string& stream = kStream) {
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      ids.push_back(redis_.command({"XADD", stream, "*", "id", "t" + std::to_string(i)}).str);
    }
    return ids;
  }

  std::vector<std::string> ids_in(const std::string& stream = kStream) {
    std::vector<std::string> ids;
    for (const auto& e : xrange_all(redis_, stream)) ids.push_back(e.at("_entry_id"));
    return ids;
  }

  // Delivers `count` entries to `consumer` of `group` (XREADGROUP >) and acknowledges the first `ack`.
  void read(const std::string& group, int count, int ack, const std::string& stream = kStream) {
    const Reply r = redis_.command({"XREADGROUP", "GROUP", group, "c1", "COUNT", std::to_string(count), "STREAMS",
                                    stream, ">"});
    ASSERT_EQ(r.type, Reply::Type::Array) << r.describe();
    const auto& entries = r.elements.at(0).elements.at(1).elements;
    ASSERT_EQ(entries.size(), static_cast<size_t>(count));
    for (int i = 0; i < ack; ++i) {
      EXPECT_EQ(integer(redis_, {"XACK", stream, group, entries[static_cast<size_t>(i)].elements[0].str}), 1);
    }
  }

  double metric(const std::string& series) { return metric_value(http_get(metrics_port_, "/metrics").body, series); }
};

std::vector<std::string> slice(const std::vector<std::string>& v, size_t from, size_t to) {
  return {v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to)};
}

TEST_F(RetentionTest, PendingAndUndeliveredEntriesSurviveEveryTrim) {
  start("0");
  const auto ids = add(20);
  redis_.command({"XGROUP", "CREATE", kStream, "audit", "0"});  // a slow group: nothing delivered yet
  read("workers", 10, 5);                                      // 1-5 acknowledged, 6-10 pending
  wait_passes(5);
  EXPECT_EQ(ids_in(), ids) << "the slow group has been delivered nothing";

  read("audit", 20, 20);  // the slow group catches up: now only workers holds entries back
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 15; }, 20s)) << relay_->output();
  wait_passes(5);
  EXPECT_EQ(ids_in(), slice(ids, 5, 20)) << "entries 6-10 are pending, 11-20 undelivered to workers";
  EXPECT_EQ(metric("expiry_relay_stream_trimmed_entries_total{stream=\"expiry:stream\"}"), 5);
  EXPECT_EQ(metric("expiry_relay_stream_length{stream=\"expiry:stream\"}"), 15);
  EXPECT_EQ(metric("expiry_relay_stream_trims_skipped_total{stream=\"expiry:stream\",reason=\"no_group\"}"), 0);
}

// The stream length gauge is right from the start, not one trim interval later (it read 0 for
// the default 10 s while the stream held entries).
TEST_F(RetentionTest, TheStreamLengthGaugeIsRightSoonAfterStartAtTheDefaultInterval) {
  ASSERT_EQ(redis_.command({"XGROUP", "CREATE", kStream, "workers", "$", "MKSTREAM"}).str, "OK");
  add(7);
  relay_ = start_relay(server_, "ret", {"--metrics-port", std::to_string(metrics_port_)});  // 10 s interval
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_stream_length{stream=\"expiry:stream\"}") == 7; }, 60s))
      << relay_->output();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 8s) << "the gauge waited for the first trim interval";
}

TEST_F(RetentionTest, TwoGroupsAtDifferentPositionsTrimUpToTheLowerOne) {
  start("0");
  const auto ids = add(20);
  redis_.command({"XGROUP", "CREATE", kStream, "audit", "0"});
  read("workers", 15, 15);
  read("audit", 8, 8);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 12; }, 20s)) << relay_->output();
  wait_passes(3);
  EXPECT_EQ(ids_in(), slice(ids, 8, 20));

  read("audit", 12, 12);  // audit passes workers: workers (at 15) is now the lower one
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 5; }, 20s)) << relay_->output();
  wait_passes(3);
  EXPECT_EQ(ids_in(), slice(ids, 15, 20));
  EXPECT_EQ(metric("expiry_relay_stream_trimmed_entries_total{stream=\"expiry:stream\"}"), 15);
}

TEST_F(RetentionTest, AcknowledgedEntriesGoOnlyOnceOlderThanTheRetention) {
  start("60000");
  // Five entries ten minutes old and five from now, every one acknowledged by the group.
  const long long now = redis_now_ms(redis_);
  std::vector<std::string> ids;
  for (int i = 1; i <= 5; ++i) ids.push_back(std::to_string(now - 600000) + "-" + std::to_string(i));
  for (int i = 1; i <= 5; ++i) ids.push_back(std::to_string(now) + "-" + std::to_string(i));
  for (const auto& id : ids) ASSERT_EQ(redis_.command({"XADD", kStream, id, "id", id}).str, id);
  read("workers", 10, 10);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 5; }, 20s)) << relay_->output();
  wait_passes(5);
  EXPECT_EQ(ids_in(), slice(ids, 5, 10)) << "acknowledged, but younger than the retention";
  EXPECT_EQ(metric("expiry_relay_stream_trimmed_entries_total{stream=\"expiry:stream\"}"), 5);
}

TEST_F(RetentionTest, AStreamWithoutAGroupIsNeverTrimmed) {
  start("0");
  redis_.command({"XGROUP", "DESTROY", kStream, "workers"});
  const auto ids = add(10);
  const std::string skipped = "expiry_relay_stream_trims_skipped_total{stream=\"expiry:stream\",reason=\"no_group\"}";
  ASSERT_TRUE(wait_until([&] { return metric(skipped) >= 3; }, 20s)) << relay_->output();
  EXPECT_EQ(ids_in(), ids);
  EXPECT_EQ(metric("expiry_relay_stream_trimmed_entries_total{stream=\"expiry:stream\"}"), 0);
  EXPECT_EQ(metric("expiry_relay_stream_length{stream=\"expiry:stream\"}"), 10);
}

TEST_F(RetentionTest, EachBucketStreamIsTrimmed) {
  start("0", {"--buckets", "2"});
  for (const char* stream : {"expiry:{0}:stream", "expiry:{1}:stream"}) {
    const auto ids = add(6, stream);
    read("workers", 6, 4, stream);
    // XLEN drops when Redis runs the trim; the counter moves once the relay has read the reply.
    const std::string trimmed = "expiry_relay_stream_trimmed_entries_total{stream=\"" + std::string(stream) + "\"}";
    ASSERT_TRUE(wait_until([&] { return xlen(redis_, stream) == 2 && metric(trimmed) == 4; }, 20s))
        << stream << " trimmed " << metric(trimmed) << "\n" << relay_->output();
    EXPECT_EQ(ids_in(stream), slice(ids, 4, 6));
    EXPECT_EQ(metric(trimmed), 4);
  }
}

// A per-task stream (the demo's orders:timeouts) is the producer's, but --trim-streams names it:
// the canceller's group holds it back like the relay's own.
TEST_F(RetentionTest, PerTaskStreamsNamedByTrimStreamsAreTrimmed) {
  const std::string orders = "orders:timeouts";
  redis_.command({"XGROUP", "CREATE", orders, "cancellers", "0", "MKSTREAM"});
  start("0", {"--trim-streams", orders});
  const auto ids = add(8, orders);
  read("cancellers", 8, 6, orders);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, orders) == 2; }, 20s)) << relay_->output();
  wait_passes(3);
  EXPECT_EQ(ids_in(orders), slice(ids, 6, 8)) << "entries 7-8 are pending";
  EXPECT_EQ(metric("expiry_relay_stream_trimmed_entries_total{stream=\"orders:timeouts\"}"), 6);
  EXPECT_EQ(metric("expiry_relay_stream_length{stream=\"orders:timeouts\"}"), 2);
}

TEST_F(RetentionTest, ATrimIntervalOfZeroNeverTrims) {
  relay_ = start_relay(server_, "ret",
                       {"--stream-retention-ms", "0", "--stream-trim-interval-ms", "0", "--sweep-interval-ms", "100"});
  wait_relay_ready(redis_, "ret", *relay_);
  const auto ids = add(5);
  read("workers", 5, 5);
  // Ten sweeps (FCALLs every 100 ms) prove the relay is running; no trim call comes with them.
  const long long calls = trim_calls();
  const auto fcalls = [&] {
    const std::string info = redis_.command({"INFO", "commandstats"}).str;
    const auto at = info.find("cmdstat_fcall:calls=");
    return at == std::string::npos ? 0LL : std::stoll(info.substr(at + 20));
  };
  const long long from = fcalls();
  ASSERT_TRUE(wait_until([&] { return fcalls() >= from + 10; }, 20s)) << relay_->output();
  EXPECT_EQ(trim_calls(), calls);
  EXPECT_EQ(ids_in(), ids);
}

}  // namespace
}  // namespace expiry::test
