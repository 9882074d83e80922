// See recurring_schedules.h.
#include "producer/recurring_schedules.h"

#include <chrono>

#include "base/clock.h"
#include "base/errors.h"
#include "functions/key_layout.h"
#include "functions/task_options.h"
#include "io/sync/routed_client.h"
#include "recur/recur_plan.h"
#include "redis/redis_time.h"

namespace expiry {
namespace {

constexpr int kListPage = 500;  // schedule ids per expiry_v2_recur_list call

}  // namespace

void check_recur_id(const std::string& id) {
  if (auto err = task_id_error(id)) throw ConfigError(*err);
  if (id.size() > kMaxRecurIdBytes) {
    throw ConfigError("a recurring schedule id is at most " + std::to_string(kMaxRecurIdBytes) + " bytes");
  }
}

std::string RecurringSchedule::field(const std::string& name) const {
  const auto it = fields.find(name);
  return it == fields.end() ? std::string() : it->second;
}

std::optional<long long> RecurringSchedule::number(const std::string& name) const {
  const std::string text = field(name);
  if (text.empty()) return std::nullopt;
  return std::stoll(text);
}

Reply RecurringSchedules::call(const std::string& id, const std::vector<std::string>& argv) {
  Reply reply = redis_.fcall(argv, layout_.slot_of_task(id));
  if (reply.is_io_error()) throw IoError(reply.str);
  if (reply.type == Reply::Type::Error && reply.str.rfind("ERR expiry: ", 0) == 0) {
    // The library refused the input (a one-off task with this id, a bad field): nothing written.
    throw ConfigError(reply.str.substr(12));
  }
  if (reply.failed()) throw ReplyError(reply.describe());
  return reply;
}

long long RecurringSchedules::now_ms(const std::string& id) {
  const Reply time = redis_.command({"TIME"}, layout_.slot_of_task(id));
  if (const auto ms = time_reply_ms(time)) return *ms;
  return wall_clock_ms();
}

std::optional<int> RecurringSchedules::db() const {
  if (layout_.cluster) return std::nullopt;
  return layout_.db;
}

std::vector<Occurrence> RecurringSchedules::next_of(const std::map<std::string, std::string>& fields,
                                                    long long now_ms, int count) const {
  RecurringSchedule s{"", fields, {}};
  if (s.paused() || count <= 0) return {};
  try {
    const TimeZone zone = TimeZone::find(s.field("tz"));
    const RecurRule rule = stored_recur_rule(s.field("rule"), s.number("start_ms"));
    OccurrenceQuery query;
    const auto armed = s.number("armed_ms");
    query.after_ms = armed ? *armed - 1 : std::max(now_ms, s.number("last_ms").value_or(now_ms));
    query.start_ms = s.number("start_ms");
    query.end_ms = s.number("end_ms");
    query.limit = static_cast<size_t>(count);
    return next_occurrences(rule, zone, query);
  } catch (const ConfigError&) {
    return {};  // a rule or zone that does not read back here (another tzdata): no next shown
  }
}

RecurringSetOutcome RecurringSchedules::set(const std::string& id, const RecurringWrite& w,
                                            const RecurFieldNames& names) {
  check_recur_id(id);
  if (auto err = recur_misfire_error(w.misfire)) throw ConfigError(*err);
  if (!w.webhook.empty()) {
    if (auto err = webhook_name_error(w.webhook)) throw ConfigError(*err);
  }
  const long long wall = wall_clock_ms();
  ParsedRecurRule parsed = parse_recur_rule_spec(w.rule, wall - wall % 1000, names);
  if (parsed.end_ms && *parsed.end_ms <= wall) {
    throw ConfigError(std::string(names.end) + " lies in the past: the schedule would never fire");
  }
  const long long now = now_ms(id);
  const std::vector<RecurInstant> instants =
      recur_instants(parsed.rule, parsed.zone, now, parsed.start_ms, parsed.end_ms);
  if (instants.empty()) {
    throw ConfigError(std::string("the rule has no occurrence between ") + names.start + " and " + names.end +
                      "; nothing was written");
  }
  RecurDefinition def;
  def.rule = parsed.text;
  def.tz = parsed.zone.name();
  def.start_ms = parsed.start_ms;
  def.end_ms = parsed.end_ms;
  def.payload = w.payload;
  def.stream = w.stream;
  def.webhook = w.webhook;
  def.max_late_ms = w.max_late_ms;
  def.misfire = w.misfire;
  def.grace_ms = w.misfire_grace_ms;
  def.misfire_max = w.misfire_max;
  const auto result = decode_recur_set(call(id, recur_set_argv(layout_.keys_of_task(id), id, def, instants, db())));
  if (!result) throw ReplyError("unexpected reply to expiry_v2_recur_set");
  return {*result, def.rule, std::move(parsed.zone)};
}

std::optional<RecurringSchedule> RecurringSchedules::get(const std::string& id, int next_count) {
  check_recur_id(id);
  const auto fields = decode_recur_get(call(id, recur_get_argv(layout_.keys_of_task(id), id)));
  if (!fields) throw ReplyError("unexpected reply to expiry_v2_recur_get");
  if (fields->empty()) return std::nullopt;
  return RecurringSchedule{id, *fields, next_of(*fields, now_ms(id), next_count)};
}

bool RecurringSchedules::remove(const std::string& id) {
  check_recur_id(id);
  const Reply reply = call(id, recur_delete_argv(layout_.keys_of_task(id), id));
  if (reply.type != Reply::Type::Integer) throw ReplyError("unexpected reply to expiry_v2_recur_delete");
  return reply.integer != 0;
}

RecurStateResult RecurringSchedules::pause(const std::string& id) {
  check_recur_id(id);
  const auto r = decode_recur_state(call(id, recur_pause_argv(layout_.keys_of_task(id), id)));
  if (!r) throw ReplyError("unexpected reply to expiry_v2_recur_pause");
  return *r;
}

RecurringResumeOutcome RecurringSchedules::resume(const std::string& id) {
  const auto schedule = get(id, 0);
  if (!schedule) return {};
  const TimeZone zone = TimeZone::find(schedule->field("tz"));
  const RecurRule rule = stored_recur_rule(schedule->field("rule"), schedule->number("start_ms"));
  const auto instants =
      recur_instants(rule, zone, now_ms(id), schedule->number("start_ms"), schedule->number("end_ms"));
  const auto r = decode_recur_state(call(id, recur_resume_argv(layout_.keys_of_task(id), id, instants, db())));
  if (!r) throw ReplyError("unexpected reply to expiry_v2_recur_resume");
  return {*r, zone.name()};
}

void RecurringSchedules::for_each(const std::function<bool(const RecurringSchedule&)>& visit, int next_count) {
  const long long now = wall_clock_ms();
  for (int b = 0; b < layout_.buckets; ++b) {
    const KeyLayout keys(layout_.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    std::string cursor = "0";
    do {
      const Reply reply = redis_.fcall(recur_list_argv(keys, cursor, kListPage), slot);
      if (reply.is_io_error()) throw IoError(reply.str);
      if (reply.failed()) throw ReplyError(reply.describe());
      const auto page = decode_recur_list(reply);
      if (!page) throw ReplyError("unexpected reply to expiry_v2_recur_list");
      for (const std::string& id : page->ids) {
        const auto fields = decode_recur_get(call(id, recur_get_argv(keys, id)));
        if (!fields) throw ReplyError("unexpected reply to expiry_v2_recur_get");
        if (fields->empty()) continue;  // deleted meanwhile
        if (!visit(RecurringSchedule{id, *fields, next_of(*fields, now, next_count)})) return;
      }
      cursor = page->cursor;
    } while (cursor != "0");
  }
}

nlohmann::json recurring_schedule_json(const RecurringSchedule& s) {
  nlohmann::json j;
  j["id"] = s.id;
  for (const char* name : {"rule", "tz", "payload", "stream", "webhook", "misfire", "version"}) j[name] = s.field(name);
  for (const char* name : {"start_ms", "end_ms", "max_late_ms", "grace_ms", "misfire_max", "last_ms", "armed_ms",
                           "fired", "skipped", "created_ms", "updated_ms"}) {
    const auto n = s.number(name);
    j[name] = n ? nlohmann::json(*n) : nlohmann::json(nullptr);
  }
  j["paused"] = s.paused();
  j["ended"] = s.field("ended") == "1";
  j["next"] = nlohmann::json::array();
  for (const auto& o : s.next) j["next"].push_back({{"utc_ms", o.utc_ms}, {"utc", o.utc_iso}, {"local", o.local_iso}});
  return j;
}

}  // namespace expiry
