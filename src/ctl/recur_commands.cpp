// See recur_commands.h.
#include "ctl/recur_commands.h"

#include <chrono>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "inspector/inspector.h"
#include "producer/recurring_schedules.h"
#include "recur/occurrence_format.h"
#include "recur/recur_spec.h"
#include "recur/time_text.h"

namespace expiry {

namespace {

constexpr int kShowNext = 5;

int not_found(const std::string& id) {
  std::cout << "no recurring schedule: " << escape_text(id) << "\n";
  return kExitNotPending;
}

void print_definition(const RecurringSchedule& s) {
  const std::string state = s.paused() ? "paused" : (s.field("ended") == "1" && s.next.empty() ? "ended" : "active");
  std::cout << "id: " << escape_text(s.id) << "\n"
            << "rule: " << escape_text(s.field("rule")) << "\n"
            << "tz: " << escape_text(s.field("tz")) << "\n"
            << "state: " << state << "\n"
            << "misfire: " << s.field("misfire") << " (grace " << s.field("grace_ms") << " ms"
            << (s.field("misfire") == "all" ? ", at most " + s.field("misfire_max") + " catch-ups" : "") << ")\n";
  for (const char* name : {"start_ms", "end_ms", "max_late_ms", "stream", "webhook"}) {
    if (!s.field(name).empty()) std::cout << name << ": " << escape_text(s.field(name)) << "\n";
  }
  std::cout << "fired: " << s.field("fired") << "\n"
            << "skipped: " << s.field("skipped") << "\n"
            << "version: " << s.field("version") << "\n"
            << "payload: " << escape_text(s.field("payload")) << "\n"
            << "next:\n";
  for (const auto& o : s.next) std::cout << "  " << o.utc_iso << " " << o.local_iso << "\n";
}

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

int run_recur_set(const CtlTarget& target, const RecurSetOptions& o) {
  check_recur_id(o.id);
  if (auto err = recur_misfire_error(o.write.misfire)) throw ConfigError("--misfire: " + *err);
  CtlSession session(target);
  const RecurringSetOutcome out = Inspector(session.producer).recurring_schedules().set(o.id, o.write, kRecurFlagNames);
  std::cout << (out.result.replaced ? "replaced " : "created ") << escape_text(o.id) << " version=" << out.result.version
            << " rule='" << escape_text(out.rule_text) << "' tz=" << out.zone.name();
  if (out.result.armed_ms >= 0) {
    std::cout << " next=" << format_utc_iso(out.result.armed_ms) << " ("
              << format_local_iso(out.result.armed_ms, out.zone) << ")";
  }
  std::cout << "\n";
  return kExitOk;
}

int run_recur_show(const CtlTarget& target, const std::string& id, bool json) {
  check_recur_id(id);
  CtlSession session(target);
  const auto schedule = Inspector(session.producer).recurring_schedules().get(id, kShowNext);
  if (!schedule) return not_found(id);
  if (json) {
    std::cout << json_dump(recurring_schedule_json(*schedule)) << "\n";
  } else {
    print_definition(*schedule);
  }
  return kExitOk;
}

int run_recur_list(const CtlTarget& target, bool json) {
  CtlSession session(target);
  nlohmann::json all = nlohmann::json::array();
  Inspector(session.producer).recurring_schedules().for_each([&](const RecurringSchedule& s) {
    if (json) {
      all.push_back(recurring_schedule_json(s));
    } else {
      // A paused schedule has no next occurrence until it is resumed.
      std::cout << escape_text(s.id) << " rule='" << escape_text(s.field("rule")) << "' tz=" << s.field("tz")
                << " next=" << (s.next.empty() ? std::string("-") : s.next.front().local_iso)
                << (s.paused() ? " paused" : "") << " fired=" << s.field("fired") << "\n";
    }
    return true;
  }, kShowNext);
  if (json) std::cout << json_dump(all) << "\n";
  return kExitOk;
}

int run_recur_delete(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  if (!Inspector(session.producer).recurring_schedules().remove(id)) return not_found(id);
  std::cout << "deleted " << escape_text(id) << "\n";
  return kExitOk;
}

int run_recur_pause(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  const RecurStateResult r = Inspector(session.producer).recurring_schedules().pause(id);
  if (!r.exists) return not_found(id);
  std::cout << (r.changed ? "paused " : "already paused: ") << escape_text(id) << "\n";
  return kExitOk;
}

int run_recur_resume(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  const RecurringResumeOutcome r = Inspector(session.producer).recurring_schedules().resume(id);
  if (!r.state.exists) return not_found(id);
  std::cout << (r.state.changed ? "resumed " : "not paused: ") << escape_text(id);
  if (r.state.armed_ms >= 0) {
    std::cout << " next=" << format_utc_iso(r.state.armed_ms) << " ("
              << format_local_iso(r.state.armed_ms, TimeZone::find(r.tz)) << ")";
  }
  std::cout << "\n";
  return kExitOk;
}

int run_recur_preview(const RecurPreviewOptions& o) {
  if (o.count < 1 || o.count > 100000) throw ConfigError("--count must be 1..100000");
  const long long from = o.from ? parse_time_arg(*o.from, TimeZone::find(o.rule.tz)) : wall_clock_ms();
  const auto occurrences =
      preview_recur_rule(o.rule, from, static_cast<size_t>(o.count), kRecurFlagNames);
  if (o.json) {
    std::cout << occurrences_json(occurrences).dump() << "\n";
  } else {
    std::cout << occurrence_lines(occurrences);
  }
  return kExitOk;
}

}  // namespace expiry
