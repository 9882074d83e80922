// See redis_probe.h.
#include "bench/redis_probe.h"

#include <sstream>

#include "base/errors.h"
#include "base/integers.h"
#include "redis/redis_time.h"

namespace expiry::bench {

void configure_redis_for_bench(SyncConnection& conn) {
  conn.checked({"CONFIG", "SET", "slowlog-log-slower-than", std::to_string(kBlockingThresholdUs)});
  conn.checked({"CONFIG", "SET", "slowlog-max-len", "4096"});
  conn.checked({"CONFIG", "SET", "latency-monitor-threshold", std::to_string(kBlockingThresholdUs / 1000)});
}

std::map<std::string, std::string> info_fields(SyncConnection& conn, const std::string& section) {
  return parse_info(conn.checked({"INFO", section}).str);
}

std::map<std::string, std::string> parse_info(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

long long info_integer(SyncConnection& conn, const std::string& section, const std::string& field) {
  const auto fields = info_fields(conn, section);
  const auto it = fields.find(field);
  if (it == fields.end()) throw Error("INFO " + section + " has no field " + field);
  const auto value = parse_int64(it->second);
  if (!value) throw Error("INFO " + section + " field " + field + " is not an integer: '" + it->second + "'");
  return *value;
}

namespace {

// The value of "key=value" in a comma-separated list, or -1.
long long csv_value(const std::string& csv, const std::string& key) {
  std::istringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && item.compare(0, eq, key) == 0) {
      const auto value = parse_int64(std::string_view(item).substr(eq + 1));
      if (!value) throw Error("INFO value " + item + " is not an integer");
      return *value;
    }
  }
  return -1;
}

}  // namespace

std::map<std::string, long long> command_calls_in(const std::string& info_text) {
  std::map<std::string, long long> out;
  for (const auto& [name, value] : parse_info(info_text)) {
    if (name.rfind("cmdstat_", 0) != 0) continue;
    out[name.substr(8)] = csv_value(value, "calls");
  }
  return out;
}

std::map<std::string, long long> command_calls(SyncConnection& conn) {
  return command_calls_in(conn.checked({"INFO", "commandstats"}).str);
}

std::map<std::string, long long> command_usec(SyncConnection& conn) {
  std::map<std::string, long long> out;
  for (const auto& [name, value] : info_fields(conn, "commandstats")) {
    if (name.rfind("cmdstat_", 0) != 0) continue;
    out[name.substr(8)] = csv_value(value, "usec");
  }
  return out;
}

RedisCostSnapshot redis_cost_snapshot(SyncConnection& conn) {
  RedisCostSnapshot snap;
  for (const auto& [name, value] : info_fields(conn, "commandstats")) {
    if (name.rfind("cmdstat_", 0) != 0) continue;
    snap.commands[name.substr(8)] = {csv_value(value, "calls"), csv_value(value, "usec")};
  }
  snap.cpu_seconds = redis_cpu_seconds(conn);
  return snap;
}

nlohmann::json redis_cost_delta(const RedisCostSnapshot& before, const RedisCostSnapshot& after) {
  nlohmann::json commands = nlohmann::json::object();
  for (const auto& [name, cost] : after.commands) {
    const auto it = before.commands.find(name);
    const CommandCost was = it == before.commands.end() ? CommandCost{} : it->second;
    if (cost.calls == was.calls) continue;
    commands[name] = {{"calls", cost.calls - was.calls}, {"usec", cost.usec - was.usec}};
  }
  return {{"cpu_seconds", after.cpu_seconds - before.cpu_seconds}, {"commands", commands}};
}

KeyspaceCounts keyspace_db0(SyncConnection& conn) {
  KeyspaceCounts k;
  const auto fields = info_fields(conn, "keyspace");
  const auto it = fields.find("db0");
  if (it == fields.end()) return k;
  k.keys = csv_value(it->second, "keys");
  k.expires = csv_value(it->second, "expires");
  return k;
}

long long redis_time_us(SyncConnection& conn) {
  const Reply r = conn.checked({"TIME"});
  const auto us = time_reply_us(r);
  if (!us) throw ReplyError("TIME: unexpected reply " + r.describe());
  return *us;
}

double redis_cpu_seconds(SyncConnection& conn) {
  const auto fields = info_fields(conn, "cpu");
  double sum = 0;
  for (const char* name : {"used_cpu_sys", "used_cpu_user"}) {
    const auto it = fields.find(name);
    if (it == fields.end()) throw ReplyError(std::string("INFO cpu has no ") + name);
    sum += std::stod(it->second);
  }
  return sum;
}

nlohmann::json BlockingSummary::to_json() const {
  return {{"slow_calls_over_5ms", slow_calls},
          {"max_call_us", max_call_us},
          {"worst_call", worst_call},
          {"latency_max_ms", latency_max_ms},
          {"latency_events", latency_events}};
}

BlockingWatch::BlockingWatch(SyncConnection& conn) {
  conn.checked({"SLOWLOG", "RESET"});
  conn.checked({"LATENCY", "RESET"});
}

BlockingSummary BlockingWatch::finish(SyncConnection& conn) const {
  BlockingSummary s;
  const Reply slow = conn.checked({"SLOWLOG", "GET", "4096"});
  for (const Reply& entry : slow.elements) {
    if (entry.elements.size() < 4) continue;
    const long long us = entry.elements[2].integer;
    ++s.slow_calls;
    if (us > s.max_call_us) {
      s.max_call_us = us;
      std::string call;
      const auto& argv = entry.elements[3].elements;
      for (size_t i = 0; i < argv.size() && i < 2; ++i) call += (i ? " " : "") + argv[i].str;
      if (entry.elements.size() >= 6 && !entry.elements[5].str.empty()) call += " (" + entry.elements[5].str + ")";
      s.worst_call = call;
    }
  }
  const Reply latest = conn.checked({"LATENCY", "LATEST"});
  for (const Reply& event : latest.elements) {
    if (event.elements.size() < 4) continue;
    const long long max_ms = event.elements[3].integer;
    s.latency_max_ms = std::max(s.latency_max_ms, max_ms);
    s.latency_events += (s.latency_events.empty() ? "" : " ") + event.elements[0].str + ":" + std::to_string(max_ms);
  }
  return s;
}

}  // namespace expiry::bench
