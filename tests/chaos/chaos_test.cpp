// The chaos test: three relays (connected through a TcpProxy) and two order cancellers against
// one Redis with AOF, under a seeded random schedule of faults, while orders are created and
// paid and their timeouts scheduled, rescheduled and cancelled. At the end every timeout that was
// due and not cancelled must be in the stream exactly once with its payload, no cancelled or
// replaced one may be, and every order must be paid or cancelled as its history says.
// EXPIRY_CHAOS_SEED=<n> replays a run; EXPIRY_CHAOS_SOAK_S=<seconds> runs the longer, bigger soak.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chaos/task_ledger.h"
#include "chaos/tcp_proxy.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/stream_entry.h"
#include "harness/child_process.h"
#include "integration/relay/relay_harness.h"
#include "orders/order_canceller.h"
#include "redis/redis_time.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/tls_certs.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kStream = "expiry:stream";
const std::string kDeadStream = "expiry:stream:dead";
const std::string kGroup = "workers";
constexpr milliseconds kTick{10};  // producer pacing
// How long faults may go on after the load, until each kind was injected twice.
constexpr auto kFaultOvertime = std::chrono::seconds(60);
constexpr const char* kOverflowLogLine = "overcoming of output buffer limits";
// pubsub_overflow: when the freeze starts pushing filler events, and the size of each.
constexpr std::chrono::milliseconds kOverflowFillerAfter{1000};
constexpr size_t kOverflowFillerBytes = 1 << 20;

enum class Fault : size_t {
  KillRelay,
  KillCanceller,
  ClientKillPubsub,
  ClientKillCmd,
  RedisRestart,
  PubsubOverflow,
  NetworkCut,
  FunctionFlush,
};
constexpr size_t kFaultKinds = 8;
constexpr std::array<const char*, kFaultKinds> kFaultNames = {
    "kill_relay",    "kill_canceller",  "client_kill_pubsub", "client_kill_cmd",
    "redis_restart", "pubsub_overflow", "network_cut",        "function_flush"};

// The size of one run: the CI size by default, the soak size when EXPIRY_CHAOS_SOAK_S is set.
struct ChaosPlan {
  bool soak = false;
  // The relays (through the proxy) and the cancellers talk TLS to a TLS port of the same Redis;
  // the test's own connection stays on the plain port.
  bool tls = false;
  milliseconds load{45000};             // orders are created and faults injected for this long
  long long spread_tasks = 10000;       // created at a steady rate over the load phase
  int bursts = 2;                       // bursts of burst_size orders due in the same millisecond
  int burst_size = 3000;
  int overflow_burst_size = 4000;       // the burst of each pubsub_overflow fault
  long long max_delay_ms = 6000;        // timeout of spread orders
  long long max_relay_pause_ms = 3000;  // kill_relay: kill to restart
  milliseconds cut_length{5000};        // network_cut
  milliseconds freeze_limit{5000};      // pubsub_overflow: longest freeze of the relays
  milliseconds settle_limit{90000};     // after the load: schedule empty, group drained
};

// A loopback port nothing listens on now (the kernel's pick), for the TLS port.
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(addr.sin_port);
}

ChaosPlan plan_from_env() {
  ChaosPlan plan;
  const char* soak = std::getenv("EXPIRY_CHAOS_SOAK_S");
  if (soak == nullptr || *soak == '\0') return plan;
  const long long seconds = std::max(60LL, std::atoll(soak));
  const long long load_s = seconds - 20;  // the rest: start-up, the last timeouts, the checks
  plan.soak = true;
  plan.load = milliseconds(load_s * 1000);
  plan.spread_tasks = load_s * 400;
  plan.bursts = static_cast<int>(std::max(2LL, load_s / 20));
  plan.burst_size = 5000;
  plan.overflow_burst_size = 6000;
  plan.max_delay_ms = 10000;
  plan.max_relay_pause_ms = 5000;
  plan.settle_limit = milliseconds(180000);
  return plan;
}

uint64_t seed_from_env() {
  const char* text = std::getenv("EXPIRY_CHAOS_SEED");
  if (text != nullptr && *text != '\0') return std::strtoull(text, nullptr, 10);
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

// EXPIRY_CHAOS_RELAY_BIN and EXPIRY_CHAOS_CANCELLER_BIN run other builds of the binaries
// (a sanitizer build, a candidate fix); by default the ones built with this test.
std::string binary(const char* env_name, const char* built) {
  const char* path = std::getenv(env_name);
  return path != nullptr && *path != '\0' ? path : built;
}

long long system_now_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string tail(const std::string& text, size_t max_chars = 3000) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

// The last `max_lines` lines of a log that report errors.
std::string error_lines(const std::string& log, size_t max_lines = 5) {
  std::vector<std::string> found;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(" error ") != std::string::npos || line.find(" critical ") != std::string::npos) {
      found.push_back(line);
    }
  }
  std::string out;
  for (size_t i = found.size() > max_lines ? found.size() - max_lines : 0; i < found.size(); ++i) {
    out += found[i] + "\n";
  }
  return out;
}

// How an order's life goes after it is created; chosen at random per order.
enum class Fate { Plain, PayEarly, PayRacy, Reschedule, RescheduleTwice, RescheduleThenPay };

struct Order {
  std::string key;      // "order:<id>": the order hash, and the id of its timeout task
  std::string payload;  // {"order_id":"<id>"}
  Fate fate = Fate::Plain;
  int reschedules = 0;
};

// A deferred step: an order's payment or reschedule, or the restart of a killed process.
struct Action {
  enum class Kind { Pay, Reschedule, RestartRelay, RestartCanceller };
  Clock::time_point at;
  Kind kind;
  size_t index;  // order, relay slot or canceller slot
  bool operator>(const Action& other) const { return at > other.at; }
};

