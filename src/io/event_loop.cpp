// libevent wrappers; see event_loop.h.
#include "io/event_loop.h"

#include <event2/event.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <stdexcept>

#include "io/callback_barrier.h"
#include "log/log_limiter.h"

namespace expiry {

struct EventLoop::SignalHandler {
  event* ev = nullptr;
  std::function<void()> fn;
  ~SignalHandler() {
    if (ev != nullptr) event_free(ev);
  }
};

namespace {
// Timers with microsecond precision (timerfd with epoll): the relay arms one for a task's due
// time, and the default millisecond rounding would add up to a millisecond of lateness.
// libevent's own messages (a failing accept(), a bad descriptor) go to stderr by default, one
// per occurrence, outside --log-format: here they go through spdlog instead, at most one line
// per 10 s, the next one saying how many were held back. Set once per process, by the first loop.
void log_libevent_message(int severity, const char* message) {
  static std::mutex mutex;  // libevent may call this from any loop's thread
  static LogLimiter limiter{std::chrono::seconds(10)};
  std::lock_guard<std::mutex> lock(mutex);
  const auto allowed = limiter.allow(Clock::now());
  if (!allowed) return;
  const auto level = severity >= EVENT_LOG_ERR    ? spdlog::level::err
                     : severity >= EVENT_LOG_WARN ? spdlog::level::warn
                                                  : spdlog::level::debug;
  try {
    if (*allowed > 0) {
      spdlog::log(level, "libevent: {} ({} more libevent messages held back)", message, *allowed);
    } else {
      spdlog::log(level, "libevent: {}", message);
    }
  } catch (...) {
    // failed, ignored: nothing may throw into libevent
  }
}

event_base* new_precise_base() {
  static std::once_flag log_routed;
  std::call_once(log_routed, [] { event_set_log_callback(&log_libevent_message); });
  event_config* cfg = event_config_new();
  event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
  event_base* base = event_base_new_with_config(cfg);
  event_config_free(cfg);
  return base != nullptr ? base : event_base_new();
}
}  // namespace

EventLoop::EventLoop() : base_(new_precise_base()) {
  if (base_ == nullptr) throw std::runtime_error("event_base_new failed");
  deferred_event_ = event_new(base_, -1, 0, &EventLoop::run_deferred, this);
}

EventLoop::~EventLoop() {
  signals_.clear();
  event_free(deferred_event_);
  event_base_free(base_);
}

void EventLoop::run() { event_base_dispatch(base_); }

void EventLoop::stop() { event_base_loopexit(base_, nullptr); }

void EventLoop::defer(std::function<void()> fn) {
  deferred_.push_back(Deferred{{}, false, std::move(fn)});
  if (deferred_.size() == 1) event_active(deferred_event_, EV_TIMEOUT, 0);
}

void EventLoop::defer(const AliveToken& alive, std::function<void()> fn) {
  deferred_.push_back(Deferred{alive.watch(), true, std::move(fn)});
  if (deferred_.size() == 1) event_active(deferred_event_, EV_TIMEOUT, 0);
}

void EventLoop::run_deferred(int, short, void* self) {
  auto* loop = static_cast<EventLoop*>(self);
  // Only the calls queued before this run; calls they defer wait for the next iteration.
  std::deque<Deferred> batch;
  batch.swap(loop->deferred_);
  for (auto& d : batch) {
    if (d.guarded && d.alive.expired()) continue;  // its owner died first: cancelled
    call_guarded("deferred call", d.fn);
  }
  if (!loop->deferred_.empty()) event_active(loop->deferred_event_, EV_TIMEOUT, 0);
}

void EventLoop::on_signal(int signo, std::function<void()> fn) {
  auto handler = std::make_unique<SignalHandler>();
  handler->fn = std::move(fn);
  handler->ev = evsignal_new(
      base_, signo,
      [](int, short, void* arg) { call_guarded("signal handler", static_cast<SignalHandler*>(arg)->fn); },
      handler.get());
  event_add(handler->ev, nullptr);
  signals_.push_back(std::move(handler));
}

Timer::Timer(EventLoop& loop, std::function<void()> fn)
    : event_(evtimer_new(loop.raw(), &Timer::fire, this)), fn_(std::move(fn)) {}

Timer::~Timer() { event_free(event_); }

void Timer::arm(std::chrono::microseconds delay) {
  if (delay.count() < 0) delay = std::chrono::microseconds(0);
  timeval tv;
  tv.tv_sec = static_cast<time_t>(delay.count() / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(delay.count() % 1000000);
  evtimer_add(event_, &tv);
  deadline_ = Clock::now() + delay;
  armed_ = true;
}

void Timer::cancel() {
  evtimer_del(event_);
  armed_ = false;
}

bool Timer::armed() const { return armed_; }

std::chrono::microseconds Timer::remaining() const {
  if (!armed_) return std::chrono::microseconds(0);
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - Clock::now());
  return left.count() > 0 ? left : std::chrono::microseconds(0);
}

void Timer::fire(int, short, void* self) {
  auto* t = static_cast<Timer*>(self);
  t->armed_ = false;
  call_guarded("timer callback", t->fn_);
}

}  // namespace expiry
