// HttpEndpoint over real loopback TCP: the test sends raw HTTP/1.1 and drives the service's
// event loop itself (EVLOOP_NONBLOCK), so there is one thread and every wait has a deadline.
#include "http_endpoint.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "errors.h"
#include "event_loop.h"

namespace expiry {
namespace {

using namespace std::chrono_literals;

constexpr auto kExchangeDeadline = 5s;  // per request; a healthy exchange takes milliseconds

struct HttpResult {
  bool complete = false;  // the server closed the connection before the deadline
  int status = 0;         // 0 if no status line arrived
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// Closes a socket on scope exit.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

HttpResult parse_response(const std::string& raw) {
  HttpResult result;
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return result;
  const std::string head = raw.substr(0, head_end);
  result.body = raw.substr(head_end + 4);
  size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);  // "HTTP/1.1 200 OK"
  const auto space = status_line.find(' ');
  if (space != std::string::npos) result.status = std::stoi(status_line.substr(space + 1, 3));
  while (line_end != std::string::npos) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    result.headers[name] = value;
  }
  return result;
}

class HttpEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    endpoint_ = std::make_unique<HttpEndpoint>(
        loop_, "127.0.0.1", 0,
        [this] {
          if (metrics_throw_) throw std::runtime_error("collector exploded");
          return metrics_text_;
        },
        [this](std::string& why) {
          if (ready_throw_) throw std::runtime_error("readiness check exploded");
          if (!ready_) why = "redis commands connection: connecting";
          return ready_;
        });
  }

  // Sends `request` as is and runs the loop until the server closes the connection
  // (every request here says "Connection: close") or the deadline passes.
  HttpResult exchange(const std::string& request) {
    Socket client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_GE(client.get(), 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(endpoint_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Completes in the kernel's accept queue; the server sees it when the loop runs.
    if (::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ADD_FAILURE() << "connect: " << std::strerror(errno);
      return {};
    }
    // Requests are far smaller than the socket buffer, so this blocking send never waits.
    if (::send(client.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
      ADD_FAILURE() << "send: " << std::strerror(errno);
      return {};
    }
    std::string raw;
    bool closed = false;
    const auto deadline = std::chrono::steady_clock::now() + kExchangeDeadline;
    while (!closed && std::chrono::steady_clock::now() < deadline) {
      event_base_loop(loop_.raw(), EVLOOP_NONBLOCK);
      pollfd pfd{client.get(), POLLIN, 0};
      if (::poll(&pfd, 1, 1 /* ms */) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(client.get(), buf, sizeof buf, 0);
      if (n > 0) {
        raw.append(buf, static_cast<size_t>(n));
      } else {
        closed = true;  // EOF, or a reset after the answer
      }
    }
    HttpResult result = parse_response(raw);
    result.complete = closed;
    return result;
  }

  HttpResult get(const std::string& target) {
    return exchange("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  }

  EventLoop loop_;  // declared first: destroyed after the endpoint
  std::string metrics_text_ =
      "# HELP expiry_tasks_forwarded_total Tasks forwarded.\n"
      "# TYPE expiry_tasks_forwarded_total counter\n"
      "expiry_tasks_forwarded_total{source=\"event\"} 3\n";
  bool metrics_throw_ = false;
  bool ready_ = true;
  bool ready_throw_ = false;
  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpEndpointTest, BindsAnEphemeralPort) {
  EXPECT_GT(endpoint_->port(), 0);
  EXPECT_LE(endpoint_->port(), 65535);
}

TEST_F(HttpEndpointTest, MetricsServesTheRenderedTextWithThePrometheusContentType) {
  HttpResult r = get("/metrics");
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.headers["content-length"], std::to_string(metrics_text_.size()));
  EXPECT_EQ(r.body, metrics_text_);
}

TEST_F(HttpEndpointTest, MetricsIsRenderedAgainForEveryScrape) {
  EXPECT_EQ(get("/metrics").body, metrics_text_);
  metrics_text_ = "# TYPE up gauge\nup 1\n";
  EXPECT_EQ(get("/metrics").body, "# TYPE up gauge\nup 1\n");
}

TEST_F(HttpEndpointTest, QueryStringIsIgnored) {
  HttpResult r = get("/metrics?name[]=x");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, metrics_text_);
}

TEST_F(HttpEndpointTest, HeadSendsTheHeadersWithoutTheBody) {
  HttpResult r = exchange("HEAD /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.headers["content-length"], std::to_string(metrics_text_.size()));
  EXPECT_EQ(r.body, "");
}

TEST_F(HttpEndpointTest, HealthzSaysOk) {
  HttpResult r = get("/healthz");
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(HttpEndpointTest, ReadyzFollowsTheReadinessCheck) {
  HttpResult ready = get("/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body, "ready\n");

  ready_ = false;
  HttpResult not_ready = get("/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "redis commands connection: connecting\n");

  ready_ = true;
  EXPECT_EQ(get("/readyz").status, 200);
}

TEST_F(HttpEndpointTest, UnknownPathIs404) {
  EXPECT_EQ(get("/").status, 404);
  EXPECT_EQ(get("/metrics/").status, 404);
  HttpResult r = get("/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "not found\n");
}

TEST_F(HttpEndpointTest, OtherMethodsAre405WithAllow) {
  HttpResult post = exchange(
      "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
  ASSERT_TRUE(post.complete);
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
  EXPECT_EQ(post.body, "method not allowed\n");

  for (const char* method : {"PUT", "DELETE", "OPTIONS", "PATCH"}) {
    HttpResult r = exchange(std::string(method) +
                            " /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(r.status, 405) << method;
  }
}

TEST_F(HttpEndpointTest, ThrowingCallbacksGive500AndTheEndpointKeepsServing) {
  metrics_throw_ = true;
  HttpResult metrics = get("/metrics");
  ASSERT_TRUE(metrics.complete);
  EXPECT_EQ(metrics.status, 500);
  EXPECT_EQ(metrics.body, "internal error\n");

  ready_throw_ = true;
  EXPECT_EQ(get("/readyz").status, 500);

  metrics_throw_ = false;
  ready_throw_ = false;
  EXPECT_EQ(get("/metrics").status, 200);
  EXPECT_EQ(get("/readyz").status, 200);
}

TEST_F(HttpEndpointTest, OversizedHeadersAreRefusedWithoutCallingUs) {
  metrics_throw_ = true;  // would turn into a 500 if the handler ran
  HttpResult r = exchange("GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Padding: " + std::string(16 * 1024, 'a') +
                          "\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(r.complete);
  EXPECT_GE(r.status, 400);  // libevent 2.1 answers 400 itself
  EXPECT_LT(r.status, 500);
}

TEST_F(HttpEndpointTest, OversizedBodyIsRefused) {
  HttpResult r = exchange("POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n" +
                          std::string(4096, 'a'));
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 413);
}

TEST_F(HttpEndpointTest, AnotherEndpointOnABusyPortThrowsIoError) {
  const std::string expected =
      "cannot listen on 127.0.0.1:" + std::to_string(endpoint_->port()) + ": Address already in use";
  try {
    HttpEndpoint second(
        loop_, "127.0.0.1", endpoint_->port(), [] { return std::string(); }, [](std::string&) { return true; });
    FAIL() << "bound a port that is in use";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TEST(HttpEndpointBind, PortInUseByAnotherSocketThrowsIoError) {
  Socket holder(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_GE(holder.get(), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(holder.get(), 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(holder.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  EventLoop loop;
  EXPECT_THROW(
      {
        try {
          HttpEndpoint endpoint(
              loop, "127.0.0.1", port, [] { return std::string(); }, [](std::string&) { return true; });
        } catch (const IoError& e) {
          EXPECT_EQ(std::string(e.what()), "cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");
          throw;
        }
      },
      IoError);
}

TEST(HttpEndpointBind, AddressThatIsNotLocalThrowsIoError) {
  EventLoop loop;
  // TEST-NET-1 (RFC 5737): never assigned to a local interface.
  EXPECT_THROW(HttpEndpoint(
                   loop, "192.0.2.1", 0, [] { return std::string(); }, [](std::string&) { return true; }),
               IoError);
}

TEST(HttpEndpointBind, PortOutOfRangeIsAConfigError) {
  EventLoop loop;
  EXPECT_THROW(HttpEndpoint(
                   loop, "127.0.0.1", 65536, [] { return std::string(); }, [](std::string&) { return true; }),
               ConfigError);
  EXPECT_THROW(HttpEndpoint(
                   loop, "127.0.0.1", -1, [] { return std::string(); }, [](std::string&) { return true; }),
               ConfigError);
}

}  // namespace
}  // namespace expiry
