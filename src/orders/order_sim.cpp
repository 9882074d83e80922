// See order_sim.h. Single-threaded and synchronous: one SyncConnection, a paced loop.
#include "order_sim.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <queue>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "ctl/sync_connection.h"
#include "errors.h"
#include "function_library.h"
#include "key_layout.h"
#include "order_canceller.h"

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

std::string OrderSimSummary::text() const {
  std::ostringstream out;
  out << "orders created:            " << created << "\n"
      << "paid before timeout:       " << paid << "\n"
      << "cancelled by timeout:      " << cancelled << "\n"
      << "payment refused (late):    " << paid_too_late << "\n"
      << "cancel lateness p50/p99/max (ms): " << percentile(50) << " / " << percentile(99) << " / "
      << percentile(100) << "\n"
      << "wrongly cancelled (paid orders cancelled): " << wrongly_cancelled << "\n"
      << "missed (unpaid, still pending after timeout + grace): " << missed << "\n"
      << "result: " << (ok() ? "OK" : "FAILED") << "\n";
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
                      {"ok", ok()}};
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

Reply fcall_orders(SyncConnection& redis, std::vector<std::string> argv) {
  Reply r = redis.command(argv);
  if (is_function_missing(r)) {
    expect_ok(redis.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()}), "FUNCTION LOAD orders_v1");
    r = redis.command(argv);
  }
  return expect_ok(r, argv[1]);
}

}  // namespace

OrderSimSummary run_order_sim(const OrderSimConfig& config) {
  SyncConnection redis(config.redis);
  redis.load_library();
  expect_ok(redis.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()}), "FUNCTION LOAD orders_v1");
  const KeyLayout keys(config.ns);
  std::mt19937 rng(config.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  std::vector<Order> orders;
  std::priority_queue<Payment, std::vector<Payment>, std::greater<>> payments;
  OrderSimSummary summary;

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

  const auto start = Clock::now();
  const auto interval = std::chrono::duration<double>(1.0 / std::max(0.001, config.rate));
  size_t n = 0;
  uint64_t last_progress = 0;
  for (;;) {
    const auto next_at = start + std::chrono::duration_cast<Clock::duration>(interval * static_cast<double>(n));
    if (next_at - start >= config.duration) break;
    while (Clock::now() < next_at) {
      pay_due(Clock::now());
      const auto wake = payments.empty() ? next_at : std::min(next_at, payments.top().at);
      std::this_thread::sleep_until(wake);  // pacing the load, not waiting for an outcome
    }
    Order o;
    o.id = config.run_id + "-" + std::to_string(n);
    fcall_orders(redis, {"FCALL", "order_create", "1", "order:" + o.id, std::to_string(config.timeout.count())});
    const std::string payload = nlohmann::json{{"order_id", o.id}}.dump();
    auto scheduled = decode_schedule(expect_ok(
        redis.fcall(schedule_argv(keys, "order:" + o.id, ScheduleMode::Delay, config.timeout.count(), payload)),
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
  while (!payments.empty()) {
    std::this_thread::sleep_until(payments.top().at);
    pay_due(Clock::now());
  }

  // Wait (bounded) until every unpaid order is cancelled: past the last due time plus grace,
  // whatever is still pending is a miss.
  long long last_due = 0;
  for (const auto& o : orders) last_due = std::max(last_due, o.due_ms);
  auto redis_now = [&] {
    const Reply t = redis.command({"TIME"});
    return std::stoll(t.elements.at(0).str) * 1000 + std::stoll(t.elements.at(1).str) / 1000;
  };
  auto unpaid_pending = [&] {
    size_t pending = 0;
    for (const auto& o : orders) {
      if (o.paid) continue;
      redis.append({"HGET", "order:" + o.id, "status"});
    }
    for (const auto& o : orders) {
      if (o.paid) continue;
      if (redis.read_reply().str == "pending") ++pending;
    }
    return pending;
  };
  while (unpaid_pending() > 0 && redis_now() < last_due + config.grace.count()) {
    std::this_thread::sleep_for(milliseconds(100));
  }

  for (const auto& o : orders) redis.append({"HMGET", "order:" + o.id, "status", "cancelled_ms", "due_ms"});
  for (const auto& o : orders) {
    const Reply r = redis.read_reply();
    const std::string status = r.elements.size() == 3 ? r.elements[0].str : "";
    if (status == "cancelled") {
      ++summary.cancelled;
      if (o.paid) ++summary.wrongly_cancelled;
      summary.lateness_ms.push_back(std::stoll(r.elements[1].str) - o.due_ms);
    } else if (status == "pending" && !o.paid) {
      ++summary.missed;
    }
  }
  summary.tasks_left = static_cast<uint64_t>(redis.command({"ZCARD", keys.schedule_key()}).integer);
  return summary;
}

}  // namespace expiry
