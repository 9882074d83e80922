// producer-example REDIS_URL [TASK_ID [SCHEDULE_ID]]: with the installed Producer, schedules a
// payment-timeout task 30 minutes ahead and reads it back, then creates (or replaces) a recurring
// schedule, a sales report at 09:00 Berlin time on weekdays, and prints its next occurrences.
// Both stay in Redis for the relay to fire. Exits 1 on an error.
#include <chrono>
#include <iostream>
#include <optional>

#include <expiry/producer/producer.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: producer-example REDIS_URL [TASK_ID [SCHEDULE_ID]]\n";
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

    // A cron rule in a time zone: 09:00 local whatever the season (07:00 UTC in summer, 08:00 in
    // winter). It stays until deleted (producer.delete_recurring(report.id)).
    expiry::RecurringSpec report;
    report.id = argc > 3 ? argv[3] : "report:daily-sales";
    report.cron = "0 9 * * 1-5";
    report.tz = "Europe/Berlin";
    report.payload = R"({"report":"daily-sales"})";
    report.misfire = expiry::MisfirePolicy::Skip;  // after an outage, no report for a missed morning
    const expiry::RecurringSetResult set = producer.set_recurring(report);
    std::cout << (set.replaced ? "replaced " : "created ") << report.id << " version=" << set.version << " rule='"
              << set.rule << "' tz=" << set.tz << "\n";

    const std::optional<expiry::RecurringDetails> schedule = producer.show_recurring(report.id, 3);
    if (!schedule) return 1;
    for (const expiry::RecurringOccurrence& next : schedule->next) {
      std::cout << "next " << next.utc << " " << next.local << "\n";
    }
    return shown.pending && !schedule->next.empty() ? 0 : 1;
  } catch (const expiry::Error& e) {  // ConfigError, IoError, ReplyError
    std::cerr << "producer-example: " << e.what() << "\n";
    return 1;
  }
}
