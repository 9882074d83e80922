// See hash_slot.h. The CRC is the table-driven CRC16/XMODEM of Redis's crc16.c; the table is
// computed at compile time from the polynomial instead of being spelled out.
#include "redis/hash_slot.h"

#include <array>

namespace expiry {

namespace {

constexpr std::array<uint16_t, 256> make_crc16_table() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Table = make_crc16_table();

}  // namespace

uint16_t crc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16Table[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

int key_hash_slot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16(key) & (kClusterSlots - 1);
}

int bucket_of(std::string_view id, int buckets) { return crc16(id) & (buckets - 1); }

int bucket_slot(int bucket) { return crc16(std::to_string(bucket)) & (kClusterSlots - 1); }

std::optional<std::string> bucket_count_error(long long buckets) {
  if (buckets < 1 || buckets > kMaxBuckets || (buckets & (buckets - 1)) != 0) {
    return "the bucket count must be a power of two from 1 to " + std::to_string(kMaxBuckets) + ", got " +
           std::to_string(buckets);
  }
  return std::nullopt;
}

}  // namespace expiry
