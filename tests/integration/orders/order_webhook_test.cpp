// order-webhook against a real redis-server: a correctly signed timeout webhook cancels the
// pending order; a bad signature (401), a stale timestamp (401) and missing headers (400) leave
// it alone; a paid order is left alone but acknowledged (200); a Redis outage answers 503.
#include <curl/curl.h>

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "integration/relay/relay_harness.h"
#include "orders/orders_library.h"
#include "webhook/signature.h"

namespace expiry::test {
namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";  // the decoded secret

struct Answer {
  long status = 0;  // 0: no connection
  std::string body;
};

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class OrderWebhookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
    const std::string secret_file = server_.dir() + "/webhook.secret";
    std::ofstream(secret_file) << "whsec_" << base64_encode(kKey) << "\n";
    // A port taken between the choice and the bind makes it exit 3: choose again.
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      receiver_ = std::make_unique<ChildProcess>(
          ORDER_WEBHOOK_BIN,
          std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(port_), "--secret-file", secret_file,
                                   "--redis-url", server_.url()});
      if (wait_until([&] { return !receiver_->running() || post("/", {}, "").status != 0; }, 10s) &&
          receiver_->running()) {
        return;
      }
    }
    FAIL() << "order-webhook did not start:\n" << receiver_->output();
  }

  Answer post(const std::string& path, const std::vector<std::string>& headers, const std::string& body) {
    Answer out;
    CURL* curl = curl_easy_init();
    const std::string url = "http://127.0.0.1:" + std::to_string(port_) + path;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out.body);
    curl_slist* list = curl_slist_append(nullptr, "Content-Type: application/json");
    list = curl_slist_append(list, "Expect:");
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.status);
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return out;
  }

  // The timeout webhook of order `id` as expiry-webhook sends it, signed with `key` at `ts`.
  Answer deliver(const std::string& id, const std::string& key = kKey, int64_t ts = now_s()) {
    const std::string body = nlohmann::json{{"order_id", id}}.dump();
    const std::string msg_id = "order:" + id + ".1700000000000";
    return post("/orders/timeout",
                {"webhook-id: " + msg_id, "webhook-timestamp: " + std::to_string(ts),
                 "webhook-signature: " + webhook_signature({key}, msg_id, ts, body)},
                body);
  }

  void create_order(const std::string& id, const std::string& status = "pending") {
    redis_.command({"HSET", "order:" + id, "status", status});
  }
  std::string field_of(const std::string& id, const std::string& field) {
    return redis_.command({"HGET", "order:" + id, field}).str;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  int port_ = 0;
  std::unique_ptr<ChildProcess> receiver_;
};

TEST_F(OrderWebhookTest, AGoodSignatureCancelsThePendingOrder) {
  create_order("1");
  const Answer a = deliver("1");
  EXPECT_EQ(a.status, 200) << a.body << receiver_->output();
  EXPECT_EQ(a.body, "cancelled");
  EXPECT_EQ(field_of("1", "status"), "cancelled");
  EXPECT_EQ(field_of("1", "task_id"), "order:1");
  EXPECT_EQ(field_of("1", "due_ms"), "1700000000000");
  // A repeated delivery is acknowledged too.
  const Answer again = deliver("1");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, "already_cancelled");
}

TEST_F(OrderWebhookTest, ABadSignatureIsRefusedAndCancelsNothing) {
  create_order("2");
  const Answer a = deliver("2", "another key entirely, 32 bytes!!");
  EXPECT_EQ(a.status, 401) << a.body;
  EXPECT_EQ(field_of("2", "status"), "pending");
  // A body changed after signing fails the same way.
  const int64_t ts = now_s();
  const std::string signed_body = nlohmann::json{{"order_id", "other"}}.dump();
  const Answer tampered = post("/orders/timeout",
                               {"webhook-id: order:2.1", "webhook-timestamp: " + std::to_string(ts),
                                "webhook-signature: " + webhook_signature({kKey}, "order:2.1", ts, signed_body)},
                               nlohmann::json{{"order_id", "2"}}.dump());
  EXPECT_EQ(tampered.status, 401);
  EXPECT_EQ(field_of("2", "status"), "pending");
}

TEST_F(OrderWebhookTest, AStaleTimestampOrMissingHeadersAreRefused) {
  create_order("3");
  EXPECT_EQ(deliver("3", kKey, now_s() - 301).status, 401);
  EXPECT_EQ(deliver("3", kKey, now_s() + 301).status, 401);
  EXPECT_EQ(post("/orders/timeout", {}, R"({"order_id":"3"})").status, 400);
  EXPECT_EQ(field_of("3", "status"), "pending");
  EXPECT_EQ(deliver("3", kKey, now_s() - 200).status, 200);  // within 5 minutes
  EXPECT_EQ(field_of("3", "status"), "cancelled");
}

TEST_F(OrderWebhookTest, APaidOrderIsLeftAloneAndAcknowledged) {
  create_order("4", "paid");
  const Answer a = deliver("4");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "paid");
  EXPECT_EQ(field_of("4", "status"), "paid");
  EXPECT_EQ(deliver("no-such-order").status, 404);
}

TEST_F(OrderWebhookTest, ARedisOutageAnswers503SoTheDeliveryIsRetried) {
  create_order("5");
  server_.stop();
  EXPECT_EQ(deliver("5").status, 503);
  server_.start();
  TestConnection again(server_.host(), server_.port());
  // The test server may not persist: the order is created again (orders_v1 is loaded on demand).
  again.command({"HSET", "order:5", "status", "pending"});
  ASSERT_TRUE(wait_until([&] { return deliver("5").status == 200; }, 10s)) << receiver_->output();
  EXPECT_EQ(again.command({"HGET", "order:5", "status"}).str, "cancelled");
}

}  // namespace
}  // namespace expiry::test
