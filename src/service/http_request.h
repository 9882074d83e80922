// HTTP/1.x request heads (pure: no I/O): where a head ends in the bytes received so far, and
// its method, path and framing; leniently for HttpEndpoint, strictly (RFC 9112, nothing that
// could frame a request two ways) for expiry-api's HttpRequestFramer.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace expiry {

struct HttpRequestHead {
  std::string method;            // as sent (methods are case-sensitive): "GET", "HEAD", "POST" ...
  std::string path;              // the target up to '?' or '#', not percent-decoded; "*" for "*"
  long long content_length = 0;  // 0 when the head has no Content-Length
  bool chunked = false;          // Transfer-Encoding: chunked (strict heads only)
};

// Why a head is refused: the status to answer (400, 431 or 501) and what was wrong.
struct HttpHeadError {
  int status = 400;
  std::string reason;
};

// The length of the request head at the start of `received`, up to and including the blank
// line that ends it (CRLF CRLF, or LF LF: RFC 9112 2.2 lets a server accept a bare LF), or 0
// while no end has arrived. Empty lines before the request line are part of the head (RFC 9112
// 2.2: a server ignores them). `scanned` says that received[0, scanned) was searched before
// without success, so a head that arrives byte by byte is searched once, not once per byte.
size_t find_http_head_end(std::string_view received, size_t scanned = 0);

// Parses a complete head, as delimited by find_http_head_end. nullopt if it is malformed: no
// request line, or one that is not "METHOD SP target SP HTTP/1.0|HTTP/1.1"; a target that is
// neither origin-form ("/path?query"), absolute-form ("http://host/path") nor "*"; a header
// line without a colon, with whitespace before it, or folded (obsolete); a Content-Length that
// is not a decimal number below 10^18, or two that differ.
std::optional<HttpRequestHead> parse_http_request_head(std::string_view head);

// Parses a complete head as parse_http_request_head does, and also refuses (RFC 9112): a control
// character or NUL in the request line or a header line (HTAB allowed in values); a bare CR;
// an HTTP/1.1 request without exactly one Host, or any request with two; Content-Length values
// that differ, or with a sign, spaces or commas inside; Transfer-Encoding other than "chunked"
// (501), with a Content-Length as well, or in HTTP/1.0.
std::variant<HttpRequestHead, HttpHeadError> check_http_request_head(std::string_view head);

}  // namespace expiry
