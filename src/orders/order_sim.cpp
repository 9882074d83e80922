// See order_sim.h. Single-threaded and synchronous: one Producer (its RoutedClient, a connection
// or a cluster router, also carries the orders_v1 calls), a paced loop that sleeps in short
// slices so a stop request is noticed within 50 ms.
#include "orders/order_sim.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <csignal>
#include <iostream>
#include <memory>
#include <queue>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/integers.h"
#include "functions/key_layout.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "orders/order_keys.h"
#include "producer/producer.h"
#include "producer/producer_target.h"
#include "producer/task_placement.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "redis/redis_time.h"

namespace expiry {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

long long OrderSimSummary::percentile(double p) const {
  if (lateness_ms.empty()) return 0;
  std::vector<long long> v = lateness_ms;
  std::sort(v.begin(), v.end());
  const size_t idx = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p / 100.0 * v.size())) - (p > 0 ? 1 : 0));
  return v[idx];
}

namespace {

std::string signal_name(int signo) {
  switch (signo) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal " + std::to_string(signo);
  }
}

}  // namespace

std::string OrderSimSummary::text() const {
  std::ostringstream out;
  if (cut_short()) {
    out << "cut short by " << signal_name(stopped_by) << " after " << ran_ms / 1000 << "." << ran_ms % 1000 / 100
        << " s: no new orders, waited up to " << drain_ms << " ms for those in flight\n";
  }
  out << "orders created:            " << created << "\n"
      << "paid before timeout:       " << paid << "\n"
      << "cancelled by timeout:      " << cancelled << "\n"
      << "payment refused (late):    " << paid_too_late << "\n"
      << "cancel lateness p50/p99/max (ms): " << percentile(50) << " / " << percentile(99) << " / "
      << percentile(100) << "\n"
      << "wrongly cancelled (paid orders cancelled): " << wrongly_cancelled << "\n"
      << "missed (unpaid, still pending after timeout + grace): " << missed << "\n";
  if (cut_short()) {
    out << "left pending (timeout + grace still ahead; their tasks stay scheduled): " << left_pending << "\n";
  }
  out << "result: " << (ok() ? "OK" : "FAILED") << (cut_short() ? " (cut short)" : "") << "\n";
  return out.str();
}

std::string OrderSimSummary::json() const {
  nlohmann::json j = {{"created", created},
                      {"paid", paid},
                      {"cancelled", cancelled},
                      {"paid_too_late", paid_too_late},
                      {"lateness_ms", {{"p50", percentile(50)}, {"p99", percentile(99)}, {"max", percentile(100)}}},
                      {"wrongly_cancelled", wrongly_cancelled},
                      {"missed", missed},
                      {"ok", ok()},
                      {"cut_short", cut_short()}};
  if (cut_short()) {
    j["stopped_by"] = signal_name(stopped_by);
    j["ran_ms"] = ran_ms;
    j["left_pending"] = left_pending;
  }
  return j.dump();
}

namespace {

struct Order {
  std::string id;
  std::string key;   // order_key(id, scheme)
  long long due_ms = 0;
  bool will_pay = false;
  bool paid = false;
};

struct Payment {
  Clock::time_point at;
  size_t order;
  bool operator>(const Payment& o) const { return at > o.at; }
};

const SyncConnection::FunctionLibrary& orders_library() {
  static const SyncConnection::FunctionLibrary library{orders_library_source(), "FUNCTION LOAD orders_v1"};
  return library;
}

// FCALL of an orders_v1 function on order key argv[3], routed by its slot.
Reply fcall_orders(RoutedClient& redis, const std::vector<std::string>& argv) {
  return expect_ok(redis.fcall(argv, key_hash_slot(argv[3]), orders_library()), argv[1]);
}

// Through Sentinel every order's writes are confirmed on the replicas the sentinels see
// healthy, asked at most once a second (Producer::confirm_writes).
ReplicaConfirmation order_confirmation() {
  ReplicaConfirmation c;
  c.automatic = true;
  c.timeout = std::chrono::milliseconds(1000);
  c.recount_after = std::chrono::seconds(1);
  return c;
}

// One run: the orders, the payments still to make and the tally, with one step per phase.
class OrderSim {
 public:
  OrderSim(const OrderSimConfig& config, const StopRequest* stop)
      : config_(config),
        stop_(stop),
        producer_(connect()),
        redis_(&producer_->client()),
        rng_(config.seed) {
    buckets_ = producer_->buckets();
    scheme_ = OrderKeyScheme{producer_->cluster(), buckets_};
  }

