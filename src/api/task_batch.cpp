// See task_batch.h.
#include "api/task_batch.h"

#include <optional>
#include <string>
#include <utility>

#include "api/task_json.h"
#include "api/token_narrowing.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "producer/producer.h"
#include "producer/schedule_feed.h"
#include "producer/task_calls.h"
#include "redis/redis_error.h"

namespace expiry {
namespace {

using json = nlohmann::json;

json id_json(const std::string& id) { return id.empty() ? json() : json(id); }

json failed(const std::string& id, int status, std::string error) {
  return {{"id", id_json(id)}, {"status", status}, {"error", std::move(error)}};
}

json written(const std::string& id, const ScheduleResult& result) {
  json j = schedule_result_json(id, result);
  j["status"] = !result.replaced && !result.kept ? 201 : 200;
  return j;
}

// The status of the task a refused call names, and why.
std::pair<int, std::string> refusal_of(const ScheduleAnswer& answer) {
  switch (answer.refusal) {
    case ScheduleAnswer::Refusal::NoReply:
      return {503, "no reply from Redis, so it may or may not have been written: " + escape_text(answer.text)};
    case ScheduleAnswer::Refusal::Error:
      return {is_transient(classify_error_text(answer.text)) ? 503 : 500,
              "Redis refused the call: " + escape_text(answer.text)};
    case ScheduleAnswer::Refusal::Unexpected:
    case ScheduleAnswer::Refusal::None:
      break;
  }
  return {500, "unexpected reply from Redis: " + escape_text(answer.text)};
}

// The valid tasks, handed to schedule_stream in order, and the result of each from its call's
// answer.
class BatchFeed : public ScheduleFeed {
 public:
  explicit BatchFeed(const std::vector<Task>& tasks) : tasks_(tasks), results_(tasks.size()) {}

  std::optional<Task> next() override {
    if (next_ == tasks_.size()) return std::nullopt;
    return tasks_[next_++];
  }

  void on_answer(const ScheduleAnswer& answer) override {
    if (answer.written()) {
      for (size_t i = 0; i < answer.tasks.size() && i < answer.results.size(); ++i) {
        results_[answer.tasks[i]] = written(tasks_[answer.tasks[i]].id, answer.results[i]);
      }
      return;
    }
    const auto [status, error] = refusal_of(answer);
    const size_t named = answer.tasks.at(answer.named);
    for (size_t number : answer.tasks) {
      const std::string& id = tasks_[number].id;
      if (number == named || answer.refusal == ScheduleAnswer::Refusal::NoReply) {
        results_[number] = failed(id, status, error);
      } else {
        results_[number] =
            failed(id, 424,
                   "not written: its call was refused for task '" + escape_text(tasks_[named].id) + "' of this batch");
      }
    }
  }

  // The result of task `number`; a task never sent (a call before it was refused): 424.
  json result(size_t number) const {
    if (results_[number]) return *results_[number];
    return failed(tasks_[number].id, 424, "not written: a call before it in this batch was refused");
  }

 private:
  const std::vector<Task>& tasks_;
  size_t next_ = 0;
  std::vector<std::optional<json>> results_;  // by task number; nullopt: not answered
};

}  // namespace

json schedule_batch(Producer& producer, const std::vector<BatchItem>& items, const TokenGrant* caller) {
  std::vector<json> results(items.size());
  std::vector<Task> tasks;      // the valid ones, in order
  std::vector<size_t> item_of;  // tasks[i] is items[item_of[i]]
  for (size_t i = 0; i < items.size(); ++i) {
    const BatchItem& item = items[i];
    if (const auto* why = std::get_if<std::string>(&item.task)) {
      results[i] = failed(item.id, 400, escape_text(*why));
      continue;
    }
    if (caller && !caller->allows_id(item.id)) {
      results[i] = failed(item.id, 403, outside_prefixes_detail(*caller, "'" + escape_text(item.id) + "'"));
      continue;
    }
    const Task& task = std::get<Task>(item.task);
    try {
      check_task(task, producer.ns());  // the stream's name, as Producer::schedule checks it
    } catch (const ConfigError& e) {
      results[i] = failed(item.id, 400, escape_text(e.what()));
      continue;
    }
    tasks.push_back(task);
    item_of.push_back(i);
  }
  if (!tasks.empty()) {
    BatchFeed feed(tasks);
    producer.schedule_stream(feed);
    for (size_t t = 0; t < tasks.size(); ++t) results[item_of[t]] = feed.result(t);
  }
  json out = json::array();
  long long ok = 0;
  for (json& r : results) {
    const int status = r["status"].get<int>();
    if (status == 200 || status == 201) ++ok;
    out.push_back(std::move(r));
  }
  return {{"results", std::move(out)}, {"written", ok}, {"failed", static_cast<long long>(items.size()) - ok}};
}

}  // namespace expiry
