// See task_options.h.
#include "functions/task_options.h"

namespace expiry {

namespace {
bool is_lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool all_zero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

constexpr long long kMaxMs = 253402300799999;  // the library's largest millisecond value
}  // namespace

std::optional<std::string> traceparent_error(std::string_view tp) {
  if (tp.size() != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || !is_lower_hex(tp.substr(0, 2)) ||
      !is_lower_hex(tp.substr(3, 32)) || !is_lower_hex(tp.substr(36, 16)) || !is_lower_hex(tp.substr(53, 2))) {
    return "traceparent must be W3C trace context: 2-32-16-2 lowercase hex digits joined by \"-\" "
           "(e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01)";
  }
  if (tp.substr(0, 2) == "ff") return "traceparent version ff is invalid";
  if (all_zero(tp.substr(3, 32))) return "traceparent trace id is all zeros";
  if (all_zero(tp.substr(36, 16))) return "traceparent parent id is all zeros";
  return std::nullopt;
}

std::optional<std::string> webhook_name_error(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name) {
    ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                c == '-');
  }
  if (ok) return std::nullopt;
  return "webhook must be an endpoint name of 1..64 characters [A-Za-z0-9_.-]";
}

std::optional<std::string> task_options_error(const TaskOptions& options) {
  if (options.if_absent && options.debounce_max_ms) return "if-absent and debounce-max-ms exclude each other";
  if (options.debounce_max_ms && (*options.debounce_max_ms < 1 || *options.debounce_max_ms > kMaxMs)) {
    return "debounce-max-ms must be 1.." + std::to_string(kMaxMs);
  }
  if (options.max_late_ms && (*options.max_late_ms < 0 || *options.max_late_ms > kMaxMs)) {
    return "max-late-ms must be 0.." + std::to_string(kMaxMs);
  }
  if (options.traceparent) {
    if (auto e = traceparent_error(*options.traceparent)) return e;
  }
  if (options.webhook) return webhook_name_error(*options.webhook);
  return std::nullopt;
}

std::string task_options_argument(const TaskOptions& options) {
  std::string out;
  auto add = [&out](const std::string& token) {
    if (!out.empty()) out += ' ';
    out += token;
  };
  if (options.if_absent) add("if_absent");
  if (options.debounce_max_ms) add("debounce_max_ms=" + std::to_string(*options.debounce_max_ms));
  if (options.max_late_ms) add("max_late_ms=" + std::to_string(*options.max_late_ms));
  if (options.traceparent) add("traceparent=" + *options.traceparent);
  if (options.webhook) add("webhook=" + *options.webhook);
  return out;
}

}  // namespace expiry
