// A small, lenient decoder from fuzz bytes to expiry::Reply trees, in RESP2 text so seeds can
// be real Redis replies (redis-cli --no-raw shows their structure; see corpus/stream_entry/):
//   +status  -error  :integer  $len\r\n<len bytes>  $-1 (nil)  *count (elements follow)
//   *-1 (nil)  _ (nil)  !text (IoError, the value a lost connection gives callbacks)
// Any other line is a String of the line's bytes. Line ends are "\r\n" or "\n". Never fails:
// a truncated input gives a truncated tree. Nesting deeper than kMaxDepth gives Nil, and an
// array holds at most as many elements as bytes remain, so the tree stays small.
#pragma once

#include <string_view>

#include "redis/reply.h"

namespace expiry::fuzz {

class RespDecoder {
 public:
  static constexpr int kMaxDepth = 16;

  explicit RespDecoder(std::string_view input) : rest_(input) {}

  bool at_end() const { return rest_.empty(); }
  // The next reply; Nil at the end of the input.
  Reply next() { return decode(0); }

 private:
  Reply decode(int depth);
  std::string_view take_line();
  static long long parse_integer(std::string_view text);

  std::string_view rest_;
};

}  // namespace expiry::fuzz
