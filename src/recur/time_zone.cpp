// See time_zone.h.
#include "recur/time_zone.h"

#include <date/tz.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "base/did_you_mean.h"
#include "base/errors.h"

namespace expiry {
namespace {

using SysSeconds = date::sys_seconds;

std::int64_t epoch_s(SysSeconds t) { return t.time_since_epoch().count(); }

// date's "no transition" bounds (years -32767 and 32767) as far as int64 seconds go.
std::int64_t clamp_epoch_s(SysSeconds t) {
  return std::clamp<std::int64_t>(epoch_s(t), std::numeric_limits<std::int64_t>::min() / 4,
                                  std::numeric_limits<std::int64_t>::max() / 4);
}

// The names a rule may use, for a did-you-mean: the database's zones in its (sorted) order,
// less the names time_zone_name_error refuses. Read from the system's tzdata (USE_OS_TZDB),
// each file is a zone, links such as US/Eastern included.
std::vector<std::string> usable_zone_names(const date::tzdb& db) {
  std::vector<std::string> names;
  names.reserve(db.zones.size());
  for (const auto& zone : db.zones) names.push_back(zone.name());
  names.erase(std::remove_if(names.begin(), names.end(),
                             [](const std::string& n) { return time_zone_name_error(n).has_value(); }),
              names.end());
  return names;
}

}  // namespace

std::optional<std::string> time_zone_name_error(std::string_view name) {
  const auto starts_with = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (name == "localtime" || name == "posixrules" || name == "Factory" || starts_with("posix/") ||
      starts_with("right/")) {
    return "'" + std::string(name) + "' is not an IANA time zone name the same on every machine; name the place, " +
           "such as Europe/Berlin, America/New_York or UTC";
  }
  return std::nullopt;
}

TimeZone TimeZone::utc() { return find("UTC"); }

TimeZone TimeZone::find(std::string_view name) {
  const std::string text(name);
  const date::tzdb* db = nullptr;
  try {
    db = &date::get_tzdb();  // read once, on first use
  } catch (const std::exception& e) {
    throw ConfigError(std::string("the time zone database cannot be read (is tzdata installed?): ") + e.what());
  }
  try {
    return TimeZone(date::locate_zone(text), text);
  } catch (const std::runtime_error&) {  // "X not found in timezone database"
    const auto meant = closest_name(text, usable_zone_names(*db));
    throw ConfigError("unknown time zone '" + text + "'" + (meant ? "; did you mean '" + *meant + "'?" : ""));
  }
}

ZoneSpan TimeZone::span_at(std::int64_t utc_s) const {
  const date::sys_info info = zone_->get_info(SysSeconds{std::chrono::seconds{utc_s}});
  return ZoneSpan{clamp_epoch_s(info.begin), clamp_epoch_s(info.end), info.offset};
}

LocalMapping TimeZone::map_local(LocalSeconds local) const {
  const date::local_seconds when{local};
  const date::local_info info = zone_->get_info(when);
  LocalMapping mapping{};
  switch (info.result) {
    case date::local_info::unique:
      mapping.kind = LocalMapping::Kind::Unique;
      mapping.earliest_s = local.count() - info.first.offset.count();
      break;
    case date::local_info::nonexistent:
      mapping.kind = LocalMapping::Kind::Nonexistent;
      mapping.transition_s = clamp_epoch_s(info.first.end);
      mapping.gap = info.second.offset - info.first.offset;
      break;
    case date::local_info::ambiguous:
      mapping.kind = LocalMapping::Kind::Ambiguous;
      mapping.earliest_s = local.count() - info.first.offset.count();
      mapping.latest_s = local.count() - info.second.offset.count();
      break;
  }
  return mapping;
}

}  // namespace expiry
