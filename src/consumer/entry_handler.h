// What a consumer's handler answers for one stream entry, the counters every consumer keeps,
// and the one way an entry is handed to a handler (NodeConsumer's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace expiry {

enum class HandleOutcome {
  Done,    // the effect is committed (or there is nothing to do): acknowledge
  Retry,   // not handled this time: scheduled again after the retry backoff (expiry_retry),
           // dead-lettered after the last attempt
  Reject,  // can never be handled (a malformed task): dead-lettered at once with the reason
};

// Called by a handler exactly once per entry, from the loop.
using EntryDone = std::function<void(HandleOutcome, const std::string& reason)>;

struct ConsumerStats {
  uint64_t read = 0;
  uint64_t acked = 0;
  uint64_t retried = 0;
  uint64_t reclaimed = 0;
  uint64_t dead_lettered = 0;
  uint64_t errors = 0;
  uint64_t group_recreated = 0;  // the group vanished after this consumer had it, and was created at $
};

// Runs `call_handler` with a done function that passes the first outcome to `settle` and
// ignores later calls (a handler calling twice must not double-count). What the handler throws
// settles the entry as Retry.
void dispatch_entry(const std::function<void(EntryDone)>& call_handler, EntryDone settle);

}  // namespace expiry
