// Stream entry rendering; see entry_format.h.
#include "inspector/entry_format.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/text_escape.h"
#include "base/utf8.h"
#include "functions/stream_entry.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// Unicode White_Space characters that are not escaped (the C0 and C1 ones are).
bool is_unicode_space(char32_t c) {
  return c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {  // escaped as \xNN
      ++i;
      continue;
    }
    const char32_t c = utf8_code_point(s, i, n);
    if (c == ' ' || c == '"' || c == '=' || is_unicode_space(c)) return true;
    i += n;
  }
  return false;
}

// The last value of `name`, or nullopt.
std::optional<std::string> find(const Fields& fields, const std::string& name) {
  for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return std::nullopt;
}

// fired_ms - due_ms when both are integers, the difference fits, and lateness applies (not for
// a task scheduled at or after its due time: lateness_applies).
std::optional<long long> late_ms(const Fields& fields) {
  const auto due = find(fields, entry_field::kDueMs);
  const auto fired = find(fields, entry_field::kFiredMs);
  if (!due || !fired) return std::nullopt;
  const auto d = to_integer(*due);
  const auto f = to_integer(*fired);
  long long late = 0;
  if (!d || !f || __builtin_sub_overflow(*f, *d, &late)) return std::nullopt;
  const auto created = find(fields, entry_field::kCreatedMs);
  const std::optional<long long> created_ms = created ? to_integer(*created) : std::nullopt;
  if (!lateness_applies(created_ms, *d)) return std::nullopt;
  return late;
}

// (ms, seq) of an entry id, or nullopt when it is not one.
std::optional<std::pair<unsigned long long, unsigned long long>> parse_entry_id(std::string_view id) {
  auto number = [](std::string_view s) -> std::optional<unsigned long long> {
    if (s.empty() || s.size() > 20) return std::nullopt;
    unsigned long long v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      const unsigned long long next = v * 10 + static_cast<unsigned long long>(c - '0');
      if (next / 10 != v) return std::nullopt;  // overflow
      v = next;
    }
    return v;
  };
  const auto dash = id.find('-');
  const auto ms = number(id.substr(0, dash));
  if (!ms) return std::nullopt;
  if (dash == std::string_view::npos) return std::make_pair(*ms, 0ULL);
  const auto seq = number(id.substr(dash + 1));
  if (!seq) return std::nullopt;
  return std::make_pair(*ms, *seq);
}

}  // namespace

std::string format_entry_token(std::string_view s) {
  const std::string escaped = escape_text_reversible(s);
  if (!needs_quotes(s)) return escaped;
  std::string out = "\"";
  for (char c : escaped) {
    if (c == '"') out += '\\';
    out.push_back(c);
  }
  out += '"';
  return out;
}

std::string format_stream_entry(const std::string& entry_id, const Fields& fields) {
  std::string out = format_entry_token(entry_id);
  auto add = [&out](const std::string& name, const std::string& value) {
    out += " " + format_entry_token(name) + "=" + format_entry_token(value);
  };
  static const std::vector<std::string> kLeading = {entry_field::kId, entry_field::kVia, entry_field::kDueMs,
                                                     entry_field::kFiredMs};
  for (const auto& name : kLeading) {
    if (auto v = find(fields, name)) add(name, *v);
  }
  if (auto late = late_ms(fields)) add("late_ms", std::to_string(*late));
  for (const auto& [name, value] : fields) {
    const bool leading = std::find(kLeading.begin(), kLeading.end(), name) != kLeading.end();
    if (name == entry_field::kPayload || leading) continue;
    add(name, value);
  }
  if (auto payload = find(fields, entry_field::kPayload)) {
    out += std::string(" ") + entry_field::kPayload + "=" + escape_text_reversible(*payload);
  }
  return out;
}

std::string format_stream_entry_json(const std::string& entry_id, const Fields& fields) {
  nlohmann::ordered_json text = nlohmann::ordered_json::object();
  nlohmann::ordered_json b64 = nlohmann::ordered_json::object();
  for (const auto& [name, value] : fields) {
    // A later duplicate replaces the earlier value, wherever that went.
    text.erase(name);
    b64.erase(name);
    if (first_invalid_utf8(value) == std::string_view::npos) {
      text[name] = value;
    } else {
      b64[name] = base64_encode(value);
    }
  }
  nlohmann::ordered_json out = {{"entry_id", entry_id}, {"late_ms", nullptr}, {"fields", std::move(text)}};
  if (auto late = late_ms(fields)) out["late_ms"] = *late;
  if (!b64.empty()) out["fields_b64"] = std::move(b64);
  return out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool entry_id_before(std::string_view a, std::string_view b) {
  const auto pa = parse_entry_id(a);
  const auto pb = parse_entry_id(b);
  if (pa && pb) return *pa < *pb;
  if (pa != pb && (pa || pb)) return pa.has_value();
  return a < b;
}

}  // namespace expiry
