// Redis Cluster's key-to-slot rule and the namespace's buckets (docs/protocol.md, "Buckets").
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace expiry {

constexpr int kClusterSlots = 16384;
// A namespace has 1..kMaxBuckets buckets, a power of two.
constexpr int kMaxBuckets = 16384;
// The default bucket count of a namespace created on a cluster (on a single Redis: 1).
constexpr int kDefaultClusterBuckets = 64;

// CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses:
// crc16("123456789") == 0x31C3.
uint16_t crc16(std::string_view data);

// The hash slot of `key`: CRC16 of its hash tag (the text between the first '{' and the
// first '}' after it, if not empty) or of the whole key, mod 16384.
int key_hash_slot(std::string_view key);

// The bucket of task `id` in a namespace of `buckets` buckets: CRC16 of the whole id (no
// hash-tag rule) mod buckets. `buckets` must be a valid bucket count.
int bucket_of(std::string_view id, int buckets);

// The hash slot every key of bucket `bucket` lies in (the slot of the tag "{<bucket>}").
int bucket_slot(int bucket);

// An error message if `buckets` is not a power of two in 1..kMaxBuckets.
std::optional<std::string> bucket_count_error(long long buckets);

}  // namespace expiry
