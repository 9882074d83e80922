// producer-example REDIS_URL [TASK_ID]: schedules a payment-timeout task 30 minutes ahead with
// the installed Producer, then reads it back and prints where it lives. Exits 1 on an error.
#include <chrono>
#include <iostream>

#include <expiry/producer/producer.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: producer-example REDIS_URL [TASK_ID]\n";
    return 2;
  }
  try {
    // The settings every program of expiry-relay reads: redis_url, namespace, tls_*, sentinel...
    expiry::Producer producer({{"redis_url", argv[1]}, {"namespace", "expiry"}});

    expiry::Task task;
    task.id = argc > 2 ? argv[2] : "order:42";
    task.mode = expiry::ScheduleMode::Delay;
    task.ms = std::chrono::milliseconds(std::chrono::minutes(30)).count();
    task.payload = R"({"order_id":"42"})";
    task.options.max_late_ms = 600000;  // worthless when more than 10 minutes late
    const expiry::ScheduleResult scheduled = producer.schedule(task);
    std::cout << "scheduled " << task.id << " due_ms=" << scheduled.due_ms << "\n";

    const expiry::TaskDetails shown = producer.show(task.id);
    std::cout << "pending=" << (shown.pending ? "true" : "false") << " due_in_ms=" << shown.due_ms - shown.now_ms
              << " stream=" << shown.stream << " payload=" << shown.field("payload").value_or("") << "\n";
    return shown.pending ? 0 : 1;
  } catch (const expiry::Error& e) {  // ConfigError, IoError, ReplyError
    std::cerr << "producer-example: " << e.what() << "\n";
    return 1;
  }
}
