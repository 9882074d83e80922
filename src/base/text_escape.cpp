// One-line rendering of arbitrary bytes; see text_escape.h.
#include "base/text_escape.h"

#include "base/utf8.h"

namespace expiry {
namespace {

void append_hex(std::string& out, unsigned char b) {
  static const char kDigits[] = "0123456789abcdef";
  out += "\\x";
  out.push_back(kDigits[b >> 4]);
  out.push_back(kDigits[b & 0xF]);
}

// escape_text; with `backslash`, a backslash becomes \\.
std::string escape(std::string_view s, bool backslash) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_hex(out, b);
      ++i;
    } else if (n > 1 && is_disguising_code_point(utf8_code_point(s, i, n))) {
      // A C1 control, a line or paragraph separator, a bidi control, a BOM: its bytes as \xNN.
      for (size_t k = 0; k < n; ++k) append_hex(out, static_cast<unsigned char>(s[i + k]));
      i += n;
    } else if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
    } else if (b == '\n') {
      out += "\\n", ++i;
    } else if (b == '\r') {
      out += "\\r", ++i;
    } else if (b == '\t') {
      out += "\\t", ++i;
    } else if (b == '\\' && backslash) {
      out += "\\\\", ++i;
    } else if (b < 0x20 || b == 0x7F) {
      append_hex(out, b), ++i;
    } else {
      out.push_back(static_cast<char>(b)), ++i;
    }
  }
  return out;
}

}  // namespace

size_t first_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string escape_text(std::string_view s) { return escape(s, false); }

std::string escape_text_reversible(std::string_view s) { return escape(s, true); }

}  // namespace expiry
