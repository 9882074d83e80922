// expiry-ctl recur: recurring schedules (docs/protocol.md "Recurring schedules"). set, show,
// list, delete, pause and resume talk to Redis through the function library; preview is offline.
// Bad rules, zones and times are ConfigError (exit 2), with nothing written.
#pragma once

#include <optional>
#include <string>

#include "ctl/ctl_settings.h"

namespace expiry {

// The rule flags shared by set and preview: exactly one of cron and every.
struct RecurRuleFlags {
  std::optional<std::string> cron;
  std::optional<std::string> every;
  std::string tz = "UTC";
  std::optional<std::string> start;  // time argument (recur/time_text.h parse_time_arg), in tz
  std::optional<std::string> end;
  bool allow_sub_second = false;     // --every below 1 s is refused without it
};

struct RecurSetOptions {
  std::string id;
  RecurRuleFlags rule;
  std::string payload;
  std::string stream;
  std::string webhook;
  std::string misfire = "once";
  long long misfire_grace_ms = 1000;
  long long misfire_max = 100;
  std::optional<long long> max_late_ms;
};

struct RecurPreviewOptions {
  RecurRuleFlags rule;
  std::optional<std::string> from;  // default: now
  long long count = 10;
  bool json = false;
};

int run_recur_set(const CtlTarget& target, const RecurSetOptions& options);
int run_recur_show(const CtlTarget& target, const std::string& id, bool json);
int run_recur_list(const CtlTarget& target, bool json);
int run_recur_delete(const CtlTarget& target, const std::string& id);
int run_recur_pause(const CtlTarget& target, const std::string& id);
int run_recur_resume(const CtlTarget& target, const std::string& id);
int run_recur_preview(const RecurPreviewOptions& options);

}  // namespace expiry
