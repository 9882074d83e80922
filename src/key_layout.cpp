// Key names and keyspace-event parsing; see key_layout.h.
#include "key_layout.h"

#include <cctype>

namespace expiry {

std::optional<std::string> namespace_error(std::string_view ns) {
  if (ns.empty()) return "namespace must not be empty";
  if (ns.size() > kMaxNamespaceBytes) return "namespace longer than 64 characters";
  for (char c : ns) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) {
      return "namespace may contain only letters, digits, '_', '.' and '-'";
    }
  }
  return std::nullopt;
}

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 if it is not valid (overlong forms,
// surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  unsigned min_cp;
  unsigned cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min_cp = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min_cp = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min_cp = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::optional<std::string> task_id_error(std::string_view id) {
  if (id.empty()) return "task id must not be empty";
  if (id.size() > kMaxIdBytes) return "task id longer than 256 bytes";
  for (size_t i = 0; i < id.size();) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c < 0x20 || c == 0x7F) return "task id contains a control character";
    const size_t n = utf8_sequence_length(id, i);
    if (n == 0) return "task id is not valid UTF-8";
    i += n;
  }
  return std::nullopt;
}

KeyLayout::KeyLayout(std::string ns, int bucket)
    : ns_(std::move(ns)),
      prefix_(ns_ + ":{" + std::to_string(bucket) + "}:"),
      schedule_key_(prefix_ + "schedule") {}

std::optional<std::string_view> KeyLayout::id_from_trigger_key(std::string_view key) const {
  // NS ":{" digits "}:t:" id
  if (key.size() <= ns_.size() + 2 || key.compare(0, ns_.size(), ns_) != 0) return std::nullopt;
  size_t i = ns_.size();
  if (key.compare(i, 2, ":{") != 0) return std::nullopt;
  i += 2;
  const size_t digits_start = i;
  while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
  if (i == digits_start || i - digits_start > 5) return std::nullopt;
  if (key.compare(i, 4, "}:t:") != 0) return std::nullopt;
  i += 4;
  if (i >= key.size()) return std::nullopt;
  return key.substr(i);
}

std::optional<int> db_from_expired_channel(std::string_view channel) {
  constexpr std::string_view kHead = "__keyevent@";
  constexpr std::string_view kTail = "__:expired";
  if (channel.size() <= kHead.size() + kTail.size()) return std::nullopt;
  if (channel.compare(0, kHead.size(), kHead) != 0) return std::nullopt;
  if (channel.compare(channel.size() - kTail.size(), kTail.size(), kTail) != 0) return std::nullopt;
  std::string_view digits = channel.substr(kHead.size(), channel.size() - kHead.size() - kTail.size());
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  int db = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    db = db * 10 + (c - '0');
  }
  return db;
}

}  // namespace expiry
