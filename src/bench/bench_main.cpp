// expiry-bench: runs the benchmark scenarios (docs/benchmarks.md) against a Redis that the caller
// started (scripts/bench.sh), prints one table per scenario and writes the same figures as JSON.
// Exit code: 0 when every run lost and duplicated nothing, 1 otherwise, 2 for usage or setup errors.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "base/errors.h"
#include "bench/bench_context.h"
#include "bench/redis_probe.h"
#include "bench/report.h"
#include "bench/scenarios.h"
#include "config/help_formatter.h"
#include "config/service_options.h"
#include "config/settings.h"
#include "redis/hash_slot.h"

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

// "valkey 8.1.1" or "redis 7.0.15": Valkey's INFO keeps redis_version at 7.2.4 for clients that
// check it and names itself in server_name and valkey_version (docs/servers.md).
std::string server_label(const std::map<std::string, std::string>& server) {
  const auto field = [&](const std::string& name) { return server.count(name) ? server.at(name) : std::string(); };
  const std::string name = field("server_name");
  if (!name.empty() && !field(name + "_version").empty()) return name + " " + field(name + "_version");
  return "redis " + (field("redis_version").empty() ? std::string("?") : field("redis_version"));
}

nlohmann::json machine_json(SyncConnection& conn) {
  const auto server = info_fields(conn, "server");
  return {{"nproc", std::thread::hardware_concurrency()},
          {"cpu_model", cpu_model()},
          {"redis_version", server.count("redis_version") ? server.at("redis_version") : "?"},
          {"server", server_label(server)},
          {"loadavg_at_start", read_first_line("/proc/loadavg")},
          {"damon_schemes_on", active_damon_schemes()}};
}

// The command line's values.
struct BenchOptions {
  std::string redis_url;
  std::string json_path;
  std::string work_dir;
  std::string bin_dir = directory_of_executable() + "/..";
  std::string only = "bulk,idle,steady,burst,backlog,cancel,kill";
  bool quick = false;
  int rounds = 0;
  long long backdrop = -1;
  long long steady_rate = -1;
  int steady_seconds = -1;
  int steady_producers = -1;
  long long ttl_keys = -1;
  std::string steady_systems = "relay,events-only,fixed-poll";
  std::vector<std::string> relay_flags;
  std::string cluster_url;
  int cluster_buckets = 64;
  int standalone_buckets = 1;
  long long recur_schedules = -1;
  int recur_minutes = -1;
  std::string recur_rule = "every";
  long long recur_instants = 0;
  std::map<std::string, std::string> tls;  // the tls_* flags given (config/service_options.h)
  std::map<std::string, std::string> sentinel;  // the sentinel_* flags given
};

void add_bench_options(CLI::App& app, BenchOptions& o) {
  app.add_option("--redis-url", o.redis_url, "Redis to benchmark (its data is flushed!); rediss:// for TLS")->required();
  add_flags(app, tls_option_specs(), o.tls);
  add_flags(app, sentinel_option_specs(), o.sentinel);
  app.add_flag("--quick", o.quick, "CI sizes (the whole run takes about 2 minutes)");
  app.add_option("--json", o.json_path, "write the results as JSON here (default: WORK_DIR/bench-results.json)");
  app.add_option("--work-dir", o.work_dir, "logs and generated files (default: a new /tmp/expiry-bench.XXXXXX)");
  app.add_option("--bin-dir", o.bin_dir, "where relay/expiry-relay and ctl/expiry-ctl are (default: the build's src/)");
  app.add_option("--only", o.only,
                 "comma-separated scenarios to run: bulk,idle,steady,burst,backlog,cancel,kill, and deadline, cluster "
                 "and recur (not run by default)");
  app.add_option("--cluster-url", o.cluster_url, "cluster scenario: any node of a Redis Cluster (its data is flushed!)");
  app.add_option("--cluster-buckets", o.cluster_buckets, "cluster scenario: buckets on the cluster (default 64)");
  app.add_option("--standalone-buckets", o.standalone_buckets,
                 "cluster scenario: buckets on the single Redis (default 1, the single-Redis default)");
  app.add_option("--rounds", o.rounds, "burst and backlog: interleaved rounds per system, the fastest is reported (default 1)")
      ->check(CLI::Range(1, 20));
  app.add_option("--backdrop", o.backdrop, "idle and steady: far-future tasks pending (default 1000000, --quick 100000)")
      ->check(CLI::Range(0LL, 10000000LL));
  app.add_option("--steady-rate", o.steady_rate, "steady: tasks scheduled per second (default 1000, --quick 200)")
      ->check(CLI::Range(1LL, 20000LL));
  app.add_option("--steady-seconds", o.steady_seconds, "steady: seconds of scheduling (default 30, --quick 10)")
      ->check(CLI::Range(1, 600));
  app.add_option("--steady-producers", o.steady_producers,
                 "steady: producer connections, each scheduling one task at a time (default 1; one round trip "
                 "at a time keeps up with about 4,000 tasks/s here)")
      ->check(CLI::Range(1, 64));
  app.add_option("--ttl-keys", o.ttl_keys, "steady: unrelated keys with a 1-day TTL (default 100000, --quick 20000)")
      ->check(CLI::Range(0LL, 10000000LL));
  app.add_option("--steady-systems", o.steady_systems, "steady: comma-separated systems to run (default all three)");
  app.add_option("--recur-schedules", o.recur_schedules,
                 "recur: recurring schedules, each firing once a minute (default 100000, --quick 10000)")
      ->check(CLI::Range(1LL, 10000000LL));
  app.add_option("--recur-minutes", o.recur_minutes, "recur: minutes measured (default 3, --quick 1)")
      ->check(CLI::Range(1, 24));
  app.add_option("--recur-rule", o.recur_rule,
                 "recur: every (@every 1m, anchors spread over the minute; default) or cron (S * * * * *, S = i mod 60)")
      ->check(CLI::IsMember({"every", "cron"}));
  app.add_option("--recur-instants", o.recur_instants,
                 "recur: instants per schedule at creation (default 0: 9 + i mod 24, so 1/24 of the schedules refill "
                 "each minute as in a long run; 9: every schedule asks at its 2nd occurrence)")
      ->check(CLI::Range(0LL, 256LL));
  app.add_option("--relay-flag", o.relay_flags,
                 "extra flag for the relay under test, not the baselines (repeat; e.g. --relay-flag=--sweep-batch=200)");
}

