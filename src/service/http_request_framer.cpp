// See http_request_framer.h.
#include "service/http_request_framer.h"

#include <cctype>
#include <cstdio>

namespace expiry {
namespace {

constexpr size_t kLongestChunkLine = 4096;  // a chunk size with its extensions
constexpr size_t kLongestHexDigits = 15;    // below 2^60: no overflow
constexpr std::string_view kRefusedHead = "GET / HTTP/1.1\r\nHost: refused\r\nConnection: close\r\n\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";

bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) != 0 || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

void skip_bws(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

bool skip_token(std::string_view s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && is_token_char(s[i])) ++i;
  return i > start;
}

// RFC 9110 5.6.4 quoted-string, from the opening quote.
bool skip_quoted(std::string_view s, size_t& i) {
  if (i >= s.size() || s[i] != '"') return false;
  for (++i; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      ++i;
      return true;
    }
    if (c == '\\') {
      if (++i >= s.size()) return false;
      const auto e = static_cast<unsigned char>(s[i]);
      if (e != '\t' && (e < ' ' || e == 0x7f)) return false;
    } else if (c != '\t' && (c < ' ' || c == 0x7f)) {
      return false;
    }
  }
  return false;
}

// RFC 9112 7.1.1: *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ).
bool valid_chunk_extensions(std::string_view s) {
  size_t i = 0;
  for (;;) {
    skip_bws(s, i);
    if (i == s.size()) return true;
    if (s[i] != ';') return false;
    ++i;
    skip_bws(s, i);
    if (!skip_token(s, i)) return false;
    size_t j = i;
    skip_bws(s, j);
    if (j < s.size() && s[j] == '=') {
      ++j;
      skip_bws(s, j);
      if (!(j < s.size() && s[j] == '"' ? skip_quoted(s, j) : skip_token(s, j))) return false;
      i = j;
    }
  }
}

// A trailer field line: a token, a colon, and a value without control characters.
bool valid_field_line(std::string_view line) {
  size_t i = 0;
  if (!skip_token(line, i) || i >= line.size() || line[i] != ':') return false;
  for (++i; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c != '\t' && (c < ' ' || c == 0x7f)) return false;
  }
  return true;
}

}  // namespace

void HttpRequestFramer::feed(std::string_view in, std::string& out) {
  if (state_ == State::Refused) return;
  buffer_.append(in);
  size_t at = 0;
  while (state_ != State::Refused && step(at, out)) {
  }
  if (state_ == State::Refused) {
    buffer_.clear();
  } else {
    buffer_.erase(0, at);
  }
}

void HttpRequestFramer::refuse(int status, std::string reason, std::string& out) {
  if (state_ == State::Head) {
    out.append(kRefusedHead);  // a request of its own, answered with the refusal
    refused_request_ = ++requests_passed_;
  } else {
    out.append(kLastChunk);  // ends the chunked body under way: that request is answered with it
    refused_request_ = requests_passed_;
  }
  refusal_ = HttpHeadError{status, std::move(reason)};
  state_ = State::Refused;
  chunk_.clear();
}

std::optional<std::pair<std::string_view, size_t>> HttpRequestFramer::line_at(size_t at, size_t max,
                                                                              const char* what, std::string& out) {
  const std::string_view rest = std::string_view(buffer_).substr(at);
  const size_t lf = rest.find('\n');
  if (lf == std::string_view::npos || lf + 1 > max) {
    if (rest.size() > max) refuse(400, std::string(what) + " is too long", out);
    return std::nullopt;
  }
  std::string_view line = rest.substr(0, lf);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return std::make_pair(line, at + lf + 1);
}

