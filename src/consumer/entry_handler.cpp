// See entry_handler.h.
#include "consumer/entry_handler.h"

#include <exception>
#include <memory>

namespace expiry {

void dispatch_entry(const std::function<void(EntryDone)>& call_handler, EntryDone settle) {
  auto settled = std::make_shared<bool>(false);
  EntryDone done = [settled, settle = std::move(settle)](HandleOutcome outcome, const std::string& reason,
                                                          EntryDone::RetryDelay delay) {
    if (*settled) return;
    *settled = true;
    settle(outcome, reason, delay);
  };
  try {
    call_handler(done);
  } catch (const std::exception& e) {
    done(HandleOutcome::Retry, std::string("handler threw: ") + e.what());
  } catch (...) {
    done(HandleOutcome::Retry, "handler threw a non-standard exception");
  }
}

}  // namespace expiry
