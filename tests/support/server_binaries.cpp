// The server binaries of the fixtures, from the environment (server_binaries.h).
#include "support/server_binaries.h"

#include <cstdlib>

namespace expiry::test {
namespace {

std::string from_env(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

}  // namespace

const std::string& redis_server_binary() {
    static const std::string path = from_env("EXPIRY_TEST_REDIS_SERVER", "/usr/bin/redis-server");
    return path;
}

const std::string& redis_sentinel_binary() {
    static const std::string path = from_env("EXPIRY_TEST_REDIS_SENTINEL", redis_server_binary());
    return path;
}

const std::string& redis_cli_binary() {
    static const std::string path = from_env("EXPIRY_TEST_REDIS_CLI", "/usr/bin/redis-cli");
    return path;
}

}  // namespace expiry::test
