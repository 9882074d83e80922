// Standard Webhooks signing (webhook/signature.h), against known HMAC-SHA256 vectors.
#include "webhook/signature.h"

#include <gtest/gtest.h>

#include "base/base64.h"

namespace expiry {
namespace {

TEST(WebhookSignature, MatchesRfc4231TestCase2) {
  // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
  EXPECT_EQ(hmac_sha256_base64("Jefe", "what do ya want for nothing?"),
            base64_encode(std::string("\x5b\xdc\xc1\x46\xbf\x60\x75\x4e\x6a\x04\x24\x26\x08\x95\x75\xc7"
                                      "\x5a\x00\x3f\x08\x9d\x27\x39\x83\x9d\xec\x58\xb9\x64\xec\x38\x43",
                                      32)));
}

TEST(WebhookSignature, SignsIdTimestampAndBodyOncePerSecret) {
  const std::string sig = webhook_signature({"Jefe"}, "msg_1", 1700000000, "{\"a\":1}");
  EXPECT_EQ(sig, "v1," + hmac_sha256_base64("Jefe", "msg_1.1700000000.{\"a\":1}"));
  const std::string two = webhook_signature({"Jefe", "other-key"}, "msg_1", 1700000000, "{}");
  EXPECT_EQ(two, "v1," + hmac_sha256_base64("Jefe", "msg_1.1700000000.{}") + " v1," +
                     hmac_sha256_base64("other-key", "msg_1.1700000000.{}"));
}

TEST(WebhookSignature, TheIdIsTheTaskAndItsOccurrence) {
  StreamEntry e;
  e.entry_id = "1-1";
  e.fields = {{"id", "order:7"}, {"due_ms", "1700000000123"}};
  EXPECT_EQ(webhook_id_of(e), "order:7.1700000000123");
  e.fields.push_back({"occurrence_ms", "1699999999000"});
  EXPECT_EQ(webhook_id_of(e), "order:7.1699999999000") << "a retry keeps the first due time";
}

TEST(WebhookSignature, TheIdIsVisibleAsciiWhateverTheTaskId) {
  StreamEntry e;
  e.entry_id = "1-1";
  e.fields = {{"id", "caf\xC3\xA9 100%\r\nX: 1"}, {"due_ms", "17\n"}};
  EXPECT_EQ(webhook_id_of(e), "caf%C3%A9%20100%25%0D%0AX:%201.17%0A");
}

}  // namespace
}  // namespace expiry