  OrderSimSummary run() {
    riding_outages("loading the function libraries", [&](int) {
      redis_->load_library_everywhere(SyncConnection::expiry_library());
      redis_->load_library_everywhere(orders_library());
    });
    create_orders();
    note_stop();
    make_remaining_payments();
    note_stop();
    wait_for_cancels();
    note_stop();
    check_orders();
    return summary_;
  }

 private:
  long long redis_now() {
    const Reply t = riding_outages("TIME", [&](int) { return redis_->command({"TIME"}, 0); });
    const auto ms = time_reply_ms(t);
    if (!ms) throw ReplyError("TIME: unexpected reply " + t.describe());
    return *ms;
  }

  std::unique_ptr<Producer> connect() const {
    return std::make_unique<Producer>(
        ProducerTarget{config_.redis, config_.ns, config_.buckets, config_.stream}, order_confirmation());
  }

  // Runs `op(attempt)`; when the connection to Redis is lost (IoError: a restart of Redis, a
  // network blip), connects again and runs it once more, for at most kOutageWindow. Every `op`
  // here is safe to repeat: creating an order that exists changes nothing, scheduling a timeout
  // again (far from due) replaces it, paying tells a repeat apart by its attempt number, and the
  // rest only reads.
  template <class Op>
  auto riding_outages(const std::string& what, Op op) -> decltype(op(0)) {
    constexpr std::chrono::seconds kOutageWindow{60};
    const auto give_up = Clock::now() + kOutageWindow;
    for (int attempt = 0;; ++attempt) {
      try {
        return op(attempt);
      } catch (const IoError& e) {
        if (Clock::now() >= give_up) throw;
        std::cerr << "order-sim: " << what << ": " << e.what() << "; connecting to Redis again\n";
        reconnect_until(give_up);
      }
    }
  }

  // Replaces the producer with a new connection once Redis answers PING (not LOADING), retrying
  // every 200 ms until `give_up`; the old, broken one stays (and throws IoError) until then.
  void reconnect_until(Clock::time_point give_up) {
    while (Clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(200));  // pacing reconnect attempts
      try {
        auto fresh = connect();
        if (classify(fresh->client().command({"PING"}, 0)) != RedisErrorKind::None) continue;
        producer_ = std::move(fresh);
        redis_ = &producer_->client();
        return;
      } catch (const IoError&) {
        // still down: try again
      }
    }
  }

  // A batch whose replies include a lost connection throws IoError, as a single command does.
  std::vector<Reply> checked_batch(const std::vector<ClusterClient::Routed>& commands) {
    std::vector<Reply> replies = redis_->batch(commands);
    for (const Reply& r : replies) {
      if (r.is_io_error()) throw IoError(r.str);
    }
    return replies;
  }

  // Stop requests: the first ends the creation of orders and starts the drain, bounded by
  // drain_deadline_; a second one, or the deadline, ends the drain.
  bool stop_requested() const { return stop_ != nullptr && stop_->count.load() > 0; }
  bool drain_over() const {
    return (stop_ != nullptr && stop_->count.load() > 1) || Clock::now() >= drain_deadline_;
  }

