// See wake_message.h.
#include "functions/wake_message.h"

#include "base/integers.h"

namespace expiry {

std::optional<WakeMessage> parse_wake_message(std::string_view text) {
  if (text == "recur") return WakeMessage{0, true, std::nullopt};
  const size_t at = text.find('@');
  const std::optional<long long> due = parse_int64(text.substr(0, at));
  if (!due) return std::nullopt;
  WakeMessage wake{*due, false, std::nullopt};
  if (at == std::string_view::npos) return wake;
  const std::string_view db_text = text.substr(at + 1);
  if (db_text.empty() || db_text.front() == '-') return std::nullopt;
  const std::optional<long long> db = parse_int64(db_text);
  if (!db || *db > kMaxWakeDb) return std::nullopt;
  wake.db = static_cast<int>(*db);
  return wake;
}

}  // namespace expiry
