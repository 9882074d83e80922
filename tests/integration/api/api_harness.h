// Shared helpers of the expiry-api integration tests: a tokens file, the program started
// against a RedisServer (or any Redis URL: a cluster seed, a Sentinel group) on a free loopback
// port (stopped by its pid), plain HTTP or HTTPS, a libcurl client, and raw sockets for the
// slow and idle connection cases. The cluster and sentinel tests include it from their folders.
#pragma once

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/child_process.h"
#include "integration/ctl/ctl_run.h"
#include "integration/relay/relay_harness.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {

inline const std::string kReadToken = "read-token-aaaaaaaaaaaaaaaa";
inline const std::string kWriteToken = "write-token-bbbbbbbbbbbbbbbb";
inline const std::string kAdminToken = "admin-token-cccccccccccccccc";

inline std::string tokens_file_text() {
  return "# expiry-api test tokens\nread " + kReadToken + "\nwrite " + kWriteToken + "\n\nadmin " + kAdminToken + "\n";
}

struct HttpAnswer {
  long status = 0;  // 0: no answer (curl error in `error`)
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string error;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct ApiCall {
  // Positional, so that {"GET", "/healthz"} and {"PUT", path, token, body} leave the rest at
  // their defaults without -Wmissing-field-initializers.
  ApiCall() = default;
  ApiCall(std::string m, std::string p, std::string t = {}, std::optional<std::string> b = {},
          std::string type = "application/json", std::vector<std::string> headers = {})
      : method(std::move(m)), path(std::move(p)), token(std::move(t)), body(std::move(b)),
        content_type(std::move(type)), extra_headers(std::move(headers)) {}

  std::string method = "GET";
  std::string path;
  std::string token;  // empty: no Authorization header
  std::optional<std::string> body;
  std::string content_type = "application/json";
  std::vector<std::string> extra_headers;
};

inline size_t curl_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

inline size_t curl_header(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(value.begin());
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * n;
}

// One request on a new connection, 10 s at most. With `https_ca_file`: https://, the server
// verified against that CA (certificate chain and name 127.0.0.1).
inline HttpAnswer call_api(int port, const ApiCall& call, const std::string& https_ca_file = "") {
  HttpAnswer out;
  CURL* curl = curl_easy_init();
  const std::string url =
      (https_ca_file.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(port) + call.path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (!https_ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, https_ca_file.c_str());
    curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  }
  if (call.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);  // no body follows the headers, whatever they say
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, call.method.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &curl_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &curl_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &out.headers);
  curl_slist* headers = nullptr;
  if (!call.token.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + call.token).c_str());
  if (call.body) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, call.body->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.body->size()));
    headers = curl_slist_append(headers, ("Content-Type: " + call.content_type).c_str());
    headers = curl_slist_append(headers, "Expect:");
  }
  for (const auto& h : call.extra_headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.status);
  } else {
    out.error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return out;
}

// The value of expiry_api_open_connections (the metrics request's own connection included), or -1.
inline long long open_connections(int port) {
  const HttpAnswer r = call_api(port, {"GET", "/metrics"});
  const std::string name = "\nexpiry_api_open_connections ";
  const size_t at = r.body.find(name);
  if (r.status != 200 || at == std::string::npos) return -1;
  return std::stoll(r.body.substr(at + name.size()));
}

// The expiry-api that ApiProcess runs: this build's, or EXPIRY_TEST_API_BIN's (to measure an
// older build with the same test).
inline std::string api_program() {
  const char* other = std::getenv("EXPIRY_TEST_API_BIN");
  return other != nullptr && *other != '\0' ? other : EXPIRY_API_BIN;
}

// Where an ApiProcess connects and logs, and how it is called.
struct ApiTarget {
  std::string redis_url;      // a server's, a cluster seed's, or redis+sentinel://...
  std::string log_dir;        // api-<port>.log goes there
  std::string https_ca_file;  // non-empty: the API serves HTTPS (give it --tls-listen-*), verified with this CA
  std::string tokens_text;    // the tokens file's text; empty: tokens_file_text()
};

// expiry-api on 127.0.0.1:<free port> against `server` (or `target`), with a tokens file of the
// three tokens above; the constructor returns once /healthz answers.
class ApiProcess {
 public:
  ApiProcess(const RedisServer& server, std::vector<std::string> extra_args = {})
      : ApiProcess(ApiTarget{server.url(), server.dir(), ""}, std::move(extra_args)) {}
  ApiProcess(const ApiTarget& target, std::vector<std::string> extra_args)
      : scratch_("expiry_api"), port_(free_port()), ca_file_(target.https_ca_file) {
    const std::string tokens =
        scratch_.write("tokens", target.tokens_text.empty() ? tokens_file_text() : target.tokens_text);
    std::vector<std::string> args = {
        "--listen", "127.0.0.1:" + std::to_string(port_), "--tokens-file", tokens, "--redis-url", target.redis_url};
    if (std::find(extra_args.begin(), extra_args.end(), "--threads") == extra_args.end()) {
      args.insert(args.end(), {"--threads", "2"});
    }
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    child_ = std::make_unique<ChildProcess>(api_program(), args, std::vector<std::pair<std::string, std::string>>{},
                                            target.log_dir + "/api-" + std::to_string(port_) + ".log");
    const bool up = wait_until(
        [&] {
          return !child_->running() || call_api(port_, {"GET", "/healthz"}, ca_file_).status == 200;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20));
    if (!up || !child_->running()) ADD_FAILURE() << "expiry-api did not start: " << child_->output();
  }
  ~ApiProcess() {
    if (child_) child_->terminate();
  }

  int port() const { return port_; }
  ChildProcess& child() { return *child_; }
  HttpAnswer call(const ApiCall& c) const { return call_api(port_, c, ca_file_); }

 private:
  ScratchDir scratch_;
  int port_;
  std::string ca_file_;
  std::unique_ptr<ChildProcess> child_;
};

// A connected loopback TCP socket to `port` (-1 on failure).
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until the peer closes or `deadline` passes; `closed` says which.
inline std::string read_until_closed(int fd, std::chrono::milliseconds deadline, bool* closed) {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + deadline;
  *closed = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return out;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace expiry::test
