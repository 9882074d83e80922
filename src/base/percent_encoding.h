// Percent-encoding (%XX) of bytes, as URLs and HTTP header values carry them. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

// Decodes %XX escapes (either case; '+' stays '+'); nullopt for a malformed or truncated escape.
std::optional<std::string> percent_decode(std::string_view text);

// `text` with every byte outside visible ASCII (0x21..0x7E), and '%' itself, as %XX (upper
// case): the result is visible ASCII only, so it is safe in an HTTP header value (no CR, LF or
// other control, no space) and every HTTP stack hands a receiver the very bytes that were sent,
// whatever it assumes about header encodings. Visible ASCII without '%' passes unchanged.
// percent_decode reverses it.
std::string percent_encode_visible_ascii(std::string_view text);

}  // namespace expiry
