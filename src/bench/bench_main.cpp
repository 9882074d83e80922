// expiry-bench: runs the benchmark scenarios (docs/benchmarks.md) against a Redis that the caller
// started (scripts/bench.sh), prints one table per scenario and writes the same figures as JSON.
// Exit code: 0 when every run lost and duplicated nothing, 1 otherwise, 2 for usage or setup errors.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench_context.h"
#include "bench/redis_probe.h"
#include "bench/report.h"
#include "bench/scenarios.h"
#include "protocol/errors.h"

namespace {

using namespace expiry;
using namespace expiry::bench;

std::string directory_of_executable() {
  char buf[4096];
  const ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len <= 0) return ".";
  std::string path(buf, static_cast<size_t>(len));
  return path.substr(0, path.rfind('/'));
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// The kernel's DAMON schemes that are on, e.g. "pageout" ("" if none or not readable). A
// proactive-reclaim scheme stalls processes with a large, cold resident set (Redis holding a
// million tasks) for 10-40 ms every sampling interval: docs/benchmarks.md, "The machine".
std::string active_damon_schemes() {
  std::string actions;
  for (int k = 0; k < 8; ++k) {
    const std::string kd = "/sys/kernel/mm/damon/admin/kdamonds/" + std::to_string(k);
    if (read_first_line(kd + "/state") != "on") continue;
    for (int s = 0; s < 8; ++s) {
      const std::string action = read_first_line(kd + "/contexts/0/schemes/" + std::to_string(s) + "/action");
      if (!action.empty()) actions += (actions.empty() ? "" : ",") + action;
    }
  }
  return actions;
}

nlohmann::json machine_json(SyncConnection& conn) {
  const auto server = info_fields(conn, "server");
  return {{"nproc", std::thread::hardware_concurrency()},
          {"cpu_model", cpu_model()},
          {"redis_version", server.count("redis_version") ? server.at("redis_version") : "?"},
          {"loadavg_at_start", read_first_line("/proc/loadavg")},
          {"damon_schemes_on", active_damon_schemes()}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"expiry-bench: measures expiry-relay against its baselines and ceilings (docs/benchmarks.md)."};
  std::string redis_url;
  std::string json_path;
  std::string work_dir;
  std::string bin_dir = directory_of_executable() + "/..";
  std::string only = "bulk,idle,steady,burst,backlog,cancel";
  bool quick = false;
  app.add_option("--redis-url", redis_url, "Redis to benchmark (its data is flushed!)")->required();
  app.add_flag("--quick", quick, "CI sizes (the whole run takes about 2 minutes)");
  app.add_option("--json", json_path, "write the results as JSON here (default: WORK_DIR/bench-results.json)");
  app.add_option("--work-dir", work_dir, "logs and generated files (default: a new /tmp/expiry-bench.XXXXXX)");
  app.add_option("--bin-dir", bin_dir, "where relay/expiry-relay and ctl/expiry-ctl are (default: the build's src/)");
  app.add_option("--only", only, "comma-separated scenarios to run: bulk,idle,steady,burst,backlog,cancel");
  int rounds = 0;
  app.add_option("--rounds", rounds, "burst and backlog: interleaved rounds per system, the fastest is reported (default 1)")
      ->check(CLI::Range(1, 20));
  long long backdrop = -1, steady_rate = -1;
  app.add_option("--backdrop", backdrop, "idle and steady: far-future tasks pending (default 1000000, --quick 100000)")
      ->check(CLI::Range(0LL, 10000000LL));
  app.add_option("--steady-rate", steady_rate, "steady: tasks scheduled per second (default 1000, --quick 200)")
      ->check(CLI::Range(1LL, 20000LL));
  std::string steady_systems = "relay,events-only,fixed-poll";
  app.add_option("--steady-systems", steady_systems, "steady: comma-separated systems to run (default all three)");
  std::vector<std::string> relay_flags;
  app.add_option("--relay-flag", relay_flags,
                 "extra flag for the relay under test, not the baselines (repeat; e.g. --relay-flag=--sweep-batch=200)");
  CLI11_PARSE(app, argc, argv);

  BenchContext ctx;
  ctx.quick = quick;
  ctx.sizes = quick ? quick_sizes() : full_sizes();
  ctx.redis_url = redis_url;
  ctx.relay_bin = bin_dir + "/relay/expiry-relay";
  ctx.ctl_bin = bin_dir + "/ctl/expiry-ctl";
  ctx.relay_extra_flags = relay_flags;
  if (rounds > 0) ctx.sizes.drain_rounds = rounds;
  if (backdrop >= 0) ctx.sizes.steady_backdrop = static_cast<size_t>(backdrop);
  if (steady_rate > 0) ctx.sizes.steady_rate = static_cast<int>(steady_rate);
  auto split = [](const std::string& list) {
    std::set<std::string> names;
    std::istringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) names.insert(name);
    return names;
  };
  const std::set<std::string> wanted = split(only);
  ctx.steady_systems = split(steady_systems);
  try {
    ctx.redis = parse_redis_url(redis_url);
    if (access(ctx.relay_bin.c_str(), X_OK) != 0) throw ConfigError("no executable " + ctx.relay_bin);
    if (access(ctx.ctl_bin.c_str(), X_OK) != 0) throw ConfigError("no executable " + ctx.ctl_bin);
    if (work_dir.empty()) {
      char tmpl[] = "/tmp/expiry-bench.XXXXXX";
      if (mkdtemp(tmpl) == nullptr) throw Error("cannot create a work directory in /tmp");
      work_dir = tmpl;
    }
    ctx.work_dir = work_dir;
    if (json_path.empty()) json_path = work_dir + "/bench-results.json";
  } catch (const Error& e) {
    std::cerr << "expiry-bench: " << e.what() << "\n";
    return 2;
  }

