// See loop_mailbox.h.
#include "io/loop_mailbox.h"

#include <event2/event.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

#include "io/callback_barrier.h"

namespace expiry {

LoopMailbox::LoopMailbox(EventLoop& loop) {
  fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("eventfd failed");
  event_ = event_new(loop.raw(), fd_, EV_READ | EV_PERSIST, &LoopMailbox::on_wake, this);
  if (event_ == nullptr || event_add(event_, nullptr) != 0) {
    if (event_ != nullptr) event_free(event_);
    ::close(fd_);
    throw std::runtime_error("cannot watch the mailbox's eventfd");
  }
}

LoopMailbox::~LoopMailbox() {
  event_free(event_);
  ::close(fd_);
}

void LoopMailbox::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(fn));
  }
  const uint64_t one = 1;
  // EAGAIN (the counter is full) still leaves the fd readable: nothing is lost.
  [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
}

void LoopMailbox::on_wake(int fd, short, void* self) {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t got = ::read(fd, &count, sizeof count);
  auto* box = static_cast<LoopMailbox*>(self);
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(box->mutex_);
    batch.swap(box->queue_);
  }
  for (auto& fn : batch) call_guarded("mailbox call", fn);
}

}  // namespace expiry
