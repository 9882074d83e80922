// See sentinel_resolver.h.
#include "io/sentinel_resolver.h"

#include <utility>

#include "io/callback_barrier.h"

namespace expiry {

SentinelResolver::SentinelResolver(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds timeout)
    : mailbox_(loop), discovery_(endpoint, timeout), worker_([this] { work(); }) {}

SentinelResolver::~SentinelResolver() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void SentinelResolver::lookup(const AliveToken& alive, std::function<void(const MasterLookup&)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(Waiter{alive.watch(), std::move(done)});
  }
  wake_.notify_one();
}

MasterLookup SentinelResolver::run_discovery() {
  MasterLookup result;
  try {
    result.master = discovery_.find_master();
    result.outcome = MasterLookup::Outcome::Found;
  } catch (const FailoverInProgressError& e) {
    result.outcome = MasterLookup::Outcome::FailoverInProgress;
    result.why = e.what();
  } catch (const ConfigError& e) {  // UnknownMasterError, AuthError, TlsError
    result.outcome = MasterLookup::Outcome::Refused;
    result.why = e.what();
  } catch (const std::exception& e) {
    result.outcome = MasterLookup::Outcome::Failed;
    result.why = e.what();
  }
  return result;
}

void SentinelResolver::work() {
  for (;;) {
    std::vector<Waiter> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      batch.swap(waiting_);
    }
    const MasterLookup result = run_discovery();
    mailbox_.post([batch = std::move(batch), result] {
      for (const Waiter& w : batch) {
        if (!w.alive.expired()) call_guarded("sentinel lookup callback", [&] { w.done(result); });
      }
    });
  }
}

}  // namespace expiry