// One pipelined command and what to do with its reply; `redis_now_ms` is an upper bound of the
// Redis clock when the command ran.
struct Op {
  std::vector<std::string> argv;
  std::function<void(const Reply&, long long redis_now_ms)> on_reply;
};

// A relay or canceller process, restarted in the same slot after each kill.
struct Slot {
  std::string base;      // relay instance name, or the canceller's base consumer name
  std::string name;      // relay: = base; canceller: base-g<generation> (a fresh consumer per start)
  std::string log_path;  // every generation appends here
  std::unique_ptr<ChildProcess> process;
  bool killed = false;   // killed (by the test, or it exited): a restart is due
  int generation = 0;
};

// One chaos run. Owns every process it starts; the destructor SIGKILLs whatever still runs
// (relays and cancellers first, then the proxy, then Redis).
class ChaosRun {
 public:
  ChaosRun(ChaosPlan plan, uint64_t seed);
  ~ChaosRun();
  ChaosRun(const ChaosRun&) = delete;
  ChaosRun& operator=(const ChaosRun&) = delete;

  void run();

 private:
  // Processes.
  void start_relay(Slot& slot);
  void start_canceller(Slot& slot);
  // The tls_* flags of the relays and cancellers when plan_.tls.
  void add_tls_flags(std::vector<std::string>& args) const;
  bool all_relays_ready();
  void restart_killed();
  void check_children();
  void stop_all_gracefully();

  // Load.
  void run_load();
  Fate random_fate();
  long long spread_delay_ms();
  void add_create(std::vector<Op>& ops, const std::string& id, ScheduleMode mode, long long ms, Fate fate);
  void add_burst(std::vector<Op>& ops, const std::string& prefix, int size, long long lead_ms, bool plain);
  void on_scheduled(size_t index, const Reply& reply, long long redis_now_ms);
  void plan_next_step(size_t index, long long due_ms, long long redis_now_ms);
  void run_action(const Action& action, std::vector<Op>& ops);
  void add_reschedule(size_t index, std::vector<Op>& ops);
  void add_pay(size_t index, std::vector<Op>& ops);
  void execute(std::vector<Op> ops);
  void producer_error(const std::string& what, const Reply& reply);

  // Faults.
  Fault next_fault_kind();
  void start_next_fault(std::vector<Op>& ops);
  bool inject(Fault kind, std::vector<Op>& ops);
  bool kill_relay();
  bool kill_canceller();
  bool client_kill_commands();
  void restart_redis();
  bool freeze_relays_for_overflow(std::vector<Op>& ops);
  void thaw_relays();
  void end_faults_due(Clock::time_point now);
  bool fault_active() const { return cut_until_.has_value() || frozen_; }
  size_t overflow_log_count() const;

  // The end.
  bool group_drained();
  void settle_and_check();
  void log_line(const std::string& text);

  // Load draws: fates, delays, timing of payments and reschedules.
  long long uniform(long long lo, long long hi) { return std::uniform_int_distribution<long long>(lo, hi)(load_rng_); }
  double uniform_real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(load_rng_); }
  // Fault draws, from their own generator, so that a seed replays the same sequence of faults.
  long long fault_uniform(long long lo, long long hi) {
    return std::uniform_int_distribution<long long>(lo, hi)(fault_rng_);
  }
  milliseconds fault_gap() { return milliseconds(fault_uniform(200, 1000)); }

  const ChaosPlan plan_;
  const uint64_t seed_;
  std::mt19937_64 load_rng_;
  std::mt19937_64 fault_rng_;
  const KeyLayout keys_{"expiry"};
  const Clock::time_point started_ = Clock::now();
  std::string artefacts_;                  // logs of relays and cancellers, kept if the test fails

  // Declaration order is destruction order reversed: children go first, Redis last.
  std::unique_ptr<TlsCerts> certs_;            // plan_.tls
  int tls_port_ = 0;                            // plan_.tls: Redis's TLS port
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<TcpProxy> proxy_;
  std::unique_ptr<SyncConnection> redis_;       // producer and control connection, direct to Redis
  std::vector<Slot> relays_;
  std::vector<Slot> cancellers_;

  TaskLedger ledger_;
  std::vector<Order> orders_;
  std::priority_queue<Action, std::vector<Action>, std::greater<>> actions_;
  std::vector<Op> followups_;              // cancels after accepted payments, run in the same tick
  Clock::time_point load_end_;

  std::vector<Fault> fault_bag_;           // each kind once per round, shuffled
  std::array<int, kFaultKinds> fault_counts_{};
  Clock::time_point next_fault_at_;
  std::optional<Clock::time_point> cut_until_;
  bool frozen_ = false;
  Clock::time_point freeze_deadline_;
  Clock::time_point filler_from_;
  size_t overflow_before_ = 0;
  Clock::time_point next_log_check_;
  bool flush_pending_ = false;             // FUNCTION FLUSH goes into the next pipeline

  // Details for the report.
  int burst_count_ = 0;
  int overflow_disconnects_ = 0;           // Redis log lines: subscriber over the output buffer limit
  int overflow_unconfirmed_ = 0;           // freezes that ended without such a disconnect
  int canceller_kills_mid_batch_ = 0;
  int cuts_held_ = 0;                      // network cuts that held new connections (else refused)
  int pubsub_clients_killed_ = 0;
  int cmd_clients_killed_ = 0;
  int reschedules_ = 0;
  int payments_accepted_ = 0;
  int unexpected_exits_ = 0;
  int producer_errors_ = 0;
};

