// See order_canceller.h.
#include "orders/order_canceller.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "functions/stream_entry.h"
#include "redis/redis_error.h"
#include "service/service_metrics.h"

namespace expiry {

namespace {
// The W3C trace context the task was scheduled with (expiry-ctl schedule --traceparent), copied
// into the entry by the claim; absent when the producer sent none.
constexpr const char* kTraceparentField = "traceparent";
}  // namespace

std::string order_id_of(const StreamEntry& entry) {
  const std::string& payload = entry.field(entry_field::kPayload);
  if (!payload.empty() && payload.front() == '{') {
    auto j = nlohmann::json::parse(payload, nullptr, false);
    if (j.is_object() && j.contains("order_id") && j["order_id"].is_string()) {
      auto id = j["order_id"].get<std::string>();
      if (!id.empty()) return id;
    }
  }
  const std::string& task_id = entry.field(entry_field::kId);
  const std::string prefix = order_task_id("");
  if (task_id.rfind(prefix, 0) == 0 && task_id.size() > prefix.size()) return task_id.substr(prefix.size());
  return {};
}

std::string order_key_of(const StreamEntry& entry, const OrderKeyScheme& scheme) {
  const std::string id = order_id_of(entry);
  return id.empty() ? std::string() : order_key(id, scheme);
}

OrderCanceller::OrderCanceller(OrderKeyScheme scheme) : scheme_(scheme) {}

void OrderCanceller::handle_on(FunctionCaller& orders, const StreamEntry& entry, EntryDone done) {
  const std::string key = order_key_of(entry, scheme_);
  if (key.empty()) {
    ++stats_.failed;
    done(HandleOutcome::Reject, "no order id in task " + entry.field(entry_field::kId));
    return;
  }
  const std::string& due_ms = entry.field(entry_field::kDueMs);
  const std::string& task_id = entry.field(entry_field::kId);
  const std::string& traceparent = entry.field(kTraceparentField);
  orders.fcall({"FCALL", "order_cancel", "1", key, "payment timeout", due_ms, task_id},
                [this, key, done, task_id, due_ms, traceparent](const Reply& r) {
                  if (r.failed()) {
                    ++stats_.failed;
                    // A refusal (a missing ACL rule, a failover) is no fault of the timeout: it
                    // must not use up the task's attempts and send it to the dead-letter stream.
                    done(blames_the_server(r) ? HandleOutcome::Refused : HandleOutcome::Retry,
                         "order_cancel " + key + ": " + r.describe());
                    return;
                  }
                  ++stats_.processed;
                  if (r.str == "cancelled") {
                    ++stats_.cancelled;
                    // The line that answers "why was this order cancelled": the task, its due
                    // time and, when the producer sent one, the trace it belongs to.
                    if (traceparent.empty()) {
                      spdlog::info("cancelled {} (payment timeout, task {} due_ms={})", key, task_id, due_ms);
                    } else {
                      spdlog::info("cancelled {} (payment timeout, task {} due_ms={} traceparent={})", key, task_id,
                                   due_ms, traceparent);
                    }
                  } else if (r.str == "paid") {
                    ++stats_.skipped_paid;
                  } else if (r.str == "already_cancelled") {
                    ++stats_.already_cancelled;
                  } else if (r.str == "missing") {
                    ++stats_.missing;
                    spdlog::warn("timeout for {} but the order does not exist", key);
                  } else {
                    spdlog::warn("timeout for {} left alone: status {}", key, r.str);
                  }
                  done(HandleOutcome::Done, r.str);
                });
}

void register_canceller_metrics(Metrics& metrics, const CancellerStats& stats, const ConsumerStats& c,
                                std::function<bool()> ready) {
  const auto n = [](const uint64_t& v) { return read_at_scrape(v); };
  const std::vector<Metrics::Family> table = {
      counter_family("order_canceller_processed_total", "Timeout tasks handled (any outcome but a retry).",
                     n(stats.processed)),
      labelled_family(Metrics::Kind::Counter, "order_canceller_outcomes_total", "Timeout tasks by outcome.", "outcome",
                      {{"cancelled", n(stats.cancelled)},
                       {"skipped_paid", n(stats.skipped_paid)},
                       {"already_cancelled", n(stats.already_cancelled)},
                       {"missing_order", n(stats.missing)},
                       {"failed", n(stats.failed)}}),
      counter_family("order_canceller_entries_read_total", "Stream entries read with XREADGROUP.", n(c.read)),
      counter_family("order_canceller_entries_acked_total", "Stream entries acknowledged.", n(c.acked)),
      counter_family("order_canceller_entries_retried_total", "Entries the handler failed (retried with backoff or dead-lettered).", n(c.retried)),
      counter_family("order_canceller_entries_refused_total",
                     "Entries left pending because Redis refused the handler's call (a missing ACL rule, a failover); "
                     "handled again after --min-idle-ms, not counted as a delivery.",
                     n(c.refused)),
      counter_family("order_canceller_entries_reclaimed_total", "Entries claimed from idle or crashed consumers.",
                     n(c.reclaimed)),
      counter_family("order_canceller_entries_dead_lettered_total", "Poison entries moved to the dead-letter stream.",
                     n(c.dead_lettered)),
      counter_family("order_canceller_errors_total", "Redis errors (XACK, XCLAIM, XPENDING, group setup).",
                     n(c.errors)),
      counter_family("order_canceller_group_recreated_total",
                     "Times the consumer group had been destroyed and was created again at $ (entries already in the "
                     "stream are not handled again; see the error log for XGROUP SETID).",
                     n(c.group_recreated)),
      gauge_family("order_canceller_ready", "1 if both connections are up and the group exists.",
                   [ready] { return ready() ? 1.0 : 0.0; }),
  };
  for (const auto& f : table) metrics.add(f);
}

}  // namespace expiry
