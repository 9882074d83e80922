// Shared helpers of the TLS program tests: a TLS-only RedisServer with TlsCerts' certificates,
// the tls_* flags the programs take, the test's own TLS connection (the oracle), and running a
// program until it exits.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/child_process.h"
#include "integration/relay/relay_harness.h"
#include "integration/tls/suite_certs.h"
#include "io/sync/sync_connection.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/tls_certs.h"

namespace expiry::test {

// Whether a program (or the oracle) presents TlsCerts' client certificate.
enum class ClientCert { None, Present };

// Options for a TLS-only server presenting `server_cert`, verifying client certificates with the
// CA when `auth_clients` (the fixture's probe presents the client certificate).
inline RedisServer::Options tls_server_options(const TlsCerts& certs, const CertFiles& server_cert,
                                               bool auth_clients = false,
                                               std::vector<std::string> extra_config_lines = {}) {
  RedisServer::Options options;
  options.extra_config_lines = std::move(extra_config_lines);
  RedisTlsOptions tls;
  tls.cert_file = server_cert.cert;
  tls.key_file = server_cert.key;
  tls.ca_cert_file = certs.ca_file();
  tls.auth_clients = auth_clients;
  tls.probe_cert_file = certs.client().cert;
  tls.probe_key_file = certs.client().key;
  options.tls = tls;
  return options;
}

// The tls_* flags of every program: the CA, and the client certificate if `client`.
inline std::vector<std::string> tls_flags(const TlsCerts& certs, ClientCert client) {
  std::vector<std::string> flags = {"--tls-ca-cert-file", certs.ca_file()};
  if (client == ClientCert::Present) {
    flags.insert(flags.end(), {"--tls-cert-file", certs.client().cert, "--tls-key-file", certs.client().key});
  }
  return flags;
}

// The test's own connection to a TLS-mode `server`: verifies it with the CA (or not at all when
// `insecure`, for a server whose certificate the programs must refuse) and presents the client
// certificate, so it works whether or not the server asks for one.
inline std::unique_ptr<SyncConnection> connect_tls(const RedisServer& server, const TlsCerts& certs,
                                                   bool insecure = false) {
  RedisEndpoint endpoint = test_endpoint(server.host(), server.port());
  endpoint.tls.enabled = true;
  endpoint.tls.ca_cert_file = certs.ca_file();
  endpoint.tls.cert_file = certs.client().cert;
  endpoint.tls.key_file = certs.client().key;
  endpoint.tls.insecure = insecure;
  return std::make_unique<SyncConnection>(endpoint, test_connection_options());
}

struct ProgramRun {
  int exit_code = -1;  // -1: still running at the deadline (it was killed)
  std::string output;  // stdout and stderr interleaved
};

// Runs `program` with `args` until it exits on its own, bounded by `deadline`.
inline ProgramRun run_to_exit(const std::string& program, const std::vector<std::string>& args,
                              std::chrono::seconds deadline = std::chrono::seconds(30)) {
  ChildProcess child(program, args);
  ProgramRun run;
  if (auto rc = child.wait_exit(deadline)) {
    run.exit_code = *rc;
  } else {
    child.kill_hard();
  }
  run.output = child.output();
  return run;
}

// order-canceller `name` against `server` (its URL, so rediss:// in TLS mode), logging into the
// server's dir.
inline std::unique_ptr<ChildProcess> start_canceller(const RedisServer& server, const std::string& name,
                                                     std::vector<std::string> extra_args = {}) {
  std::vector<std::string> args = {"--redis-url", server.url(), "--consumer", name, "--block-ms", "200",
                                   "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                   "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        server.dir() + "/canceller-" + name + ".log");
}

// The number of lines of `text` that contain `needle` (every line when `needle` is empty).
inline size_t count_lines_with(const std::string& text, const std::string& needle = "") {
  size_t n = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (text.substr(begin, end - begin).find(needle) != std::string::npos) ++n;
    begin = end + 1;
  }
  return n;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace expiry::test
