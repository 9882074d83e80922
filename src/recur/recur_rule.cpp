// See recur_rule.h.
#include "recur/recur_rule.h"

#include <cctype>

#include "base/duration_text.h"
#include "base/errors.h"
#include "recur/time_text.h"

namespace expiry {
namespace {

constexpr std::string_view kEvery = "@every";

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool starts_with_every(std::string_view text) {
  if (text.size() < kEvery.size()) return false;
  for (size_t i = 0; i < kEvery.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != kEvery[i]) return false;
  }
  return text.size() == kEvery.size() || text[kEvery.size()] == ' ' || text[kEvery.size()] == '\t';
}

std::string period_text(std::chrono::milliseconds period) {
  const long long ms = period.count();
  if (ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace

RecurRule parse_recur_rule(std::string_view text, PeriodParser parse_period, std::int64_t anchor_ms) {
  const std::string_view rule = trim(text);
  if (!starts_with_every(rule)) return parse_cron_schedule(rule);
  const std::string_view period = trim(rule.substr(kEvery.size()));
  const std::optional<long long> ms = parse_period(period);
  if (!ms || *ms <= 0) {
    throw ConfigError("every: '" + std::string(period) + "' is not a period such as 30s, 15m or 2h");
  }
  return IntervalSchedule{std::chrono::milliseconds{*ms}, anchor_ms};
}

std::optional<std::string> interval_flag_error(std::string_view period, bool allow_sub_second) {
  const std::string_view text = trim(period);
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text.back()))) {
    return "'" + std::string(text) + "' needs a unit, such as 30s, 15m or 2h (a bare number would mean milliseconds)";
  }
  const std::optional<long long> ms = parse_duration_ms(text);
  if (!ms || *ms <= 0) return "'" + std::string(text) + "' is not a period such as 30s, 15m or 2h";
  if (*ms < 1000 && !allow_sub_second) {
    return "'" + std::string(text) + "' is below 1s: each schedule would add more than one entry a second "
           "(pass --allow-sub-second to mean it)";
  }
  return std::nullopt;
}

std::string canonical_text(const RecurRule& rule) {
  if (const auto* interval = std::get_if<IntervalSchedule>(&rule)) {
    return std::string(kEvery) + " " + period_text(interval->period);
  }
  return std::get<CronSchedule>(rule).text;
}

std::string describe(const RecurRule& rule) {
  if (const auto* interval = std::get_if<IntervalSchedule>(&rule)) {
    return "interval '" + canonical_text(rule) + "' from " + format_utc_iso(interval->anchor_ms);
  }
  const CronSchedule& cron = std::get<CronSchedule>(rule);
  return "cron '" + cron.text + "'" + (cron.fixed_time ? " (fixed time: once per local day)" : "");
}

}  // namespace expiry
