#include "functions/recur_calls.h"

#include "base/integers.h"

namespace expiry {

namespace {
// FCALL <function> 4 <schedule> <trigger> <shadow> <definition> <id>.
std::vector<std::string> recur_call(const char* function, const KeyLayout& keys, std::string_view id) {
  return {"FCALL", function, "4", keys.schedule_key(), keys.trigger_key(id), keys.shadow_key(id), keys.recur_key(id),
          std::string(id)};
}

std::string db_text(std::optional<int> db) { return db ? std::to_string(*db) : std::string(); }

void append_instants(std::vector<std::string>& argv, const std::vector<RecurInstant>& instants) {
  for (const auto& i : instants) argv.push_back(std::to_string(i.utc_ms) + "|" + i.local_iso);
}

bool is_int(const Reply& r) { return r.type == Reply::Type::Integer; }
bool is_text(const Reply& r) { return r.type == Reply::Type::String || r.type == Reply::Type::Status; }

std::optional<long long> optional_number(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (!is_text(r) || r.str.empty()) return std::nullopt;
  return parse_int64(r.str);
}
}  // namespace

std::vector<std::string> recur_set_argv(const KeyLayout& keys, std::string_view id, const RecurDefinition& def,
                                        const std::vector<RecurInstant>& instants, std::optional<int> db) {
  auto argv = recur_call("expiry_v2_recur_set", keys, id);
  std::vector<std::pair<std::string, std::string>> fields{
      {"rule", def.rule},         {"tz", def.tz},
      {"payload", def.payload},   {"misfire", def.misfire},
      {"grace_ms", std::to_string(def.grace_ms)}, {"misfire_max", std::to_string(def.misfire_max)}};
  if (def.start_ms) fields.emplace_back("start_ms", std::to_string(*def.start_ms));
  if (def.end_ms) fields.emplace_back("end_ms", std::to_string(*def.end_ms));
  if (!def.stream.empty()) fields.emplace_back("stream", def.stream);
  if (!def.webhook.empty()) fields.emplace_back("webhook", def.webhook);
  if (def.max_late_ms) fields.emplace_back("max_late_ms", std::to_string(*def.max_late_ms));
  argv.push_back(db_text(db));
  argv.push_back(std::to_string(fields.size()));
  for (auto& [name, value] : fields) {
    argv.push_back(std::move(name));
    argv.push_back(std::move(value));
  }
  append_instants(argv, instants);
  return argv;
}

std::vector<std::string> recur_get_argv(const KeyLayout& keys, std::string_view id) {
  return {"FCALL", "expiry_v2_recur_get", "2", keys.schedule_key(), keys.recur_key(id), std::string(id)};
}

std::vector<std::string> recur_list_argv(const KeyLayout& keys, std::string_view cursor, int count) {
  return {"FCALL", "expiry_v2_recur_list", "1", keys.schedule_key(), std::string(cursor), std::to_string(count)};
}

std::vector<std::string> recur_delete_argv(const KeyLayout& keys, std::string_view id) {
  return recur_call("expiry_v2_recur_delete", keys, id);
}

std::vector<std::string> recur_pause_argv(const KeyLayout& keys, std::string_view id) {
  return recur_call("expiry_v2_recur_pause", keys, id);
}

std::vector<std::string> recur_resume_argv(const KeyLayout& keys, std::string_view id,
                                           const std::vector<RecurInstant>& instants, std::optional<int> db) {
  auto argv = recur_call("expiry_v2_recur_resume", keys, id);
  argv.push_back(db_text(db));
  append_instants(argv, instants);
  return argv;
}

std::vector<std::string> recur_refills_argv(const KeyLayout& keys, int limit) {
  return {"FCALL", "expiry_v2_recur_refills", "1", keys.schedule_key(), std::to_string(limit)};
}

std::vector<std::string> recur_refill_argv(const KeyLayout& keys, std::string_view id, std::string_view version,
                                           const std::vector<RecurInstant>& instants, std::optional<int> db) {
  auto argv = recur_call("expiry_v2_recur_refill", keys, id);
  argv.emplace_back(version);
  argv.push_back(db_text(db));
  append_instants(argv, instants);
  return argv;
}

std::optional<RecurSetResult> decode_recur_set(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 4) return std::nullopt;
  for (const auto& e : reply.elements) {
    if (!is_int(e)) return std::nullopt;
  }
  const auto& e = reply.elements;
  return RecurSetResult{e[0].integer, e[1].integer, e[2].integer, e[3].integer == 1};
}

std::optional<std::map<std::string, std::string>> decode_recur_get(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() % 2 != 0) return std::nullopt;
  std::map<std::string, std::string> fields;
  for (size_t i = 0; i < reply.elements.size(); i += 2) {
    if (!is_text(reply.elements[i]) || !is_text(reply.elements[i + 1])) return std::nullopt;
    fields[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return fields;
}

std::optional<RecurListPage> decode_recur_list(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2 || !is_text(reply.elements[0]) ||
      reply.elements[1].type != Reply::Type::Array) {
    return std::nullopt;
  }
  RecurListPage page{reply.elements[0].str, {}};
  for (const auto& id : reply.elements[1].elements) {
    if (!is_text(id)) return std::nullopt;
    page.ids.push_back(id.str);
  }
  return page;
}

std::optional<RecurStateResult> decode_recur_state(const Reply& reply) {
  if (reply.type != Reply::Type::Array || (reply.elements.size() != 2 && reply.elements.size() != 3)) {
    return std::nullopt;
  }
  for (const auto& e : reply.elements) {
    if (!is_int(e)) return std::nullopt;
  }
  const auto& e = reply.elements;
  return RecurStateResult{e[0].integer == 1, e[1].integer == 1, e.size() == 3 ? e[2].integer : -1};
}

std::optional<RecurRefills> decode_recur_refills(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2 || !is_int(reply.elements[0]) ||
      reply.elements[1].type != Reply::Type::Array) {
    return std::nullopt;
  }
  RecurRefills out;
  out.now_ms = reply.elements[0].integer;
  for (const auto& row : reply.elements[1].elements) {
    if (row.type != Reply::Type::Array || row.elements.size() != 13) return std::nullopt;
    const auto& e = row.elements;
    for (int i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12}) {
      if (!is_text(e[i])) return std::nullopt;
    }
    if (!is_int(e[10]) || !is_int(e[11])) return std::nullopt;
    RecurRefillRow r;
    r.id = e[0].str;
    r.version = e[1].str;
    r.rule = e[2].str;
    r.tz = e[3].str;
    r.start_ms = optional_number(e[4]);
    r.end_ms = optional_number(e[5]);
    r.horizon_ms = optional_number(e[6]);
    r.misfire = e[7].str;
    r.grace_ms = optional_number(e[8]).value_or(1000);
    r.misfire_max = optional_number(e[9]).value_or(100);
    r.upcoming = e[10].integer;
    r.armed = e[11].integer == 1;
    r.last_ms = optional_number(e[12]);
    out.rows.push_back(std::move(r));
  }
  return out;
}

std::optional<RecurRefillResult> decode_recur_refill(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 3) return std::nullopt;
  for (const auto& e : reply.elements) {
    if (!is_int(e)) return std::nullopt;
  }
  const auto& e = reply.elements;
  return RecurRefillResult{e[0].integer == 1, e[1].integer, e[2].integer};
}

}  // namespace expiry
