// See recur_commands.h.
#include "ctl/recur_commands.h"

#include <chrono>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/duration_text.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "functions/key_layout.h"
#include "functions/recur_calls.h"
#include "functions/task_options.h"
#include "producer/task_placement.h"
#include "recur/occurrence_format.h"
#include "recur/occurrences.h"
#include "recur/recur_plan.h"
#include "recur/time_text.h"
#include "redis/redis_time.h"

namespace expiry {

namespace {

constexpr int kShowNext = 5;
constexpr int kListPage = 500;
// The longest recurring schedule id (MAX_RECUR_ID_BYTES in src/lua/expiry/recur.lua): a retry's
// "#<occurrence_ms>" must still fit a task id.
constexpr size_t kMaxRecurIdBytes = 200;

long long wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct ParsedRule {
  RecurRule rule;
  TimeZone zone;
  std::string text;  // canonical_text: what the definition stores
  std::optional<long long> start_ms;
  std::optional<long long> end_ms;
};

// The rule of --cron / --every in --tz with --start / --end. An interval is anchored at --start,
// else at `anchor_ms` (which becomes its start). Throws ConfigError.
ParsedRule parse_rule_flags(const RecurRuleFlags& flags, long long anchor_ms) {
  if (flags.cron.has_value() == flags.every.has_value()) throw ConfigError("give exactly one of --cron and --every");
  if (auto err = time_zone_name_error(flags.tz)) throw ConfigError("--tz: " + *err);
  TimeZone zone = TimeZone::find(flags.tz);
  std::optional<long long> start, end;
  if (flags.start) start = parse_time_arg(*flags.start, zone);
  if (flags.end) end = parse_time_arg(*flags.end, zone);
  if (start && end && *end < *start) throw ConfigError("--end lies before --start");
  std::string text;
  if (flags.cron) {
    text = *flags.cron;
  } else {
    if (auto err = interval_flag_error(*flags.every, flags.allow_sub_second)) throw ConfigError("--every: " + *err);
    text = "@every " + *flags.every;
    if (!start) start = anchor_ms;
  }
  RecurRule rule = parse_recur_rule(text, &parse_duration_ms, start.value_or(0));
  return {rule, zone, canonical_text(rule), start, end};
}

std::optional<int> call_db(const CtlSession& session) {
  if (session.layout.cluster) return std::nullopt;
  return session.layout.db;
}

Reply call_on_bucket_of(CtlSession& session, std::string_view id, const std::vector<std::string>& argv) {
  Reply reply = session.redis.fcall(argv, session.layout.slot_of_task(id));
  if (reply.type == Reply::Type::Error && reply.str.rfind("ERR expiry: ", 0) == 0) {
    // The library refused the input (a one-off task with this id, a bad field): nothing written.
    throw ConfigError(reply.str.substr(12));
  }
  if (reply.failed()) throw ReplyError(reply.describe());
  return reply;
}

long long redis_now_ms(CtlSession& session, std::string_view id) {
  const Reply time = session.redis.command({"TIME"}, session.layout.slot_of_task(id));
  if (const auto ms = time_reply_ms(time)) return *ms;
  return wall_now_ms();
}

void check_recur_id(const std::string& id) {
  if (auto err = task_id_error(id)) throw ConfigError(*err);
  if (id.size() > kMaxRecurIdBytes) {
    throw ConfigError("a recurring schedule id is at most " + std::to_string(kMaxRecurIdBytes) + " bytes");
  }
}

std::map<std::string, std::string> get_definition(CtlSession& session, const std::string& id) {
  const KeyLayout keys = session.layout.keys_of_task(id);
  const auto fields = decode_recur_get(call_on_bucket_of(session, id, recur_get_argv(keys, id)));
  if (!fields) throw ReplyError("unexpected reply to expiry_v2_recur_get");
  return *fields;
}

std::string field(const std::map<std::string, std::string>& def, const std::string& name) {
  auto it = def.find(name);
  return it == def.end() ? std::string() : it->second;
}

std::optional<long long> number_field(const std::map<std::string, std::string>& def, const std::string& name) {
  const std::string text = field(def, name);
  if (text.empty()) return std::nullopt;
  return std::stoll(text);
}

// The next kShowNext occurrences of a stored definition: its armed one, then those after it.
std::vector<Occurrence> next_of_definition(const std::map<std::string, std::string>& def, long long now_ms) {
  const TimeZone zone = TimeZone::find(field(def, "tz"));
  const RecurRule rule = stored_recur_rule(field(def, "rule"), number_field(def, "start_ms"));
  OccurrenceQuery query;
  const auto armed = number_field(def, "armed_ms");
  query.after_ms = armed ? *armed - 1 : std::max(now_ms, number_field(def, "last_ms").value_or(now_ms));
  query.start_ms = number_field(def, "start_ms");
  query.end_ms = number_field(def, "end_ms");
  query.limit = kShowNext;
  return next_occurrences(rule, zone, query);
}

nlohmann::json definition_json(const std::string& id, const std::map<std::string, std::string>& def,
                               const std::vector<Occurrence>& next) {
  nlohmann::json j;
  j["id"] = id;
  for (const char* name : {"rule", "tz", "payload", "stream", "webhook", "misfire", "version"}) j[name] = field(def, name);
  for (const char* name : {"start_ms", "end_ms", "max_late_ms", "grace_ms", "misfire_max", "last_ms", "armed_ms",
                           "fired", "skipped", "created_ms", "updated_ms"}) {
    const auto n = number_field(def, name);
    j[name] = n ? nlohmann::json(*n) : nlohmann::json(nullptr);
  }
  j["paused"] = field(def, "paused") == "1";
  j["ended"] = field(def, "ended") == "1";
  j["next"] = nlohmann::json::array();
  for (const auto& o : next) j["next"].push_back({{"utc_ms", o.utc_ms}, {"utc", o.utc_iso}, {"local", o.local_iso}});
  return j;
}

void print_definition(const std::string& id, const std::map<std::string, std::string>& def,
                      const std::vector<Occurrence>& next) {
  std::cout << "id: " << escape_text(id) << "\n"
            << "rule: " << escape_text(field(def, "rule")) << "\n"
            << "tz: " << escape_text(field(def, "tz")) << "\n"
            << "state: "
            << (field(def, "paused") == "1" ? "paused" : (field(def, "ended") == "1" && next.empty() ? "ended" : "active"))
            << "\n"
            << "misfire: " << field(def, "misfire") << " (grace " << field(def, "grace_ms") << " ms"
            << (field(def, "misfire") == "all" ? ", at most " + field(def, "misfire_max") + " catch-ups" : "") << ")\n";
  for (const char* name : {"start_ms", "end_ms", "max_late_ms", "stream", "webhook"}) {
    if (!field(def, name).empty()) std::cout << name << ": " << escape_text(field(def, name)) << "\n";
  }
  std::cout << "fired: " << field(def, "fired") << "\n"
            << "skipped: " << field(def, "skipped") << "\n"
            << "version: " << field(def, "version") << "\n"
            << "payload: " << escape_text(field(def, "payload")) << "\n"
            << "next:\n";
  for (const auto& o : next) std::cout << "  " << o.utc_iso << " " << o.local_iso << "\n";
}

}  // namespace

int run_recur_set(const CtlTarget& target, const RecurSetOptions& o) {
  check_recur_id(o.id);
  if (o.misfire != "skip" && o.misfire != "once" && o.misfire != "all") {
    throw ConfigError("--misfire must be skip, once or all; got '" + escape_text(o.misfire) + "'");
  }
  if (auto err = webhook_name_error(o.webhook); err && !o.webhook.empty()) throw ConfigError(*err);
  const long long wall = wall_now_ms();
  ParsedRule parsed = parse_rule_flags(o.rule, wall - wall % 1000);
  if (parsed.end_ms && *parsed.end_ms <= wall) throw ConfigError("--end lies in the past: the schedule would never fire");
  CtlSession session(target);
  const long long now = redis_now_ms(session, o.id);
  const std::vector<RecurInstant> instants =
      recur_instants(parsed.rule, parsed.zone, now, parsed.start_ms, parsed.end_ms);
  if (instants.empty()) throw ConfigError("the rule has no occurrence between --start and --end; nothing was written");
  RecurDefinition def;
  def.rule = parsed.text;
  def.tz = parsed.zone.name();
  def.start_ms = parsed.start_ms;
  def.end_ms = parsed.end_ms;
  def.payload = o.payload;
  def.stream = o.stream;
  def.webhook = o.webhook;
  def.max_late_ms = o.max_late_ms;
  def.misfire = o.misfire;
  def.grace_ms = o.misfire_grace_ms;
  def.misfire_max = o.misfire_max;
  const KeyLayout keys = session.layout.keys_of_task(o.id);
  const auto result = decode_recur_set(
      call_on_bucket_of(session, o.id, recur_set_argv(keys, o.id, def, instants, call_db(session))));
  if (!result) throw ReplyError("unexpected reply to expiry_v2_recur_set");
  std::cout << (result->replaced ? "replaced " : "created ") << escape_text(o.id) << " version=" << result->version
            << " rule='" << escape_text(def.rule) << "' tz=" << def.tz;
  if (result->armed_ms >= 0) {
    std::cout << " next=" << format_utc_iso(result->armed_ms) << " (" << format_local_iso(result->armed_ms, parsed.zone)
              << ")";
  }
  std::cout << "\n";
  return kExitOk;
}

int run_recur_show(const CtlTarget& target, const std::string& id, bool json) {
  check_recur_id(id);
  CtlSession session(target);
  const auto def = get_definition(session, id);
  if (def.empty()) {
    std::cout << "no recurring schedule: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  const auto next = next_of_definition(def, redis_now_ms(session, id));
  if (json) {
    std::cout << definition_json(id, def, next).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_definition(id, def, next);
  }
  return kExitOk;
}

int run_recur_list(const CtlTarget& target, bool json) {
  CtlSession session(target);
  nlohmann::json all = nlohmann::json::array();
  for (int b = 0; b < session.layout.buckets; ++b) {
    const KeyLayout keys(session.layout.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    std::string cursor = "0";
    do {
      Reply reply = session.redis.fcall(recur_list_argv(keys, cursor, kListPage), slot);
      if (reply.failed()) throw ReplyError(reply.describe());
      const auto page = decode_recur_list(reply);
      if (!page) throw ReplyError("unexpected reply to expiry_v2_recur_list");
      for (const std::string& id : page->ids) {
        const auto def = get_definition(session, id);
        if (def.empty()) continue;  // deleted meanwhile
        std::vector<Occurrence> next;
        try {
          next = next_of_definition(def, wall_now_ms());
        } catch (const ConfigError&) {
          // A definition whose rule or zone does not read back here: listed without its next.
        }
        if (json) {
          all.push_back(definition_json(id, def, next));
        } else {
          // A paused schedule has no next occurrence until it is resumed.
          const bool paused = field(def, "paused") == "1";
          std::cout << escape_text(id) << " rule='" << escape_text(field(def, "rule")) << "' tz=" << field(def, "tz")
                    << " next=" << (paused || next.empty() ? std::string("-") : next.front().local_iso)
                    << (paused ? " paused" : "") << " fired=" << field(def, "fired") << "\n";
        }
      }
      cursor = page->cursor;
    } while (cursor != "0");
  }
  if (json) std::cout << all.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return kExitOk;
}

int run_recur_delete(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  const Reply reply = call_on_bucket_of(session, id, recur_delete_argv(session.layout.keys_of_task(id), id));
  if (reply.type != Reply::Type::Integer) throw ReplyError("unexpected reply to expiry_v2_recur_delete");
  if (reply.integer == 0) {
    std::cout << "no recurring schedule: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  std::cout << "deleted " << escape_text(id) << "\n";
  return kExitOk;
}

int run_recur_pause(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  const auto r = decode_recur_state(
      call_on_bucket_of(session, id, recur_pause_argv(session.layout.keys_of_task(id), id)));
  if (!r) throw ReplyError("unexpected reply to expiry_v2_recur_pause");
  if (!r->exists) {
    std::cout << "no recurring schedule: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  std::cout << (r->changed ? "paused " : "already paused: ") << escape_text(id) << "\n";
  return kExitOk;
}

int run_recur_resume(const CtlTarget& target, const std::string& id) {
  check_recur_id(id);
  CtlSession session(target);
  const auto def = get_definition(session, id);
  if (def.empty()) {
    std::cout << "no recurring schedule: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  const TimeZone zone = TimeZone::find(field(def, "tz"));
  const RecurRule rule = stored_recur_rule(field(def, "rule"), number_field(def, "start_ms"));
  const long long now = redis_now_ms(session, id);
  const auto instants = recur_instants(rule, zone, now, number_field(def, "start_ms"), number_field(def, "end_ms"));
  const auto r = decode_recur_state(call_on_bucket_of(
      session, id, recur_resume_argv(session.layout.keys_of_task(id), id, instants, call_db(session))));
  if (!r) throw ReplyError("unexpected reply to expiry_v2_recur_resume");
  if (!r->exists) {
    std::cout << "no recurring schedule: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  std::cout << (r->changed ? "resumed " : "not paused: ") << escape_text(id);
  if (r->armed_ms >= 0) std::cout << " next=" << format_utc_iso(r->armed_ms) << " (" << format_local_iso(r->armed_ms, zone) << ")";
  std::cout << "\n";
  return kExitOk;
}

int run_recur_preview(const RecurPreviewOptions& o) {
  if (o.count < 1 || o.count > 100000) throw ConfigError("--count must be 1..100000");
  const TimeZone zone = TimeZone::find(o.rule.tz);
  const long long from = o.from ? parse_time_arg(*o.from, zone) : wall_now_ms();
  // An interval without --start is anchored at --from (its first occurrence one period later).
  ParsedRule parsed = parse_rule_flags(o.rule, from);
  OccurrenceQuery query;
  query.after_ms = from;
  query.start_ms = parsed.start_ms;
  query.end_ms = parsed.end_ms;
  query.limit = static_cast<size_t>(o.count);
  const auto occurrences = next_occurrences(parsed.rule, parsed.zone, query);
  if (o.json) {
    std::cout << occurrences_json(occurrences).dump() << "\n";
  } else {
    std::cout << occurrence_lines(occurrences);
  }
  return kExitOk;
}

}  // namespace expiry