std::set<std::string> split_names(const std::string& list) {
  std::set<std::string> names;
  std::istringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) names.insert(name);
  return names;
}

// The bench's context from its options; creates the work directory and defaults the JSON path
// in `o`. Throws Error for a bad URL, a missing executable or no work directory.
BenchContext bench_context_from(BenchOptions& o) {
  BenchContext ctx;
  ctx.quick = o.quick;
  ctx.sizes = o.quick ? quick_sizes() : full_sizes();
  ctx.redis_url = o.redis_url;
  ctx.relay_bin = o.bin_dir + "/relay/expiry-relay";
  ctx.ctl_bin = o.bin_dir + "/ctl/expiry-ctl";
  ctx.canceller_bin = o.bin_dir + "/orders/order-canceller";
  ctx.relay_extra_flags = o.relay_flags;
  if (o.rounds > 0) ctx.sizes.drain_rounds = o.rounds;
  if (o.backdrop >= 0) ctx.sizes.steady_backdrop = static_cast<size_t>(o.backdrop);
  if (o.steady_rate > 0) ctx.sizes.steady_rate = static_cast<int>(o.steady_rate);
  if (o.steady_seconds > 0) ctx.sizes.steady_seconds = o.steady_seconds;
  if (o.steady_producers > 0) ctx.sizes.steady_producers = static_cast<size_t>(o.steady_producers);
  if (o.ttl_keys >= 0) ctx.sizes.steady_ttl_keys = static_cast<size_t>(o.ttl_keys);
  if (o.recur_schedules > 0) ctx.sizes.recur_schedules = static_cast<size_t>(o.recur_schedules);
  if (o.recur_minutes > 0) ctx.sizes.recur_minutes = o.recur_minutes;
  ctx.recur_rule = o.recur_rule;
  ctx.recur_instants = static_cast<size_t>(o.recur_instants);
  ctx.steady_systems = split_names(o.steady_systems);
  ctx.cluster_url = o.cluster_url;
  ctx.cluster_buckets = o.cluster_buckets;
  ctx.standalone_buckets = o.standalone_buckets;
  if (split_names(o.only).count("cluster") && o.cluster_url.empty()) {
    throw ConfigError("--only cluster needs --cluster-url (scripts/bench.sh --cluster starts one)");
  }
  for (int b : {o.cluster_buckets, o.standalone_buckets}) {
    if (const auto error = bucket_count_error(b)) throw ConfigError(*error);
  }
  ctx.redis = parse_redis_url(o.redis_url);
  // The tls_* settings as every program reads them: flag, or EXPIRY_BENCH_TLS_* in the environment.
  apply_tls_settings(Settings::resolve(tls_option_specs(), nullptr, "", process_env(), "EXPIRY_BENCH", o.tls),
                     ctx.redis.tls);
  ctx.tls_flags = tls_flags(ctx.redis.tls);
  // Through Sentinel (EXPIRY_BENCH_SENTINEL_* in the environment too): the bench's connections
  // find the master, and the relays and expiry-ctl it starts get the same flags.
  const Settings sentinel =
      Settings::resolve(sentinel_option_specs(), nullptr, "", process_env(), "EXPIRY_BENCH", o.sentinel);
  apply_sentinel_settings(sentinel, ctx.redis.sentinel);
  for (const char* name : {"sentinel", "sentinel_master", "sentinel_password_file"}) {
    if (sentinel.text(name).empty()) continue;
    std::string flag = std::string("--") + name + "=" + sentinel.text(name);
    std::replace(flag.begin(), flag.begin() + static_cast<std::ptrdiff_t>(flag.find('=')), '_', '-');
    ctx.tls_flags.push_back(flag);
  }
  if (access(ctx.relay_bin.c_str(), X_OK) != 0) throw ConfigError("no executable " + ctx.relay_bin);
  if (access(ctx.ctl_bin.c_str(), X_OK) != 0) throw ConfigError("no executable " + ctx.ctl_bin);
  if (o.work_dir.empty()) {
    char tmpl[] = "/tmp/expiry-bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw Error("cannot create a work directory in /tmp");
    o.work_dir = tmpl;
  }
  ctx.work_dir = o.work_dir;
  if (o.json_path.empty()) o.json_path = o.work_dir + "/bench-results.json";
  return ctx;
}

