// What a delivery attempt's answer means (webhook/delivery_outcome.h).
#include "webhook/delivery_outcome.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

using std::chrono::milliseconds;

AttemptResult status(long s, std::string body = "", std::string retry_after = "") {
  AttemptResult r;
  r.status = s;
  r.body = std::move(body);
  r.retry_after = std::move(retry_after);
  return r;
}

const RetryPolicy kPolicy{8, milliseconds(1000), milliseconds(300000)};

TEST(DeliveryOutcome, TwoHundredsAreDone) {
  for (long s : {200, 201, 204, 299}) EXPECT_EQ(decide_delivery(status(s), kPolicy, 1).outcome, HandleOutcome::Done);
}

TEST(DeliveryOutcome, ClientErrorsAreDeadLetteredWithStatusAndBody) {
  for (long s : {400, 401, 403, 404, 410, 422, 301, 302}) {
    SCOPED_TRACE(s);
    const auto d = decide_delivery(status(s, std::string(300, 'x')), kPolicy, 1);
    EXPECT_EQ(d.outcome, HandleOutcome::Reject);
    EXPECT_EQ(d.reason, "http " + std::to_string(s) + ": " + std::string(200, 'x'));
  }
}

TEST(DeliveryOutcome, TransientAnswersAreRetriedWithBackoff) {
  for (long s : {408, 425, 429, 500, 502, 503, 504}) {
    SCOPED_TRACE(s);
    const auto d = decide_delivery(status(s), kPolicy, 3);
    EXPECT_EQ(d.outcome, HandleOutcome::Retry);
    ASSERT_TRUE(d.delay);
    EXPECT_EQ(*d.delay, milliseconds(4000));
  }
  AttemptResult refused;
  refused.error = "Couldn't connect to server";
  const auto d = decide_delivery(refused, kPolicy, 1);
  EXPECT_EQ(d.outcome, HandleOutcome::Retry);
  EXPECT_EQ(*d.delay, milliseconds(1000));
  EXPECT_EQ(d.reason, "Couldn't connect to server");
}

TEST(DeliveryOutcome, BackoffIsCapped) {
  EXPECT_EQ(webhook_backoff(kPolicy, 1), milliseconds(1000));
  EXPECT_EQ(webhook_backoff(kPolicy, 2), milliseconds(2000));
  EXPECT_EQ(webhook_backoff(kPolicy, 9), milliseconds(256000));
  EXPECT_EQ(webhook_backoff(kPolicy, 10), milliseconds(300000));
  EXPECT_EQ(webhook_backoff(kPolicy, 1000), milliseconds(300000));
}

TEST(DeliveryOutcome, RetryAfterIsHonouredWithinTheCap) {
  EXPECT_EQ(*decide_delivery(status(429, "", "3"), kPolicy, 1).delay, milliseconds(3000));
  EXPECT_EQ(*decide_delivery(status(503, "", " 10\r\n"), kPolicy, 1).delay, milliseconds(10000));
  EXPECT_EQ(*decide_delivery(status(429, "", "0"), kPolicy, 2).delay, milliseconds(2000)) << "never below backoff";
  EXPECT_EQ(*decide_delivery(status(429, "", "99999"), kPolicy, 1).delay, milliseconds(300000));
  EXPECT_EQ(*decide_delivery(status(429, "", "Wed, 21 Oct 2015 07:28:00 GMT"), kPolicy, 1).delay,
            milliseconds(1000));
}

TEST(DeliveryOutcome, ARefusedDestinationIsDeadLettered) {
  AttemptResult r;
  r.destination_refused = true;
  r.error = "loopback address 127.0.0.1 is not in allow_private";
  const auto d = decide_delivery(r, kPolicy, 1);
  EXPECT_EQ(d.outcome, HandleOutcome::Reject);
  EXPECT_EQ(d.reason.rfind("destination not allowed", 0), 0u) << d.reason;
  EXPECT_EQ(status_class(r), "refused");
}

}  // namespace
}  // namespace expiry
