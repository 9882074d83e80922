// The libevent loop the whole service runs on: timers, deferred calls and signals.
// Single-threaded: every method must be called from the loop's thread.
//
// Callback contracts:
// - Deferred work that needs an object (captures `this`) is cancellable: pass the object's
//   AliveToken to defer(); the work is dropped, uncalled, if the token died first. Only
//   closures that own everything they touch may use the unguarded defer().
// - Every callback the loop runs (timers, deferred calls, signal handlers) goes through one
//   exception barrier (io/callback_barrier.h): what it throws is logged and swallowed, never
//   thrown across libevent.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "base/clock.h"

struct event;
struct event_base;

namespace expiry {

// Held as a member by an object that defers work capturing `this`: the work runs only while
// the token (and so the object) lives. Not copyable: a copy would outlive the wrong object.
class AliveToken {
 public:
  AliveToken() : alive_(std::make_shared<char>(0)) {}
  AliveToken(const AliveToken&) = delete;
  AliveToken& operator=(const AliveToken&) = delete;

  std::weak_ptr<void> watch() const { return alive_; }

 private:
  std::shared_ptr<void> alive_;
};

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
  // For closures that capture no object that may die first (see the contracts above).
  void defer(std::function<void()> fn);
  // The same, but fn is dropped uncalled if `alive` has died by then: for work that needs `this`.
  void defer(const AliveToken& alive, std::function<void()> fn);
  // Calls fn (on the loop) whenever signo arrives, until the loop is destroyed.
  void on_signal(int signo, std::function<void()> fn);

 private:
  static void run_deferred(int, short, void* self);

  event_base* base_;                         // owned
  event* deferred_event_;                    // owned; activated when deferred_ is non-empty
  struct Deferred {
    std::weak_ptr<void> alive;  // empty (never set) for unguarded work
    bool guarded;
    std::function<void()> fn;
  };
  std::deque<Deferred> deferred_;
  struct SignalHandler;
  std::vector<std::unique_ptr<SignalHandler>> signals_;
};

// A one-shot timer; re-arming replaces the previous deadline. Cancelled on destruction, so a
// Timer member is also a cancellable way to defer work (arm it with a zero delay).
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
