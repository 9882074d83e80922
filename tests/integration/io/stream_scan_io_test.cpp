// scan_streams (io/sync/stream_scan.h) against a real redis-server: pages that follow the entry
// sizes, the byte cap, kept fields, both directions, several streams at once, and errors.
#include "io/sync/stream_scan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/sync/routed_client.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

class StreamScanTest : public ::testing::Test {
 protected:
  void add(const std::string& key, int n, size_t payload_bytes) {
    std::vector<std::vector<std::string>> adds;
    for (int i = 0; i < n; ++i) {
      adds.push_back({"XADD", key, "*", "id", "t" + std::to_string(i), "payload", std::string(payload_bytes, 'x')});
    }
    pipeline(redis_, adds);
  }
  std::vector<std::string> ids_of(const ScannedRange& r) {
    std::vector<std::string> out;
    for (const auto& e : r.entries) out.push_back(e.field("id").value_or("?"));
    return out;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  RoutedClient client_{test_endpoint(server_.host(), server_.port())};
};

TEST_F(StreamScanTest, ReadsAWholeRangeInPagesAndKeepsOnlyTheNamedFields) {
  add("s", 300, 100);
  const auto got = scan_streams(client_, {{0, "s", false, "-", "+", 1000}}, {1u << 20, 4096, {"id"}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].complete);
  EXPECT_FALSE(got[0].error);
  ASSERT_EQ(got[0].entries.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(got[0].entries[static_cast<size_t>(i)].field("id"), "t" + std::to_string(i));
  EXPECT_EQ(got[0].entries[0].fields.size(), 1u);  // the payload was dropped
  EXPECT_FALSE(got[0].entries[0].field("payload"));
}

TEST_F(StreamScanTest, NewestFirstStopsAtMaxEntriesWithoutClaimingTheEnd) {
  add("s", 50, 10);
  const auto got = scan_streams(client_, {{0, "s", true, "-", "+", 20}}, {});
  ASSERT_EQ(got[0].entries.size(), 20u);
  EXPECT_FALSE(got[0].complete);
  EXPECT_EQ(got[0].entries.front().field("id"), "t49");
  EXPECT_EQ(got[0].entries.back().field("id"), "t30");
  EXPECT_TRUE(got[0].entries.front().field("payload"));  // no `keep`: every field
}

TEST_F(StreamScanTest, StopsAtTheByteCapWithEveryRangeHavingReadSome) {
  add("a", 100, 64 * 1024);
  add("b", 100, 64 * 1024);
  const auto got = scan_streams(client_, {{0, "a", false, "-", "+", 100}, {0, "b", true, "-", "+", 100}},
                                {1u << 20, 256u << 10, {"id"}});
  for (const auto& r : got) {
    EXPECT_FALSE(r.complete);
    EXPECT_GE(r.entries.size(), 1u);
  }
  const size_t read = got[0].entries.size() + got[1].entries.size();
  EXPECT_LE(read, 24u) << "about 1 MiB of 64 KiB entries, a page over at most";
  EXPECT_EQ(ids_of(got[0]).front(), "t0");
  EXPECT_EQ(ids_of(got[1]).front(), "t99");
}

TEST_F(StreamScanTest, AMissingKeyIsCompleteAndEmptyAndAWrongTypeIsAnError) {
  redis_.command({"SET", "str", "x"});
  add("s", 3, 10);
  const auto got = scan_streams(client_, {{0, "nothing", false, "-", "+", 10}, {0, "str", false, "-", "+", 10},
                                          {0, "s", false, "(" + std::string("0-1"), "+", 10}},
                                {});
  EXPECT_TRUE(got[0].complete);
  EXPECT_TRUE(got[0].entries.empty());
  ASSERT_TRUE(got[1].error);
  EXPECT_NE(got[1].error->str.find("WRONGTYPE"), std::string::npos);
  EXPECT_TRUE(got[2].complete);
  EXPECT_EQ(got[2].entries.size(), 3u);
}

}  // namespace
}  // namespace expiry::test