ChaosRun::ChaosRun(ChaosPlan plan, uint64_t seed)
    : plan_(plan), seed_(seed), load_rng_(seed), fault_rng_(seed ^ 0x9e3779b97f4a7c15ULL) {
  std::string tmpl = "/tmp/expiry-chaos-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  artefacts_ = tmpl;
  RedisServer::Options opts;
  opts.extra_config_lines = {"appendonly yes", "appendfsync always",
                             "client-output-buffer-limit pubsub 256kb 128kb 1"};
  if (plan_.tls) {
    certs_ = std::make_unique<TlsCerts>();
    tls_port_ = free_loopback_port();
    for (const std::string& line :
         {"tls-port " + std::to_string(tls_port_), "tls-cert-file " + certs_->server().cert,
          "tls-key-file " + certs_->server().key, "tls-ca-cert-file " + certs_->ca_file(),
          std::string("tls-auth-clients no")}) {
      opts.extra_config_lines.push_back(line);
    }
  }
  server_ = std::make_unique<RedisServer>(opts);
  proxy_ = std::make_unique<TcpProxy>(plan_.tls ? tls_port_ : server_->port());
  redis_ = connect_redis(server_->host(), server_->port());
  for (const char* name : {"r1", "r2", "r3"}) {
    relays_.push_back(Slot{name, name, artefacts_ + "/relay-" + name + ".log", nullptr, false, 0});
  }
  for (const char* name : {"c1", "c2"}) {
    cancellers_.push_back(Slot{name, name, artefacts_ + "/canceller-" + name + ".log", nullptr, false, 0});
  }
}

ChaosRun::~ChaosRun() {
  // SIGKILL also ends stopped (frozen) processes.
  for (auto& slot : relays_) slot.process.reset();
  for (auto& slot : cancellers_) slot.process.reset();
  if (server_) {
    std::ofstream(artefacts_ + "/redis.log") << server_->log();
  }
  const bool keep = ::testing::Test::HasFailure();
  if (keep) {
    std::cout << "chaos: logs kept in " << artefacts_ << "\n";
  } else {
    std::error_code ec;
    std::filesystem::remove_all(artefacts_, ec);
  }
}

void ChaosRun::log_line(const std::string& text) {
  const double t = std::chrono::duration<double>(Clock::now() - started_).count();
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << "chaos: t=" << t << "s " << text << "\n";
  std::cout << out.str() << std::flush;
}

// --- processes --------------------------------------------------------------------------------

void ChaosRun::start_relay(Slot& slot) {
  const std::string url = std::string(plan_.tls ? "rediss" : "redis") + "://127.0.0.1:" + std::to_string(proxy_->port()) + "/0";
  std::vector<std::string> args = {"--redis-url",          url,    "--instance",           slot.name,
                                   "--reconnect-initial-ms", "20",  "--reconnect-max-ms",   "500",
                                   "--connect-timeout-ms", "1000", "--watchdog-interval-ms", "200",
                                   "--watchdog-timeout-ms", "1000", "--health-probe-interval-ms", "200"};
  add_tls_flags(args);
  ++slot.generation;
  slot.process = std::make_unique<ChildProcess>(binary("EXPIRY_CHAOS_RELAY_BIN", EXPIRY_RELAY_BIN), args,
                                                std::vector<std::pair<std::string, std::string>>{}, slot.log_path);
  slot.killed = false;
}

void ChaosRun::add_tls_flags(std::vector<std::string>& args) const {
  if (!plan_.tls) return;
  args.push_back("--tls-ca-cert-file");
  args.push_back(certs_->ca_file());
}

void ChaosRun::start_canceller(Slot& slot) {
  ++slot.generation;
  slot.name = slot.base + "-g" + std::to_string(slot.generation);
  // The relays forward to their default stream, which the canceller reads only when told.
  const std::string url = plan_.tls ? "rediss://127.0.0.1:" + std::to_string(tls_port_) + "/0" : server_->url();
  std::vector<std::string> args = {"--redis-url",          url,            "--consumer",           slot.name,
                                   "--block-ms",           "200",          "--watchdog-interval-ms", "200",
                                   "--watchdog-timeout-ms", "2000",        "--min-idle-ms",        "1000",
                                   "--reclaim-interval-ms", "250",         "--stream",             kStream};
  add_tls_flags(args);
  slot.process = std::make_unique<ChildProcess>(binary("EXPIRY_CHAOS_CANCELLER_BIN", ORDER_CANCELLER_BIN), args,
                                                std::vector<std::pair<std::string, std::string>>{}, slot.log_path);
  slot.killed = false;
}

bool ChaosRun::all_relays_ready() {
  for (const auto& slot : relays_) {
    if (!relay_ready(*redis_, slot.name)) return false;
  }
  return true;
}

void ChaosRun::restart_killed() {
  for (auto& slot : relays_) {
    if (slot.killed) start_relay(slot);
  }
  for (auto& slot : cancellers_) {
    if (slot.killed) start_canceller(slot);
  }
}

// A relay or canceller that exits without being killed is a product failure: report it with its
// log, and restart it so the run goes on.
void ChaosRun::check_children() {
  auto check = [&](std::vector<Slot>& slots, bool relay) {
    for (auto& slot : slots) {
      if (slot.killed || !slot.process || slot.process->running()) continue;
      ++unexpected_exits_;
      const int status = slot.process->terminate();
      ADD_FAILURE() << slot.name << " exited by itself with status " << status << "; log tail:\n"
                    << tail(slot.process->output());
      if (relay) {
        start_relay(slot);
      } else {
        start_canceller(slot);
      }
    }
  };
  check(relays_, true);
  check(cancellers_, false);
}

void ChaosRun::stop_all_gracefully() {
  for (auto* slots : {&relays_, &cancellers_}) {
    for (auto& slot : *slots) {
      if (!slot.process) continue;
      const int status = slot.process->terminate(std::chrono::seconds(15));
      EXPECT_EQ(status, 0) << slot.name << " did not stop cleanly on SIGTERM; log tail:\n"
                           << tail(slot.process->output());
    }
  }
}

