// The libevent loop the whole service runs on: timers, deferred calls and signals.
// Single-threaded: every method must be called from the loop's thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "protocol/clock.h"

struct event;
struct event_base;

namespace expiry {

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  event_base* raw() { return base_; }
  // Runs until stop() or until no events remain.
  void run();
  // Makes run() return after the current callbacks finish.
  void stop();
  // Runs fn on the next loop iteration, never from inside this call (safe from hiredis callbacks).
  void defer(std::function<void()> fn);
  // Calls fn (on the loop) whenever signo arrives, until the loop is destroyed.
  void on_signal(int signo, std::function<void()> fn);

 private:
  static void run_deferred(int, short, void* self);

  event_base* base_;                         // owned
  event* deferred_event_;                    // owned; activated when deferred_ is non-empty
  std::deque<std::function<void()>> deferred_;
  struct SignalHandler;
  std::vector<std::unique_ptr<SignalHandler>> signals_;
};

// A one-shot timer; re-arming replaces the previous deadline. Cancelled on destruction.
class Timer {
 public:
  Timer(EventLoop& loop, std::function<void()> fn);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void arm(std::chrono::microseconds delay);
  void cancel();
  bool armed() const;
  // Time left until it fires (zero if not armed).
  std::chrono::microseconds remaining() const;

 private:
  static void fire(int, short, void* self);

  event* event_;  // owned
  std::function<void()> fn_;
  Clock::time_point deadline_{};
  bool armed_ = false;
};

}  // namespace expiry
