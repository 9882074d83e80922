// HttpEndpoint over real loopback TCP: the test sends raw HTTP/1.1 and drives the service's
// event loop itself, so there is one thread and every wait has a deadline. The limits tests
// (connection cap, whole-request deadline, accept back-off at the descriptor limit) use
// small limits so that they run in a few seconds.
#include "service/http_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "io/event_loop.h"

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
  ~Socket() { reset(); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Sets the soft RLIMIT_NOFILE for the scope, then restores the limit it found.
class SoftFdLimit {
 public:
  explicit SoftFdLimit(rlim_t soft) {
    ok_ = ::getrlimit(RLIMIT_NOFILE, &saved_) == 0;
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    ok_ = ok_ && ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
  }
  ~SoftFdLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  SoftFdLimit(const SoftFdLimit&) = delete;
  SoftFdLimit& operator=(const SoftFdLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

// Sends spdlog's default logger to a string for the scope.
class CapturedLog {
 public:
  CapturedLog() : saved_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_st>(text_));
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(saved_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() const { return text_.str(); }
  int lines() const {
    const std::string t = text();
    return static_cast<int>(std::count(t.begin(), t.end(), '\n'));
  }

 private:
  std::ostringstream text_;  // declared first: outlives the logger writing to it
  std::shared_ptr<spdlog::logger> saved_;
};

// Counts the lines written to stderr for the scope: libevent writes its own log messages there
// (the product installs no libevent log callback), as would anything else complaining.
class StderrLineCounter {
 public:
  StderrLineCounter() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    capture_ = ::fileno(file_);
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(capture_, STDERR_FILENO);
  }
  ~StderrLineCounter() { restore(); }
  StderrLineCounter(const StderrLineCounter&) = delete;
  StderrLineCounter& operator=(const StderrLineCounter&) = delete;
  // Puts stderr back and returns the lines written meanwhile (they are copied to stderr too).
  int count() {
    restore();
    return static_cast<int>(std::count(text_.begin(), text_.end(), '\n'));
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    char buf[4096];
    ::lseek(capture_, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(capture_, buf, sizeof buf)) > 0;) text_.append(buf, static_cast<size_t>(n));
    std::fclose(file_);
    if (!text_.empty()) std::cerr << text_;
  }

  std::FILE* file_ = nullptr;  // owned: a temp file (deleted on close) that receives stderr
  int capture_ = -1;           // file_'s descriptor
  int saved_ = -1;    // owned: the original stderr, until restored
  std::string text_;
};

// CPU time (user + system) this thread has used: the event loop runs on it.
std::chrono::microseconds thread_cpu_time() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

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

  // Replaces the endpoint by one with these limits.
  void restart_endpoint(HttpLimits limits) {
    endpoint_.reset();
    endpoint_ = std::make_unique<HttpEndpoint>(
        loop_, "127.0.0.1", 0, [this] { return metrics_text_; }, [](std::string&) { return true; }, limits);
  }

  // A client connected to the endpoint. connect() completes in the kernel's accept queue;
  // the server sees the connection when the loop runs.
  Socket connect_client() {
    Socket client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_GE(client.get(), 0) << std::strerror(errno);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(endpoint_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ADD_FAILURE() << "connect: " << std::strerror(errno);
    }
    return client;
  }

  // Requests are far smaller than the socket buffer, so this blocking send never waits.
  static void send_all(const Socket& client, const std::string& data) {
    if (::send(client.get(), data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size())) {
      ADD_FAILURE() << "send: " << std::strerror(errno);
    }
  }

  // Runs the loop for `duration` (blocking in epoll: no busy wait).
  void run_loop_for(std::chrono::microseconds duration) {
    Timer stop_after(loop_, [this] { loop_.stop(); });
    stop_after.arm(duration);
    loop_.run();
  }

  // Runs the loop in 5 ms slices until pred() holds or `deadline` passes; returns pred().
  template <class Pred>
  bool run_loop_until(Pred pred, std::chrono::milliseconds deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= end) return pred();
      run_loop_for(5ms);
    }
    return true;
  }

  // Reads from `client` without blocking; appends to `raw`. True once the server has closed
  // the connection (EOF, or a reset).
  static bool drain(const Socket& client, std::string& raw) {
    for (;;) {
      char buf[4096];
      const ssize_t n = ::recv(client.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        raw.append(buf, static_cast<size_t>(n));
        continue;
      }
      return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
  }

  // Runs the loop until the server closes `client` or `deadline` passes, and parses what came.
  HttpResult read_answer(const Socket& client, std::chrono::milliseconds deadline = kExchangeDeadline) {
    std::string raw;
    const bool closed = run_loop_until([&] { return drain(client, raw); }, deadline);
    HttpResult result = parse_response(raw);
    result.complete = closed;
    return result;
  }

  // Sends `request` as is and runs the loop until the server closes the connection
  // (it closes after every answer) or the deadline passes.
  HttpResult exchange(const std::string& request) {
    Socket client = connect_client();
    send_all(client, request);
    return read_answer(client);
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

TEST_F(HttpEndpointTest, EveryAnswerClosesTheConnectionEvenWhenTheClientAsksToKeepItAlive) {
  HttpResult r = exchange("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_TRUE(r.complete) << "the connection was left open";
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(HttpEndpointTest, ARequestArrivingInPiecesIsAnswered) {
  Socket client = connect_client();
  for (const char* piece : {"GET /hea", "lthz HTTP/1.1\r", "\nHost: localhost\r\n", "\r", "\n"}) {
    send_all(client, piece);
    run_loop_for(20ms);
  }
  HttpResult r = read_answer(client);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(HttpEndpointTest, MalformedRequestsAre400WithoutCallingUs) {
  metrics_throw_ = true;  // would turn into a 500 if the handler ran
  for (const char* request : {"GET /metrics\r\n\r\n", "GET /metrics HTTP/9.9\r\n\r\n",
                              "GET /metrics HTTP/1.1\r\nNo colon here\r\n\r\n"}) {
    HttpResult r = exchange(request);
    ASSERT_TRUE(r.complete) << request;
    EXPECT_EQ(r.status, 400) << request;
  }
}

TEST_F(HttpEndpointTest, AnswersAClientThatShutsDownItsSideAfterTheRequest) {
  Socket client = connect_client();
  send_all(client, "GET /healthz HTTP/1.0\r\n\r\n");
  ASSERT_EQ(::shutdown(client.get(), SHUT_WR), 0);
  HttpResult r = read_answer(client);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(run_loop_until([&] { return endpoint_->open_connections() == 0; }, 5s));
}

TEST_F(HttpEndpointTest, ConnectionsBeyondTheCapWaitUntilOneCloses) {
  constexpr int kCap = 4;
  restart_endpoint({kCap, 30s});  // a deadline far beyond the test: only the cap is at work
  ASSERT_EQ(endpoint_->max_connections(), kCap);
  std::vector<Socket> idle;
  for (int i = 0; i < kCap; ++i) idle.push_back(connect_client());
  ASSERT_TRUE(run_loop_until([&] { return endpoint_->open_connections() == kCap; }, 5s));
  EXPECT_FALSE(endpoint_->accepting());

  // Two more clients: the kernel queues them (connect succeeds) but we do not accept them.
  Socket waiting = connect_client();
  Socket extra = connect_client();
  send_all(waiting, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
  std::string raw;
  run_loop_for(300ms);  // an observation window: nothing may be served while at the cap
  EXPECT_FALSE(drain(waiting, raw));
  EXPECT_EQ(raw, "") << "served beyond the cap";
  EXPECT_EQ(endpoint_->open_connections(), kCap);

  idle[0].reset();  // one slot frees: the waiting client is accepted and answered
  HttpResult r = read_answer(waiting);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_LE(endpoint_->open_connections(), kCap);

  idle.clear();
  extra.reset();
  waiting.reset();
  ASSERT_TRUE(run_loop_until([&] { return endpoint_->open_connections() == 0 && endpoint_->accepting(); }, 5s));
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(HttpEndpointTest, ASlowlorisClientIsClosedAtTheWholeRequestDeadline) {
  constexpr auto kDeadline = 1000ms;
  restart_endpoint({64, kDeadline});
  const auto start = std::chrono::steady_clock::now();
  Socket client = connect_client();
  send_all(client, "GET /healthz HTTP/1.1\r\nX-Slow: ");
  // One header byte every 200 ms: each read arrives well within any per-read timeout.
  std::string raw;
  bool closed = false;
  auto next_byte = start;
  while (!closed && std::chrono::steady_clock::now() - start < 5 * kDeadline) {
    if (std::chrono::steady_clock::now() >= next_byte) {
      ::send(client.get(), "a", 1, MSG_NOSIGNAL);  // fails once the server has closed: ignored
      next_byte += 200ms;
    }
    run_loop_for(10ms);
    closed = drain(client, raw);
  }
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(closed) << "still open after " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms";
  EXPECT_GE(took, kDeadline - 50ms);  // not before the deadline (the loop accepted it after connect)
  EXPECT_LT(took, 3 * kDeadline);
  EXPECT_EQ(raw, "") << "a request that never completed got an answer";
  EXPECT_TRUE(run_loop_until([&] { return endpoint_->open_connections() == 0; }, 5s));
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(HttpEndpointTest, AtTheDescriptorLimitAcceptBacksOffWithoutSpinningOrFlooding) {
  restart_endpoint({64, 30s});
  CapturedLog log;
  StderrLineCounter stderr_lines;
  Socket client = connect_client();  // queued by the kernel; our accept() will fail
  send_all(client, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");

  // One line through the captured logger before descriptors run out: UBSan's first check of a
  // virtual call (the log formatter's) opens a pipe, and reports a false "invalid vptr" at EMFILE.
  spdlog::info("taking every descriptor below a soft limit of 64");
  const int lines_before = log.lines();

  std::chrono::microseconds cpu{};
  {
    // Lower the soft limit, then take every descriptor left under it.
    SoftFdLimit limit(64);
    ASSERT_TRUE(limit.ok()) << std::strerror(errno);
    std::vector<Socket> fillers;
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && fillers.size() < 64;) fillers.emplace_back(fd);
    ASSERT_EQ(errno, EMFILE);

    const auto cpu_before = thread_cpu_time();
    run_loop_for(1s);
    cpu = thread_cpu_time() - cpu_before;
    // Leaving the scope closes the fillers and restores the limit.
  }
  // The back-off retries at 50, 100, 200, 400 and 800 ms: about 5 accept() calls in a second,
  // where a listener without it calls accept() (and logs) in a busy loop.
  EXPECT_GE(endpoint_->accept_failures(), 2u);
  EXPECT_LE(endpoint_->accept_failures(), 10u);
  const int stderr_count = stderr_lines.count();
  std::cout << "[ measured ] at the descriptor limit for 1 s: " << endpoint_->accept_failures()
            << " failed accepts, " << cpu.count() << " us of loop CPU, " << log.lines() - lines_before << " log lines, "
            << stderr_count << " lines on stderr (libevent's log)\n";
  EXPECT_LT(cpu.count(), 200000) << "microseconds of loop CPU in 1 s";
  const std::string text = log.text();
  EXPECT_LE(log.lines() - lines_before, 2) << text;
  EXPECT_EQ(stderr_count, 0);
  EXPECT_NE(text.find("HTTP accept failed: Too many open files"), std::string::npos) << text;

  // Descriptors are free again: within the next retry (at most 1 s) the client is answered.
  HttpResult r = read_answer(client);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(log.text().find("HTTP accepting connections again"), std::string::npos) << log.text();
  EXPECT_EQ(get("/healthz").status, 200);
}

TEST_F(HttpEndpointTest, TheCapLeavesReservedDescriptorsUnderALowLimit) {
  {
    SoftFdLimit limit(HttpEndpoint::kReservedFds + 8);
    ASSERT_TRUE(limit.ok());
    restart_endpoint({64, 5s});
    EXPECT_EQ(endpoint_->max_connections(), 8);
  }
  {
    SoftFdLimit limit(HttpEndpoint::kReservedFds);  // never below one connection
    ASSERT_TRUE(limit.ok());
    restart_endpoint({64, 5s});
    EXPECT_EQ(endpoint_->max_connections(), 1);
  }
  restart_endpoint({64, 5s});
  EXPECT_EQ(endpoint_->max_connections(), 64);  // the test process's limit is far higher
  EXPECT_EQ(get("/healthz").status, 200);
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