// --- load -------------------------------------------------------------------------------------

Fate ChaosRun::random_fate() {
  const long long r = uniform(0, 99);
  if (r < 60) return Fate::Plain;
  if (r < 72) return Fate::PayEarly;
  if (r < 77) return Fate::PayRacy;
  if (r < 87) return Fate::Reschedule;
  if (r < 92) return Fate::RescheduleTwice;
  return Fate::RescheduleThenPay;
}

long long ChaosRun::spread_delay_ms() {
  if (uniform(0, 9) == 0) return uniform(20, 200);
  return uniform(200, plan_.max_delay_ms);
}

void ChaosRun::producer_error(const std::string& what, const Reply& reply) {
  ++producer_errors_;
  if (producer_errors_ <= 10) ADD_FAILURE() << what << ": unexpected reply " << reply.describe();
}

void ChaosRun::add_create(std::vector<Op>& ops, const std::string& id, ScheduleMode mode, long long ms, Fate fate) {
  const size_t index = orders_.size();
  orders_.push_back(Order{"order:" + id, nlohmann::json{{"order_id", id}}.dump(), fate, 0});
  const Order& order = orders_.back();
  const long long timeout_ms = mode == ScheduleMode::Delay ? ms : std::max(0LL, ms - system_now_ms());
  ops.push_back({{"FCALL", "order_create", "1", order.key, std::to_string(timeout_ms)},
                 [this, index](const Reply& r, long long) {
                   if (r.type != Reply::Type::Integer || r.integer != 1) {
                     producer_error("order_create " + orders_[index].key, r);
                   }
                 }});
  ops.push_back({schedule_argv(keys_, order.key, mode, ms, order.payload),
                 [this, index](const Reply& r, long long now) { on_scheduled(index, r, now); }});
}

void ChaosRun::add_burst(std::vector<Op>& ops, const std::string& prefix, int size, long long lead_ms, bool plain) {
  // `at` mode: every order of the burst gets exactly this due time, however long the pipeline takes.
  const long long due_ms = system_now_ms() + lead_ms;
  for (int i = 0; i < size; ++i) {
    add_create(ops, prefix + "-" + std::to_string(i), ScheduleMode::At, due_ms, plain ? Fate::Plain : random_fate());
  }
  ++burst_count_;
}

void ChaosRun::on_scheduled(size_t index, const Reply& reply, long long redis_now_ms) {
  const Order& order = orders_[index];
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2) {
    producer_error("expiry_schedule " + order.key, reply);
    return;
  }
  const long long due_ms = reply.elements[0].integer;
  const bool replaced = reply.elements[1].integer == 1;
  ledger_.scheduled(order.key, order.payload, due_ms, replaced, redis_now_ms);
  plan_next_step(index, due_ms, redis_now_ms);
}

// Queues the order's next step, timed relative to its (new) due time.
void ChaosRun::plan_next_step(size_t index, long long due_ms, long long redis_now_ms) {
  const Order& order = orders_[index];
  const long long remaining = std::max(0LL, due_ms - redis_now_ms);
  const auto now = Clock::now();
  auto within = [&](double lo, double hi) {
    return now + milliseconds(static_cast<long long>(static_cast<double>(remaining) * uniform_real(lo, hi)));
  };
  switch (order.fate) {
    case Fate::Plain:
      return;
    case Fate::PayEarly:
      actions_.push({within(0.1, 0.7), Action::Kind::Pay, index});
      return;
    case Fate::PayRacy:  // around the due time: the payment races the timeout
      actions_.push({now + milliseconds(std::max(0LL, remaining + uniform(-100, 100))), Action::Kind::Pay, index});
      return;
    case Fate::Reschedule:
      if (order.reschedules == 0) actions_.push({within(0.1, 0.6), Action::Kind::Reschedule, index});
      return;
    case Fate::RescheduleTwice:
      if (order.reschedules < 2) actions_.push({within(0.1, 0.6), Action::Kind::Reschedule, index});
      return;
    case Fate::RescheduleThenPay:
      actions_.push({within(0.1, 0.6), order.reschedules == 0 ? Action::Kind::Reschedule : Action::Kind::Pay, index});
      return;
  }
}

void ChaosRun::run_action(const Action& action, std::vector<Op>& ops) {
  switch (action.kind) {
    case Action::Kind::Pay:
      add_pay(action.index, ops);
      return;
    case Action::Kind::Reschedule:
      add_reschedule(action.index, ops);
      return;
    case Action::Kind::RestartRelay:
      if (relays_[action.index].killed) {
        start_relay(relays_[action.index]);
        log_line("restarted relay " + relays_[action.index].name);
      }
      return;
    case Action::Kind::RestartCanceller:
      if (cancellers_[action.index].killed) {
        start_canceller(cancellers_[action.index]);
        log_line("restarted canceller as " + cancellers_[action.index].name);
      }
      return;
  }
}

void ChaosRun::add_reschedule(size_t index, std::vector<Op>& ops) {
  Order& order = orders_[index];
  const long long due_ms = ledger_.live_due_ms(order.key);
  const long long now_ms = system_now_ms();
  if (due_ms < now_ms + 50) return;  // (nearly) due: let it fire (the producer fell behind)
  // Later than the current due time, so the old one must never fire.
  const long long delay_ms = (due_ms - now_ms) + uniform(500, 3000);
  ++order.reschedules;
  ops.push_back({schedule_argv(keys_, order.key, ScheduleMode::Delay, delay_ms, order.payload),
                 [this, index](const Reply& r, long long now) {
                   if (r.type == Reply::Type::Array && r.elements.size() == 2 && r.elements[1].integer == 1) {
                     ++reschedules_;
                   }
                   on_scheduled(index, r, now);
                 }});
}

