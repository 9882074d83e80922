// Small helpers the Redis fixtures (RedisServer, RedisCluster, SentinelGroup) share: a free
// loopback port, a log file's contents and size, and a field of an INFO text.
#pragma once

#include <cstdint>
#include <string>

namespace expiry::test {

// A loopback port that was free a moment ago (the kernel's pick for port 0). Throws
// std::runtime_error naming `who` when no socket can be bound.
int pick_free_port(const std::string& who);

// The whole file ("" if it cannot be read).
std::string read_file(const std::string& path);

// The file's size in bytes (0 if it does not exist).
std::uintmax_t file_size_or_zero(const std::string& path);

// The value of `field` in an INFO-style "field:value\r\n" text, or "".
std::string info_field(const std::string& text, const std::string& field);

}  // namespace expiry::test
