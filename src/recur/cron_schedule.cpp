// See cron_schedule.h.
#include "recur/cron_schedule.h"

#include <cctype>
#include <vector>

#include "base/errors.h"
#include "recur/civil_search.h"

namespace expiry {
namespace {

struct FieldSpec {
  const char* name;                  // as error messages call it
  int min;
  int max;                           // 7 for the weekday: 0 and 7 are Sunday
  const char* const* names;          // names for min, min+1, ... or nullptr
  bool question_is_star;             // "?" means "*" (the day fields)
};

const char* const kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* const kWeekdayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

const FieldSpec kSecond{"second", 0, 59, nullptr, false};
const FieldSpec kMinute{"minute", 0, 59, nullptr, false};
const FieldSpec kHour{"hour", 0, 23, nullptr, false};
const FieldSpec kDayOfMonth{"day-of-month", 1, 31, nullptr, true};
const FieldSpec kMonth{"month", 1, 12, kMonthNames, false};
const FieldSpec kDayOfWeek{"day-of-week", 0, 7, kWeekdayNames, true};

struct Macro {
  const char* name;
  const char* canonical;             // the macro's name in the canonical text
  const char* fields;
};

const Macro kMacros[] = {
    {"@yearly", "@yearly", "0 0 1 1 *"},   {"@annually", "@yearly", "0 0 1 1 *"},
    {"@monthly", "@monthly", "0 0 1 * *"}, {"@weekly", "@weekly", "0 0 * * 0"},
    {"@daily", "@daily", "0 0 * * *"},     {"@midnight", "@daily", "0 0 * * *"},
    {"@hourly", "@hourly", "0 * * * *"},
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

[[noreturn]] void fail_field(const FieldSpec& spec, std::string_view text, const std::string& problem) {
  throw ConfigError("cron: " + std::string(spec.name) + " field '" + std::string(text) + "' " + problem);
}

std::string range_text(const FieldSpec& spec) {
  return std::to_string(spec.min) + "-" + std::to_string(spec.max);
}

// A number or (for months and weekdays) a three-letter name, within the field's range.
int parse_value(const FieldSpec& spec, std::string_view text) {
  if (all_digits(text)) {
    if (text.size() > 2) fail_field(spec, text, "is out of range " + range_text(spec));
    const int value = std::stoi(std::string(text));
    if (value < spec.min || value > spec.max) fail_field(spec, text, "is out of range " + range_text(spec));
    return value;
  }
  if (spec.names != nullptr) {
    const std::string name = upper(text);
    const int count = spec.max - spec.min + 1 - (spec.max == 7 ? 1 : 0);
    for (int i = 0; i < count; ++i) {
      if (name == spec.names[i]) return spec.min + i;
    }
    fail_field(spec, text, spec.max == 7 ? "is not a weekday number 0-7 or name SUN-SAT"
                                         : "is not a month number 1-12 or name JAN-DEC");
  }
  fail_field(spec, text, "is not a number");
}

// One comma-separated element: "*", "N", "A-B", "*/S", "A-B/S" or "A/S". Sets its values in `bits`
// (indexed by value; a weekday 7 is set as 0 by the caller).
void parse_element(const FieldSpec& spec, std::string_view element, std::vector<bool>& bits) {
  std::string_view base = element;
  int step = 1;
  const size_t slash = element.find('/');
  if (slash != std::string_view::npos) {
    base = element.substr(0, slash);
    const std::string_view step_text = element.substr(slash + 1);
    const int width = spec.max - spec.min + 1;
    if (!all_digits(step_text) || step_text.size() > 2 || std::stoi(std::string(step_text)) < 1 ||
        std::stoi(std::string(step_text)) > width) {
      fail_field(spec, element, "has a step that is not a number 1-" + std::to_string(width));
    }
    step = std::stoi(std::string(step_text));
  }
  int first = 0;
  int last = 0;
  if (base == "*" || (spec.question_is_star && base == "?")) {
    if (base == "?" && slash != std::string_view::npos) fail_field(spec, element, "steps '?', which only stands alone");
    first = spec.min;
    last = spec.max;
  } else if (const size_t dash = base.find('-'); dash != std::string_view::npos) {
    if (dash == 0 || dash + 1 == base.size()) fail_field(spec, element, "is an incomplete range");
    first = parse_value(spec, base.substr(0, dash));
    last = parse_value(spec, base.substr(dash + 1));
    // FRI-SUN: a range may end on Sunday named as 7.
    if (spec.max == 7 && last == 0 && first > 0) last = 7;
    if (last < first) fail_field(spec, element, "is a backwards range");
  } else {
    first = parse_value(spec, base);
    last = slash != std::string_view::npos ? spec.max : first;
  }
  for (int v = first; v <= last; v += step) bits[static_cast<size_t>(v)] = true;
}

// A whole field: its values, indexed by value.
std::vector<bool> parse_field(const FieldSpec& spec, std::string_view text) {
  std::vector<bool> bits(static_cast<size_t>(spec.max) + 1, false);
  if (text == "?" && !spec.question_is_star) {
    fail_field(spec, text, "is not allowed ('?' is for the day-of-month and day-of-week fields)");
  }
  for (std::string_view element : split(text, ',')) {
    if (element.empty()) fail_field(spec, text, "has an empty list element");
    parse_element(spec, element, bits);
  }
  return bits;
}

template <size_t N>
void assign(std::bitset<N>& out, const std::vector<bool>& bits) {
  for (size_t i = 0; i < bits.size() && i < N; ++i) out[i] = bits[i];
}

std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  return fields;
}

std::string canonical_field(std::string_view text) {
  std::string out = upper(text);
  for (char& c : out) {
    if (c == '?') c = '*';
  }
  return out;
}

}  // namespace

bool CronSchedule::matches_day(unsigned month, unsigned day, unsigned weekday) const {
  if (!months[month]) return false;
  const bool dom = days_of_month[day];
  const bool dow = days_of_week[weekday];
  return dom_star || dow_star ? dom && dow : dom || dow;
}

CronSchedule parse_cron_schedule(std::string_view text) {
  std::vector<std::string_view> fields = split_fields(text);
  std::string macro_name;
  if (fields.size() == 1 && fields[0].front() == '@') {
    const std::string name = [&] {
      std::string lower(fields[0]);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return lower;
    }();
    const Macro* found = nullptr;
    for (const Macro& macro : kMacros) {
      if (name == macro.name) found = &macro;
    }
    if (found == nullptr) {
      throw ConfigError("cron: unknown macro '" + std::string(fields[0]) +
                        "' (known: @yearly @annually @monthly @weekly @daily @midnight @hourly)");
    }
    macro_name = found->canonical;
    fields = split_fields(found->fields);
  }
  if (fields.size() != 5 && fields.size() != 6) {
    throw ConfigError("cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds "
                      "first), or a macro such as @daily, got " + std::to_string(fields.size()) + " in '" +
                      std::string(text) + "'");
  }
  const bool with_seconds = fields.size() == 6;
  const size_t at = with_seconds ? 1 : 0;
  CronSchedule schedule;
  if (with_seconds) {
    assign(schedule.seconds, parse_field(kSecond, fields[0]));
  } else {
    schedule.seconds.set(0);
  }
  assign(schedule.minutes, parse_field(kMinute, fields[at]));
  assign(schedule.hours, parse_field(kHour, fields[at + 1]));
  assign(schedule.days_of_month, parse_field(kDayOfMonth, fields[at + 2]));
  assign(schedule.months, parse_field(kMonth, fields[at + 3]));
  std::vector<bool> weekdays = parse_field(kDayOfWeek, fields[at + 4]);
  if (weekdays[7]) weekdays[0] = true;
  assign(schedule.days_of_week, weekdays);
  schedule.dom_star = fields[at + 2].front() == '*' || fields[at + 2].front() == '?';
  schedule.dow_star = fields[at + 4].front() == '*' || fields[at + 4].front() == '?';
  schedule.fixed_time = all_digits(fields[at]) && all_digits(fields[at + 1]) && (!with_seconds || all_digits(fields[0]));
  if (!macro_name.empty()) {
    schedule.text = macro_name;
  } else {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) schedule.text += ' ';
      schedule.text += canonical_field(fields[i]);
    }
  }
  // Civil time only: any 400 consecutive Gregorian years hold every calendar pattern there is.
  const LocalSeconds from{946684800};  // 2000-01-01T00:00:00
  if (!next_civil_match(schedule, from, civil_search_limit(from))) {
    throw ConfigError("cron: '" + schedule.text + "' never fires (no day matches its day and month fields)");
  }
  return schedule;
}

}  // namespace expiry
