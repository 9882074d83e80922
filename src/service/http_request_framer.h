// HttpRequestFramer: the strict front of expiry-api's HTTP/1.1 server (RFC 9112). It reads a
// connection's raw bytes and passes on only what frames one way: each head whole and checked
// (check_http_request_head), then its body by Content-Length, or its chunks whole, rewritten
// without chunk extensions (evhttp cannot parse them) and ended without trailers. The first
// fault refuses the connection: the framer passes on a request of its own instead (a bare head
// with Connection: close, or the end of the chunked body under way) so that the server answers
// once, with refusal(), and then closes; every byte after the fault is dropped. Pure: no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "service/http_request.h"

namespace expiry {

class HttpRequestFramer {
 public:
  // `max_head_bytes`: a longer head is refused with 431; `max_chunk_bytes`: a longer chunk with 413.
  HttpRequestFramer(size_t max_head_bytes, long long max_chunk_bytes)
      : max_head_bytes_(max_head_bytes), max_chunk_bytes_(max_chunk_bytes) {}

  // Reads `in` and appends to `out` what may be passed on.
  void feed(std::string_view in, std::string& out);

  // The fault that refused the connection, once there is one, and the number (from 1, in the
  // order passed on) of the request that stands for it: requests before it are sound.
  const std::optional<HttpHeadError>& refusal() const { return refusal_; }
  size_t refused_request() const { return refused_request_; }
  // Bytes received and held back (a head, a chunk or a line not yet whole).
  size_t held() const { return buffer_.size() + chunk_.size(); }

 private:
  enum class State { Head, Body, ChunkSize, ChunkData, ChunkEnd, Trailer, Refused };

  // Consumes what it can of buffer_ from `at` in the current state; false when it needs more.
  bool step(size_t& at, std::string& out);
  // The line that starts at `at` in buffer_ (LF or CRLF dropped) and where the next begins, or
  // nullopt while no LF has come; refuses a line longer than `max` (the state is Refused then).
  std::optional<std::pair<std::string_view, size_t>> line_at(size_t at, size_t max, const char* what,
                                                              std::string& out);
  bool chunk_size_line(std::string_view line, std::string& out);
  void refuse(int status, std::string reason, std::string& out);

  size_t max_head_bytes_;
  long long max_chunk_bytes_;
  State state_ = State::Head;
  std::string buffer_;          // received, not yet consumed
  size_t scanned_ = 0;          // of a head in buffer_, searched for its end already
  long long remaining_ = 0;     // of the body or chunk under way
  size_t trailer_bytes_ = 0;    // of the trailer under way
  std::string chunk_;           // the chunk under way, passed on whole
  size_t requests_passed_ = 0;  // heads passed on
  size_t refused_request_ = 0;
  std::optional<HttpHeadError> refusal_;
};

}  // namespace expiry
