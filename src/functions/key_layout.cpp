// Key names and keyspace-event parsing; see key_layout.h.
#include "functions/key_layout.h"

#include <cctype>
#include <cstdio>

#include "base/utf8.h"

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

std::optional<std::string> task_id_error(std::string_view id) {
  if (id.empty()) return "task id must not be empty";
  if (id.size() > kMaxIdBytes) return "task id longer than 256 bytes";
  for (size_t i = 0; i < id.size();) {
    const auto c = static_cast<unsigned char>(id[i]);
    if (c < 0x20 || c == 0x7F) return "task id contains a control character";
    const size_t n = utf8_sequence_length(id, i);
    if (n == 0) return "task id is not valid UTF-8";
    const char32_t cp = utf8_code_point(id, i, n);
    if (is_forbidden_in_id(cp)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "%04X", static_cast<unsigned>(cp));
      return std::string("task id contains the invisible or line-breaking character U+") + hex;
    }
    i += n;
  }
  return std::nullopt;
}

bool is_forbidden_in_id(char32_t cp) { return is_disguising_code_point(cp); }

bool in_task_key_space(std::string_view key, std::string_view ns) {
  if (key.size() <= ns.size() + 2 || key.compare(0, ns.size(), ns) != 0 || key.compare(ns.size(), 2, ":{") != 0) {
    return false;
  }
  size_t i = ns.size() + 2;
  const size_t digits = i;
  while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
  if (i == digits || key.compare(i, 2, "}:") != 0) return false;
  std::string_view rest = key.substr(i + 2);
  return rest != "stream" && rest != "dead";  // the bucket's own streams
}

std::optional<std::string> stream_name_error(std::string_view stream, std::string_view ns) {
  if (stream.empty()) return "stream name must not be empty";
  if (in_task_key_space(stream, ns)) {
    return "stream " + std::string(stream) + " lies inside the task key space " + std::string(ns) +
           ":{B}: of namespace " + std::string(ns) + " (a schedule there would delete it); choose another name";
  }
  return std::nullopt;
}

KeyLayout::KeyLayout(std::string ns, int bucket)
    : ns_(std::move(ns)),
      prefix_(ns_ + ":{" + std::to_string(bucket) + "}:"),
      schedule_key_(prefix_ + "schedule"),
      bucket_(bucket) {}

std::optional<int> KeyLayout::bucket_from_wake_channel(std::string_view channel) const {
  // NS ":{" digits "}:wake"
  if (channel.size() <= ns_.size() + 2 || channel.compare(0, ns_.size(), ns_) != 0 ||
      channel.compare(ns_.size(), 2, ":{") != 0) {
    return std::nullopt;
  }
  size_t i = ns_.size() + 2;
  const size_t digits_start = i;
  int bucket = 0;
  while (i < channel.size() && std::isdigit(static_cast<unsigned char>(channel[i])) && i - digits_start < 6) {
    bucket = bucket * 10 + (channel[i++] - '0');
  }
  if (i == digits_start || i - digits_start > 5 || channel.substr(i) != "}:wake") return std::nullopt;
  return bucket;
}

std::optional<std::string_view> KeyLayout::id_from_trigger_key(std::string_view key) const {
  auto ref = parse_task_key(key);
  if (!ref || ref->kind != TaskKeyKind::Trigger) return std::nullopt;
  return ref->id;
}

std::optional<TaskKeyRef> KeyLayout::parse_task_key(std::string_view key) const {
  // NS ":{" digits "}:" ("t:" | "task:") id
  if (key.size() <= ns_.size() + 2 || key.compare(0, ns_.size(), ns_) != 0) return std::nullopt;
  size_t i = ns_.size();
  if (key.compare(i, 2, ":{") != 0) return std::nullopt;
  i += 2;
  const size_t digits_start = i;
  TaskKeyRef ref;
  while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i])) && i - digits_start < 6) {
    ref.bucket = ref.bucket * 10 + (key[i++] - '0');
  }
  if (i == digits_start || i - digits_start > 5) return std::nullopt;
  if (key.compare(i, 4, "}:t:") == 0) {
    ref.kind = TaskKeyKind::Trigger;
    i += 4;
  } else if (key.compare(i, 7, "}:task:") == 0) {
    ref.kind = TaskKeyKind::Shadow;
    i += 7;
  } else {
    return std::nullopt;
  }
  if (i >= key.size()) return std::nullopt;
  ref.id = key.substr(i);
  return ref;
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
