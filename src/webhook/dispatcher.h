// The webhook dispatcher: the Consumer's handler (consumer/consumer.h) that turns each stream
// entry into a signed POST to its endpoint (the entry's `webhook` field, else the config's
// default_endpoint) and answers Done, Retry (with its own delay: backoff, Retry-After) or Reject.
//
// No head-of-line blocking: each endpoint has at most max_in_flight requests out; entries for a
// full endpoint wait in its own queue (at most max_queued; beyond that the entry is retried later with
// backoff, which counts as an attempt)
// while other endpoints proceed. The Consumer reads on while fewer than capacity() entries are
// unsettled (Consumer::set_max_unsettled), so the total buffered is bounded.
// An entry handed over again while it is still held (reclaimed after min_idle) is not sent twice:
// its answer settles every hand-over.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "consumer/entry_handler.h"
#include "functions/stream_entry.h"
#include "webhook/delivery_outcome.h"
#include "webhook/http_client.h"
#include "webhook/webhook_config.h"

namespace expiry {

// The stream entry field that names a task's endpoint (the schedule option webhook=NAME).
inline constexpr const char* kWebhookField = "webhook";

struct EndpointStats {
  std::map<std::string, uint64_t> deliveries;  // attempts by status class (status_class())
  uint64_t in_flight = 0;
  uint64_t queued = 0;
  uint64_t retries = 0;
  uint64_t dead_letters = 0;  // rejected, or failed their last attempt
};

class WebhookDispatcher {
 public:
  // `observe_latency`: seconds from an entry's due time to its delivery (2xx).
  WebhookDispatcher(const WebhookConfig& config, HttpClient& client,
                    std::function<void(double seconds)> observe_latency = {});
  WebhookDispatcher(const WebhookDispatcher&) = delete;
  WebhookDispatcher& operator=(const WebhookDispatcher&) = delete;

  void handle(const StreamEntry& entry, EntryDone done);

  // Entries this dispatcher may hold at once (in flight and queued, every endpoint).
  size_t capacity() const;
  // Entries held now: in flight or queued, every endpoint (not yet answered to the consumer).
  size_t held() const { return held_.size(); }
  const std::map<std::string, EndpointStats>& stats() const { return stats_; }
  uint64_t unknown_endpoint() const { return unknown_endpoint_; }

 private:
  struct Job {
    StreamEntry entry;
    const WebhookEndpoint* endpoint;
    std::vector<EntryDone> dones;  // more than one when the entry was handed over again while held
  };
  struct Lane {
    size_t in_flight = 0;
    std::deque<std::shared_ptr<Job>> queue;
  };

  void send(const std::shared_ptr<Job>& job);
  void on_answer(const std::shared_ptr<Job>& job, const AttemptResult& result);
  void settle(const std::shared_ptr<Job>& job, const DeliveryDecision& decision);

  const WebhookConfig& config_;
  HttpClient& client_;
  std::function<void(double)> observe_latency_;
  RetryPolicy policy_;
  std::map<std::string, Lane> lanes_;                       // by endpoint name
  std::map<std::string, EndpointStats> stats_;              // by endpoint name
  std::map<std::string, std::shared_ptr<Job>> held_;        // by stream entry id
  uint64_t unknown_endpoint_ = 0;
};

}  // namespace expiry
