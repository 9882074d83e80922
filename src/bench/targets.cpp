// See scenarios.h: evaluate_targets reads the figures the scenarios put into the report's JSON
// and records each target of the issue as met or not met. Targets are reported, not asserted.
#include <algorithm>

#include "bench/report.h"
#include "bench/scenarios.h"

namespace expiry::bench {

namespace {

const nlohmann::json* find(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

double number(const nlohmann::json* j, double fallback = -1) {
  return j != nullptr && j->is_number() ? j->get<double>() : fallback;
}

}  // namespace

void evaluate_targets(BenchReport& report) {
  const nlohmann::json& s = report.json()["scenarios"];
  if (const auto* relay = find(s, {"steady", "runs", "relay"})) {
    const auto* late = find(*relay, {"lateness_ms"});
    const double p50 = number(find(*late, {"p50"}), 1e18);
    const double p99 = number(find(*late, {"p99"}), 1e18);
    const auto lost = (*relay)["lost"].get<long long>();
    const auto dup = (*relay)["duplicated"].get<long long>();
    // The lateness budget that the relay's sweep coalescing (2 ms by default) spends part of.
    report.add_target({"steady: lateness p50 <= 2 ms", p50 <= 2, "p50 " + fixed(p50, 1) + " ms"});
    report.add_target({"steady: lateness p99 <= 5 ms", p99 <= 5, "p99 " + fixed(p99, 1) + " ms"});
    report.add_target({"steady: 0 lost, 0 duplicated", lost == 0 && dup == 0,
                       "lost " + std::to_string(lost) + ", duplicated " + std::to_string(dup)});
  }
  if (const auto* idle = find(s, {"idle"})) {
    const double cmds = number(find(*idle, {"commands_per_s"}));
    const double cpu = number(find(*idle, {"cpu_percent"}));
    report.add_target({"idle: <= 10 commands/s", cmds >= 0 && cmds <= 10, fixed(cmds, 1) + " commands/s"});
    report.add_target({"idle: < 5% of one core", cpu >= 0 && cpu < 5, fixed(cpu, 2) + " %"});
  }
  for (const char* scenario : {"burst", "backlog"}) {
    const auto* relay = find(s, {scenario, "runs", "relay"});
    if (relay == nullptr) continue;
    const double ratio = number(find(*relay, {"ratio_to_best_ceiling"}));
    const double rate = number(find(*relay, {"forward_rate"}));
    const double best = number(find(s, {scenario, "best_ceiling", "tasks_per_s"}));
    report.add_target({std::string(scenario) + ": relay >= 80% of the ceiling", ratio >= 0.8,
                       fixed(rate) + " vs " + fixed(best) + " tasks/s (" + fixed(100 * ratio) + " %)"});
    const double slow = number(find(*relay, {"blocking", "slow_calls_over_5ms"}));
    const double longest = number(find(*relay, {"blocking", "max_call_us"}));
    report.add_target({std::string(scenario) + ": no call blocks Redis > 5 ms (SLOWLOG)", slow == 0,
                       fixed(slow) + " calls > 5 ms, longest " + fixed(longest) + " us"});
  }
  if (const auto* ctl = find(s, {"bulk", "expiry_ctl"})) {
    const double ratio = number(find(*ctl, {"ratio_to_bare_ceiling"}));
    report.add_target({"bulk: expiry-ctl >= 80% of the bare schedule ceiling", ratio >= 0.8,
                       fixed(number(find(*ctl, {"tasks_per_s_end_to_end"}))) + " vs " +
                           fixed(number(find(s, {"bulk", "bare_ceiling", "tasks_per_s"}))) + " tasks/s (" +
                           fixed(100 * ratio) + " %, process start to exit)"});
  }
  double peak = -1;
  std::string where;
  auto consider = [&](const nlohmann::json* run, const std::string& name) {
    const double mb = number(run == nullptr ? nullptr : find(*run, {"peak_rss_mb"}));
    if (mb > peak) {
      peak = mb;
      where = name;
    }
  };
  consider(find(s, {"idle"}), "idle");
  consider(find(s, {"steady", "runs", "relay"}), "steady");
  consider(find(s, {"burst", "runs", "relay"}), "burst");
  consider(find(s, {"backlog", "runs", "relay"}), "backlog");
  if (peak >= 0) {
    report.add_target({"relay peak RSS <= 30 MB", peak <= 30, fixed(peak, 1) + " MB (largest, in " + where + ")"});
  }
  if (const auto* relay = find(s, {"steady", "runs", "relay"})) {
    const double cpu = number(find(*relay, {"cpu_percent"}));
    report.add_target({"steady: relay < 5% of one core", cpu >= 0 && cpu < 5, fixed(cpu, 2) + " %"});
  }
  const auto* single = find(s, {"cluster", "runs", "standalone"});
  const auto* cluster = find(s, {"cluster", "runs", "cluster"});
  if (single != nullptr && cluster != nullptr) {
    const double p99_single = number(find(*single, {"steady", "lateness_ms", "p99"}), 1e18);
    const double p99_cluster = number(find(*cluster, {"steady", "lateness_ms", "p99"}), 1e18);
    report.add_target({"cluster: steady p99 lateness within 2 ms of standalone", p99_cluster <= p99_single + 2,
                       "p99 " + fixed(p99_cluster, 1) + " ms vs " + fixed(p99_single, 1) + " ms standalone"});
    const double cpu_single = number(find(*single, {"drain", "redis_cpu_us_per_task_primaries"}));
    const double cpu_cluster = number(find(*cluster, {"drain", "redis_cpu_us_per_task_primaries"}));
    const double ratio = cpu_single > 0 ? cpu_cluster / cpu_single : -1;
    report.add_target({"cluster: Redis CPU per claim <= 1.25x standalone", ratio >= 0 && ratio <= 1.25,
                       fixed(cpu_cluster, 1) + " vs " + fixed(cpu_single, 1) + " us per claim (" + fixed(ratio, 2) +
                           "x; drain, primaries)"});
  }
}

}  // namespace expiry::bench
