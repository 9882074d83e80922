// See dispatcher.h.
#include "webhook/dispatcher.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "base/integers.h"
#include "base/text_escape.h"
#include "functions/task_options.h"
#include "webhook/signature.h"

namespace expiry {

namespace {
constexpr const char* kTraceparentField = "traceparent";

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

WebhookDispatcher::WebhookDispatcher(const WebhookConfig& config, HttpClient& client,
                                     std::function<void(double)> observe_latency)
    : config_(config), client_(client), observe_latency_(std::move(observe_latency)) {
  policy_.max_attempts = config.max_attempts;
  policy_.base = config.retry_base;
  policy_.max = config.retry_max;
  for (const auto& [name, ep] : config.endpoints) {
    lanes_[name];
    stats_[name];
  }
}

size_t WebhookDispatcher::capacity() const {
  size_t n = 0;
  for (const auto& [name, ep] : config_.endpoints) n += ep.max_in_flight + config_.max_queued;
  return n;
}

void WebhookDispatcher::handle(const StreamEntry& entry, EntryDone done) {
  if (auto it = held_.find(entry.entry_id); it != held_.end()) {
    it->second->dones.push_back(std::move(done));  // reclaimed while still held: one delivery answers both
    return;
  }
  const std::string& name = entry.field(kWebhookField);
  const WebhookEndpoint* endpoint = config_.endpoint_for(name);
  if (endpoint == nullptr) {
    ++unknown_endpoint_;
    done(HandleOutcome::Reject, name.empty() ? "no webhook field and no default_endpoint"
                                             : "unknown webhook endpoint " + name);
    return;
  }
  Lane& lane = lanes_[endpoint->name];
  EndpointStats& stats = stats_[endpoint->name];
  if (lane.in_flight >= endpoint->max_in_flight && lane.queue.size() >= config_.max_queued) {
    ++stats.retries;
    // Counts as an attempt (expiry_retry), so it backs off like a failure.
    done(HandleOutcome::Retry, "endpoint " + endpoint->name + " queue full",
         webhook_backoff(policy_, attempt_of(entry)));
    return;
  }
  auto job = std::make_shared<Job>(Job{entry, endpoint, {}});
  job->dones.push_back(std::move(done));
  held_[entry.entry_id] = job;
  if (lane.in_flight < endpoint->max_in_flight) {
    send(job);
  } else {
    lane.queue.push_back(job);
    stats.queued = lane.queue.size();
  }
}

void WebhookDispatcher::send(const std::shared_ptr<Job>& job) {
  const WebhookEndpoint& ep = *job->endpoint;
  Lane& lane = lanes_[ep.name];
  ++lane.in_flight;
  stats_[ep.name].in_flight = lane.in_flight;
  const std::string id = webhook_id_of(job->entry);
  const int64_t timestamp = wall_ms() / 1000;
  const std::string& body = job->entry.field(entry_field::kPayload);
  HttpRequest request;
  request.url = ep.url;
  request.timeout = ep.timeout;
  request.ca_file = ep.ca_file;
  request.body = body;
  request.headers = {"content-type: application/json", "webhook-id: " + id,
                     "webhook-timestamp: " + std::to_string(timestamp),
                     "webhook-signature: " + webhook_signature(ep.secrets, id, timestamp, body),
                     "expect:"};  // no 100-continue round trip
  // traceparent is not signed: only a well-formed W3C value is passed on (no CR LF can ride it).
  const std::string& traceparent = job->entry.field(kTraceparentField);
  if (!traceparent.empty()) {
    if (!traceparent_error(traceparent)) {
      request.headers.push_back("traceparent: " + traceparent);
    } else {
      spdlog::warn("webhook {} task {} (entry {}): traceparent left out: not a W3C traceparent", ep.name,
                   escape_text(job->entry.field(entry_field::kId)), job->entry.entry_id);
    }
  }
  client_.post(std::move(request), [this, job](const AttemptResult& r) { on_answer(job, r); });
}

void WebhookDispatcher::on_answer(const std::shared_ptr<Job>& job, const AttemptResult& result) {
  const WebhookEndpoint& ep = *job->endpoint;
  Lane& lane = lanes_[ep.name];
  EndpointStats& stats = stats_[ep.name];
  --lane.in_flight;
  ++stats.deliveries[status_class(result)];
  const long long attempt = attempt_of(job->entry);
  const DeliveryDecision decision = decide_delivery(result, policy_, attempt);
  if (decision.outcome == HandleOutcome::Done && observe_latency_) {
    if (auto due = parse_int64(job->entry.field(entry_field::kDueMs))) {
      observe_latency_(static_cast<double>(wall_ms() - *due) / 1000.0);
    }
  }
  settle(job, decision);
  // The freed slot goes to the endpoint's next waiting entry.
  while (lane.in_flight < ep.max_in_flight && !lane.queue.empty()) {
    auto next = lane.queue.front();
    lane.queue.pop_front();
    send(next);
  }
  stats.queued = lane.queue.size();
  stats.in_flight = lane.in_flight;
}

void WebhookDispatcher::settle(const std::shared_ptr<Job>& job, const DeliveryDecision& decision) {
  EndpointStats& stats = stats_[job->endpoint->name];
  const std::string& task_id = job->entry.field(entry_field::kId);
  const long long attempt = attempt_of(job->entry);
  if (decision.outcome == HandleOutcome::Reject) {
    ++stats.dead_letters;
    spdlog::warn("webhook {} task {} (entry {}): dead letter: {}", job->endpoint->name, task_id,
                 job->entry.entry_id, decision.reason);
  } else if (decision.outcome == HandleOutcome::Retry) {
    if (attempt >= policy_.max_attempts) {
      ++stats.dead_letters;
    } else {
      ++stats.retries;
    }
    spdlog::info("webhook {} task {} attempt {} failed ({}); retry in {} ms", job->endpoint->name, task_id, attempt,
                 decision.reason, decision.delay ? decision.delay->count() : -1);
  }
  held_.erase(job->entry.entry_id);
  for (const auto& done : job->dones) done(decision.outcome, decision.reason, decision.delay);
}

}  // namespace expiry
