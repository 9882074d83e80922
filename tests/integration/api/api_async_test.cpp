// expiry-api's pipelined task writes (http_worker.h): PUTs from many keep-alive connections at
// once go out on the workers' async Redis connections and land exactly once; a Redis killed
// under load answers 503 problems (none hangs) and the API recovers once it is back; a client
// that leaves while its call is in flight costs nothing but its answer.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

// One libcurl handle: its requests reuse one keep-alive connection while the server keeps it.
class KeepAliveClient {
 public:
  explicit KeepAliveClient(int port) : port_(port), curl_(curl_easy_init()) {}
  ~KeepAliveClient() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(curl_);
  }
  KeepAliveClient(const KeepAliveClient&) = delete;
  KeepAliveClient& operator=(const KeepAliveClient&) = delete;

  // PUT /v1/tasks/<id>; the status and the problem's content type, or status 0 (curl failed).
  HttpAnswer put(const std::string& id, const std::string& body) {
    HttpAnswer out;
    const std::string url = "http://127.0.0.1:" + std::to_string(port_) + "/v1/tasks/" + id;
    if (headers_ == nullptr) {
      headers_ = curl_slist_append(headers_, ("Authorization: Bearer " + kWriteToken).c_str());
      headers_ = curl_slist_append(headers_, "Content-Type: application/json");
      headers_ = curl_slist_append(headers_, "Expect:");
    }
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &curl_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &out.body);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &curl_header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &out.headers);
    const CURLcode rc = curl_easy_perform(curl_);
    if (rc == CURLE_OK) {
      curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &out.status);
      long connects = 0;
      curl_easy_getinfo(curl_, CURLINFO_NUM_CONNECTS, &connects);
      connects_ += connects;
    } else {
      out.error = curl_easy_strerror(rc);
    }
    return out;
  }
  long connects() const { return connects_; }

 private:
  int port_;
  CURL* curl_;
  curl_slist* headers_ = nullptr;
  long connects_ = 0;  // new connections its requests opened
};

constexpr const char* kProblemType = "application/problem+json";

std::string task_body(long long delay_ms) {
  return nlohmann::json{{"delay_ms", delay_ms}, {"payload", "async"}}.dump();
}

// The value of a counter or gauge without labels in /metrics, or -1.
long long metric(int port, const std::string& name) {
  const HttpAnswer r = call_api(port, {"GET", "/metrics"});
  const std::string key = "\n" + name + " ";
  const size_t at = r.body.find(key);
  if (r.status != 200 || at == std::string::npos) return -1;
  return std::stoll(r.body.substr(at + key.size()));
}

class ApiAsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<TestConnection>(server_.host(), server_.port());
    api_ = std::make_unique<ApiProcess>(server_);
    // Both workers' async connections up: until then a worker sends task writes on its blocking
    // Producer, which the tests below would count as not pipelined.
    ASSERT_TRUE(wait_until([&] { return metric(api_->port(), "expiry_api_redis_async_connections_ready") == 2; },
                           std::chrono::seconds(30)))
        << api_->child().output();
  }
  long long scheduled() {
    return redis_->command({"ZCARD", KeyLayout("expiry").schedule_key()}).integer;
  }

  RedisServer server_;
  std::unique_ptr<TestConnection> redis_;
  std::unique_ptr<ApiProcess> api_;
};

TEST_F(ApiAsyncTest, ConcurrentPutsOnKeepAliveConnectionsLandExactlyOnce) {
  constexpr int kClients = 16;
  constexpr int kEach = 150;
  std::atomic<int> created{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  std::atomic<long> connects{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      KeepAliveClient client(api_->port());
      for (int i = 0; i < kEach; ++i) {
        const HttpAnswer r = client.put("c" + std::to_string(c) + "-" + std::to_string(i), task_body(3600000));
        if (r.status == 201) {
          ++created;
        } else {
          std::lock_guard<std::mutex> lock(failures_mutex);
          failures.push_back(std::to_string(r.status) + " " + r.error + " " + r.body);
        }
      }
      connects += client.connects();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), kClients * kEach) << (failures.empty() ? "" : failures.front());
  EXPECT_EQ(scheduled(), kClients * kEach);
  EXPECT_EQ(connects.load(), kClients) << "the clients' connections were not kept alive";
  // They went out pipelined, not on the blocking Producer.
  EXPECT_GE(metric(api_->port(), "expiry_api_redis_pipelined_calls_total"), kClients * kEach);
  // Each id once: replacing one answers 200 and leaves the count.
  KeepAliveClient again(api_->port());
  EXPECT_EQ(again.put("c0-0", task_body(3600000)).status, 200);
  EXPECT_EQ(scheduled(), kClients * kEach);
}

TEST_F(ApiAsyncTest, DeleteIsPipelinedToo) {
  KeepAliveClient client(api_->port());
  ASSERT_EQ(client.put("gone", task_body(3600000)).status, 201);
  const long long before = metric(api_->port(), "expiry_api_redis_pipelined_calls_total");
  HttpAnswer r = api_->call({"DELETE", "/v1/tasks/gone", kWriteToken});
  EXPECT_EQ(r.status, 204) << r.body;
  r = api_->call({"DELETE", "/v1/tasks/gone", kWriteToken});
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(r.header("content-type"), kProblemType);
  EXPECT_EQ(metric(api_->port(), "expiry_api_redis_pipelined_calls_total"), before + 2);
  EXPECT_EQ(scheduled(), 0);
}