void ChaosRun::add_pay(size_t index, std::vector<Op>& ops) {
  const std::string key = orders_[index].key;
  ops.push_back({{"FCALL", "order_pay", "1", key}, [this, key](const Reply& r, long long) {
                   if (r.type != Reply::Type::String && r.type != Reply::Type::Status) {
                     producer_error("order_pay " + key, r);
                     return;
                   }
                   ledger_.pay_answered(key, r.str);
                   if (r.str != "pending") return;  // the timeout cancelled it first
                   ++payments_accepted_;
                   // Paid: cancel its timeout (if it fired meanwhile, the canceller must see "paid").
                   followups_.push_back({cancel_argv(keys_, key), [this, key](const Reply& c, long long now) {
                                           if (c.type != Reply::Type::Integer) {
                                             producer_error("expiry_cancel " + key, c);
                                             return;
                                           }
                                           ledger_.cancel_answered(key, c.integer == 1, now);
                                         }});
                 }});
}

// Runs `ops` as one pipeline followed by TIME. Commands that failed because the libraries were
// flushed are retried, in order, after loading them again; the handlers then run in order with
// the last TIME (an upper bound for every command's execution).
void ChaosRun::execute(std::vector<Op> ops) {
  if (ops.empty()) return;
  if (flush_pending_) {
    const auto at = static_cast<size_t>(fault_uniform(0, static_cast<long long>(ops.size())));
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(at), Op{{"FUNCTION", "FLUSH"}, nullptr});
    flush_pending_ = false;
    log_line("FUNCTION FLUSH inside a pipeline of " + std::to_string(ops.size()) + " commands");
  }
  std::vector<Reply> replies(ops.size());
  std::vector<size_t> todo(ops.size());
  std::iota(todo.begin(), todo.end(), 0);
  long long redis_now_ms = 0;
  for (int attempt = 0; !todo.empty(); ++attempt) {
    if (attempt == 5) throw std::runtime_error("functions still missing after 5 reloads");
    std::vector<std::vector<std::string>> cmds;
    if (attempt > 0) {
      cmds.push_back(load_library_argv());
      cmds.push_back({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
    }
    const size_t first = cmds.size();
    for (size_t i : todo) cmds.push_back(ops[i].argv);
    cmds.push_back({"TIME"});
    std::vector<Reply> out;
    pipeline(*redis_, cmds, &out);
    redis_now_ms = time_reply_ms(out.back()).value_or(0);
    std::vector<size_t> again;
    for (size_t k = 0; k < todo.size(); ++k) {
      if (is_function_missing(out[first + k])) {
        again.push_back(todo[k]);
      } else {
        replies[todo[k]] = std::move(out[first + k]);
      }
    }
    todo.swap(again);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].on_reply) ops[i].on_reply(replies[i], redis_now_ms);
  }
}

void ChaosRun::run_load() {
  const auto start = Clock::now();
  load_end_ = start + plan_.load;
  std::vector<Clock::time_point> burst_times;
  for (int k = 0; k < plan_.bursts; ++k) burst_times.push_back(start + plan_.load * (k + 1) / (plan_.bursts + 1));
  size_t next_burst = 0;
  next_fault_at_ = start + milliseconds(1500);
  long long created = 0;
  for (;;) {
    const auto now = Clock::now();
    // Faults go on past the load until every kind was injected twice (the check below asserts
    // it), for at most kFaultOvertime: on a busy machine each fault takes longer, and the load's
    // time alone fitted 14 of the 16.
    const bool faults_owed = std::any_of(fault_counts_.begin(), fault_counts_.end(), [](int n) { return n < 2; });
    const bool loading = now < load_end_ || (faults_owed && now < load_end_ + kFaultOvertime);
    check_children();
    std::vector<Op> ops;
    if (loading && !fault_active() && now >= next_fault_at_) start_next_fault(ops);
    const double done = std::min(1.0, std::chrono::duration<double>(now - start) / plan_.load);
    const auto target = static_cast<long long>(done * static_cast<double>(plan_.spread_tasks));
    for (; created < target; ++created) {
      add_create(ops, "s" + std::to_string(created), ScheduleMode::Delay, spread_delay_ms(), random_fate());
    }
    if (next_burst < burst_times.size() && now >= burst_times[next_burst]) {
      add_burst(ops, "b" + std::to_string(next_burst), plan_.burst_size, 1500, false);
      log_line("burst of " + std::to_string(plan_.burst_size) + " orders due in the same millisecond");
      ++next_burst;
    }
    end_faults_due(now);
    while (!actions_.empty() && actions_.top().at <= now) {
      const Action action = actions_.top();
      actions_.pop();
      run_action(action, ops);
    }
    execute(std::move(ops));
    execute(std::exchange(followups_, {}));
    if (::testing::Test::HasFatalFailure()) return;
    if (!loading && actions_.empty() && !fault_active()) return;
    std::this_thread::sleep_until(now + kTick);  // paces the load
  }
}

// --- faults -----------------------------------------------------------------------------------

Fault ChaosRun::next_fault_kind() {
  if (fault_bag_.empty()) {
    for (size_t k = 0; k < kFaultKinds; ++k) fault_bag_.push_back(static_cast<Fault>(k));
    std::shuffle(fault_bag_.begin(), fault_bag_.end(), fault_rng_);
  }
  const Fault kind = fault_bag_.back();
  fault_bag_.pop_back();
  return kind;
}

void ChaosRun::start_next_fault(std::vector<Op>& ops) {
  const Fault kind = next_fault_kind();
  if (inject(kind, ops)) {
    ++fault_counts_[static_cast<size_t>(kind)];
  } else {
    fault_bag_.insert(fault_bag_.begin(), kind);  // not possible now: retry it at the end of the round
  }
  if (!fault_active()) next_fault_at_ = Clock::now() + fault_gap();
}

