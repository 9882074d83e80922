// The Redis-compatible server the fixtures run: Redis 7.0 from the system by default, or another
// build (Valkey 8.1, Redis 8.0 from scripts/servers.sh) for the server matrix (ctest -L matrix).
#pragma once

#include <string>

namespace expiry::test {

// Contracts:
// - Each is read from its environment variable once, at the first call; an unset or empty
//   variable means the default. The paths are not checked here: a missing binary fails where
//   it is started, with the fixture's report.
// - EXPIRY_TEST_REDIS_SERVER: the server (default /usr/bin/redis-server); every RedisServer,
//   RedisCluster node and, unless the next variable says otherwise, every sentinel runs it.
// - EXPIRY_TEST_REDIS_SENTINEL: the binary sentinels run as `<it> <conf> --sentinel` (default:
//   the server; redis-sentinel and valkey-sentinel are that same program).
// - EXPIRY_TEST_REDIS_CLI: redis-cli or valkey-cli (default /usr/bin/redis-cli), for cluster
//   creation, resharding, TLS probes and subscribers.
const std::string& redis_server_binary();
const std::string& redis_sentinel_binary();
const std::string& redis_cli_binary();

}  // namespace expiry::test
