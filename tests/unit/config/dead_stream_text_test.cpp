// Unit tests of what --check-config shows for dead_stream (src/config/dead_stream_text.h).
#include "config/dead_stream_text.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(EffectiveDeadStreamText, SeveralBucketsUseEachBucketsOwnStream) {
  EXPECT_EQ(effective_dead_stream_text("orders", "orders:stream:dead", 4), "orders:{B}:dead per bucket");
}

TEST(EffectiveDeadStreamText, OneBucketUsesTheSettingExceptOnACluster) {
  EXPECT_EQ(effective_dead_stream_text("expiry", "expiry:stream:dead", 1),
            "expiry:stream:dead (on a Redis Cluster expiry:{B}:dead per bucket)");
}

TEST(EffectiveDeadStreamText, AnUnknownBucketCountNamesBoth) {
  EXPECT_EQ(effective_dead_stream_text("expiry", "mine:dead", 0),
            "mine:dead on one Redis with one bucket, else expiry:{B}:dead per bucket");
}

}  // namespace
}  // namespace expiry