bool ChaosRun::inject(Fault kind, std::vector<Op>& ops) {
  switch (kind) {
    case Fault::KillRelay:
      return kill_relay();
    case Fault::KillCanceller:
      return kill_canceller();
    case Fault::ClientKillPubsub: {
      const Reply r = redis_->command({"CLIENT", "KILL", "TYPE", "pubsub"});
      pubsub_clients_killed_ += static_cast<int>(r.integer);
      log_line("CLIENT KILL TYPE pubsub: " + r.describe());
      return true;
    }
    case Fault::ClientKillCmd:
      return client_kill_commands();
    case Fault::RedisRestart:
      restart_redis();
      return true;
    case Fault::PubsubOverflow:
      return freeze_relays_for_overflow(ops);
    case Fault::NetworkCut: {
      const bool hold = fault_uniform(0, 1) == 1;
      proxy_->cut(hold ? TcpProxy::CutMode::Hold : TcpProxy::CutMode::Refuse);
      cuts_held_ += hold ? 1 : 0;
      cut_until_ = Clock::now() + plan_.cut_length;
      log_line(std::string("network cut between relays and Redis (new connections ") + (hold ? "held" : "refused") +
               ") for " + std::to_string(plan_.cut_length.count()) + " ms");
      return true;
    }
    case Fault::FunctionFlush:
      flush_pending_ = true;
      return true;
  }
  return false;
}

bool ChaosRun::kill_relay() {
  std::vector<size_t> running;
  for (size_t i = 0; i < relays_.size(); ++i) {
    if (!relays_[i].killed) running.push_back(i);
  }
  if (running.empty()) return false;
  const size_t i = running[static_cast<size_t>(fault_uniform(0, static_cast<long long>(running.size()) - 1))];
  relays_[i].process->kill_hard();
  relays_[i].killed = true;
  const long long pause_ms = fault_uniform(200, plan_.max_relay_pause_ms);
  actions_.push({Clock::now() + milliseconds(pause_ms), Action::Kind::RestartRelay, i});
  log_line("kill -9 relay " + relays_[i].name + ", restart in " + std::to_string(pause_ms) + " ms");
  return true;
}

// SIGKILLs a canceller, preferably while it holds delivered, unacknowledged entries: it is
// stopped and checked repeatedly until XPENDING shows entries of its own (bounded).
bool ChaosRun::kill_canceller() {
  std::vector<size_t> running;
  for (size_t i = 0; i < cancellers_.size(); ++i) {
    if (!cancellers_[i].killed) running.push_back(i);
  }
  if (running.empty()) return false;
  const size_t i = running[static_cast<size_t>(fault_uniform(0, static_cast<long long>(running.size()) - 1))];
  Slot& slot = cancellers_[i];
  const pid_t pid = slot.process->pid();
  const bool mid_batch = wait_until(
      [&] {
        ::kill(pid, SIGSTOP);
        const Reply r = redis_->command({"XPENDING", kStream, kGroup, "-", "+", "1", slot.name});
        if (r.type == Reply::Type::Array && !r.elements.empty()) return true;
        ::kill(pid, SIGCONT);
        return false;
      },
      milliseconds(1500), milliseconds(2));
  slot.process->kill_hard();
  slot.killed = true;
  canceller_kills_mid_batch_ += mid_batch ? 1 : 0;
  const long long pause_ms = fault_uniform(100, 1500);
  actions_.push({Clock::now() + milliseconds(pause_ms), Action::Kind::RestartCanceller, i});
  log_line("kill -9 canceller " + slot.name + (mid_batch ? " holding unacknowledged entries" : " (idle)") +
           ", restart in " + std::to_string(pause_ms) + " ms");
  return true;
}

bool ChaosRun::client_kill_commands() {
  const Reply list = redis_->command({"CLIENT", "LIST"});
  std::istringstream lines(list.str);
  std::string line;
  int killed = 0;
  while (std::getline(lines, line)) {
    if (line.find(" name=expiry-relay-cmd-") == std::string::npos) continue;
    const auto id_at = line.find("id=");
    if (id_at != 0) continue;
    const std::string id = line.substr(3, line.find(' ') - 3);
    const Reply r = redis_->command({"CLIENT", "KILL", "ID", id});
    killed += r.type == Reply::Type::Integer ? static_cast<int>(r.integer) : 0;
  }
  if (killed == 0) return false;  // none connected right now
  cmd_clients_killed_ += killed;
  log_line("CLIENT KILL of " + std::to_string(killed) + " relay command connections");
  return true;
}

// SHUTDOWN (AOF with appendfsync always keeps every acknowledged write), a random downtime,
// then the same config, dir and port again.
void ChaosRun::restart_redis() {
  const long long down_ms = fault_uniform(0, 1000);
  log_line("redis restart (down for " + std::to_string(down_ms) + " ms)");
  redis_.reset();
  server_->stop();
  std::this_thread::sleep_for(milliseconds(down_ms));  // holds the fault for its duration
  server_->start();
  redis_ = connect_redis(server_->host(), server_->port());
  ASSERT_TRUE(wait_until(
      [&] { return redis_->command({"INFO", "persistence"}).str.find("\r\nloading:0\r\n") != std::string::npos; },
      milliseconds(10000)))
      << "redis still loading its AOF after 10 s";
}

