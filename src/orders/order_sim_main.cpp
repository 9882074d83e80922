// order-sim: creates orders with payment timeouts, pays a share, prints the demo summary.
// SIGTERM or SIGINT cuts the run short: no new orders, a wait of at most --drain-ms for the
// orders in flight (a second signal ends it), then the summary, marked "cut short".
// Exit code 0 when nothing was wrongly cancelled or missed (also when cut short), 1 otherwise
// or on a Redis failure, 2 for bad input.
#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "config/service_options.h"
#include "config/settings.h"
#include "functions/key_layout.h"
#include "functions/task_options.h"
#include "orders/order_sim.h"

namespace {

using namespace expiry;

StopRequest g_stop;  // written by on_stop_signal only

extern "C" void on_stop_signal(int signo) {
  int none = 0;
  g_stop.first_signal.compare_exchange_strong(none, signo);
  g_stop.count.fetch_add(1);
}

// SIGTERM (docker stop) and SIGINT (Ctrl-C) become stop requests. SA_RESTART: blocking Redis
// calls carry on (hiredis also retries a read interrupted with EINTR).
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

// The connection options, then order-sim's own.
std::vector<OptionSpec> order_sim_option_specs() {
  auto specs = connection_option_specs();
  append_specs(specs, {
      {"rate", OptionKind::Integer, "orders created per second", "100", 1, 100000},
      {"duration_ms", OptionKind::Integer, "how long orders are created", "20000", 1, 86400000},
      {"timeout_ms", OptionKind::Integer, "payment timeout of each order", "3000", 1, 86400000},
      {"paid_share", OptionKind::String, "share of orders paid before their timeout, 0..1", "0.5"},
      {"grace_ms", OptionKind::Integer, "wait after the last due time before counting misses", "3000", 0, 3600000},
      {"drain_ms", OptionKind::Integer,
       "after SIGTERM/SIGINT, longest wait for the payments and cancels of orders in flight", "5000", 0, 3600000},
      {"stream", OptionKind::String, "stream the timeout tasks are forwarded to (order-canceller reads it)",
       kOrderTimeoutStream},
      {"run_id", OptionKind::String, "prefix of order ids (default sim-<pid>-<unix time>)", ""},
      {"seed", OptionKind::Integer, "random seed", "1", 0, 4294967295LL},
      {"webhook", OptionKind::String,
       "schedule each timeout with webhook=NAME, for expiry-webhook to deliver (default: none, for order-canceller)",
       ""},
  });
  return specs;
}

// paid_share: a number between 0 and 1, in full. Throws ConfigError.
double paid_share_from(const Settings& settings) {
  double share = 0;
  try {
    size_t used = 0;
    share = std::stod(settings.text("paid_share"), &used);
    if (used != settings.text("paid_share").size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw ConfigError(settings.source("paid_share") + ": paid_share must be a number between 0 and 1");
  }
  if (!(share >= 0 && share <= 1)) {
    throw ConfigError(settings.source("paid_share") + ": paid_share must be between 0 and 1");
  }
  return share;
}

// Throws Error (ConfigError) for settings that do not make a run.
OrderSimConfig order_sim_config_from(const Settings& settings) {
  OrderSimConfig config;
  apply_connection_settings(settings, config.redis, config.ns);
  config.buckets = apply_bucket_setting(settings);
  config.rate = static_cast<double>(settings.integer("rate"));
  config.duration = std::chrono::milliseconds(settings.integer("duration_ms"));
  config.timeout = std::chrono::milliseconds(settings.integer("timeout_ms"));
  config.grace = std::chrono::milliseconds(settings.integer("grace_ms"));
  config.drain = std::chrono::milliseconds(settings.integer("drain_ms"));
  config.stream = settings.text("stream");
  if (auto err = stream_name_error(config.stream, config.ns)) {
    throw ConfigError(settings.source("stream") + ": " + *err);
  }
  config.paid_share = paid_share_from(settings);
  // The pid alone repeats in containers (always 1), where a second run on the same Redis would
  // meet the first run's orders: the start time makes the default unique.
  config.run_id = settings.text("run_id").empty()
                      ? "sim-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr))
                      : settings.text("run_id");
  config.seed = static_cast<uint32_t>(settings.integer("seed"));
  config.webhook = settings.text("webhook");
  if (!config.webhook.empty()) {
    if (auto err = webhook_name_error(config.webhook)) throw ConfigError(settings.source("webhook") + ": " + *err);
  }
  return config;
}

// Runs the simulation and prints its summary; returns the exit code.
int run_and_report(const OrderSimConfig& config, const std::string& json_path) {
  install_stop_handlers();
  try {
    const auto summary = run_order_sim(config, &g_stop);
    std::cout << summary.text();
    if (!json_path.empty()) std::ofstream(json_path) << summary.json() << "\n";
    return summary.ok() ? 0 : 1;
  } catch (const ConfigError& e) {  // e.g. TLS that does not fit the server (io/tls_context.h)
    std::cerr << "order-sim: " << escape_text(e.what()) << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "order-sim: " << escape_text(e.what()) << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"order-sim: creates orders, schedules their payment timeouts through expiry-relay, pays a share,\n"
               "and reports wrongly cancelled and missed orders. Options also as ORDER_SIM_<NAME>."};
  std::map<std::string, std::string> flags;
  const auto specs = order_sim_option_specs();
  add_flags(app, specs, flags);
  std::string json_path;
  app.add_option("--summary-json", json_path, "also write the summary as JSON to this file");
  add_version_flag(app, "order-sim");
  if (auto code = parse_command_line(app, argc, argv, "order-sim")) return *code;

  OrderSimConfig config;
  try {
    config = order_sim_config_from(Settings::resolve(specs, nullptr, "", process_env(), "ORDER_SIM", flags));
  } catch (const Error& e) {
    std::cerr << "order-sim: configuration error: " << escape_text(e.what()) << "\n";
    return 2;
  }
  return run_and_report(config, json_path);
}