  BenchReport report;
  try {
    SyncConnection conn(ctx.redis, SyncConnection::Options{std::chrono::milliseconds(2000), std::chrono::seconds(60)});
    conn.load_library();
    configure_redis_for_bench(conn);
    ctx.redis_pid = static_cast<pid_t>(info_integer(conn, "server", "process_id"));
    report.json()["mode"] = quick ? "quick" : "full";
    report.json()["machine"] = machine_json(conn);
    report.json()["payload_bytes"] = ctx.payload_bytes;
    report.json()["relay_extra_flags"] = relay_flags;
    report.json()["drain_rounds"] = ctx.sizes.drain_rounds;
    progress("expiry-bench " + std::string(quick ? "--quick" : "full") + ", work dir " + work_dir);
    const auto start = std::chrono::steady_clock::now();
    if (wanted.count("bulk")) run_bulk_scenario(ctx, conn, report);
    if (wanted.count("idle")) {
      ensure_backdrop(ctx, conn, ctx.sizes.steady_backdrop);
      run_idle_scenario(ctx, conn, report);
    }
    if (wanted.count("steady")) run_steady_scenario(ctx, conn, report);
    if (wanted.count("burst")) run_burst_scenario(ctx, conn, report);
    if (wanted.count("backlog")) run_backlog_scenario(ctx, conn, report);
    if (wanted.count("cancel")) run_cancel_scenario(ctx, conn, report);
    conn.checked({"FLUSHALL"});
    evaluate_targets(report);
    report.json()["machine"]["loadavg_at_end"] = read_first_line("/proc/loadavg");
    report.json()["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::exception& e) {
    report.print(std::cout);
    std::cerr << "expiry-bench: " << e.what() << "\n";
    return 2;
  }

  const auto& m = report.json()["machine"];
  std::cout << "expiry-bench " << (quick ? "--quick" : "(full)") << ": " << m["nproc"] << " cores, "
            << m["cpu_model"].get<std::string>() << ", redis " << m["redis_version"].get<std::string>()
            << "; load average at start " << m["loadavg_at_start"].get<std::string>() << ", at end "
            << m["loadavg_at_end"].get<std::string>() << "; kernel DAMON schemes on: "
            << (m["damon_schemes_on"].get<std::string>().empty() ? "none" : m["damon_schemes_on"].get<std::string>())
            << "; " << fixed(report.json()["seconds"].get<double>(), 0) << " s\n";
  report.print(std::cout);
  std::ofstream out(json_path);
  out << report.final_json().dump(2) << "\n";
  if (!out) {
    std::cerr << "expiry-bench: cannot write " << json_path << "\n";
    return 2;
  }
  std::cout << "\nJSON: " << json_path << "\n";
  return report.integrity_ok() ? 0 : 1;
}