// Freezes every relay (SIGSTOP) and schedules a burst due at once: the triggers expire with
// nobody claiming them, the expired events pile up in the frozen subscribers' output buffers,
// and Redis drops the subscribers past client-output-buffer-limit pubsub. The kernel's socket
// buffers (loopback receive buffers grow to 32 MB here) can swallow a whole burst's events, so
// from kOverflowFillerAfter on the test also publishes large foreign events on the expired
// channel (the relays ignore them) until Redis logs the disconnect. Thawed once it did, or after
// plan_.freeze_limit.
bool ChaosRun::freeze_relays_for_overflow(std::vector<Op>& ops) {
  restart_killed();
  if (!wait_until([&] { return all_relays_ready(); }, milliseconds(10000))) {
    log_line("pubsub_overflow postponed: relays not all subscribed");
    return false;
  }
  overflow_before_ = overflow_log_count();
  for (auto& slot : relays_) ::kill(slot.process->pid(), SIGSTOP);
  frozen_ = true;
  freeze_deadline_ = Clock::now() + plan_.freeze_limit;
  filler_from_ = Clock::now() + kOverflowFillerAfter;
  add_burst(ops, "o" + std::to_string(burst_count_), plan_.overflow_burst_size, 300, true);
  log_line("relays frozen; burst of " + std::to_string(plan_.overflow_burst_size) +
           " orders due in the same millisecond");
  return true;
}

void ChaosRun::thaw_relays() {
  for (auto& slot : relays_) {
    if (slot.process && slot.process->running()) ::kill(slot.process->pid(), SIGCONT);
  }
  frozen_ = false;
  const size_t seen = overflow_log_count() - overflow_before_;
  overflow_disconnects_ += static_cast<int>(seen);
  overflow_unconfirmed_ += seen == 0 ? 1 : 0;
  log_line("relays thawed; subscribers dropped over the output buffer limit: " + std::to_string(seen));
}

size_t ChaosRun::overflow_log_count() const {
  const std::string log = server_->log();
  size_t count = 0;
  for (size_t at = log.find(kOverflowLogLine); at != std::string::npos; at = log.find(kOverflowLogLine, at + 1)) {
    ++count;
  }
  return count;
}

void ChaosRun::end_faults_due(Clock::time_point now) {
  if (cut_until_ && now >= *cut_until_) {
    proxy_->restore();
    cut_until_.reset();
    log_line("network restored");
    next_fault_at_ = now + fault_gap();
  }
  if (frozen_ && now >= next_log_check_) {
    next_log_check_ = now + milliseconds(50);
    if (overflow_log_count() > overflow_before_ || now >= freeze_deadline_) {
      thaw_relays();
      next_fault_at_ = now + fault_gap();
    } else if (now >= filler_from_) {
      static const std::string filler(kOverflowFillerBytes, 'f');
      redis_->command({"PUBLISH", "__keyevent@0__:expired", "chaos:filler:" + filler});
    }
  }
}

// --- the end ----------------------------------------------------------------------------------

// Every entry was delivered to the group and acknowledged (dead-lettered ones are acknowledged too).
bool ChaosRun::group_drained() {
  const Reply groups = redis_->command({"XINFO", "GROUPS", kStream});
  if (groups.type != Reply::Type::Array) return false;
  long long pending = -1;
  std::string last_delivered;
  for (const auto& g : groups.elements) {
    std::unordered_map<std::string, const Reply*> kv;
    for (size_t i = 0; i + 1 < g.elements.size(); i += 2) kv[g.elements[i].str] = &g.elements[i + 1];
    if (kv.count("name") == 0 || kv["name"]->str != kGroup) continue;
    pending = kv.count("pending") ? kv["pending"]->integer : -1;
    last_delivered = kv.count("last-delivered-id") ? kv["last-delivered-id"]->str : "";
  }
  const Reply last = redis_->command({"XREVRANGE", kStream, "+", "-", "COUNT", "1"});
  const std::string last_id = last.elements.empty() ? "0-0" : last.elements[0].elements[0].str;
  return pending == 0 && last_delivered == last_id;
}

