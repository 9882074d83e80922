// Lenient RESP2 text to Reply decoding for the fuzz targets; see resp_decoder.h.
#include "resp_decoder.h"

#include <algorithm>
#include <charconv>

namespace expiry::fuzz {

std::string_view RespDecoder::take_line() {
  const auto nl = rest_.find('\n');
  std::string_view line = rest_.substr(0, nl);
  rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// A decimal integer; text that is not one (or overflows) gives 0.
long long RespDecoder::parse_integer(std::string_view text) {
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return 0;
  return v;
}

Reply RespDecoder::decode(int depth) {
  Reply r;
  if (rest_.empty()) return r;
  const char type = rest_.front();
  switch (type) {
    case '+':
    case '-':
    case '!':
      rest_.remove_prefix(1);
      r.type = type == '+' ? Reply::Type::Status : type == '-' ? Reply::Type::Error : Reply::Type::IoError;
      r.str = std::string(take_line());
      return r;
    case ':':
      rest_.remove_prefix(1);
      r.type = Reply::Type::Integer;
      r.integer = parse_integer(take_line());
      return r;
    case '_':
      take_line();
      return r;
    case '$': {
      rest_.remove_prefix(1);
      const long long len = parse_integer(take_line());
      if (len < 0) return r;
      const size_t n = std::min(static_cast<size_t>(len), rest_.size());
      r.type = Reply::Type::String;
      r.str = std::string(rest_.substr(0, n));
      rest_.remove_prefix(n);
      if (rest_.substr(0, 2) == "\r\n") {
        rest_.remove_prefix(2);
      } else if (rest_.substr(0, 1) == "\n") {
        rest_.remove_prefix(1);
      }
      return r;
    }
    case '*': {
      rest_.remove_prefix(1);
      const long long count = parse_integer(take_line());
      if (count < 0) return r;
      r.type = Reply::Type::Array;
      if (depth >= kMaxDepth) {  // too deep: Nil, and its elements are read as the replies that follow
        r.type = Reply::Type::Nil;
        return r;
      }
      for (long long i = 0; i < count && !rest_.empty(); ++i) r.elements.push_back(decode(depth + 1));
      return r;
    }
    default:
      r.type = Reply::Type::String;
      r.str = std::string(take_line());
      return r;
  }
}

}  // namespace expiry::fuzz
