// LoopMailbox: work handed to an event loop from other threads. post() may be called from any
// thread; the work runs on the loop's thread, in the order posted, each call through the loop's
// exception barrier (io/callback_barrier.h). An eventfd wakes the loop.
#pragma once

#include <deque>
#include <functional>
#include <mutex>

#include "io/event_loop.h"

struct event;

namespace expiry {

class LoopMailbox {
 public:
  explicit LoopMailbox(EventLoop& loop);
  // Work still queued is dropped uncalled. Destroy it on the loop's thread, after every thread
  // that posts to it has stopped.
  ~LoopMailbox();
  LoopMailbox(const LoopMailbox&) = delete;
  LoopMailbox& operator=(const LoopMailbox&) = delete;

  // Thread-safe. `fn` runs on the loop; it must capture nothing that may die before it runs
  // unless it checks an AliveToken's watch() (a weak_ptr, safe to copy across threads).
  void post(std::function<void()> fn);

 private:
  static void on_wake(int fd, short, void* self);

  int fd_ = -1;               // eventfd, owned
  event* event_ = nullptr;    // owned; reads fd_ on the loop
  std::mutex mutex_;          // guards queue_
  std::deque<std::function<void()>> queue_;
};

}  // namespace expiry
