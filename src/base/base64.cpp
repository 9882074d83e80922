// Strict base64; see base64.h.
#include "base/base64.h"

#include <array>
#include <cstdint>

#include "base/text_escape.h"

namespace expiry {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr int8_t kInvalid = -1;

// The 6-bit value of each byte, or kInvalid.
constexpr std::array<int8_t, 256> make_values() {
  std::array<int8_t, 256> values{};
  for (auto& v : values) v = kInvalid;
  for (int i = 0; i < 64; ++i) values[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return values;
}
constexpr std::array<int8_t, 256> kValues = make_values();

std::optional<std::string> fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return std::nullopt;
}

// "'x'" for a printable ASCII character, else its escape ("'\x0a'", "'\xc3'").
std::string quoted(char c) {
  const auto b = static_cast<unsigned char>(c);
  if (b >= 0x80) {
    static const char kDigits[] = "0123456789abcdef";
    return std::string("'\\x") + kDigits[b >> 4] + kDigits[b & 0xF] + "'";
  }
  return "'" + escape_text(std::string_view(&c, 1)) + "'";
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[n >> 18]);
    out.push_back(kAlphabet[(n >> 12) & 0x3F]);
    out.push_back(kAlphabet[(n >> 6) & 0x3F]);
    out.push_back(kAlphabet[n & 0x3F]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[n >> 18]);
    out.push_back(kAlphabet[(n >> 12) & 0x3F]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 0x3F] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text, std::string* error) {
  // Foreign characters first (a stray space or line break is named, not reported as a bad
  // length or a misplaced '='), then the padding, then the length.
  for (size_t i = 0; i < text.size(); ++i) {
    if (kValues[static_cast<unsigned char>(text[i])] == kInvalid && text[i] != '=') {
      return fail(error, "invalid character " + quoted(text[i]) + " at position " + std::to_string(i + 1));
    }
  }
  size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  const size_t data_end = text.size() - padding;  // the characters before the padding
  if (const size_t eq = text.substr(0, data_end).find('='); eq != std::string_view::npos) {
    return fail(error, "'=' at position " + std::to_string(eq + 1) + " is not at the end");
  }
  if (padding > 2) return fail(error, std::to_string(padding) + " '=' at the end; padding is at most 2");
  if (text.size() % 4 != 0) {
    return fail(error, "length " + std::to_string(text.size()) +
                           " is not a multiple of 4 (base64 needs its '=' padding)");
  }

  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;  // pending bits, the oldest highest
  int count = 0;      // how many bits of `bits` are pending
  for (size_t i = 0; i < data_end; ++i) {
    bits = (bits << 6) | static_cast<uint32_t>(kValues[static_cast<unsigned char>(text[i])]);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  // What is left are the unused low bits of the last character (2 or 4 of them with padding).
  if (count > 0 && (bits & ((1u << count) - 1)) != 0) {
    return fail(error, "the last character before the padding, " + quoted(text[data_end - 1]) + " at position " +
                           std::to_string(data_end) + ", has non-zero unused bits (not the canonical encoding)");
  }
  return out;
}

}  // namespace expiry
