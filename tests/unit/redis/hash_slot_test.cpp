// Unit tests of the slot and bucket rules (src/redis/hash_slot.h). The slot vectors are
// what `CLUSTER KEYSLOT` answers on Redis 7.0.15.
#include "redis/hash_slot.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(HashSlot, Crc16IsXmodem) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
}

TEST(HashSlot, KeySlotsMatchRedis) {
  EXPECT_EQ(key_hash_slot("foo"), 12182);
  EXPECT_EQ(key_hash_slot("somekey"), 11058);
  EXPECT_EQ(key_hash_slot("hello"), 866);
  EXPECT_EQ(key_hash_slot("{user1000}.following"), key_hash_slot("user1000"));
  EXPECT_EQ(key_hash_slot("foo{}{bar}"), key_hash_slot("foo{}{bar}"));  // empty tag: whole key
  EXPECT_NE(key_hash_slot("foo{}{bar}"), key_hash_slot("bar"));
  EXPECT_EQ(key_hash_slot("foo{{bar}}zap"), key_hash_slot("{bar"));
  EXPECT_EQ(key_hash_slot("foo{bar}{zap}"), key_hash_slot("bar"));
}

TEST(HashSlot, EveryKeyOfABucketSharesItsSlot) {
  for (int b : {0, 1, 7, 63, 16383}) {
    const std::string tag = "{" + std::to_string(b) + "}";
    EXPECT_EQ(key_hash_slot("orders" + tag + ":schedule"), bucket_slot(b));
    EXPECT_EQ(key_hash_slot("orders:" + tag + ":t:order-1"), bucket_slot(b));
    EXPECT_EQ(key_hash_slot("orders:" + tag + ":stream"), bucket_slot(b));
  }
}

TEST(HashSlot, BucketsUseTheWholeId) {
  EXPECT_EQ(bucket_of("anything", 1), 0);
  EXPECT_EQ(bucket_of("123456789", 64), 0x31C3 % 64);
  EXPECT_EQ(bucket_of("123456789", 16384), 0x31C3 % 16384);
  // No hash-tag rule for ids: a brace in an id does not change its bucket's derivation.
  EXPECT_EQ(bucket_of("{a}b", 64), crc16("{a}b") % 64);
}

TEST(HashSlot, BucketCounts) {
  for (long long ok : {1, 2, 64, 16384}) EXPECT_FALSE(bucket_count_error(ok)) << ok;
  for (long long bad : {0, -1, 3, 48, 32768}) EXPECT_TRUE(bucket_count_error(bad)) << bad;
}

}  // namespace
TEST(HashSlot, TheVectorsOfDocsProtocol) {
  EXPECT_EQ(crc16("order:1"), 0xF826);
  EXPECT_EQ(bucket_of("order:1", 64), 38);
  EXPECT_EQ(crc16("order:42"), 0xA1F3);
  EXPECT_EQ(bucket_of("order:42", 64), 51);
  EXPECT_EQ(crc16("job:1"), 0xEB69);
  EXPECT_EQ(bucket_of("job:1", 64), 41);
  EXPECT_EQ(bucket_of("123456789", 64), 3);
  EXPECT_EQ(bucket_slot(0), 13907);
  EXPECT_EQ(bucket_slot(1), 9842);
  EXPECT_EQ(bucket_slot(63), 10499);
}

}  // namespace expiry
