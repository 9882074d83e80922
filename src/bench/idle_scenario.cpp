// The idle relay: with the far-future backdrop pending and nothing due, how many commands per
// second it sends to Redis (MONITOR, which tells client commands from those run inside an FCALL;
// INFO commandstats deltas as a cross-check) and how much CPU it uses.
#include <thread>

#include "bench/machine_load.h"
#include "bench/monitor_tap.h"
#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/scenarios.h"

namespace expiry::bench {

namespace {

std::string describe_counts(const std::map<std::string, long long>& counts) {
  std::string out;
  for (const auto& [name, n] : counts) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return out.empty() ? "-" : out;
}

}  // namespace

void run_idle_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  auto& j = report.scenario("idle");
  const long long pending = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  progress("idle: relay with " + std::to_string(pending) + " far-future tasks pending, " +
           std::to_string(ctx.sizes.idle_seconds) + " s");
  const auto trims_before = command_calls(conn)["xinfo|groups"];
  RelayProcess relay(ctx, RelayRole::Relay, "idle");
  relay.wait_ready(conn);
  // Past the startup sweep and the first stream trim (XINFO GROUPS, one interval after start):
  // an idle relay's trims then back off, and the window shows its lasting cost.
  const auto trim_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (command_calls(conn)["xinfo|groups"] == trims_before && std::chrono::steady_clock::now() < trim_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  const auto calls0 = command_calls(conn);
  const ProcessUsage u0 = relay.usage();
  const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid, relay.pid()});
  const auto t0 = std::chrono::steady_clock::now();
  const MonitorCounts monitored = monitor_commands(ctx.redis, std::chrono::seconds(ctx.sizes.idle_seconds));
  const ProcessUsage u1 = relay.usage();
  const double foreign = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid, relay.pid()}));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto calls1 = command_calls(conn);
  const int code = relay.stop();

  long long commandstats_total = 0;  // every command Redis ran, inside FCALLs too, minus our INFO
  for (const auto& [name, calls] : calls1) {
    if (name == "info" || name == "monitor") continue;
    const auto before = calls0.find(name);
    commandstats_total += calls - (before == calls0.end() ? 0 : before->second);
  }
  const double sent_per_s = static_cast<double>(monitored.total_sent()) / seconds;
  const double cpu_percent = 100.0 * (u1.cpu_seconds - u0.cpu_seconds) / seconds;
  j = {{"pending", pending},
       {"seconds", seconds},
       {"commands_sent", monitored.total_sent()},
       {"commands_per_s", sent_per_s},
       {"sent_by_command", monitored.sent},
       {"run_inside_fcall", monitored.inside},
       {"commandstats_delta_total", commandstats_total},
       {"cpu_percent", cpu_percent},
       {"peak_rss_mb", u1.peak_rss_mb},
       {"foreign_cpu_percent", foreign},
       {"exit_code", code}};
  Table t{"Idle relay: " + std::to_string(pending) + " tasks pending, none due, " + fixed(seconds, 1) + " s",
          {"system", "commands/s sent", "sent", "run inside its FCALLs", "commandstats delta", "CPU % of one core",
           "peak RSS MB", "other CPU %"},
          {},
          {"Sent = MONITOR lines from clients (the relay's two connections are the only clients then); "
           "commandstats delta = every command Redis ran, inside FCALLs too."}};
  t.rows.push_back({"relay", fixed(sent_per_s, 1), describe_counts(monitored.sent), describe_counts(monitored.inside),
                    std::to_string(commandstats_total), fixed(cpu_percent, 2), fixed(u1.peak_rss_mb, 1),
                    fixed(foreign)});
  report.add_table(t);
}

}  // namespace expiry::bench
