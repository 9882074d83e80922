// Unit tests of the HTTP request head parsing behind HttpEndpoint (src/service/http_request.h).
#include "service/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace expiry {
namespace {

TEST(HttpHeadEnd, IncompleteUntilTheBlankLine) {
  EXPECT_EQ(find_http_head_end(""), 0u);
  EXPECT_EQ(find_http_head_end("GET / HTTP/1.1"), 0u);
  EXPECT_EQ(find_http_head_end("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(find_http_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r"), 0u);
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(find_http_head_end(head), head.size());
  EXPECT_EQ(find_http_head_end(head + "body"), head.size());
}

TEST(HttpHeadEnd, BareLineFeedsEndAHeadToo) {
  const std::string head = "GET / HTTP/1.0\nHost: x\n\n";
  EXPECT_EQ(find_http_head_end(head), head.size());
  EXPECT_EQ(find_http_head_end("GET / HTTP/1.0\r\n\n"), 17u);
}

TEST(HttpHeadEnd, BlankLinesBeforeTheRequestLineAreSkipped) {
  EXPECT_EQ(find_http_head_end("\r\n\r\n"), 0u);
  const std::string head = "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(find_http_head_end(head), head.size());
}

TEST(HttpHeadEnd, AnEndSplitAcrossReadsIsFoundFromTheScannedOffset) {
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  // Fed one byte at a time, each call scanning only what it has not scanned before.
  size_t scanned = 0;
  for (size_t n = 1; n <= head.size(); ++n) {
    const size_t end = find_http_head_end(std::string_view(head).substr(0, n), scanned);
    if (n < head.size()) {
      EXPECT_EQ(end, 0u) << n;
    } else {
      EXPECT_EQ(end, head.size());
    }
    scanned = n;
  }
}

TEST(HttpHead, ParsesMethodPathAndContentLength) {
  auto head = parse_http_request_head("POST /metrics?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->method, "POST");
  EXPECT_EQ(head->path, "/metrics");
  EXPECT_EQ(head->content_length, 12);

  head = parse_http_request_head("HEAD /healthz#frag HTTP/1.0\n\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->method, "HEAD");
  EXPECT_EQ(head->path, "/healthz");
  EXPECT_EQ(head->content_length, 0);
}

TEST(HttpHead, AbsoluteFormTargetsAreReducedToTheirPath) {
  auto head = parse_http_request_head("GET http://relay:9100/readyz?a HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->path, "/readyz");
  head = parse_http_request_head("GET HTTP://relay HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->path, "/");
  head = parse_http_request_head("OPTIONS * HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->path, "*");
  EXPECT_FALSE(parse_http_request_head("GET ftp://relay/metrics HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(parse_http_request_head("GET metrics HTTP/1.1\r\n\r\n"));
}

TEST(HttpHead, HeaderNamesAreCaseInsensitiveAndValuesTrimmed) {
  auto head = parse_http_request_head("GET / HTTP/1.1\r\ncOnTeNt-LeNgTh: \t 7 \r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->content_length, 7);
  head = parse_http_request_head("GET / HTTP/1.1\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->content_length, 7);
}

TEST(HttpHead, MalformedHeadsAreRejected) {
  for (const char* bad : {
           "",
           "\r\n\r\n",
           "GET\r\n\r\n",
           "GET /\r\n\r\n",
           "GET / HTTP/1.1 extra\r\n\r\n",
           "GET  / HTTP/1.1\r\n\r\n",
           "GET / HTTP/2.0\r\n\r\n",
           "GET / http/1.1\r\n\r\n",
           "G(T / HTTP/1.1\r\n\r\n",
           "GET /a\x01 HTTP/1.1\r\n\r\n",
           "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
           "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
           "GET / HTTP/1.1\r\n: x\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: 1000000000000000000\r\n\r\n",
           "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       }) {
    EXPECT_FALSE(parse_http_request_head(bad)) << bad;
  }
}

TEST(HttpHead, TheLargestContentLengthIsAccepted) {
  auto head = parse_http_request_head("POST / HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->content_length, 999999999999999999LL);
}

}  // namespace
}  // namespace expiry
