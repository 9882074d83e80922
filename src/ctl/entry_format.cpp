// Stream entry rendering; see entry_format.h.
#include "ctl/entry_format.h"

#include <algorithm>
#include <optional>

#include "ctl/redis_values.h"
#include "text_escape.h"

namespace expiry {

std::string format_stream_entry(const std::string& entry_id,
                                const std::vector<std::pair<std::string, std::string>>& fields) {
  auto find = [&](const std::string& name) -> std::optional<std::string> {
    for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    return std::nullopt;
  };
  std::string out = escape_text(entry_id);
  auto add = [&out](const std::string& name, const std::string& value) {
    out += " " + escape_text(name) + "=" + escape_text(value);
  };
  static const std::vector<std::string> kLeading = {"id", "via", "due_ms", "fired_ms"};
  for (const auto& name : kLeading) {
    if (auto v = find(name)) add(name, *v);
  }
  const auto due = find("due_ms");
  const auto fired = find("fired_ms");
  if (due && fired) {
    const auto d = to_integer(*due);
    const auto f = to_integer(*fired);
    long long late = 0;
    if (d && f && !__builtin_sub_overflow(*f, *d, &late)) add("late_ms", std::to_string(late));
  }
  for (const auto& [name, value] : fields) {
    if (name == "payload" || std::find(kLeading.begin(), kLeading.end(), name) != kLeading.end()) continue;
    add(name, value);
  }
  if (auto payload = find("payload")) add("payload", *payload);
  return out;
}

}  // namespace expiry