// Redis is killed (SIGKILL, by the fixture's own pid) while clients keep writing: every request
// is answered (201, or a 503 problem; nothing hangs or fails otherwise), and once Redis is back
// the writes succeed again.
TEST_F(ApiAsyncTest, RedisKilledUnderLoadAnswers503ThenRecovers) {
  constexpr int kClients = 8;
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, unavailable{0};
  std::mutex other_mutex;
  std::vector<std::string> other;
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      KeepAliveClient client(api_->port());
      for (int i = 0; !stop; ++i) {
        const HttpAnswer r = client.put("k" + std::to_string(c) + "-" + std::to_string(i), task_body(3600000));
        if (r.status == 201) {
          ++ok;
        } else if (r.status == 503 && r.header("content-type") == kProblemType) {
          ++unavailable;
        } else {
          std::lock_guard<std::mutex> lock(other_mutex);
          other.push_back(std::to_string(r.status) + " " + r.error + " " + r.body);
        }
      }
    });
  }
  EXPECT_TRUE(wait_until([&] { return ok.load() >= 500; }, std::chrono::seconds(20), std::chrono::milliseconds(5)));
  server_.kill_hard();
  EXPECT_TRUE(
      wait_until([&] { return unavailable.load() >= 20; }, std::chrono::seconds(20), std::chrono::milliseconds(5)))
      << "no 503 while Redis is down";
  EXPECT_TRUE(wait_until([&] { return metric(api_->port(), "expiry_api_redis_async_connections_ready") == 0; },
                         std::chrono::seconds(20)))
      << "the async connections still count as ready with Redis down";
  EXPECT_EQ(api_->call({"GET", "/healthz"}).status, 200);
  server_.start();
  const int ok_at_restart = ok.load();
  EXPECT_TRUE(wait_until([&] { return ok.load() >= ok_at_restart + 500; }, std::chrono::seconds(30),
                         std::chrono::milliseconds(5)))
      << "writes did not recover after the restart";
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(wait_until([&] { return metric(api_->port(), "expiry_api_redis_async_connections_ready") == 2; },
                         std::chrono::seconds(30)))
      << "the async connections did not come back";
  EXPECT_TRUE(other.empty()) << other.size() << " answers neither 201 nor a 503 problem, first: " << other.front();
  // After the restart the async connection is back: writes are pipelined again.
  redis_ = std::make_unique<TestConnection>(server_.host(), server_.port());
  EXPECT_TRUE(wait_until(
      [&] {
        const long long before = metric(api_->port(), "expiry_api_redis_pipelined_calls_total");
        KeepAliveClient client(api_->port());
        return client.put("after", task_body(3600000)).status / 100 == 2 &&
               metric(api_->port(), "expiry_api_redis_pipelined_calls_total") > before;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(50)));
  EXPECT_EQ(redis_->command({"ZSCORE", KeyLayout("expiry").schedule_key(), "after"}).type, Reply::Type::String);
}

// Clients send a whole PUT and close at once, while its FCALL is (or may be) in flight, many
// times over and while Redis is slowed: the server keeps serving, and answers later requests.
TEST_F(ApiAsyncTest, AClientLeavingMidRequestDoesNotHurtTheServer) {
  // Slow every call a little (the FCALLs queue behind a DEBUG SLEEP) so some are surely in
  // flight when their client leaves.
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    TestConnection slow(server_.host(), server_.port());
    while (!stop) slow.command({"DEBUG", "SLEEP", "0.02"});
  });
  const std::string body = task_body(3600000);
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_loopback(api_->port());
    ASSERT_GE(fd, 0);
    const std::string request = "PUT /v1/tasks/left-" + std::to_string(i) +
                                " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + kWriteToken +
                                "\r\nContent-Type: application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    if (i % 2 == 0) {
      // An abortive close (RST) as well as an orderly one.
      const linger hard{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    ::close(fd);
  }
  stop = true;
  sleeper.join();
  EXPECT_TRUE(api_->child().running());
  EXPECT_EQ(api_->call({"GET", "/healthz"}).status, 200);
  {
    KeepAliveClient client(api_->port());
    EXPECT_EQ(client.put("later", task_body(3600000)).status, 201);
  }  // closes its connection
  // The calls of the clients that left were made or not, but each at most once.
  EXPECT_LE(scheduled(), 201);
  // No connection is left counted open: only the metrics request's own.
  EXPECT_TRUE(wait_until([&] { return open_connections(api_->port()) == 1; }, std::chrono::seconds(20)));
}

// With --max-inflight 0 there is no async connection: every write takes the blocking path.
TEST(ApiAsyncOffTest, MaxInflightZeroWritesThroughTheProducer) {
  RedisServer server;
  ApiProcess api(server, {"--max-inflight", "0"});
  KeepAliveClient client(api.port());
  EXPECT_EQ(client.put("blocking", task_body(3600000)).status, 201);
  EXPECT_EQ(metric(api.port(), "expiry_api_redis_pipelined_calls_total"), 0);
  EXPECT_EQ(metric(api.port(), "expiry_api_redis_async_connections_ready"), 0);
}

}  // namespace
}  // namespace expiry::test
