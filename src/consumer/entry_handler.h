// What a consumer's handler answers for one stream entry, the counters every consumer keeps,
// and the one way an entry is handed to a handler (NodeConsumer's).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace expiry {

enum class HandleOutcome {
  Done,    // the effect is committed (or there is nothing to do): acknowledge
  Retry,   // not handled this time: scheduled again after the retry backoff (expiry_retry),
           // dead-lettered after the last attempt
  Reject,  // can never be handled (a malformed task): dead-lettered at once with the reason
  Refused, // not handled because Redis refused the handler's own call or could not serve it
           // (blames_the_server: a missing ACL rule, a failover, a lost connection). The task is
           // not at fault: the entry stays pending, this delivery is not counted, and it is
           // reclaimed and handled again after min_idle, never dead-lettered for it
};

// Called by a handler exactly once per entry, from the loop: done(outcome, reason), or for a
// Retry with a delay of the handler's own (a webhook's Retry-After) done(Retry, reason, delay),
// which replaces the consumer's retry backoff for this attempt (the attempt count and the
// dead-lettering after the last attempt are unchanged).
class EntryDone {
 public:
  using RetryDelay = std::optional<std::chrono::milliseconds>;
  using Settle = std::function<void(HandleOutcome, const std::string& reason, RetryDelay delay)>;

  EntryDone() = default;
  // From a function of (outcome, reason): the delay is dropped.
  template <class F, std::enable_if_t<std::is_invocable_v<F&, HandleOutcome, const std::string&> &&
                                          !std::is_invocable_v<F&, HandleOutcome, const std::string&, RetryDelay> &&
                                          !std::is_same_v<std::decay_t<F>, EntryDone>,
                                      int> = 0>
  EntryDone(F fn)  // NOLINT: implicit, so existing lambdas stay EntryDones
      : fn_([fn = std::move(fn)](HandleOutcome o, const std::string& r, RetryDelay) mutable { fn(o, r); }) {}
  // From a function of (outcome, reason, delay).
  template <class F, std::enable_if_t<std::is_invocable_v<F&, HandleOutcome, const std::string&, RetryDelay> &&
                                          !std::is_same_v<std::decay_t<F>, EntryDone>,
                                      int> = 0>
  EntryDone(F fn) : fn_(std::move(fn)) {}  // NOLINT

  void operator()(HandleOutcome outcome, const std::string& reason, RetryDelay delay = std::nullopt) const {
    fn_(outcome, reason, delay);
  }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  Settle fn_;
};

struct ConsumerStats {
  uint64_t read = 0;
  uint64_t acked = 0;
  uint64_t retried = 0;
  uint64_t reclaimed = 0;
  uint64_t dead_lettered = 0;
  uint64_t errors = 0;
  uint64_t group_recreated = 0;  // the group vanished after this consumer had it, and was created at $
  uint64_t refused = 0;          // entries left pending because Redis refused the handler's call
};

// Runs `call_handler` with a done function that passes the first outcome to `settle` and
// ignores later calls (a handler calling twice must not double-count). What the handler throws
// settles the entry as Retry.
void dispatch_entry(const std::function<void(EntryDone)>& call_handler, EntryDone settle);

}  // namespace expiry
