// Base64 (RFC 4648 section 4: the standard alphabet, '=' padding) for bulk-file payloads
// ("payload_b64"), the payloads `tail --json` cannot show as text and the list cursors of
// producer/list_cursor.h. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

// The padded standard base64 of `bytes`.
std::string base64_encode(std::string_view bytes);

// Decodes strict base64, the exact inverse of base64_encode: the standard alphabet only (no
// "-_" URL variant), a length that is a multiple of 4, '=' padding required and only as the
// last one or two characters, no whitespace or line breaks, and zero unused bits in the last
// character before the padding (so every byte string has exactly one accepted form).
// Returns nullopt and, if `error` is given, a one-line reason naming the 1-based position.
std::optional<std::string> base64_decode(std::string_view text, std::string* error = nullptr);

}  // namespace expiry