// The scenarios named in `wanted`, in their fixed order.
void run_scenarios(BenchContext& ctx, SyncConnection& conn, const std::set<std::string>& wanted, BenchReport& report) {
  if (wanted.count("bulk")) run_bulk_scenario(ctx, conn, report);
  if (wanted.count("idle")) {
    ensure_backdrop(ctx, conn, ctx.sizes.steady_backdrop);
    run_idle_scenario(ctx, conn, report);
  }
  if (wanted.count("steady")) run_steady_scenario(ctx, conn, report);
  if (wanted.count("burst")) run_burst_scenario(ctx, conn, report);
  if (wanted.count("backlog")) run_backlog_scenario(ctx, conn, report);
  if (wanted.count("cancel")) run_cancel_scenario(ctx, conn, report);
  if (wanted.count("kill")) run_kill_scenario(ctx, conn, report);
  if (wanted.count("deadline")) run_deadline_scenario(ctx, conn, report);
  if (wanted.count("cluster")) run_cluster_scenario(ctx, report);
  if (wanted.count("recur")) run_recur_scenario(ctx, conn, report);
}

// Prepares Redis, records the machine and runs the scenarios. Throws on any failure.
void run_bench(BenchContext& ctx, const BenchOptions& o, BenchReport& report) {
  SyncConnection conn(ctx.redis, SyncConnection::Options{std::chrono::milliseconds(2000), std::chrono::seconds(60)});
  conn.load_library();
  configure_redis_for_bench(conn);
  ctx.redis_pid = static_cast<pid_t>(info_integer(conn, "server", "process_id"));
  report.json()["mode"] = o.quick ? "quick" : "full";
  report.json()["machine"] = machine_json(conn);
  report.json()["payload_bytes"] = ctx.payload_bytes;
  report.json()["relay_extra_flags"] = o.relay_flags;
  report.json()["drain_rounds"] = ctx.sizes.drain_rounds;
  progress("expiry-bench " + std::string(o.quick ? "--quick" : "full") + ", work dir " + o.work_dir);
  const auto start = std::chrono::steady_clock::now();
  run_scenarios(ctx, conn, split_names(o.only), report);
  conn.checked({"FLUSHALL"});
  evaluate_targets(report);
  report.json()["machine"]["loadavg_at_end"] = read_first_line("/proc/loadavg");
  report.json()["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_machine_line(const BenchReport& report, bool quick) {
  const auto& m = report.json()["machine"];
  std::cout << "expiry-bench " << (quick ? "--quick" : "(full)") << ": " << m["nproc"] << " cores, "
            << m["cpu_model"].get<std::string>() << ", " << m["server"].get<std::string>()
            << "; load average at start " << m["loadavg_at_start"].get<std::string>() << ", at end "
            << m["loadavg_at_end"].get<std::string>() << "; kernel DAMON schemes on: "
            << (m["damon_schemes_on"].get<std::string>().empty() ? "none" : m["damon_schemes_on"].get<std::string>())
            << "; " << fixed(report.json()["seconds"].get<double>(), 0) << " s\n";
}

// Prints the results and writes the JSON; returns the exit code.
int report_results(BenchReport& report, const BenchOptions& o) {
  print_machine_line(report, o.quick);
  report.print(std::cout);
  std::ofstream out(o.json_path);
  out << report.final_json().dump(2) << "\n";
  if (!out) {
    std::cerr << "expiry-bench: cannot write " << o.json_path << "\n";
    return 2;
  }
  std::cout << "\nJSON: " << o.json_path << "\n";
  return report.integrity_ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"expiry-bench: measures expiry-relay against its baselines and ceilings (docs/benchmarks.md)."};
  BenchOptions options;
  add_bench_options(app, options);
  use_readable_help(app);
  CLI11_PARSE(app, argc, argv);

  BenchContext ctx;
  try {
    ctx = bench_context_from(options);
  } catch (const Error& e) {
    std::cerr << "expiry-bench: " << e.what() << "\n";
    return 2;
  }
  BenchReport report;
  try {
    run_bench(ctx, options, report);
  } catch (const std::exception& e) {
    report.print(std::cout);
    std::cerr << "expiry-bench: " << e.what() << "\n";
    return 2;
  }
  return report_results(report, options);
}