  // On the first stop request seen: marks the summary cut short and starts the drain.
  void note_stop() {
    if (summary_.cut_short() || !stop_requested()) return;
    summary_.stopped_by = stop_->first_signal.load();
    summary_.ran_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start_).count();
    summary_.drain_ms = config_.drain.count();
    drain_deadline_ = Clock::now() + config_.drain;
    stop_redis_ms_ = redis_now();
    std::cerr << "order-sim: " << signal_name(summary_.stopped_by) << ": no new orders; waiting up to "
              << config_.drain.count() << " ms for the " << summary_.created
              << " orders in flight (send it again to stop waiting)\n";
  }

  // Sleeps until `t`, in slices short enough to notice a stop request; returns early when
  // `interrupted` becomes true.
  template <class Interrupted>
  static void sleep_until_or(Clock::time_point t, Interrupted interrupted) {
    constexpr milliseconds kSlice{50};
    while (Clock::now() < t && !interrupted()) {
      std::this_thread::sleep_until(std::min(t, Clock::now() + kSlice));
    }
  }

  // Makes the payments due by `now`.
  void pay_due(Clock::time_point now) {
    while (!payments_.empty() && payments_.top().at <= now) {
      Order& o = orders_[payments_.top().order];
      payments_.pop();
      // Paying also cancels the timeout; if it fired meanwhile, the canceller sees "paid". Only
      // order-sim pays, so "paid" on a second attempt is the first one's payment.
      const bool paid = riding_outages("paying " + o.id, [&](int attempt) {
        const Reply status = fcall_orders(*redis_, {"FCALL", "order_pay", "1", o.key});
        const bool now_paid = status.str == "pending" || (attempt > 0 && status.str == "paid");
        if (now_paid) producer_->cancel(order_task_id(o.id));
        return now_paid;
      });
      if (paid) {
        o.paid = true;
        ++summary_.paid;
      } else {
        ++summary_.paid_too_late;
      }
    }
  }

  // Confirms an order's writes on the replicas (order_confirmation): a shortfall means the
  // writes may have gone to a master being replaced, so the master is found again and `write`
  // runs again (creating the order and scheduling its timeout are both safe to repeat), at most
  // kConfirmAttempts writes. Still short: throws, as a lost master connection does.
  void confirm_on_replicas(const std::function<void()>& write) {
    const ReplicaAcks acks = producer_->confirm_writes(write, [](const ReplicaAcks&) {
      std::cerr << "order-sim: the replicas did not acknowledge an order's writes: the master may be failing "
                   "over; writing again to the master the sentinels name\n";
    });
    if (!acks.confirmed()) {
      throw IoError("the replicas did not acknowledge an order's writes after " + std::to_string(acks.writes) +
                    " writes");
    }
  }

  // Creates order number `n`, schedules its timeout and, for a share of them, a payment.
  void create_order(size_t n) {
    Order o;
    o.id = config_.run_id + "-" + std::to_string(n);
    o.key = order_key(o.id, scheme_);
    Task timeout;
    timeout.id = order_task_id(o.id);
    timeout.mode = ScheduleMode::Delay;
    timeout.ms = config_.timeout.count();
    timeout.payload = nlohmann::json{{"order_id", o.id}}.dump();
    if (!config_.webhook.empty()) timeout.options.webhook = config_.webhook;
    // On a cluster the timeout goes to its bucket's stream (no stream of its own: one in another
    // slot would be refused), where order-canceller reads every bucket.
    if (!producer_->cluster()) timeout.stream = config_.stream;
    const auto write = [&] {
      fcall_orders(*redis_, {"FCALL", "order_create", "1", o.key, std::to_string(config_.timeout.count())});
      o.due_ms = producer_->schedule(timeout).due_ms;
    };
    riding_outages("creating " + o.id, [&](int) { write(); });
    confirm_on_replicas(write);
    o.will_pay = unit_(rng_) < config_.paid_share;
    if (o.will_pay) {
      const auto delay = milliseconds(static_cast<long long>(config_.timeout.count() * (0.1 + 0.6 * unit_(rng_))));
      payments_.push({Clock::now() + delay, orders_.size()});
    }
    orders_.push_back(std::move(o));
    ++summary_.created;
  }

  // Creates orders at config.rate for config.duration (or until a stop request), making the
  // payments that fall due meanwhile, with a progress line every second.
  void create_orders() {
    start_ = Clock::now();
    const auto interval = std::chrono::duration<double>(1.0 / std::max(0.001, config_.rate));
    uint64_t last_progress = 0;
    for (size_t n = 0; !stop_requested(); ++n) {
      const auto next_at = start_ + std::chrono::duration_cast<Clock::duration>(interval * static_cast<double>(n));
      if (next_at - start_ >= config_.duration) break;
      while (Clock::now() < next_at && !stop_requested()) {
        pay_due(Clock::now());
        const auto wake = payments_.empty() ? next_at : std::min(next_at, payments_.top().at);
        sleep_until_or(wake, [this] { return stop_requested(); });  // pacing the load, not waiting for an outcome
      }
      if (stop_requested()) break;
      create_order(n);
      const auto elapsed_s = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
      if (static_cast<uint64_t>(elapsed_s) > last_progress) {
        last_progress = static_cast<uint64_t>(elapsed_s);
        std::cerr << "order-sim: " << elapsed_s << " s, " << summary_.created << " orders, " << summary_.paid
                  << " paid\n";
      }
    }
  }

  // The payments still to come; after a stop request only those due before the drain ends
  // (the others stay unpaid: their timeouts will cancel them).
  void make_remaining_payments() {
    auto payments_over = [this] { return stop_requested() && drain_over(); };
    while (!payments_.empty() && !payments_over()) {
      note_stop();
      if (payments_.top().at > drain_deadline_) break;
      sleep_until_or(payments_.top().at,
                     [&] { return payments_over() || (stop_requested() && !summary_.cut_short()); });
      pay_due(Clock::now());
    }
  }

  // How many unpaid orders due before `wait_end_ms` are still pending.
  size_t awaited_pending(long long wait_end_ms) {
    std::vector<const Order*> awaited;
    for (const auto& o : orders_) {
      if (!o.paid && o.due_ms < wait_end_ms) awaited.push_back(&o);
    }
    std::vector<ClusterClient::Routed> reads;
    for (const Order* o : awaited) reads.push_back({key_hash_slot(o->key), {"HGET", o->key, "status"}});
    size_t pending = 0;
    for (const Reply& r : riding_outages("reading orders", [&](int) { return checked_batch(reads); })) {
      if (r.str == "pending") ++pending;
    }
    return pending;
  }

  // Waits (bounded) until every unpaid order is cancelled: past the last due time plus grace,
  // whatever is still pending is a miss. Cut short, the wait ends with the drain, and orders
  // due after that are not waited for.
  void wait_for_cancels() {
    long long last_due = 0;
    for (const auto& o : orders_) last_due = std::max(last_due, o.due_ms);
    long long wait_end_ms = last_due + config_.grace.count();
    if (summary_.cut_short()) wait_end_ms = std::min(wait_end_ms, stop_redis_ms_ + config_.drain.count());
    while (awaited_pending(wait_end_ms) > 0 && redis_now() < wait_end_ms) {
      note_stop();
      if (summary_.cut_short() && drain_over()) break;
      sleep_until_or(Clock::now() + milliseconds(100), [this] { return stop_requested() && drain_over(); });
    }
  }

  // Tallies every order's final state and the timeout tasks left in the schedule.
  void check_orders() {
    const long long checked_ms = redis_now();
    std::vector<ClusterClient::Routed> reads;
    for (const auto& o : orders_) {
      reads.push_back({key_hash_slot(o.key), {"HMGET", o.key, "status", "cancelled_ms", "due_ms"}});
    }
    const std::vector<Reply> replies = riding_outages("reading orders", [&](int) { return checked_batch(reads); });
    for (size_t i = 0; i < orders_.size(); ++i) {
      const Order& o = orders_[i];
      const Reply& r = replies[i];
      if (r.is_io_error()) throw IoError("HMGET " + o.key + ": " + r.str);
      const std::string status = r.elements.size() == 3 ? r.elements[0].str : "";
      if (status == "cancelled") {
        ++summary_.cancelled;
        if (o.paid) ++summary_.wrongly_cancelled;
        const auto cancelled_ms = parse_int64(r.elements[1].str);
        if (!cancelled_ms) throw ReplyError("order " + o.id + ": cancelled_ms is not an integer: " + r.describe());
        summary_.lateness_ms.push_back(*cancelled_ms - o.due_ms);
      } else if (status == "pending" && !o.paid) {
        // Cut short, an order whose timeout (plus grace) is still ahead is not a miss yet.
        if (summary_.cut_short() && checked_ms < o.due_ms + config_.grace.count()) {
          ++summary_.left_pending;
        } else {
          ++summary_.missed;
        }
      }
    }
    std::vector<ClusterClient::Routed> cards;
    for (int b = 0; b < buckets_; ++b) {
      cards.push_back({TaskPlacement::slot_of_bucket(b), {"ZCARD", KeyLayout(config_.ns, b).schedule_key()}});
    }
    summary_.tasks_left = 0;
    for (const Reply& r : riding_outages("reading schedules", [&](int) { return checked_batch(cards); }))
      summary_.tasks_left += static_cast<uint64_t>(std::max(0LL, r.integer));
  }

  const OrderSimConfig& config_;
  const StopRequest* stop_;  // may be null
  std::unique_ptr<Producer> producer_;  // replaced by riding_outages after a lost connection
  RoutedClient* redis_;                 // producer_'s client, for the orders_v1 calls and reads
  int buckets_ = 1;         // the namespace's bucket count
  OrderKeyScheme scheme_;   // where order keys live
  std::mt19937 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::vector<Order> orders_;
  std::priority_queue<Payment, std::vector<Payment>, std::greater<>> payments_;  // earliest first
  OrderSimSummary summary_;
  Clock::time_point start_;                                // when the creation of orders began
  Clock::time_point drain_deadline_ = Clock::time_point::max();
  long long stop_redis_ms_ = 0;                            // the Redis clock at the stop request
};

}  // namespace

OrderSimSummary run_order_sim(const OrderSimConfig& config, const StopRequest* stop) {
  return OrderSim(config, stop).run();
}

}  // namespace expiry