bool HttpRequestFramer::chunk_size_line(std::string_view line, std::string& out) {
  size_t digits = 0;
  long long size = 0;
  while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits])) != 0) {
    if (digits == kLongestHexDigits) {
      refuse(413, "a chunk larger than the body limit", out);
      return false;
    }
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(line[digits])));
    size = size * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
    ++digits;
  }
  if (digits == 0 || !valid_chunk_extensions(line.substr(digits))) {
    refuse(400, "a malformed chunk size", out);
    return false;
  }
  if (size > max_chunk_bytes_) {
    refuse(413, "a chunk larger than the body limit", out);
    return false;
  }
  if (size == 0) {
    state_ = State::Trailer;
    trailer_bytes_ = 0;
    return true;
  }
  char hex[24];
  std::snprintf(hex, sizeof hex, "%llx\r\n", size);
  chunk_ = hex;
  remaining_ = size;
  state_ = State::ChunkData;
  return true;
}

bool HttpRequestFramer::step(size_t& at, std::string& out) {
  const size_t available = buffer_.size() - at;
  switch (state_) {
    case State::Head: {
      if (available == 0) return false;
      const std::string_view rest = std::string_view(buffer_).substr(at);
      const size_t end = find_http_head_end(rest, scanned_);
      if (end == 0) {
        scanned_ = rest.size();
        if (rest.size() > max_head_bytes_) refuse(431, "the request head is larger than the limit", out);
        return false;
      }
      if (end > max_head_bytes_) {
        refuse(431, "the request head is larger than the limit", out);
        return false;
      }
      const std::string_view head = rest.substr(0, end);
      auto checked = check_http_request_head(head);
      if (auto* error = std::get_if<HttpHeadError>(&checked)) {
        refuse(error->status, error->reason, out);
        return false;
      }
      const auto& parsed = std::get<HttpRequestHead>(checked);
      size_t blank = 0;  // blank lines before the request line are not passed on
      while (blank < head.size() && (head[blank] == '\r' || head[blank] == '\n')) ++blank;
      out.append(head.substr(blank));
      ++requests_passed_;
      at += end;
      scanned_ = 0;
      if (parsed.chunked) {
        state_ = State::ChunkSize;
      } else if (parsed.content_length > 0) {
        remaining_ = parsed.content_length;
        state_ = State::Body;
      }
      return true;
    }
    case State::Body: {
      if (available == 0) return false;
      const size_t n = static_cast<size_t>(std::min<long long>(remaining_, static_cast<long long>(available)));
      out.append(buffer_, at, n);
      at += n;
      remaining_ -= static_cast<long long>(n);
      if (remaining_ == 0) state_ = State::Head;
      return true;
    }
    case State::ChunkSize: {
      const auto line = line_at(at, kLongestChunkLine, "a chunk-size line", out);
      if (!line) return false;
      at = line->second;
      return chunk_size_line(line->first, out);
    }
    case State::ChunkData: {
      if (available == 0) return false;
      const size_t n = static_cast<size_t>(std::min<long long>(remaining_, static_cast<long long>(available)));
      chunk_.append(buffer_, at, n);
      at += n;
      remaining_ -= static_cast<long long>(n);
      if (remaining_ == 0) state_ = State::ChunkEnd;
      return true;
    }
    case State::ChunkEnd: {
      if (available == 0) return false;
      if (buffer_[at] == '\r') {
        if (available < 2) return false;
        if (buffer_[at + 1] != '\n') {
          refuse(400, "chunk data longer than its size", out);
          return false;
        }
        at += 2;
      } else if (buffer_[at] == '\n') {
        at += 1;
      } else {
        refuse(400, "chunk data longer than its size", out);
        return false;
      }
      out.append(chunk_).append("\r\n");
      chunk_.clear();
      state_ = State::ChunkSize;
      return true;
    }
    case State::Trailer: {
      const auto line = line_at(at, max_head_bytes_, "a trailer line", out);
      if (!line) return false;
      trailer_bytes_ += line->second - at;
      at = line->second;
      if (line->first.empty()) {
        out.append(kLastChunk);  // trailers are checked and dropped
        state_ = State::Head;
        return true;
      }
      if (trailer_bytes_ > max_head_bytes_ || !valid_field_line(line->first)) {
        refuse(400, trailer_bytes_ > max_head_bytes_ ? "the trailer is too long" : "a malformed trailer line", out);
        return false;
      }
      return true;
    }
    case State::Refused:
      return false;
  }
  return false;
}

}  // namespace expiry
