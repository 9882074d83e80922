// The tasks Producer::schedule_stream sends, pulled one at a time, and what Redis answered to
// each call. The tasks are numbered from 0 in the order next() hands them out. Installed API.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "../base/errors.h"
#include "task.h"

namespace expiry {

// What Redis answered to one call: one task (expiry_schedule), or some tasks of one bucket in one
// expiry_schedule_many call, every one of which was written or none.
struct ScheduleAnswer {
  enum class Refusal {
    None,        // written: `results` holds one result per task
    NoReply,     // the connection failed before the reply (the tasks may or may not be written)
    Error,       // an error reply: nothing of the call was written
    Unexpected,  // a reply of another shape
  };

  bool batched = false;        // an expiry_schedule_many call
  std::vector<size_t> tasks;   // the numbers of the call's tasks, in the call's order
  std::vector<ScheduleResult> results;
  Refusal refusal = Refusal::None;
  std::string text;            // NoReply: the I/O error; Error: the error reply; Unexpected: the reply
  size_t named = 0;            // refused: the task (index into `tasks`) the error names; 0 when none

  bool written() const { return refusal == Refusal::None; }
};

class ScheduleFeed {
 public:
  virtual ~ScheduleFeed() = default;

  // The next task, or nullopt at the end of the input. Tasks must be valid (task_error, the
  // stream's name): the library refuses the call of an invalid one. May throw: nothing more is
  // sent and the exception propagates.
  virtual std::optional<Task> next() = 0;
  // Polled before tasks are read: true reads no more, and the tasks read so far are still
  // sent and answered. (expiry-ctl: a stop signal arrived.)
  virtual bool stopped() { return false; }
  // Each call's answer, in the order the calls were sent. After a refusal no further call is
  // sent; the answers to the calls already sent still come.
  virtual void on_answer(const ScheduleAnswer& answer) = 0;
  // After the answers of each round trip: a moment for progress reports.
  virtual void on_round_trip() {}
  // The connection failed while tasks were being sent: `error` propagates when this returns;
  // it may throw an exception of its own instead (one that says what was written).
  virtual void on_send_failed(const IoError& error) { (void)error; }
};

}  // namespace expiry
