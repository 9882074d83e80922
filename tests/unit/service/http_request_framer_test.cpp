// Unit tests of HttpRequestFramer (src/service/http_request_framer.h): what it passes on to
// evhttp, and what it refuses, for each request-smuggling case of the probe and the sound ones.
#include "service/http_request_framer.h"

#include <gtest/gtest.h>

#include <string>

namespace expiry {
namespace {

using namespace std::string_literals;

constexpr std::string_view kRefusedHead = "GET / HTTP/1.1\r\nHost: refused\r\nConnection: close\r\n\r\n";

struct Framed {
  std::string out;
  std::optional<HttpHeadError> refusal;
  size_t refused_request = 0;
};

// Fed whole, and fed one byte at a time: both must pass on the same bytes.
Framed frame(const std::string& in) {
  HttpRequestFramer whole(8192, 1 << 20);
  Framed f;
  whole.feed(in, f.out);
  f.refusal = whole.refusal();
  f.refused_request = whole.refused_request();
  HttpRequestFramer bytewise(8192, 1 << 20);
  std::string out;
  for (char c : in) bytewise.feed(std::string_view(&c, 1), out);
  EXPECT_EQ(out, f.out) << "fed byte by byte";
  EXPECT_EQ(bytewise.refusal().has_value(), f.refusal.has_value());
  return f;
}

void expect_refused_head(const std::string& in, int status, const std::string& reason_part) {
  const Framed f = frame(in);
  ASSERT_TRUE(f.refusal) << in;
  EXPECT_EQ(f.refusal->status, status) << in;
  EXPECT_NE(f.refusal->reason.find(reason_part), std::string::npos) << f.refusal->reason;
  EXPECT_EQ(f.out, kRefusedHead) << "nothing of the request itself is passed on";
  EXPECT_EQ(f.refused_request, 1u);
}

void expect_refused_chunk(const std::string& size_line) {
  const std::string head = "POST /v1/tasks HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const Framed f = frame(head + size_line + "\r\nabcdefghijklmnopqr\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_TRUE(f.refusal) << size_line;
  EXPECT_EQ(f.refusal->status, 400);
  EXPECT_EQ(f.out, head + "0\r\n\r\n") << "the body is ended empty; nothing after the fault is passed on";
  EXPECT_EQ(f.refused_request, 1u);
}

TEST(HttpRequestFramer, SoundRequestsPassThroughUnchanged) {
  const std::string in =
      "GET /v1/tasks/a HTTP/1.1\r\nHost: a\r\n\r\n"
      "PUT /v1/tasks/b HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
      "GET /healthz HTTP/1.0\r\n\r\n";
  const Framed f = frame(in);
  EXPECT_FALSE(f.refusal);
  EXPECT_EQ(f.out, in);
}

TEST(HttpRequestFramer, TwoDifferingContentLengthsAreRefused) {
  expect_refused_head("POST /v1/tasks HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 44\r\n\r\nhello", 400,
                      "Content-Length");
}

TEST(HttpRequestFramer, AContentLengthWithASignOrAListIsRefused) {
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +18\r\n\r\n", 400, "Content-Length");
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400, "Content-Length");
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length");
}

TEST(HttpRequestFramer, ChunkSizesWithAPrefixASignOrASpaceAreRefused) {
  expect_refused_chunk("0x12");
  expect_refused_chunk("+12");
  expect_refused_chunk(" 12");
  expect_refused_chunk("12 12");
  expect_refused_chunk("");
}

TEST(HttpRequestFramer, ANulOrAControlCharacterInAHeaderIsRefused) {
  expect_refused_head("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\0c\r\n\r\n"s, 400, "control character");
  expect_refused_head("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x01" "c\r\n\r\n", 400, "control character");
  expect_refused_head("GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rX-B: c\r\n\r\n", 400, "bare CR");
}

TEST(HttpRequestFramer, HostMustBeThereOnceInHttp11) {
  expect_refused_head("GET / HTTP/1.1\r\n\r\n", 400, "without Host");
  expect_refused_head("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Host");
  expect_refused_head("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400, "two Host");
  EXPECT_FALSE(frame("GET / HTTP/1.0\r\n\r\n").refusal);  // HTTP/1.0 may leave it out
}

TEST(HttpRequestFramer, TransferEncodingIsChunkedAloneOrRefused) {
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "not supported");
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400,
                      "both");
  expect_refused_head("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0");
  expect_refused_head("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                      400, "two Transfer-Encoding");
}

TEST(HttpRequestFramer, ChunkExtensionsAreAcceptedAndLeftOut) {
  const std::string head = "PUT /v1/tasks/a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const Framed f = frame(head + "5;name=value\r\nhello\r\n1 ; a ; b=\"q\\\"x\"\r\n!\r\n0;last\r\nX-Trailer: t\r\n\r\n");
  EXPECT_FALSE(f.refusal);
  EXPECT_EQ(f.out, head + "5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n");
}

TEST(HttpRequestFramer, ChunkDataLongerThanItsSizeIsRefused) {
  const std::string head = "PUT /v1/tasks/a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  const Framed f = frame(head + "3\r\nhello\r\n0\r\n\r\n");
  ASSERT_TRUE(f.refusal);
  EXPECT_EQ(f.out, head + "0\r\n\r\n");
}

TEST(HttpRequestFramer, ABadRequestAfterSoundOnesStandsForItselfOnly) {
  const std::string sound = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n";
  const Framed f = frame(sound + "GET /b HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(f.refusal);
  EXPECT_EQ(f.refused_request, 2u);
  EXPECT_EQ(f.out, sound + std::string(kRefusedHead));
}

TEST(HttpRequestFramer, LongHeadsAndChunksAreRefusedWithTheirStatus) {
  HttpRequestFramer framer(64, 10);
  std::string out;
  framer.feed("GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + std::string(100, 'x'), out);
  ASSERT_TRUE(framer.refusal());
  EXPECT_EQ(framer.refusal()->status, 431);
  HttpRequestFramer chunks(1024, 10);
  out.clear();
  chunks.feed("PUT / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n", out);
  ASSERT_TRUE(chunks.refusal());
  EXPECT_EQ(chunks.refusal()->status, 413);
  out.clear();
  chunks.feed("more bytes", out);
  EXPECT_TRUE(out.empty()) << "nothing after a refusal";
}

}  // namespace
}  // namespace expiry
