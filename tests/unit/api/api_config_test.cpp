// expiry-api's settings (src/api/api_config.h): the listen address, the limits, the connection
// options shared with the other programs, and the tokens file they name.
#include "api/api_config.h"
#include "api/http_limits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/errors.h"

namespace expiry {
namespace {

Settings settings_of(const std::map<std::string, std::string>& flags) {
  const EnvLookup no_env = [](const std::string&) { return std::optional<std::string>(); };
  return Settings::resolve(api_option_specs(), nullptr, "", no_env, "EXPIRY_API", flags);
}

class TokensFile {
 public:
  explicit TokensFile(const std::string& text) : path_(::testing::TempDir() + "api_tokens_XXXXXX") {
    const int fd = mkstemp(path_.data());
    EXPECT_GE(fd, 0);
    close(fd);
    std::ofstream(path_) << text;
  }
  ~TokensFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ApiConfig, ListenAddress) {
  std::string host;
  int port = 0;
  parse_listen_address("127.0.0.1:8080", host, port);
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8080);
  parse_listen_address("[::1]:9000", host, port);
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 9000);
  parse_listen_address(":80", host, port);
  EXPECT_EQ(host, "");
  EXPECT_EQ(port, 80);
  EXPECT_THROW(parse_listen_address("localhost", host, port), ConfigError);
  EXPECT_THROW(parse_listen_address("localhost:http", host, port), ConfigError);
  EXPECT_THROW(parse_listen_address("localhost:65536", host, port), ConfigError);
}

TEST(ApiConfig, FromSettings) {
  const TokensFile tokens("read read-token-0123456789\n");
  const ApiConfig c = api_config_from(settings_of({{"listen", "0.0.0.0:8088"},
                                                   {"tokens_file", tokens.path()},
                                                   {"threads", "3"},
                                                   {"max_body_bytes", "4096"},
                                                   {"request_deadline_s", "5"},
                                                   {"max_connections", "10"},
                                                   {"max_inflight", "0"},
                                                   {"redis_url", "redis://10.0.0.1:6380/2"},
                                                   {"namespace", "jobs"},
                                                   {"buckets", "4"}}));
  EXPECT_EQ(c.listen_host, "0.0.0.0");
  EXPECT_EQ(c.listen_port, 8088);
  EXPECT_EQ(c.tokens.size(), 1u);
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.limits.max_body_bytes, 4096u);
  EXPECT_EQ(c.limits.request_deadline_seconds, 5);
  EXPECT_EQ(c.limits.max_connections, 10);
  EXPECT_EQ(c.limits.max_inflight, 0u);
  EXPECT_EQ(c.limits.timeout_seconds, 30);
  EXPECT_EQ(c.target.ns, "jobs");
  EXPECT_EQ(c.target.buckets, 4);
  EXPECT_EQ(c.target.redis.port, 6380);
}

TEST(ApiConfig, DefaultsAndErrors) {
  const TokensFile tokens("admin admin-token-0123456789\n");
  const ApiConfig c = api_config_from(settings_of({{"tokens_file", tokens.path()}}));
  EXPECT_GE(c.threads, 1);  // 0: one per core
  EXPECT_EQ(c.limits.max_body_bytes, 1048576u);
  EXPECT_EQ(c.listen_port, 8080);
  EXPECT_THROW(api_config_from(settings_of({})), ConfigError);  // no tokens file
  const TokensFile bad("reader read-token-0123456789\n");
  try {
    api_config_from(settings_of({{"tokens_file", bad.path()}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1: unknown scope"), std::string::npos) << e.what();
  }
  EXPECT_THROW(api_config_from(settings_of({{"tokens_file", tokens.path()}, {"buckets", "3"}})), ConfigError);
  EXPECT_THROW(settings_of({{"max_body_bytes", "0"}}), ConfigError);
}

// HTTPS served by expiry-api: both files or neither (plain HTTP: no context); a missing file
// is named. (Loading real certificates: tests/integration/api/api_tls_test.cpp.)
TEST(ApiConfig, TlsListenFilesGoTogether) {
  const TokensFile tokens("write write-token-0123456789\n");
  EXPECT_EQ(api_config_from(settings_of({{"tokens_file", tokens.path()}})).tls, nullptr);
  for (const char* alone : {"tls_listen_cert_file", "tls_listen_key_file"}) {
    try {
      api_config_from(settings_of({{"tokens_file", tokens.path()}, {alone, tokens.path()}}));
      FAIL() << alone << " alone: no error";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("go together"), std::string::npos) << e.what();
    }
  }
  try {
    api_config_from(settings_of({{"tokens_file", tokens.path()},
                                 {"tls_listen_cert_file", "/nonexistent/server.crt"},
                                 {"tls_listen_key_file", tokens.path()}}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/server.crt"), std::string::npos) << e.what();
  }
  // Not the Redis client's TLS options: those keep their names.
  bool listen_cert = false;
  bool client_cert = false;
  for (const auto& spec : api_option_specs()) {
    listen_cert = listen_cert || spec.name == "tls_listen_cert_file";
    client_cert = client_cert || spec.name == "tls_cert_file";
  }
  EXPECT_TRUE(listen_cert);
  EXPECT_TRUE(client_cert);
}

}  // namespace
}  // namespace expiry

namespace expiry {
namespace {

// Every worker's connections fit below the descriptor limit, with room for the rest.
TEST(HttpLimits, WorkerConnectionsFitTheDescriptorLimit) {
  EXPECT_EQ(clamp_worker_connections(4096, 2, -1), 4096) << "no limit";
  EXPECT_EQ(clamp_worker_connections(4096, 2, 1048576), 4096);
  // 4,096 descriptors, 2 workers: (4096 - 64 - 2 * 16) / 2 = 2000 each.
  EXPECT_EQ(clamp_worker_connections(4096, 2, 4096), 2000);
  EXPECT_LE(2 * clamp_worker_connections(4096, 2, 4096) + kFdsReserved + 2 * kFdsPerWorker, 4096);
  EXPECT_EQ(clamp_worker_connections(10, 2, 4096), 10) << "a smaller wish stands";
  EXPECT_EQ(clamp_worker_connections(4096, 8, 100), 1) << "at least one";
}

}  // namespace
}  // namespace expiry
