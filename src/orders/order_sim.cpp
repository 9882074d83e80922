// See order_sim.h. Single-threaded and synchronous: one SyncConnection, a paced loop that
// sleeps in short slices so a stop request is noticed within 50 ms.
#include "orders/order_sim.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <queue>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/integers.h"
#include "protocol/redis_time.h"
#include "protocol/function_library.h"
#include "protocol/key_layout.h"

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

Reply fcall_orders(SyncConnection& redis, const std::vector<std::string>& argv) {
  return expect_ok(redis.fcall(argv, orders_library()), argv[1]);
}

}  // namespace

OrderSimSummary run_order_sim(const OrderSimConfig& config, const StopRequest* stop) {
  SyncConnection redis(config.redis);
  redis.load_library();
  redis.load_library(orders_library());
  const KeyLayout keys(config.ns);
  std::mt19937 rng(config.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  std::vector<Order> orders;
  std::priority_queue<Payment, std::vector<Payment>, std::greater<>> payments;
  OrderSimSummary summary;

  auto redis_now = [&] {
    const Reply t = redis.command({"TIME"});
    const auto ms = time_reply_ms(t);
    if (!ms) throw ReplyError("TIME: unexpected reply " + t.describe());
    return *ms;
  };

  // Stop requests: the first ends the creation of orders and starts the drain, bounded by
  // drain_deadline; a second one, or the deadline, ends the drain.
  const auto start = Clock::now();
  auto drain_deadline = Clock::time_point::max();
  long long stop_redis_ms = 0;  // the Redis clock at the stop request
  auto stop_requested = [&] { return stop != nullptr && stop->count.load() > 0; };
  auto drain_over = [&] { return (stop != nullptr && stop->count.load() > 1) || Clock::now() >= drain_deadline; };
  auto note_stop = [&] {
    if (summary.cut_short() || !stop_requested()) return;
    summary.stopped_by = stop->first_signal.load();
    summary.ran_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    summary.drain_ms = config.drain.count();
    drain_deadline = Clock::now() + config.drain;
    stop_redis_ms = redis_now();
    std::cerr << "order-sim: " << signal_name(summary.stopped_by) << ": no new orders; waiting up to "
              << config.drain.count() << " ms for the " << summary.created
              << " orders in flight (send it again to stop waiting)\n";
  };
  // Sleeps until `t`, in slices short enough to notice a stop request; returns early when
  // `interrupted` becomes true.
  auto sleep_until_or = [&](Clock::time_point t, auto interrupted) {
    constexpr milliseconds kSlice{50};
    while (Clock::now() < t && !interrupted()) {
      std::this_thread::sleep_until(std::min(t, Clock::now() + kSlice));
    }
  };

  auto pay_due = [&](Clock::time_point now) {
    while (!payments.empty() && payments.top().at <= now) {
      Order& o = orders[payments.top().order];
      payments.pop();
      const Reply status = fcall_orders(redis, {"FCALL", "order_pay", "1", "order:" + o.id});
      if (status.str == "pending") {
        o.paid = true;
        ++summary.paid;
        // Paying also cancels the timeout; if it fired meanwhile, the canceller sees "paid".
        expect_ok(redis.fcall(cancel_argv(keys, "order:" + o.id)), "expiry_cancel");
      } else {
        ++summary.paid_too_late;
      }
    }
  };

  const auto interval = std::chrono::duration<double>(1.0 / std::max(0.001, config.rate));
  size_t n = 0;
  uint64_t last_progress = 0;
  while (!stop_requested()) {
    const auto next_at = start + std::chrono::duration_cast<Clock::duration>(interval * static_cast<double>(n));
    if (next_at - start >= config.duration) break;
    while (Clock::now() < next_at && !stop_requested()) {
      pay_due(Clock::now());
      const auto wake = payments.empty() ? next_at : std::min(next_at, payments.top().at);
      sleep_until_or(wake, stop_requested);  // pacing the load, not waiting for an outcome
    }
    if (stop_requested()) break;
    Order o;
    o.id = config.run_id + "-" + std::to_string(n);
    fcall_orders(redis, {"FCALL", "order_create", "1", "order:" + o.id, std::to_string(config.timeout.count())});
    const std::string payload = nlohmann::json{{"order_id", o.id}}.dump();
    auto scheduled = decode_schedule(expect_ok(redis.fcall(schedule_argv(keys, "order:" + o.id, ScheduleMode::Delay,
                                                                         config.timeout.count(), payload,
                                                                         config.stream)),
                                               "expiry_schedule"));
    if (!scheduled) throw ReplyError("unexpected expiry_schedule reply");
    o.due_ms = scheduled->due_ms;
    o.will_pay = unit(rng) < config.paid_share;
    if (o.will_pay) {
      const auto delay = milliseconds(static_cast<long long>(config.timeout.count() * (0.1 + 0.6 * unit(rng))));
      payments.push({Clock::now() + delay, orders.size()});
    }
    orders.push_back(std::move(o));
    ++summary.created;
    ++n;
    const auto elapsed_s = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
    if (static_cast<uint64_t>(elapsed_s) > last_progress) {
      last_progress = static_cast<uint64_t>(elapsed_s);
      std::cerr << "order-sim: " << elapsed_s << " s, " << summary.created << " orders, " << summary.paid
                << " paid\n";
    }
  }
  note_stop();
  // The payments still to come; after a stop request only those due before the drain ends
  // (the others stay unpaid: their timeouts will cancel them).
  auto payments_over = [&] { return stop_requested() && drain_over(); };
  while (!payments.empty() && !payments_over()) {
    note_stop();
    if (payments.top().at > drain_deadline) break;
    sleep_until_or(payments.top().at, [&] { return payments_over() || (stop_requested() && !summary.cut_short()); });
    pay_due(Clock::now());
  }
  note_stop();

  // Wait (bounded) until every unpaid order is cancelled: past the last due time plus grace,
  // whatever is still pending is a miss. Cut short, the wait ends with the drain, and orders
  // due after that are not waited for.
  long long last_due = 0;
  for (const auto& o : orders) last_due = std::max(last_due, o.due_ms);
  long long wait_end_ms = last_due + config.grace.count();
  if (summary.cut_short()) wait_end_ms = std::min(wait_end_ms, stop_redis_ms + config.drain.count());
  auto awaited_pending = [&] {
    std::vector<const Order*> awaited;
    for (const auto& o : orders) {
      if (!o.paid && o.due_ms < wait_end_ms) awaited.push_back(&o);
    }
    for (const Order* o : awaited) redis.append({"HGET", "order:" + o->id, "status"});
    size_t pending = 0;
    for (size_t i = 0; i < awaited.size(); ++i) {
      if (redis.read_reply().str == "pending") ++pending;
    }
    return pending;
  };
  while (awaited_pending() > 0 && redis_now() < wait_end_ms) {
    note_stop();
    if (summary.cut_short() && drain_over()) break;
    sleep_until_or(Clock::now() + milliseconds(100), [&] { return stop_requested() && drain_over(); });
  }
  note_stop();

  const long long checked_ms = redis_now();
  for (const auto& o : orders) redis.append({"HMGET", "order:" + o.id, "status", "cancelled_ms", "due_ms"});
  for (const auto& o : orders) {
    const Reply r = redis.read_reply();
    const std::string status = r.elements.size() == 3 ? r.elements[0].str : "";
    if (status == "cancelled") {
      ++summary.cancelled;
      if (o.paid) ++summary.wrongly_cancelled;
      const auto cancelled_ms = parse_int64(r.elements[1].str);
      if (!cancelled_ms) throw ReplyError("order " + o.id + ": cancelled_ms is not an integer: " + r.describe());
      summary.lateness_ms.push_back(*cancelled_ms - o.due_ms);
    } else if (status == "pending" && !o.paid) {
      // Cut short, an order whose timeout (plus grace) is still ahead is not a miss yet.
      if (summary.cut_short() && checked_ms < o.due_ms + config.grace.count()) {
        ++summary.left_pending;
      } else {
        ++summary.missed;
      }
    }
  }
  summary.tasks_left = static_cast<uint64_t>(redis.command({"ZCARD", keys.schedule_key()}).integer);
  return summary;
}

}  // namespace expiry
