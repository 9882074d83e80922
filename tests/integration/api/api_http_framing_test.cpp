// expiry-api's strict HTTP/1.1 framing (service/http_request_framer.h) on the wire: each
// request-smuggling case of the probe gets one answer, 400 (or 501), and a closed connection,
// and the request smuggled behind it is never served; sound requests, pipelined or chunked with
// extensions, are. The framer's own cases are unit-tested in tests/unit/service/.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "integration/api/api_harness.h"

namespace expiry::test {
namespace {

using namespace std::string_literals;

class ApiHttpFramingTest : public ::testing::Test {
 protected:
  // Sends `bytes` on a new connection and reads until the server closes it (10 s at most).
  std::string exchange(const std::string& bytes, bool* closed) {
    const int fd = connect_loopback(api_.port());
    EXPECT_GE(fd, 0);
    if (fd < 0) return "";
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    const std::string got = read_until_closed(fd, std::chrono::seconds(10), closed);
    ::close(fd);
    return got;
  }
  static size_t answers(const std::string& got) {
    size_t n = 0;
    for (size_t at = got.find("HTTP/1.1 "); at != std::string::npos; at = got.find("HTTP/1.1 ", at + 1)) {
      if (at == 0 || got[at - 1] == '\n') ++n;
    }
    return n;
  }
  // A PUT of task `id` whose head ends at its blank line (the caller adds framing and body).
  static std::string put_head(const std::string& id) {
    return "PUT /v1/tasks/" + id + " HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer " + kWriteToken +
           "\r\nContent-Type: application/json\r\n";
  }
  static std::string smuggled() {
    const std::string body = "{\"delay_ms\": 60000}";
    return put_head("smuggled") + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  long task_status(const std::string& id) { return api_.call({"GET", "/v1/tasks/" + id, kReadToken}).status; }

  // One answer with `status`, the connection closed, and neither task written.
  void expect_refused(const std::string& bytes, int status = 400) {
    bool closed = false;
    const std::string got = exchange(bytes, &closed);
    EXPECT_TRUE(closed) << got;
    EXPECT_EQ(answers(got), 1u) << got;
    EXPECT_EQ(got.rfind("HTTP/1.1 " + std::to_string(status) + " ", 0), 0u) << got;
    EXPECT_NE(got.find("malformed request"), std::string::npos) << got;
    EXPECT_EQ(task_status("smuggled"), 404) << "the request behind the fault was served";
    EXPECT_EQ(task_status("front"), 404) << "the faulty request itself was served";
  }

  RedisServer server_;
  ApiProcess api_{server_};
};

TEST_F(ApiHttpFramingTest, TwoDifferingContentLengthsAreRefused) {
  const std::string body = "{\"delay_ms\": 60000}";
  expect_refused(put_head("front") + "Content-Length: " + std::to_string(body.size()) + "\r\nContent-Length: " +
                 std::to_string(body.size() + smuggled().size()) + "\r\n\r\n" + body + smuggled());
}

TEST_F(ApiHttpFramingTest, AContentLengthWithAPlusSignIsRefused) {
  expect_refused(put_head("front") + "Content-Length: +18\r\n\r\n{\"delay_ms\": 6000}" + smuggled());
}

TEST_F(ApiHttpFramingTest, AHexPrefixedChunkSizeIsRefused) {
  expect_refused(put_head("front") + "Transfer-Encoding: chunked\r\n\r\n0x12\r\n{\"delay_ms\": 6000}\r\n0\r\n\r\n" +
                 smuggled());
}

TEST_F(ApiHttpFramingTest, APlusSignedChunkSizeIsRefused) {
  expect_refused(put_head("front") + "Transfer-Encoding: chunked\r\n\r\n+12\r\n{\"delay_ms\": 6000}\r\n0\r\n\r\n" +
                 smuggled());
}

TEST_F(ApiHttpFramingTest, AChunkSizeAfterASpaceIsRefused) {
  expect_refused(put_head("front") + "Transfer-Encoding: chunked\r\n\r\n 12\r\n{\"delay_ms\": 6000}\r\n0\r\n\r\n" +
                 smuggled());
}

TEST_F(ApiHttpFramingTest, ANulInAHeaderIsRefused) {
  expect_refused(put_head("front") + "X-Note: a\0b\r\nContent-Length: 18\r\n\r\n{\"delay_ms\": 6000}"s + smuggled());
}

TEST_F(ApiHttpFramingTest, HttpOneOneWithoutHostIsRefused) {
  expect_refused("GET /healthz HTTP/1.1\r\n\r\n" + smuggled());
}

TEST_F(ApiHttpFramingTest, TwoHostsAreRefused) {
  expect_refused("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + smuggled());
}

TEST_F(ApiHttpFramingTest, AnUnknownTransferCodingIsNotImplemented) {
  expect_refused(put_head("front") + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + smuggled(), 501);
}

TEST_F(ApiHttpFramingTest, ChunkExtensionsAreAccepted) {
  const std::string body = "{\"delay_ms\": 60000, \"payload\": \"hello\"}";
  const std::string half = body.substr(0, 10);
  const std::string rest = body.substr(10);
  char sizes[64];
  std::snprintf(sizes, sizeof sizes, "%zx;name=value\r\n", half.size());
  std::string chunked = put_head("chunked") + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + sizes + half +
                        "\r\n";
  std::snprintf(sizes, sizeof sizes, "%zx ; a ; b=\"q\"\r\n", rest.size());
  chunked += sizes + rest + "\r\n0;last\r\n\r\n";
  bool closed = false;
  const std::string got = exchange(chunked, &closed);
  EXPECT_EQ(got.rfind("HTTP/1.1 201 ", 0), 0u) << got;
  EXPECT_EQ(task_status("chunked"), 200);
}

TEST_F(ApiHttpFramingTest, SoundPipelinedRequestsAreAllServed) {
  bool closed = false;
  const std::string got = exchange(
      "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + smuggled() + "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
      &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answers(got), 3u) << got;
  EXPECT_EQ(task_status("smuggled"), 200) << "a sound pipelined PUT is served";
}

TEST_F(ApiHttpFramingTest, ASoundRequestBeforeAFaultyOneIsServed) {
  bool closed = false;
  const std::string got = exchange(smuggled() + "GET /healthz HTTP/1.1\r\n\r\n", &closed);
  EXPECT_TRUE(closed);
  ASSERT_EQ(answers(got), 2u) << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 201 ", 0), 0u) << got;
  EXPECT_NE(got.find("HTTP/1.1 400 "), std::string::npos) << got;
}

}  // namespace
}  // namespace expiry::test