void ChaosRun::settle_and_check() {
  restart_killed();
  ASSERT_TRUE(wait_until([&] { return all_relays_ready(); }, milliseconds(20000)))
      << "relays not ready after the load; r1 log tail:\n"
      << tail(relays_[0].process->output());
  const auto settle_deadline = Clock::now() + plan_.settle_limit;
  auto left = [&] {
    return std::chrono::duration_cast<milliseconds>(std::max(settle_deadline - Clock::now(), Clock::duration::zero()));
  };
  // On a timeout the checks below still run: they say which tasks and orders are affected.
  EXPECT_TRUE(wait_until([&] { return zcard(*redis_) == 0; }, left(), milliseconds(100)))
      << zcard(*redis_) << " tasks still scheduled (seed " << seed_ << ")";
  // Both at once: a handler's retry (expiry_retry) puts its task back in the schedule while the
  // group drains, and the checks below need the schedule empty and the group drained together.
  if (!wait_until([&] { return group_drained() && zcard(*redis_) == 0; }, left(), milliseconds(100))) {
    std::ostringstream why;
    why << "consumer group not drained or tasks scheduled again (seed " << seed_ << "): ZCARD " << zcard(*redis_)
        << "\nXINFO GROUPS " << redis_->command({"XINFO", "GROUPS", kStream}).describe() << "\nXLEN "
        << xlen(*redis_, kStream)
        << "\nXINFO CONSUMERS " << redis_->command({"XINFO", "CONSUMERS", kStream, kGroup}).describe();
    for (const auto& slot : cancellers_) {
      why << "\n--- " << slot.name << " (log " << slot.log_path << "), last errors:\n"
          << error_lines(slot.process->output());
    }
    ADD_FAILURE() << why.str();
  }
  check_children();

  const auto entries = xrange_all(*redis_, kStream);
  const LedgerReport tasks = ledger_.check_stream(entries);
  std::vector<std::string> dead_ids;
  for (const auto& e : xrange_all(*redis_, kDeadStream)) {
    auto it = e.find(entry_field::kId);
    dead_ids.push_back(it == e.end() ? "" : it->second);
  }
  std::unordered_map<std::string, std::string> status;
  const size_t kChunk = 5000;
  for (size_t start = 0; start < orders_.size(); start += kChunk) {
    std::vector<std::vector<std::string>> cmds;
    for (size_t i = start; i < std::min(orders_.size(), start + kChunk); ++i) {
      cmds.push_back({"HGET", orders_[i].key, "status"});
    }
    std::vector<Reply> replies;
    pipeline(*redis_, cmds, &replies);
    for (size_t k = 0; k < replies.size(); ++k) status[orders_[start + k].key] = replies[k].str;
  }
  const OrderReport orders = ledger_.check_orders(status, dead_ids);
  stop_all_gracefully();

  std::vector<long long> lateness;
  size_t via_event = 0;
  for (const auto& e : entries) {
    lateness.push_back(std::stoll(e.at(entry_field::kFiredMs)) - std::stoll(e.at(entry_field::kDueMs)));
    if (e.count(entry_field::kVia) != 0 && e.at(entry_field::kVia) == entry_field::kViaEvent) ++via_event;
  }
  std::sort(lateness.begin(), lateness.end());
  auto pct = [&](double p) {
    return lateness.empty() ? 0 : lateness[std::min(lateness.size() - 1, static_cast<size_t>(p * lateness.size()))];
  };

  auto join = [](const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += "  " + l + "\n";
    return out;
  };
  EXPECT_TRUE(tasks.ok()) << "stream check failed (seed " << seed_ << "): lost=" << tasks.lost
                          << " duplicated=" << tasks.duplicated << " fired_cancelled=" << tasks.fired_cancelled
                          << " fired_replaced=" << tasks.fired_replaced
                          << " payload_mismatch=" << tasks.payload_mismatch << " early=" << tasks.early
                          << " unexpected=" << tasks.unexpected << " anomalies=" << tasks.anomalies << "\n"
                          << join(tasks.problems);
  EXPECT_TRUE(orders.ok()) << "order check failed (seed " << seed_ << "): wrongly_cancelled="
                           << orders.wrongly_cancelled << " missed=" << orders.missed
                           << " (dead-lettered: " << orders.missed_dead_lettered << ")\n"
                           << join(orders.problems);
  EXPECT_EQ(producer_errors_, 0);
  EXPECT_EQ(unexpected_exits_, 0);
  EXPECT_GE(tasks.tasks, 20000u);
  for (size_t k = 0; k < kFaultKinds; ++k) {
    EXPECT_GE(fault_counts_[k], 2) << kFaultNames[k] << " was injected fewer than twice";
  }
  EXPECT_GE(overflow_disconnects_, 1) << "no subscriber was ever pushed past the pubsub output buffer limit";

  int faults = 0;
  std::ostringstream kinds;
  for (size_t k = 0; k < kFaultKinds; ++k) {
    faults += fault_counts_[k];
    kinds << (k ? " " : "") << kFaultNames[k] << "=" << fault_counts_[k];
  }
  const long long duration_s =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started_).count();
  std::cout << "chaos details: orders=" << orders.orders << " stream_entries=" << tasks.entries
            << " expected_entries=" << tasks.expected_entries << " cancelled_tasks=" << tasks.cancelled
            << " replaced_tasks=" << tasks.replaced << " reschedules=" << reschedules_
            << " payments_accepted=" << payments_accepted_ << " orders_cancelled=" << orders.cancelled
            << " orders_paid=" << orders.paid << " bursts=" << burst_count_ << " via_event=" << via_event
            << " dead_lettered=" << dead_ids.size() << " overflow_disconnects=" << overflow_disconnects_
            << " overflow_unconfirmed=" << overflow_unconfirmed_
            << " canceller_kills_mid_batch=" << canceller_kills_mid_batch_ << " cuts_held=" << cuts_held_
            << " pubsub_clients_killed=" << pubsub_clients_killed_ << " cmd_clients_killed=" << cmd_clients_killed_
            << " lateness_ms_p50/p99/max=" << pct(0.5) << "/" << pct(0.99) << "/" << tasks.max_lateness_ms << "\n";
  std::cout << "chaos: tasks=" << tasks.tasks << " faults=" << faults << " (" << kinds.str() << ") lost=" << tasks.lost
            << " duplicated=" << tasks.duplicated << " max_lateness_ms=" << tasks.max_lateness_ms
            << " seed=" << seed_ << " duration_s=" << duration_s << std::endl;
}

void ChaosRun::run() {
  std::cout << "chaos: seed=" << seed_ << " (replay: EXPIRY_CHAOS_SEED=" << seed_ << ")"
            << (plan_.soak ? " soak" : " ci") << (plan_.tls ? " tls" : "") << " load_s=" << plan_.load.count() / 1000
            << " redis=" << server_->url() << " proxy=127.0.0.1:" << proxy_->port() << " logs=" << artefacts_
            << std::endl;
  redis_->command(load_library_argv());
  redis_->command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
  for (auto& slot : relays_) start_relay(slot);
  for (auto& slot : cancellers_) start_canceller(slot);
  ASSERT_TRUE(wait_until([&] { return all_relays_ready(); }, milliseconds(20000)))
      << "relays not ready; r1 log:\n"
      << relays_[0].process->output();
  run_load();
  if (::testing::Test::HasFatalFailure()) return;
  if (cut_until_) proxy_->restore();
  if (frozen_) thaw_relays();
  settle_and_check();
}

TEST(Chaos, NoTaskLostOrDuplicatedUnderFaults) {
  ChaosRun run(plan_from_env(), seed_from_env());
  run.run();
}

// The same faults with the relays and cancellers on TLS (rediss://, through the proxy).
TEST(Chaos, NoTaskLostOrDuplicatedUnderFaultsOverTls) {
  ChaosPlan plan = plan_from_env();
  plan.tls = true;
  ChaosRun run(plan, seed_from_env());
  run.run();
}

}  // namespace
}  // namespace expiry::test
